//! SET latency of `net_shell::store::Store` while its key table grows from empty to 1,000,000
//! keys, against the same writes into a table that already holds 1,000,000: does any write pay
//! for growing the table?
//!
//! ```text
//! cargo bench -p host-tests --bench store_growth
//! ```
//!
//! The store is the host binary's kind (`StoreMemory::allocate`: entries, buckets and key
//! timers allocated in chunks as keys arrive), with a pool of 256 bytes per key (256 MiB for
//! 1,000,000) whose pages are written once and cleared first, so that the first touch of a pool page is not what is timed. Keys are
//! `key:` and 12 digits, values 16 bytes, as `scripts/bench-memory.sh` writes them.
//!
//! - growing: `SET key:N` for N from 0 to 1,000,000 into the empty store, each timed;
//! - steady: with 1,000,000 keys stored, 1,000,000 times: delete a random key (not timed),
//!   then `SET` a new key (timed). The table holds 1,000,000 keys throughout.
//!
//! Both without a TTL and with one (`Ttl::At`, an hour ahead: each new key also takes a timer).
//! The table gives percentiles of the times in ns, the writes over 100 µs (on a shared machine,
//! preemption puts a few there whatever the store does), and the ratio of the p99s.
//!
//! `STORE_BENCH_KEYS=N` changes the key count (default 1,000,000). Started without `--bench`
//! (as `cargo test --benches` does), it makes one quick pass of 20,000 keys as a smoke test.

use std::time::Instant;

use net_shell::store::{Store, StoreMemory, Ttl};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const SEED: u64 = 0x5708_e000_9207_0001;
const VALUE: [u8; 16] = *b"vvvvvvvvvvvvvvvv";

fn key(n: u64) -> [u8; 16] {
    let mut key = *b"key:000000000000";
    let digits = format!("{n:012}");
    key[4..].copy_from_slice(&digits.as_bytes()[digits.len() - 12..]);
    key
}

/// Times of one phase, in ns.
struct Times(Vec<u64>);

impl Times {
    fn percentile(&self, p: f64) -> u64 {
        let mut sorted = self.0.clone();
        sorted.sort_unstable();
        let at = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
        sorted[at]
    }

    fn row(&self, name: &str) -> String {
        let slow = self.0.iter().filter(|t| **t > 100_000).count();
        format!(
            "| {name} | {} | {} | {} | {} | {} |",
            self.percentile(0.5),
            self.percentile(0.99),
            self.percentile(0.999),
            self.0.iter().max().copied().unwrap_or(0),
            slow
        )
    }
}

fn timed(store: &mut Store<'_>, key: &[u8], ttl: Ttl, now: u64) -> u64 {
    let start = Instant::now();
    let done = store.set(key, &VALUE, ttl, now);
    let ns = start.elapsed().as_nanos() as u64;
    assert_eq!(done, Ok(()), "SET {key:?}");
    ns
}

/// One store through both phases; returns the two rows and the p99 ratio.
fn run(keys: u64, with_ttl: bool) -> (Times, Times) {
    // 64 bytes of pool per key, and more: 256 MiB for 1,000,000 keys.
    let pool = (keys as usize * 256).max(1 << 20);
    let mut store = Store::new(
        StoreMemory::allocate(StoreMemory::MAX_KEYS, StoreMemory::bytes_for(pool)),
        64,
        64,
    );
    // Every pool page written once, then cleared (clear gives the table's chunks back).
    let mut n = 0u64;
    while store.set(&key(n), &[0; 4000], Ttl::Persist, 0).is_ok() {
        n += 1;
    }
    store.clear();
    let ttl = |now: u64| {
        if with_ttl {
            Ttl::At(now + 3_600_000)
        } else {
            Ttl::Persist
        }
    };
    let mut growing = Times(Vec::with_capacity(keys as usize));
    for n in 0..keys {
        growing.0.push(timed(&mut store, &key(n), ttl(n), n));
    }
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut live: Vec<u64> = (0..keys).collect();
    let mut steady = Times(Vec::with_capacity(keys as usize));
    for n in keys..2 * keys {
        let at = rng.random_range(0..live.len());
        assert!(store.delete(&key(live[at]), n));
        live[at] = n;
        steady.0.push(timed(&mut store, &key(n), ttl(n), n));
    }
    assert_eq!(store.len() as u64, keys);
    (growing, steady)
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let keys = if bench {
        std::env::var("STORE_BENCH_KEYS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1_000_000)
    } else {
        20_000
    };
    println!("SET latency while the key table grows from 0 to {keys} keys, and at {keys} (ns)");
    println!();
    println!("| phase | p50 | p99 | p99.9 | max | over 100 µs |");
    println!("|---|--:|--:|--:|--:|--:|");
    let mut ratios = Vec::new();
    for with_ttl in [false, true] {
        let (growing, steady) = run(keys, with_ttl);
        let ttl = if with_ttl { ", with a TTL" } else { "" };
        println!("{}", growing.row(&format!("growing{ttl}")));
        println!("{}", steady.row(&format!("steady{ttl}")));
        ratios.push((
            ttl,
            growing.percentile(0.99) as f64 / steady.percentile(0.99).max(1) as f64,
        ));
    }
    println!();
    for (ttl, ratio) in ratios {
        println!("p99 growing / p99 steady{ttl}: {ratio:.2}");
    }
}
