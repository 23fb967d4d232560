//! SET latency of `net_shell::store::Store` with its byte pool half full and nearly full.
//!
//! ```text
//! cargo bench -p host-tests --bench pool_fill
//! ```
//!
//! Two stores: the host binary's (131,072 keys, a 32 MiB pool, values up to 16 KiB) and a small
//! one with the firmware's pool and value limit (an 8 KiB pool, values up to 512 bytes; 256 keys
//! rather than the firmware's 128, so that keys run out after bytes do). Each store first has
//! every page of its pool written once and cleared, then is filled with new keys to its target
//! (50% or 99% of the pool by `bytes_used`), then driven by a seeded random workload that holds
//! it there. Each step, if the pool is under its target, one new key is set;
//! otherwise one of:
//!
//! - 40%: overwrite a random key with a value of a fresh random size (it grows or shrinks);
//! - 20%: shrink one of the keys set first (they sit at the start of the pool) to 1..=8 bytes,
//!   then regrow it: half the time to its length before, half the time to a fresh random size
//!   (two SETs);
//! - 40%: delete a random key other than those first ones (not timed).
//!
//! Value sizes are mixed: 70% small, 25% medium, 5% large (host: 16..=128, 129..=2,048,
//! 2,049..=16,384 bytes; small: 1..=32, 33..=128, 129..=512). Keys are 12 bytes.
//!
//! Every `Store::set` of the timed phase is timed alone (`Instant` around the call), refused
//! ones included; the table gives percentiles of those times in ns, how many were refused, and
//! how many of those the pool refused although `bytes_used`, less the overwritten key's
//! `8 + key + old value` bytes, plus `8 + key + value` was within the capacity (refusals
//! from fragmentation, by the exact accounting the pool had before it rounded blocks up to size
//! classes), and how many took over 100 µs (on a shared machine, preemption puts a few there
//! whatever the store does). Then the ratio p99@99% / p99@50% per store.
//!
//! `POOL_BENCH_SETS=N` changes the timed SETs per row (default 1,000,000);
//! `POOL_BENCH_FILLS=0.9,0.95` runs the host store alone, at those fills. Started without
//! `--bench` (as `cargo test --benches` does), it makes one quick pass on the small store as
//! a smoke test.

use std::time::Instant;

use host_tests::big_stack;
use net_shell::store::{Store, StoreError, StoreMemory, Ttl};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The seed of every run; each row derives its own from it.
const SEED: u64 = 0x7007_f111_2024_0007;
/// What the pool charged per key beyond key and value before it rounded blocks up to size
/// classes: the refusals counted as fitting are measured by that exact accounting.
const HEADER: usize = 8;

/// A store under test and its value sizes.
struct Shape {
    name: &'static str,
    small: (usize, usize),
    medium: (usize, usize),
    large: (usize, usize),
}

const HOST: Shape = Shape {
    name: "host: 32 MiB, 131,072 keys",
    small: (16, 128),
    medium: (129, 2 << 10),
    large: ((2 << 10) + 1, 16 << 10),
};

const SMALL: Shape = Shape {
    name: "small: 8 KiB, 256 keys",
    small: (1, 32),
    medium: (33, 128),
    large: (129, 512),
};

/// The operations on a store the workload needs, so one driver runs both sizes.
trait Target {
    fn set(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError>;
    fn get_len(&mut self, key: &[u8]) -> Option<usize>;
    fn delete(&mut self, key: &[u8]) -> bool;
    fn bytes_used(&self) -> usize;
    fn bytes_capacity(&self) -> usize;
    fn len(&self) -> usize;
    fn key_capacity(&self) -> usize;
    fn clear(&mut self);
}

impl Target for Store<'_> {
    fn set(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        Store::set(self, key, value, Ttl::Persist, 0)
    }
    fn get_len(&mut self, key: &[u8]) -> Option<usize> {
        self.get(key, 0).map(<[u8]>::len)
    }
    fn delete(&mut self, key: &[u8]) -> bool {
        Store::delete(self, key, 0)
    }
    fn bytes_used(&self) -> usize {
        Store::bytes_used(self)
    }
    fn bytes_capacity(&self) -> usize {
        Store::bytes_capacity(self)
    }
    fn len(&self) -> usize {
        Store::len(self)
    }
    fn key_capacity(&self) -> usize {
        Store::key_capacity(self)
    }
    fn clear(&mut self) {
        Store::clear(self);
    }
}

/// One row of the table.
struct Row {
    shape: &'static str,
    target: f64,
    mean_fill: f64,
    /// ns per timed SET, sorted.
    times: Vec<u64>,
    refused: usize,
    refused_fitting: usize,
}

impl Row {
    fn percentile(&self, p: f64) -> u64 {
        let i = ((self.times.len() as f64 * p) as usize).min(self.times.len() - 1);
        self.times[i]
    }
}

fn key(id: u32) -> [u8; 12] {
    let mut key = *b"key:00000000";
    let mut n = id;
    for digit in key[4..].iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
    }
    key
}

fn value_len(shape: &Shape, rng: &mut SmallRng) -> usize {
    let (low, high) = match rng.random_range(0..100) {
        0..70 => shape.small,
        70..95 => shape.medium,
        _ => shape.large,
    };
    rng.random_range(low..=high)
}

struct Driver<'a> {
    store: &'a mut dyn Target,
    rng: SmallRng,
    value: Vec<u8>,
    times: Vec<u64>,
    refused: usize,
    refused_fitting: usize,
}

impl Driver<'_> {
    /// One `Store::set`, timed, with the value filled with a byte that changes each call;
    /// returns whether it was stored.
    fn set(&mut self, id: u32, len: usize) -> bool {
        let key = key(id);
        let old = self
            .store
            .get_len(&key)
            .map_or(0, |v| HEADER + key.len() + v);
        let used = self.store.bytes_used();
        let fill = self.rng.random::<u8>();
        let value = &mut self.value[..len];
        value.fill(fill);
        let start = Instant::now();
        let result = self.store.set(&key, value);
        let elapsed = start.elapsed();
        self.times.push(elapsed.as_nanos() as u64);
        if result.is_err() {
            self.refused += 1;
            if used - old + HEADER + key.len() + len <= self.store.bytes_capacity() {
                self.refused_fitting += 1;
            }
        }
        result.is_ok()
    }
}

fn run(store: &mut dyn Target, shape: &Shape, target: f64, sets: usize, seed: u64) -> Row {
    let target_bytes = (store.bytes_capacity() as f64 * target) as usize;
    let mut driver = Driver {
        store,
        rng: SmallRng::seed_from_u64(seed),
        value: vec![0; shape.large.1],
        times: Vec::with_capacity(sets + 1),
        refused: 0,
        refused_fitting: 0,
    };
    // Touch every page of the pool and the key table once, so that no row pays for first
    // touches (not timed).
    let per_key = driver.store.bytes_capacity() / driver.store.key_capacity();
    let mut id = 0;
    while driver.set(id, per_key.clamp(1, shape.large.1)) {
        id += 1;
    }
    driver.store.clear();
    // Fill to the target with new keys (not timed).
    let mut next_id = 0u32;
    let mut live: Vec<u32> = Vec::new();
    while driver.store.bytes_used() < target_bytes
        && driver.store.len() < driver.store.key_capacity()
    {
        let len = value_len(shape, &mut driver.rng);
        if driver.set(next_id, len) {
            live.push(next_id);
        }
        next_id += 1;
    }
    // The first 2% of keys set sit at the start of the pool; they are never deleted.
    let early: Vec<u32> = live.drain(..live.len().div_ceil(50)).collect();
    driver.times.clear();
    driver.refused = 0;
    driver.refused_fitting = 0;

    let mut fill_sum = 0.0;
    let mut steps = 0u64;
    while driver.times.len() < sets {
        let used = driver.store.bytes_used();
        fill_sum += used as f64 / driver.store.bytes_capacity() as f64;
        steps += 1;
        if used < target_bytes && driver.store.len() < driver.store.key_capacity() {
            let len = value_len(shape, &mut driver.rng);
            if driver.set(next_id, len) {
                live.push(next_id);
            }
            next_id += 1;
            continue;
        }
        match driver.rng.random_range(0..100) {
            0..40 => {
                let pick = driver.rng.random_range(0..early.len() + live.len());
                let id = if pick < early.len() {
                    early[pick]
                } else {
                    live[pick - early.len()]
                };
                let len = value_len(shape, &mut driver.rng);
                driver.set(id, len);
            }
            40..60 => {
                let id = early[driver.rng.random_range(0..early.len())];
                let before = driver.store.get_len(&key(id));
                let short = driver.rng.random_range(1..=8);
                driver.set(id, short);
                let len = match before {
                    Some(len) if driver.rng.random_bool(0.5) => len,
                    _ => value_len(shape, &mut driver.rng),
                };
                driver.set(id, len);
            }
            _ if !live.is_empty() => {
                let id = live.swap_remove(driver.rng.random_range(0..live.len()));
                driver.store.delete(&key(id));
            }
            _ => {}
        }
    }
    let mut times = driver.times;
    times.sort_unstable();
    Row {
        shape: shape.name,
        target,
        mean_fill: fill_sum / steps as f64,
        times,
        refused: driver.refused,
        refused_fitting: driver.refused_fitting,
    }
}

fn host_row(target: f64, sets: usize, seed: u64) -> Row {
    big_stack(move || {
        let mut store = Store::new(StoreMemory::allocate(1 << 17, 32 << 20), 1024, 16 << 10);
        run(&mut store, &HOST, target, sets, seed)
    })
}

fn small_row(target: f64, sets: usize, seed: u64) -> Row {
    big_stack(move || {
        let mut store = Store::new(StoreMemory::allocate(256, 8 << 10), 64, 512);
        run(&mut store, &SMALL, target, sets, seed)
    })
}

fn print(rows: &[Row], ratios: bool) {
    println!(
        "| store | fill target | mean fill | timed SETs | refused | refused, fitting | p50 ns | p99 ns | p99.9 ns | max ns | over 100 µs |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for row in rows {
        println!(
            "| {} | {:.0}% | {:.2}% | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.shape,
            row.target * 100.0,
            row.mean_fill * 100.0,
            row.times.len(),
            row.refused,
            row.refused_fitting,
            row.percentile(0.50),
            row.percentile(0.99),
            row.percentile(0.999),
            row.times.last().copied().unwrap_or(0),
            row.times.iter().filter(|&&t| t > 100_000).count(),
        );
    }
    if !ratios {
        return;
    }
    println!();
    for pair in rows.chunks(2) {
        if let [half, full] = pair {
            println!(
                "- {}: p99@99% / p99@50% = {:.2}",
                half.shape,
                full.percentile(0.99) as f64 / half.percentile(0.99).max(1) as f64
            );
        }
    }
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let sets = std::env::var("POOL_BENCH_SETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    if let Ok(fills) = std::env::var("POOL_BENCH_FILLS") {
        let rows: Vec<Row> = fills
            .split(',')
            .map(|fill| {
                let fill = fill
                    .trim()
                    .parse()
                    .expect("POOL_BENCH_FILLS: fractions, like 0.95");
                host_row(fill, sets, SEED + 1)
            })
            .collect();
        print(&rows, false);
        return;
    }
    let rows = if bench {
        vec![
            host_row(0.50, sets, SEED),
            host_row(0.99, sets, SEED + 1),
            small_row(0.50, sets, SEED + 2),
            small_row(0.99, sets, SEED + 3),
        ]
    } else {
        vec![
            small_row(0.50, 2_000, SEED + 2),
            small_row(0.99, 2_000, SEED + 3),
        ]
    };
    print(&rows, true);
}
