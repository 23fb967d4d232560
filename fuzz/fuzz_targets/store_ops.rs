//! `net_shell::store::Store<16, 512>` against a `HashMap` model, under arbitrary operations.
//!
//! The model holds every key the store holds, expired or not, with its value, its deadline, and
//! the order its timer was set in; plus the bytes its pool block takes. It knows the documented
//! rules:
//!
//! - a key is visible while `now < deadline`; any access at or after its deadline removes it
//!   (and counts it in `expired_keys`), and time going backwards shows a key not yet removed;
//! - `expire(now, budget)` removes the due keys in deadline order (ties in the order their
//!   deadlines were set), at most `budget`, and says whether more are due;
//! - `set` checks key length, then value length, then (a deadline `<= now` deletes) the key
//!   table, then the byte pool; a refused write changes nothing, every key keeps its value;
//!   `check_set` predicts `set` exactly;
//! - the pool charges 8 bytes plus the block per key; a value that shrinks in place keeps its
//!   block when it would free fewer than 8 bytes, and a write that needs more room frees the old
//!   block first.
//!
//! After every operation the store and the model agree on `len`, `volatile_len`, `bytes_used`,
//! `expired_keys`, and `next_deadline` (never later than the earliest deadline).

#![no_main]

use std::collections::HashMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use net_shell::store::{Store, StoreError, Ttl};
use timer_core::Tick;

const KEYS: usize = 16;
const BYTES: usize = 512;
/// What the pool charges per key beyond its block.
const HEADER: usize = 8;
const MAX_OPS: usize = 2_000;

/// A key: most often one of a few short ones (so keys repeat), sometimes any bytes.
#[derive(Arbitrary, Clone, Debug)]
enum KeySpec {
    Short(u8),
    Repeat { byte: u8, len: u8 },
    Bytes(Vec<u8>),
}

impl KeySpec {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Short(n) => vec![b'k', b'0' + n % 24],
            Self::Repeat { byte, len } => vec![*byte; usize::from(*len % 40)],
            Self::Bytes(bytes) => bytes.clone(),
        }
    }
}

/// A value: short, long (up to past the pool), or any bytes.
#[derive(Arbitrary, Clone, Debug)]
enum ValueSpec {
    Empty,
    Fill { byte: u8, len: u16 },
    Bytes(Vec<u8>),
}

impl ValueSpec {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Empty => Vec::new(),
            Self::Fill { byte, len } => vec![*byte; usize::from(*len % 600)],
            Self::Bytes(bytes) => bytes.clone(),
        }
    }
}

/// A deadline, mostly relative to `now`.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum When {
    Now,
    Soon(u8),
    Later(u16),
    Far(u64),
    Past(u16),
    Absolute(u64),
    Max,
}

impl When {
    fn at(self, now: Tick) -> Tick {
        match self {
            Self::Now => now,
            Self::Soon(d) => now.saturating_add(Tick::from(d % 16)),
            Self::Later(d) => now.saturating_add(Tick::from(d)),
            Self::Far(d) => now.saturating_add(d),
            Self::Past(d) => now.saturating_sub(Tick::from(d)),
            Self::Absolute(t) => t,
            Self::Max => Tick::MAX,
        }
    }
}

#[derive(Arbitrary, Clone, Copy, Debug)]
enum TtlSpec {
    Persist,
    Keep,
    At(When),
}

/// How time moves before an operation.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Step {
    Stay,
    Forward(u8),
    ForwardMore(u16),
    Jump(u64),
    Back(u16),
    To(u64),
    Max,
}

impl Step {
    fn apply(self, now: Tick) -> Tick {
        match self {
            Self::Stay => now,
            Self::Forward(d) => now.saturating_add(Tick::from(d % 16)),
            Self::ForwardMore(d) => now.saturating_add(Tick::from(d)),
            Self::Jump(d) => now.saturating_add(d),
            Self::Back(d) => now.saturating_sub(Tick::from(d)),
            Self::To(t) => t,
            Self::Max => Tick::MAX,
        }
    }
}

#[derive(Arbitrary, Clone, Debug)]
enum Op {
    Set {
        key: KeySpec,
        value: ValueSpec,
        ttl: TtlSpec,
    },
    Get {
        key: KeySpec,
    },
    Contains {
        key: KeySpec,
    },
    Deadline {
        key: KeySpec,
    },
    Del {
        key: KeySpec,
    },
    /// `EXPIRE`/`PERSIST`: a new deadline, or none.
    SetDeadline {
        key: KeySpec,
        at: Option<When>,
    },
    /// The server loop's timer sweep.
    Expire {
        budget: u8,
    },
    /// Sweep at the store's own `next_deadline()`.
    WakeAtNextDeadline {
        budget: u8,
    },
    SetLimits {
        max_key: u8,
        max_value: u16,
    },
    Clear,
}

#[derive(Arbitrary, Debug)]
struct Input {
    seed: u32,
    max_key: u8,
    max_value: u16,
    steps: Vec<(Step, Op)>,
}

/// One key as the model sees it.
#[derive(Clone, Debug)]
struct Entry {
    value: Vec<u8>,
    /// `(deadline, order set)` if volatile.
    timer: Option<(Tick, u64)>,
    /// Bytes of its pool block (at least key + value).
    block: usize,
}

struct Model {
    entries: HashMap<Vec<u8>, Entry>,
    max_key: usize,
    max_value: usize,
    expired_keys: u64,
    next_order: u64,
}

impl Model {
    fn used(&self) -> usize {
        self.entries.values().map(|e| HEADER + e.block).sum()
    }

    fn order(&mut self) -> u64 {
        self.next_order += 1;
        self.next_order
    }

    /// Lazy expiry: any access at or after a key's deadline removes it.
    fn touch(&mut self, key: &[u8], now: Tick) {
        let expired = self
            .entries
            .get(key)
            .and_then(|e| e.timer)
            .is_some_and(|(at, _)| at <= now);
        if expired {
            self.entries.remove(key);
            self.expired_keys += 1;
        }
    }

    fn live(&mut self, key: &[u8], now: Tick) -> Option<&Entry> {
        self.touch(key, now);
        self.entries.get(key)
    }

    fn set_ttl(&mut self, key: &[u8], ttl: Ttl) {
        let order = self.order();
        if let Some(entry) = self.entries.get_mut(key) {
            match ttl {
                Ttl::Persist => entry.timer = None,
                Ttl::Keep => {}
                Ttl::At(at) => entry.timer = Some((at, order)),
            }
        }
    }

    /// What `set` must answer, given the key's state after lazy expiry; applies it if it succeeds.
    fn set(&mut self, key: &[u8], value: &[u8], ttl: Ttl, now: Tick) -> Result<(), StoreError> {
        if key.len() > self.max_key {
            return Err(StoreError::KeyTooLong);
        }
        if value.len() > self.max_value {
            return Err(StoreError::ValueTooLarge);
        }
        self.touch(key, now);
        if let Ttl::At(at) = ttl {
            if at <= now {
                if self.entries.remove(key).is_some() {
                    self.expired_keys += 1;
                }
                return Ok(());
            }
        }
        let needed = key.len() + value.len();
        let used = self.used();
        match self.entries.get_mut(key) {
            Some(entry) => {
                if entry.block >= needed {
                    // Overwritten in place; the rest of the block goes back if it can hold a header.
                    if entry.block >= needed + HEADER {
                        entry.block = needed;
                    }
                } else if used - (HEADER + entry.block) + HEADER + needed > BYTES {
                    return Err(StoreError::BytesFull);
                } else {
                    entry.block = needed;
                }
                entry.value = value.to_vec();
            }
            None => {
                if self.entries.len() == KEYS {
                    return Err(StoreError::KeysFull);
                }
                if used + HEADER + needed > BYTES {
                    return Err(StoreError::BytesFull);
                }
                self.entries.insert(
                    key.to_vec(),
                    Entry {
                        value: value.to_vec(),
                        timer: None,
                        block: needed,
                    },
                );
            }
        }
        self.set_ttl(key, ttl);
        Ok(())
    }

    /// Keys due at `now` in the order the timer wheel fires them.
    fn due(&self, now: Tick) -> Vec<(Tick, u64, Vec<u8>)> {
        let mut due: Vec<_> = self
            .entries
            .iter()
            .filter_map(|(key, e)| {
                e.timer
                    .filter(|&(at, _)| at <= now)
                    .map(|(at, order)| (at, order, key.clone()))
            })
            .collect();
        due.sort();
        due
    }

    fn earliest_deadline(&self) -> Option<Tick> {
        self.entries
            .values()
            .filter_map(|e| e.timer)
            .map(|(at, _)| at)
            .min()
    }
}

struct Run {
    store: Box<Store<KEYS, BYTES>>,
    model: Model,
    now: Tick,
}

impl Run {
    fn apply(&mut self, op: &Op) {
        let now = self.now;
        match op {
            Op::Set { key, value, ttl } => {
                let (key, value) = (key.bytes(), value.bytes());
                let ttl = match *ttl {
                    TtlSpec::Persist => Ttl::Persist,
                    TtlSpec::Keep => Ttl::Keep,
                    TtlSpec::At(when) => Ttl::At(when.at(now)),
                };
                let checked = self.store.check_set(&key, &value, ttl, now);
                let before: Vec<(Vec<u8>, Vec<u8>)> = self
                    .model
                    .entries
                    .iter()
                    .map(|(k, e)| (k.clone(), e.value.clone()))
                    .collect();
                let got = self.store.set(&key, &value, ttl, now);
                let expected = self.model.set(&key, &value, ttl, now);
                assert_eq!(
                    got,
                    expected,
                    "set({key:?}, {} bytes, {ttl:?}) at {now}",
                    value.len()
                );
                assert_eq!(
                    checked,
                    got,
                    "check_set({key:?}, {} bytes, {ttl:?}) at {now}",
                    value.len()
                );
                if got.is_err() {
                    // Refused: every key the store still holds keeps its value (only the key
                    // itself may have been dropped, if it had expired by `now`).
                    for (k, v) in before {
                        if self.model.entries.contains_key(&k) {
                            assert_eq!(
                                self.store.get(&k, now).map(<[u8]>::to_vec),
                                self.model.live(&k, now).map(|e| e.value.clone()),
                                "after a refused set, {k:?}"
                            );
                            if let Some(entry) = self.model.entries.get(&k) {
                                assert_eq!(entry.value, v);
                            }
                        }
                    }
                }
            }
            Op::Get { key } => {
                let key = key.bytes();
                let got = self.store.get(&key, now).map(<[u8]>::to_vec);
                let expected = self.model.live(&key, now).map(|e| e.value.clone());
                assert_eq!(got, expected, "get({key:?}) at {now}");
            }
            Op::Contains { key } => {
                let key = key.bytes();
                let got = self.store.contains(&key, now);
                let expected = self.model.live(&key, now).is_some();
                assert_eq!(got, expected, "contains({key:?}) at {now}");
            }
            Op::Deadline { key } => {
                let key = key.bytes();
                let got = self.store.deadline(&key, now);
                let expected = self
                    .model
                    .live(&key, now)
                    .map(|e| e.timer.map(|(at, _)| at));
                assert_eq!(got, expected, "deadline({key:?}) at {now}");
            }
            Op::Del { key } => {
                let key = key.bytes();
                let got = self.store.delete(&key, now);
                let expected = self.model.live(&key, now).is_some();
                if expected {
                    self.model.entries.remove(&key);
                }
                assert_eq!(got, expected, "delete({key:?}) at {now}");
            }
            Op::SetDeadline { key, at } => {
                let key = key.bytes();
                let deadline = at.map(|when| when.at(now));
                let got = self.store.set_deadline(&key, deadline, now);
                let expected = self.model.live(&key, now).is_some();
                if expected {
                    match deadline {
                        Some(at) if at <= now => {
                            self.model.entries.remove(&key);
                            self.model.expired_keys += 1;
                        }
                        Some(at) => self.model.set_ttl(&key, Ttl::At(at)),
                        None => self.model.set_ttl(&key, Ttl::Persist),
                    }
                }
                assert_eq!(
                    got, expected,
                    "set_deadline({key:?}, {deadline:?}) at {now}"
                );
            }
            Op::Expire { budget } => self.expire(now, *budget),
            Op::WakeAtNextDeadline { budget } => {
                if let Some(at) = self.store.next_deadline() {
                    self.now = at;
                    self.expire(at, *budget);
                }
            }
            Op::SetLimits { max_key, max_value } => {
                let (max_key, max_value) =
                    (usize::from(*max_key % 48), usize::from(*max_value % 600));
                self.store.set_limits(max_key, max_value);
                self.model.max_key = max_key;
                self.model.max_value = max_value;
                assert_eq!(self.store.max_key_len(), max_key);
                assert_eq!(self.store.max_value_len(), max_value);
            }
            Op::Clear => {
                self.store.clear();
                self.model.entries.clear();
            }
        }
    }

    fn expire(&mut self, now: Tick, budget: u8) {
        let budget = match budget {
            0xff => usize::MAX,
            n => usize::from(n % 8),
        };
        let due = self.model.due(now);
        let expiry = self.store.expire(now, budget);
        let fired = due.len().min(budget);
        assert_eq!(
            expiry.fired,
            fired,
            "expire({now}, {budget}) with {} due",
            due.len()
        );
        assert_eq!(
            expiry.more_due,
            due.len() > budget,
            "expire({now}, {budget}): more_due"
        );
        for (_, _, key) in &due[..fired] {
            self.model.entries.remove(key);
            self.model.expired_keys += 1;
        }
        // The keys that fired are gone without an access, the rest still there.
        for (_, _, key) in &due[fired..] {
            assert!(self.model.entries.contains_key(key));
        }
    }

    fn check(&mut self) {
        let now = self.now;
        assert_eq!(self.store.len(), self.model.entries.len(), "len at {now}");
        assert_eq!(self.store.is_empty(), self.model.entries.is_empty());
        let volatile = self
            .model
            .entries
            .values()
            .filter(|e| e.timer.is_some())
            .count();
        assert_eq!(self.store.volatile_len(), volatile, "volatile_len at {now}");
        assert_eq!(
            self.store.bytes_used(),
            self.model.used(),
            "bytes_used at {now}"
        );
        assert!(self.store.bytes_used() <= BYTES);
        assert_eq!(
            self.store.expired_keys(),
            self.model.expired_keys,
            "expired_keys at {now}"
        );
        let next = self.store.next_deadline();
        let earliest = self.model.earliest_deadline();
        assert_eq!(
            next.is_some(),
            earliest.is_some(),
            "next_deadline {next:?} vs {earliest:?}"
        );
        assert!(
            next <= earliest,
            "next_deadline {next:?} after the earliest deadline {earliest:?}"
        );
    }

    /// Every key, read at the current `now`, has the model's value (this removes expired keys,
    /// so it runs only at the end).
    fn check_all_keys(&mut self) {
        let now = self.now;
        let keys: Vec<Vec<u8>> = self.model.entries.keys().cloned().collect();
        for key in keys {
            let got = self.store.get(&key, now).map(<[u8]>::to_vec);
            let expected = self.model.live(&key, now).map(|e| e.value.clone());
            assert_eq!(got, expected, "final get({key:?}) at {now}");
        }
        self.check();
    }
}

fuzz_target!(|input: Input| {
    let max_key = usize::from(input.max_key % 48);
    let max_value = usize::from(input.max_value % 600);
    let mut store = Box::new(Store::<KEYS, BYTES>::new(max_key, max_value));
    assert_eq!(store.set_seed(input.seed), Ok(()));
    let mut run = Run {
        store,
        model: Model {
            entries: HashMap::new(),
            max_key,
            max_value,
            expired_keys: 0,
            next_order: 0,
        },
        now: 0,
    };
    for (step, op) in input.steps.iter().take(MAX_OPS) {
        run.now = step.apply(run.now);
        run.apply(op);
        run.check();
    }
    run.check_all_keys();
});
