//! One checker for hashes, through the server's hash commands on the simulated network,
//! against a `HashMap` model: shared by the seeded property test (`tests/hash_model.rs`) and
//! the `hash_ops` fuzz target.
//!
//! A hash is packed until it passes Redis 7.0's thresholds (512 fields, a field or value over
//! 64 bytes), then kept with an index for good and changed in place (`net_shell::store::fields`).
//! The ops reach both: `HSET` of a few fields or of hundreds (`Grow`), long values, `HDEL`
//! (some fields named twice), reads, `HINCRBY`, and per-field deadlines (`HPEXPIRE` an hour or
//! three away, `HPERSIST`) with time jumping two hours at once, so that the fields' timer
//! removes the due fields from hashes of either kind, and empties them.
//!
//! Every reply must be the model's, `HLEN` after every op, `OBJECT ENCODING` (`listpack` until
//! the thresholds are passed, then `hashtable`) and every field with its value (`HGETALL`,
//! compared as a set) every 16 ops and at the end.

use std::collections::{BTreeMap, HashMap};

use net_shell::store::{Store, StoreMemory};
use net_shell::{ServerBuffers, Timeouts};

use crate::reply::Reply;
use crate::sim::{self, Sim, SizedStore};

/// Steps of one input beyond this are ignored (keeps each run fast).
pub const MAX_STEPS: usize = 300;
const KEY: &str = "h";
const HOUR: u64 = 3_600_000;

/// One hash command (fields are `f` and a number; counters are `n` and a number).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum HashOp {
    /// `HSET` of these fields, each with a value of `len % 16` bytes, or from 240 on of
    /// `65 + len % 16` (past the packed limit).
    Set { fields: Vec<(u16, u8)> },
    /// `HSET` of `count % 700` fields from `from` on, with short values.
    Grow { from: u16, count: u16 },
    /// `HDEL` of these fields.
    Del { fields: Vec<u16> },
    /// `HGET`, `HEXISTS` and `HSTRLEN` of a field.
    Get { field: u16 },
    /// `HINCRBY` of a counter.
    Incr { counter: u8, by: i8 },
    /// `HPEXPIRE` of these fields, one hour away (three if `late`).
    Expire { fields: Vec<u16>, late: bool },
    /// `HPERSIST` of these fields.
    Persist { fields: Vec<u16> },
    /// Two hours pass.
    Jump,
}

/// A fuzz input: ops in order.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct HashInput {
    pub ops: Vec<HashOp>,
}

/// What a run went through.
#[derive(Clone, Copy, Debug, Default)]
pub struct Coverage {
    /// The most fields the hash had.
    pub most: usize,
    /// Fields removed by their deadline while the hash had an index.
    pub expired_indexed: usize,
    /// Fields removed by their deadline while it was packed.
    pub expired_packed: usize,
}

impl Coverage {
    /// Adds another run's counts.
    pub fn add(&mut self, other: &Self) {
        self.most = self.most.max(other.most);
        self.expired_indexed += other.expired_indexed;
        self.expired_packed += other.expired_packed;
    }
}

/// The model: fields with their values and deadlines, and whether the hash has an index.
#[derive(Default)]
struct Model {
    fields: HashMap<Vec<u8>, (Vec<u8>, Option<u64>)>,
    indexed: bool,
    now: u64,
}

fn field(n: u16) -> Vec<u8> {
    format!("f{n}").into_bytes()
}

/// Runs `input` against a fresh server.
///
/// # Panics
///
/// When a reply or the hash differs from the model's, with the op and the steps before it.
pub fn check_hash_ops(input: &HashInput) -> Coverage {
    let mut buffers = ServerBuffers::default();
    let store: SizedStore<16, { 8 << 20 }> =
        SizedStore(Store::new(StoreMemory::allocate(16, 8 << 20), 64, 4 << 20));
    let mut sim: Sim<4, 16, { 8 << 20 }> =
        Sim::with(&mut buffers, sim::config(Timeouts::DEFAULT), store);
    let mut client = sim.connect_ready();
    let mut model = Model::default();
    let mut coverage = Coverage::default();
    let steps = input.ops.len().min(MAX_STEPS);
    for (step, op) in input.ops.iter().take(steps).enumerate() {
        let shown = || {
            let ops = &input.ops[step.saturating_sub(5)..step];
            format!("step {step}: {op:?} after {ops:?}")
        };
        if let HashOp::Jump = op {
            sim.jump(2 * HOUR);
            model.now += 2 * HOUR;
            // The idle timeout closed the connection meanwhile.
            client = sim.connect_ready();
            let now = model.now;
            let before = model.fields.len();
            model
                .fields
                .retain(|_, (_, at)| at.is_none_or(|at| at >= now));
            let expired = before - model.fields.len();
            if model.indexed {
                coverage.expired_indexed += expired;
            } else {
                coverage.expired_packed += expired;
            }
            if model.fields.is_empty() {
                model.indexed = false;
            }
        } else {
            for (args, expected) in expect(op, &mut model) {
                let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                let reply = sim.request_bytes(client, &args);
                assert_eq!(reply, expected, "{}", shown());
            }
        }
        coverage.most = coverage.most.max(model.fields.len());
        let len = sim.request(client, &["HLEN", KEY]);
        assert_eq!(len, Reply::Int(model.fields.len() as i64), "{}", shown());
        if step % 16 == 15 || step + 1 == steps {
            let encoding = sim.request(client, &["OBJECT", "ENCODING", KEY]);
            let expected = match (model.fields.is_empty(), model.indexed) {
                (true, _) => Reply::Nil,
                (false, false) => Reply::bulk("listpack"),
                (false, true) => Reply::bulk("hashtable"),
            };
            assert_eq!(encoding, expected, "{}", shown());
            let all = sim.request(client, &["HGETALL", KEY]);
            let bulk = |reply: &Reply| match reply {
                Reply::Bulk(bytes) => bytes.clone(),
                _ => Vec::new(),
            };
            let pairs: BTreeMap<Vec<u8>, Vec<u8>> = match &all {
                Reply::Array(items) => items
                    .chunks(2)
                    .map(|p| (bulk(&p[0]), bulk(&p[1])))
                    .collect(),
                _ => BTreeMap::new(),
            };
            let expected: BTreeMap<Vec<u8>, Vec<u8>> = model
                .fields
                .iter()
                .map(|(f, (v, _))| (f.clone(), v.clone()))
                .collect();
            assert_eq!(pairs, expected, "{}", shown());
        }
    }
    coverage
}

/// The requests for `op` and Redis' reply to each, with the model changed as the server
/// changes the hash.
fn expect(op: &HashOp, model: &mut Model) -> Vec<(Vec<Vec<u8>>, Reply)> {
    let word = |text: &str| text.as_bytes().to_vec();
    let key = || KEY.as_bytes().to_vec();
    match op {
        HashOp::Set { fields } => {
            let pairs: Vec<(Vec<u8>, Vec<u8>)> = fields
                .iter()
                .take(16)
                .map(|&(n, len)| {
                    let size = if len >= 240 { 65 + len % 16 } else { len % 16 };
                    (field(n), vec![b'a' + len % 26; usize::from(size)])
                })
                .collect();
            vec![set(model, pairs)]
        }
        HashOp::Grow { from, count } => {
            let pairs = (0..count % 700)
                .map(|i| {
                    let n = from.wrapping_add(i);
                    (field(n), format!("v{n}").into_bytes())
                })
                .collect();
            vec![set(model, pairs)]
        }
        HashOp::Del { fields } => {
            let mut args = vec![word("HDEL"), key()];
            let mut removed = 0;
            for &n in fields.iter().take(16) {
                let f = field(n);
                removed += i64::from(model.fields.remove(&f).is_some());
                args.push(f);
            }
            if args.len() == 2 {
                args.push(field(0));
                removed += i64::from(model.fields.remove(&field(0)).is_some());
            }
            if model.fields.is_empty() {
                model.indexed = false;
            }
            vec![(args, Reply::Int(removed))]
        }
        HashOp::Get { field: n } => {
            let f = field(*n);
            let value = model.fields.get(&f).map(|(v, _)| v.clone());
            vec![
                (
                    vec![word("HGET"), key(), f.clone()],
                    value.clone().map_or(Reply::Nil, Reply::Bulk),
                ),
                (
                    vec![word("HEXISTS"), key(), f.clone()],
                    Reply::Int(i64::from(value.is_some())),
                ),
                (
                    vec![word("HSTRLEN"), key(), f],
                    Reply::Int(value.map_or(0, |v| v.len() as i64)),
                ),
            ]
        }
        HashOp::Incr { counter, by } => {
            let f = format!("n{}", counter % 8).into_bytes();
            let old = model.fields.get(&f).map_or(0, |(v, _)| {
                std::str::from_utf8(v)
                    .ok()
                    .and_then(|t| t.parse::<i64>().ok())
                    .unwrap_or(0)
            });
            let new = old + i64::from(*by);
            let made = !model.fields.contains_key(&f);
            let entry = model.fields.entry(f.clone()).or_insert((Vec::new(), None));
            entry.0 = new.to_string().into_bytes();
            if made {
                model.indexed |= model.fields.len() > 512;
            }
            vec![(
                vec![word("HINCRBY"), key(), f, by.to_string().into_bytes()],
                Reply::Int(new),
            )]
        }
        HashOp::Expire { fields, late } => {
            let ms = if *late { 3 * HOUR } else { HOUR };
            let named = named(fields);
            let mut args = vec![
                word("HPEXPIRE"),
                key(),
                ms.to_string().into_bytes(),
                word("FIELDS"),
            ];
            args.push(named.len().to_string().into_bytes());
            let reply = {
                let codes = named
                    .iter()
                    .map(|f| match model.fields.get_mut(f) {
                        Some((_, at)) => {
                            *at = Some(model.now + ms);
                            Reply::Int(1)
                        }
                        None => Reply::Int(-2),
                    })
                    .collect();
                Reply::Array(codes)
            };
            args.extend(named);
            vec![(args, reply)]
        }
        HashOp::Persist { fields } => {
            let named = named(fields);
            let mut args = vec![word("HPERSIST"), key(), word("FIELDS")];
            args.push(named.len().to_string().into_bytes());
            let reply = {
                let codes = named
                    .iter()
                    .map(|f| match model.fields.get_mut(f) {
                        Some((_, at @ Some(_))) => {
                            *at = None;
                            Reply::Int(1)
                        }
                        Some((_, None)) => Reply::Int(-1),
                        None => Reply::Int(-2),
                    })
                    .collect();
                Reply::Array(codes)
            };
            args.extend(named);
            vec![(args, reply)]
        }
        HashOp::Jump => Vec::new(),
    }
}

/// Distinct fields (Redis' field lists for `HPEXPIRE` and `HPERSIST` name each once here), at
/// least one.
fn named(fields: &[u16]) -> Vec<Vec<u8>> {
    let mut named: Vec<Vec<u8>> = Vec::new();
    for &n in fields.iter().take(16) {
        let f = field(n);
        if !named.contains(&f) {
            named.push(f);
        }
    }
    if named.is_empty() {
        named.push(field(0));
    }
    named
}

/// `HSET` of `pairs`, on the model too (a field set loses its deadline).
fn set(model: &mut Model, pairs: Vec<(Vec<u8>, Vec<u8>)>) -> (Vec<Vec<u8>>, Reply) {
    let pairs = if pairs.is_empty() {
        vec![(field(0), b"v".to_vec())]
    } else {
        pairs
    };
    let mut args = vec![b"HSET".to_vec(), KEY.as_bytes().to_vec()];
    let mut added = 0;
    let long = pairs.iter().any(|(f, v)| f.len() > 64 || v.len() > 64);
    for (f, v) in &pairs {
        args.push(f.clone());
        args.push(v.clone());
    }
    let arguments = pairs.len();
    for (f, v) in pairs {
        added += i64::from(model.fields.insert(f, (v, None)).is_none());
    }
    model.indexed |= long || arguments > 512 || model.fields.len() > 512;
    (args, Reply::Int(added))
}
