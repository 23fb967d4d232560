//! The server over a faulty link: frames lost, duplicated, reordered and corrupted at several
//! rates, with seeded randomness. Under a random command mix from several clients, every
//! command is answered exactly once and in order, no acknowledged write is lost, and key TTLs
//! and the idle timeout still fire at the right time.

use std::collections::HashMap;

use host_tests::sim::{encode, Client, FaultCounts, Faults, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

type Net<'m> = Sim<'m, 6, 256, 65536>;

const CLIENTS: usize = 4;
const ROUNDS: usize = 100;
/// Long enough that retransmission back-off never trips a timeout during the mix.
const IDLE_MS: u64 = 300_000;
/// How long a batch may take to be answered, retransmissions included.
const REPLY_LIMIT_MS: u64 = 120_000;

/// One client's view of its own keys (clients never share keys, so each model is exact).
#[derive(Default)]
struct Model {
    values: HashMap<Vec<u8>, Vec<u8>>,
}

impl Model {
    /// A random command on this client's keys and the reply it must get.
    fn command(&mut self, client: usize, rng: &mut SmallRng) -> (Vec<Vec<u8>>, Reply) {
        let key = format!("c{client}:k{}", rng.random_range(0..6)).into_bytes();
        let value = format!("v{}", rng.random_range(0..1_000_000)).into_bytes();
        let bulk = |v: &[u8]| Reply::Bulk(v.to_vec());
        let args = |parts: &[&[u8]]| parts.iter().map(|p| p.to_vec()).collect::<Vec<_>>();
        match rng.random_range(0..6) {
            0 => {
                self.values.insert(key.clone(), value.clone());
                (args(&[b"SET", &key, &value]), Reply::ok())
            }
            1 => {
                let reply = self.values.get(&key).map_or(Reply::Nil, |v| bulk(v));
                (args(&[b"GET", &key]), reply)
            }
            2 => {
                let counter = format!("c{client}:n").into_bytes();
                let next = self
                    .values
                    .get(&counter)
                    .map_or(0, |v| String::from_utf8_lossy(v).parse::<i64>().unwrap())
                    + 1;
                self.values
                    .insert(counter.clone(), next.to_string().into_bytes());
                (args(&[b"INCR", &counter]), Reply::Int(next))
            }
            3 => {
                let existed = self.values.remove(&key).is_some();
                (args(&[b"DEL", &key]), Reply::Int(i64::from(existed)))
            }
            4 => {
                // SET ... GET: the old value back, the new one in.
                let old = self.values.insert(key.clone(), value.clone());
                let reply = old.map_or(Reply::Nil, |v| bulk(&v));
                (args(&[b"SET", &key, &value, b"GET"]), reply)
            }
            _ => {
                let exists = self.values.contains_key(&key);
                (args(&[b"EXISTS", &key]), Reply::Int(i64::from(exists)))
            }
        }
    }
}

/// Sends one request and waits for its reply; returns it with the times it was sent and
/// answered.
fn timed_request(sim: &mut Net, client: Client, args: &[&[u8]]) -> (Reply, u64, u64) {
    let sent = sim.now;
    sim.queue(client, &encode(args));
    let limit = sim.now + REPLY_LIMIT_MS;
    let mut replies = sim.wait_replies(client, 1, limit);
    assert_eq!(replies.len(), 1, "no reply to {args:?} by t={}", sim.now);
    (replies.remove(0), sent, sim.now)
}

fn run(faults: Faults, seed: u64) -> (FaultCounts, FaultCounts) {
    let mut buffers = ServerBuffers::default();
    let mut sim: Net = Sim::new(&mut buffers, Timeouts::new(IDLE_MS, 60_000, 60_000));
    let clients: Vec<Client> = (0..CLIENTS).map(|_| sim.connect_ready()).collect();
    sim.set_faults(faults, seed);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut models: Vec<Model> = (0..CLIENTS).map(|_| Model::default()).collect();

    // The mix: every client pipelines a batch, then each batch's replies are checked.
    for round in 0..ROUNDS {
        let mut expected = Vec::new();
        for (i, &client) in clients.iter().enumerate() {
            let batch: Vec<_> = (0..rng.random_range(1..=4))
                .map(|_| models[i].command(i, &mut rng))
                .collect();
            for (args, _) in &batch {
                let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                sim.queue(client, &encode(&args));
            }
            expected.push(
                batch
                    .into_iter()
                    .map(|(_, reply)| reply)
                    .collect::<Vec<_>>(),
            );
        }
        for (i, &client) in clients.iter().enumerate() {
            let limit = sim.now + REPLY_LIMIT_MS;
            let replies = sim.wait_replies(client, expected[i].len(), limit);
            assert_eq!(
                replies, expected[i],
                "faults {faults:?} seed {seed}: round {round}, client {i}, t={}",
                sim.now
            );
        }
    }

    // Every acknowledged write is there.
    for (i, &client) in clients.iter().enumerate() {
        for (key, value) in &models[i].values {
            let (reply, _, _) = timed_request(&mut sim, client, &[b"GET", key]);
            assert_eq!(reply, Reply::Bulk(value.clone()), "seed {seed}: lost write");
        }
    }

    // Key TTLs: one volatile key per client, set one after another. Each must expire exactly
    // `ttl` after the server ran its SET, which happened between sending it and its reply.
    // Long enough that all four SETs are answered before the first key expires, even with
    // retransmissions (checked below), so each expiry is seen the moment it happens.
    let ttl: u64 = 120_000;
    let expired_before = sim.server.store().expired_keys();
    let mut windows = Vec::new();
    for (i, &client) in clients.iter().enumerate() {
        let key = format!("c{i}:volatile");
        let (reply, sent, answered) = timed_request(
            &mut sim,
            client,
            &[
                b"SET",
                key.as_bytes(),
                b"x",
                b"PX",
                ttl.to_string().as_bytes(),
            ],
        );
        assert_eq!(reply, Reply::ok());
        // Live through its deadline's tick, removed at the next (Redis' `now > when`).
        windows.push((sent + ttl + 1, answered + ttl + 1));
    }
    assert_eq!(
        sim.server.store().expired_keys(),
        expired_before,
        "seed {seed}: the SETs took longer than the TTL"
    );
    let mut expiries = Vec::new();
    let mut seen = 0;
    let limit = sim.now + ttl + 10_000;
    while seen < CLIENTS as u64 {
        let at = sim
            .run_until_true(limit, |sim| {
                sim.server.store().expired_keys() - expired_before > seen
            })
            .expect("volatile keys never expired");
        let now_expired = sim.server.store().expired_keys() - expired_before;
        for _ in seen..now_expired {
            expiries.push(at);
        }
        seen = now_expired;
    }
    for (at, (earliest, latest)) in expiries.iter().zip(&windows) {
        assert!(
            (earliest..=latest).contains(&at),
            "seed {seed}: a key expired at {at}, outside [{earliest}, {latest}]"
        );
    }

    // The idle timeout: each client's last command, one after another; each is closed exactly
    // IDLE_MS after the server ran it (server side: a lost FIN must not hide a late timer).
    let mut windows = Vec::new();
    for &client in &clients {
        let (reply, sent, answered) = timed_request(&mut sim, client, &[b"PING"]);
        assert_eq!(reply, Reply::simple("PONG"));
        windows.push((sent + IDLE_MS, answered + IDLE_MS));
    }
    let closes_before = sim.stats().idle_timeout_closes;
    let mut closes = Vec::new();
    let limit = sim.now + IDLE_MS + 10_000;
    while (closes.len() as u64) < CLIENTS as u64 {
        let at = sim
            .run_until_true(limit, |sim| {
                sim.stats().idle_timeout_closes - closes_before > closes.len() as u64
            })
            .expect("idle clients never closed");
        let now_closed = sim.stats().idle_timeout_closes - closes_before;
        while (closes.len() as u64) < now_closed {
            closes.push(at);
        }
    }
    for (at, (earliest, latest)) in closes.iter().zip(&windows) {
        assert!(
            (earliest..=latest).contains(&at),
            "seed {seed}: an idle client closed at {at}, outside [{earliest}, {latest}]"
        );
    }

    // Nothing was answered twice: no stray bytes arrived after the last reply.
    sim.advance(5_000);
    for &client in &clients {
        assert!(
            sim.take(client).is_empty(),
            "seed {seed}: stray reply bytes"
        );
    }
    sim.fault_counts()
}

fn check_rate(faults: Faults) {
    let mut total = FaultCounts::default();
    for seed in 1..=3 {
        let (down, up) = run(faults, seed);
        for counts in [down, up] {
            total.sent += counts.sent;
            total.lost += counts.lost;
            total.duplicated += counts.duplicated;
            total.reordered += counts.reordered;
            total.corrupted += counts.corrupted;
        }
    }
    // The faults really happened (a link that passes everything would prove nothing).
    assert!(total.lost > 0 && total.duplicated > 0, "{total:?}");
    assert!(total.reordered > 0 && total.corrupted > 0, "{total:?}");
}

#[test]
fn light_faults() {
    check_rate(Faults {
        loss: 0.01,
        duplicate: 0.01,
        reorder: 0.02,
        corrupt: 0.005,
    });
}

#[test]
fn moderate_faults() {
    check_rate(Faults::all(0.05));
}

#[test]
fn heavy_faults() {
    check_rate(Faults::all(0.15));
}
