//! One checker for the key store, `net_shell::store::Store`, against a `HashMap` model, shared by
//! the seeded property test (`tests/store_model.rs`) and the `store_ops` fuzz target.
//!
//! A driver makes a [`Run`] over an empty store and feeds it [`Op`]s, each after a [`Step`] of
//! time: set (with every kind of time to live), get, contains, deadline, delete, set or drop a
//! deadline, the server loop's timer sweep (with a budget, or at the store's own
//! `next_deadline()`), new limits, clear. Ops name keys and values loosely (a few short keys that
//! repeat, a range of numbered ones, or any bytes), so any op applies to any state: the fuzz
//! target decodes a [`StoreInput`] from bytes with `arbitrary` (feature `arbitrary`), the property
//! test draws ops from a seeded generator.
//!
//! The model holds every key the store holds, expired or not, with its value, its deadline and
//! the order its timer was set in. It knows the documented rules:
//!
//! - a key is visible while `now <= deadline` (as in Redis, gone once `now > deadline`); any
//!   access after its deadline removes it (and counts it in `expired_keys`), and time going
//!   backwards shows a key not yet removed;
//! - `expire(now, budget)` removes due keys, at most `budget`, and says whether more are due:
//!   in deadline order (ties in the order their deadlines were set) in a store of at most
//!   [`ONE_TIMER_SEGMENT`] keys, whose timers share one queue; in a larger one, whose timers
//!   may be in several segments (and move between them as the table shrinks), each removed
//!   key was due;
//! - `set` checks key length, then value length, then (a deadline `<= now` deletes, counted as
//!   expired) the key table, then the byte pool; `check_set` predicts `set` exactly;
//! - a refused write changes nothing: every key keeps its value (only the key itself may be gone,
//!   if it had expired by `now`);
//! - each key takes [`block_bytes`]`(key + value)` of the pool: `8 + key + value` rounded up to a
//!   size class; `bytes_capacity` is `BYTES` rounded down to 16, less 4 bytes per 4 KiB in a
//!   store of more than `MAX_BYTES_MOVED` bytes;
//! - a write is refused (`BytesFull`) when `bytes_used`, less the key's block, plus its new block
//!   is more than `bytes_capacity`. Otherwise a store of at most `MAX_BYTES_MOVED` bytes must
//!   take it; a larger one may refuse it (free bytes too scattered to gather within the bound),
//!   which the checker counts in [`Coverage::scattered_refusals`].
//!
//! After every op the store and the model agree on `len`, `is_empty`, `volatile_len`,
//! `bytes_used`, `expired_keys`, `next_deadline` (never later than the earliest deadline, and
//! `None` only without deadlines), and what `memory()` says the pool holds (blocks, and the
//! keys' and values' own bytes). The store's key table grows and shrinks in chunks as keys come
//! and go (its memory is allocated): [`Coverage`] counts how often it did, and how often while
//! expired keys were still stored. Whenever it holds no key, it holds at most twice the
//! allocated table its first key brought (a spare chunk of entries, the buckets' spare chunk,
//! no timer segment), however large it grew before. At the end every key reads back its value.

use std::collections::HashMap;
use std::fmt::Write as _;

use net_shell::store::{HashKey, Store, StoreError, StoreMemory, Ttl, MAX_BYTES_MOVED};
use timer_core::Tick;

/// Key capacity of the store the fuzz target drives.
pub const FUZZ_KEYS: usize = 16;
/// Pool bytes of the store the fuzz target drives: at most `MAX_BYTES_MOVED`, so a write is
/// refused only when it does not fit by count.
pub const FUZZ_BYTES: usize = 512;
/// Steps of one fuzz input beyond this are ignored (keeps each run fast).
pub const MAX_FUZZ_STEPS: usize = 2_000;
/// The most keys of a store whose key timers are one queue (the store's first timer segment):
/// its sweeps go in deadline order.
pub const ONE_TIMER_SEGMENT: usize = 1024;
/// Ops remembered for a failure message.
const HISTORY: usize = 12;

/// The pool bytes of a key and value of `len` bytes together: an 8-byte header plus `len`,
/// rounded up to 16, then to a size class (every multiple of 16 below 256; from there 8 classes
/// per power of two, `2^n / 8` apart).
pub fn block_bytes(len: usize) -> usize {
    let size = (8 + len).div_ceil(16) * 16;
    if size < 256 {
        return size;
    }
    let step = (1usize << size.ilog2()) / 8;
    size.div_ceil(step) * step
}

/// The pool bytes keys can use in a store over a `BYTES`-byte pool.
pub fn usable_bytes(bytes: usize) -> usize {
    let counters = if bytes > MAX_BYTES_MOVED {
        (bytes / 4096 + 1) * 4
    } else {
        0
    };
    (bytes - counters) / 16 * 16
}

/// A key: most often one of a few short ones (so keys repeat), or one of a range of numbered
/// ones (to fill a large store), or any bytes.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum KeySpec {
    /// `k` and one of 24 characters.
    Short(u8),
    /// `byte` repeated `len % 40` times (the empty key included).
    Repeat {
        /// The byte.
        byte: u8,
        /// The length, modulo 40.
        len: u8,
    },
    /// `n` and a number below 4096.
    Numbered(u16),
    /// These bytes.
    Bytes(Vec<u8>),
}

impl KeySpec {
    /// The key's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Short(n) => vec![b'k', b'0' + n % 24],
            Self::Repeat { byte, len } => vec![*byte; usize::from(*len % 40)],
            Self::Numbered(n) => format!("n{}", n % 4096).into_bytes(),
            Self::Bytes(bytes) => bytes.clone(),
        }
    }
}

/// A value: empty, filled to a length (up to past the fuzz pool), or any bytes.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum ValueSpec {
    /// No bytes.
    Empty,
    /// `byte` repeated `len % 600` times.
    Fill {
        /// The byte.
        byte: u8,
        /// The length, modulo 600.
        len: u16,
    },
    /// These bytes.
    Bytes(Vec<u8>),
}

impl ValueSpec {
    /// The value's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Empty => Vec::new(),
            Self::Fill { byte, len } => vec![*byte; usize::from(*len % 600)],
            Self::Bytes(bytes) => bytes.clone(),
        }
    }
}

/// A deadline, mostly relative to `now`.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum When {
    /// `now` (deletes).
    Now,
    /// `now + n % 16`.
    Soon(u8),
    /// `now + n`.
    Later(u16),
    /// `now + n`, saturating.
    Far(u64),
    /// `now - n`, saturating (deletes).
    Past(u16),
    /// This tick.
    Absolute(u64),
    /// `u64::MAX`.
    Max,
}

impl When {
    /// The tick this names at `now`.
    pub fn at(self, now: Tick) -> Tick {
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

/// The time to live of a set.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum TtlSpec {
    /// [`Ttl::Persist`].
    Persist,
    /// [`Ttl::Keep`].
    Keep,
    /// [`Ttl::At`] this time.
    At(When),
}

/// How time moves before an op.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Step {
    /// No change.
    Stay,
    /// `+ n % 16`.
    Forward(u8),
    /// `+ n`.
    ForwardMore(u16),
    /// `+ n`, saturating.
    Jump(u64),
    /// `- n`, saturating.
    Back(u16),
    /// To this tick.
    To(u64),
    /// To `u64::MAX`.
    Max,
}

impl Step {
    /// The time after this step from `now`.
    pub fn apply(self, now: Tick) -> Tick {
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

/// One operation on the store.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Op {
    /// `set` (after `check_set`).
    Set {
        /// The key.
        key: KeySpec,
        /// The value.
        value: ValueSpec,
        /// The time to live.
        ttl: TtlSpec,
    },
    /// `get`.
    Get {
        /// The key.
        key: KeySpec,
    },
    /// `contains`.
    Contains {
        /// The key.
        key: KeySpec,
    },
    /// `deadline`.
    Deadline {
        /// The key.
        key: KeySpec,
    },
    /// `delete`.
    Del {
        /// The key.
        key: KeySpec,
    },
    /// `EXPIRE`/`PERSIST`: a new deadline, or none.
    SetDeadline {
        /// The key.
        key: KeySpec,
        /// The deadline, or `None` to persist.
        at: Option<When>,
    },
    /// The server loop's timer sweep.
    Expire {
        /// `0xff`: unlimited; otherwise `budget % 8`.
        budget: u8,
    },
    /// Sweep at the store's own `next_deadline()`.
    WakeAtNextDeadline {
        /// As for [`Op::Expire`].
        budget: u8,
    },
    /// `set_limits`.
    SetLimits {
        /// `max_key % 48`.
        max_key: u8,
        /// `max_value % 600`.
        max_value: u16,
    },
    /// `clear`.
    Clear,
}

/// One fuzz input.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct StoreInput {
    /// The hash key's first four bytes (the rest are zero).
    pub seed: u32,
    /// The longest key, modulo 48.
    pub max_key: u8,
    /// The largest value, modulo 600.
    pub max_value: u16,
    /// Time steps and ops; those past [`MAX_FUZZ_STEPS`] are ignored.
    pub steps: Vec<(Step, Op)>,
}

/// Runs `input` on a fresh store of [`FUZZ_KEYS`] keys over a [`FUZZ_BYTES`]-byte pool.
///
/// # Panics
///
/// When the store and the model disagree.
pub fn check_store_ops(input: &StoreInput) -> Coverage {
    check_input::<FUZZ_KEYS, FUZZ_BYTES>(input)
}

/// Key capacity of the store the `store_shrink` fuzz target drives: more than one timer segment.
pub const GROWN_KEYS: usize = 2_048;
/// Pool bytes of that store.
pub const GROWN_BYTES: usize = 64 << 10;
/// Numbered keys with a deadline it holds before the input's ops: past its first timer
/// segment ([`ONE_TIMER_SEGMENT`]), so the input's deletes, sweeps and clears shrink it while
/// keys expire (their deadlines are 1,000 to 2,099).
pub const GROWN_PRELUDE: u16 = 1_100;

/// Runs `input` on a store of [`GROWN_KEYS`] keys over a [`GROWN_BYTES`]-byte pool that first
/// takes [`GROWN_PRELUDE`] numbered keys with deadlines (empty values, at time 0, under limits
/// of 16 and 64 bytes), then the input's limits and ops: the key timers have outgrown their
/// first segment, so the table gives back timer segments as well as entries and buckets.
///
/// # Panics
///
/// When the store and the model disagree.
pub fn check_grown_store_ops(input: &StoreInput) -> Coverage {
    let mut run = Run::<GROWN_KEYS, GROWN_BYTES>::new(input.seed, 16, 64);
    for n in 0..GROWN_PRELUDE {
        let set = Op::Set {
            key: KeySpec::Numbered(n),
            value: ValueSpec::Empty,
            ttl: TtlSpec::At(When::Later(1_000 + n)),
        };
        run.step(Step::Stay, &set);
    }
    let limits = Op::SetLimits {
        max_key: input.max_key,
        max_value: input.max_value,
    };
    run.step(Step::Stay, &limits);
    for (step, op) in input.steps.iter().take(MAX_FUZZ_STEPS) {
        run.step(*step, op);
    }
    run.finish()
}

/// Runs `input` on a fresh store of `KEYS` keys over a `BYTES`-byte pool.
///
/// # Panics
///
/// When the store and the model disagree.
pub fn check_input<const KEYS: usize, const BYTES: usize>(input: &StoreInput) -> Coverage {
    let mut run = Run::<KEYS, BYTES>::new(
        input.seed,
        usize::from(input.max_key % 48),
        usize::from(input.max_value % 600),
    );
    for (step, op) in input.steps.iter().take(MAX_FUZZ_STEPS) {
        run.step(*step, op);
    }
    run.finish()
}

/// Events the ops produced, so that a generator that drifts into exercising nothing can be
/// caught instead of passing quietly.
#[derive(Clone, Copy, Default, Debug)]
pub struct Coverage {
    /// Writes stored.
    pub writes: usize,
    /// Writes refused: the key table was full.
    pub keys_full: usize,
    /// Writes refused: the pool was full by count.
    pub bytes_full: usize,
    /// Writes refused although they fitted by count (large stores only).
    pub scattered_refusals: usize,
    /// Writes to a key that had expired but was not yet removed.
    pub writes_over_expired: usize,
    /// Keys removed by a sweep.
    pub swept: usize,
    /// Sweeps cut short by their budget.
    pub budget_cuts: usize,
    /// The highest `bytes_used` seen, in percent of `bytes_capacity`.
    pub peak_fill_pct: usize,
    /// Ops after which the key table held more allocated memory than before (a chunk of
    /// entries or buckets, or a timer segment, added).
    pub table_growths: usize,
    /// Of `table_growths`, those made while a key past its deadline was still stored.
    pub growths_while_expiring: usize,
    /// Ops after which the key table held less allocated memory than before.
    pub table_shrinks: usize,
    /// Of `table_shrinks`, those made while a key past its deadline was still stored.
    pub shrinks_while_expiring: usize,
    /// Ops that left the store without keys and gave back table memory.
    pub emptied_tables: usize,
}

impl Coverage {
    /// Adds `other`'s counts (the peak is the larger).
    pub fn add(&mut self, other: &Self) {
        self.writes += other.writes;
        self.keys_full += other.keys_full;
        self.bytes_full += other.bytes_full;
        self.scattered_refusals += other.scattered_refusals;
        self.writes_over_expired += other.writes_over_expired;
        self.swept += other.swept;
        self.budget_cuts += other.budget_cuts;
        self.peak_fill_pct = self.peak_fill_pct.max(other.peak_fill_pct);
        self.table_growths += other.table_growths;
        self.growths_while_expiring += other.growths_while_expiring;
        self.table_shrinks += other.table_shrinks;
        self.shrinks_while_expiring += other.shrinks_while_expiring;
        self.emptied_tables += other.emptied_tables;
    }
}

/// One key as the model sees it.
#[derive(Clone, Debug)]
struct Entry {
    value: Vec<u8>,
    /// `(deadline, order set)` if volatile.
    timer: Option<(Tick, u64)>,
}

/// The reference: what the store must hold.
struct Model {
    entries: HashMap<Vec<u8>, Entry>,
    /// The sum of the keys' [`block_bytes`].
    used: usize,
    /// The sums of the keys' and the values' lengths.
    key_bytes: usize,
    value_bytes: usize,
    keys: usize,
    capacity: usize,
    max_key: usize,
    max_value: usize,
    expired_keys: u64,
    next_order: u64,
}

/// What the model says a write must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expected {
    Answer(Result<(), StoreError>),
    /// Fits by count; a store of more than `MAX_BYTES_MOVED` bytes may still refuse it.
    Fits,
}

impl Model {
    /// Removes a key, live or not.
    fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let entry = self.entries.remove(key)?;
        self.used -= block_bytes(key.len() + entry.value.len());
        self.key_bytes -= key.len();
        self.value_bytes -= entry.value.len();
        Some(entry)
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.used = 0;
        self.key_bytes = 0;
        self.value_bytes = 0;
    }

    fn order(&mut self) -> u64 {
        self.next_order += 1;
        self.next_order
    }

    /// Lazy expiry: any access after a key's deadline removes it.
    fn touch(&mut self, key: &[u8], now: Tick) -> bool {
        let expired = self
            .entries
            .get(key)
            .and_then(|e| e.timer)
            .is_some_and(|(at, _)| at < now);
        if expired {
            self.remove(key);
            self.expired_keys += 1;
        }
        expired
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
                // The store caps deadlines one short of the end of time (see `Ttl::At`).
                Ttl::At(at) => entry.timer = Some((at.min(Tick::MAX - 1), order)),
            }
        }
    }

    /// What `set` must answer, given the key's state after lazy expiry (applied here).
    fn expect_set(&mut self, key: &[u8], value: &[u8], ttl: Ttl, now: Tick) -> Expected {
        if key.len() > self.max_key {
            return Expected::Answer(Err(StoreError::KeyTooLong));
        }
        if value.len() > self.max_value {
            return Expected::Answer(Err(StoreError::ValueTooLarge));
        }
        self.touch(key, now);
        if matches!(ttl, Ttl::At(at) if at <= now) {
            return Expected::Answer(Ok(()));
        }
        let old = match self.entries.get(key) {
            Some(entry) => block_bytes(key.len() + entry.value.len()),
            None if self.entries.len() == self.keys => {
                return Expected::Answer(Err(StoreError::KeysFull))
            }
            None => 0,
        };
        if self.used - old + block_bytes(key.len() + value.len()) > self.capacity {
            Expected::Answer(Err(StoreError::BytesFull))
        } else {
            Expected::Fits
        }
    }

    /// Applies a `set` the store took.
    fn apply_set(&mut self, key: &[u8], value: &[u8], ttl: Ttl, now: Tick) {
        if matches!(ttl, Ttl::At(at) if at <= now) {
            if self.remove(key).is_some() {
                self.expired_keys += 1;
            }
            return;
        }
        let timer = self.remove(key).and_then(|e| e.timer);
        self.used += block_bytes(key.len() + value.len());
        self.key_bytes += key.len();
        self.value_bytes += value.len();
        self.entries.insert(
            key.to_vec(),
            Entry {
                value: value.to_vec(),
                timer,
            },
        );
        self.set_ttl(key, ttl);
    }

    /// Keys due at `now` in the order the timer wheel fires them.
    fn due(&self, now: Tick) -> Vec<(Tick, u64, Vec<u8>)> {
        let mut due: Vec<_> = self
            .entries
            .iter()
            .filter_map(|(key, e)| {
                e.timer
                    .filter(|&(at, _)| at < now)
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

/// A store and its model under one sequence of ops.
pub struct Run<const KEYS: usize, const BYTES: usize> {
    store: Store<'static>,
    model: Model,
    now: Tick,
    coverage: Coverage,
    /// The table's allocated bytes after the last op.
    table: usize,
    /// The table's allocated bytes once its first key came (0 until then).
    first_table: usize,
    /// The last ops, for failure messages.
    history: Vec<String>,
}

impl<const KEYS: usize, const BYTES: usize> Run<KEYS, BYTES> {
    /// An empty store with a hash key from `seed` and these limits, at time 0.
    ///
    /// # Panics
    ///
    /// If the store's capacities are not the documented ones.
    pub fn new(seed: u32, max_key: usize, max_value: usize) -> Self {
        let mut store = Store::new(StoreMemory::allocate(KEYS, BYTES), max_key, max_value);
        let mut key = HashKey::default();
        key.0[..4].copy_from_slice(&seed.to_le_bytes());
        assert_eq!(store.set_hash_key(key), Ok(()));
        assert_eq!(store.key_capacity(), KEYS);
        assert_eq!(store.bytes_capacity(), usable_bytes(BYTES));
        assert_eq!(store.bytes_used(), 0);
        Self {
            store,
            model: Model {
                entries: HashMap::new(),
                used: 0,
                key_bytes: 0,
                value_bytes: 0,
                keys: KEYS,
                capacity: usable_bytes(BYTES),
                max_key,
                max_value,
                expired_keys: 0,
                next_order: 0,
            },
            now: 0,
            coverage: Coverage::default(),
            table: 0,
            first_table: 0,
            history: Vec::new(),
        }
    }

    /// Moves time by `step`, applies `op` to store and model, and checks that they agree.
    ///
    /// # Panics
    ///
    /// When the store and the model disagree.
    pub fn step(&mut self, step: Step, op: &Op) {
        self.now = step.apply(self.now);
        if self.history.len() == HISTORY {
            self.history.remove(0);
        }
        self.history
            .push(format!("at {}: {}", self.now, describe(op)));
        self.apply(op);
        self.check();
    }

    /// Reads every key back at the current time (which removes expired keys), checks once
    /// more, and returns what the run exercised.
    ///
    /// # Panics
    ///
    /// When the store and the model disagree.
    pub fn finish(mut self) -> Coverage {
        let now = self.now;
        let keys: Vec<Vec<u8>> = self.model.entries.keys().cloned().collect();
        for key in keys {
            let got = self.store.get(&key, now).map(<[u8]>::to_vec);
            let expected = self.model.live(&key, now).map(|e| e.value.clone());
            self.agree(got == expected, || format!("final get({key:?}) at {now}"));
        }
        self.check();
        self.coverage
    }

    /// Panics with the recent ops unless `ok`.
    fn agree(&self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            let mut message = what();
            message.push_str("\nlast ops:");
            for line in &self.history {
                let _ = write!(message, "\n  {line}");
            }
            panic!("{message}");
        }
    }

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
                self.set(&key, &value, ttl);
            }
            Op::Get { key } => {
                let key = key.bytes();
                let got = self.store.get(&key, now).map(<[u8]>::to_vec);
                let expected = self.model.live(&key, now).map(|e| e.value.clone());
                self.agree(got == expected, || {
                    format!("get({key:?}) at {now}: {got:?}, model {expected:?}")
                });
            }
            Op::Contains { key } => {
                let key = key.bytes();
                let got = self.store.contains(&key, now);
                let expected = self.model.live(&key, now).is_some();
                self.agree(got == expected, || format!("contains({key:?}) at {now}"));
            }
            Op::Deadline { key } => {
                let key = key.bytes();
                let got = self.store.deadline(&key, now);
                let expected = self
                    .model
                    .live(&key, now)
                    .map(|e| e.timer.map(|(at, _)| at));
                self.agree(got == expected, || {
                    format!("deadline({key:?}) at {now}: {got:?}, model {expected:?}")
                });
            }
            Op::Del { key } => {
                let key = key.bytes();
                let got = self.store.delete(&key, now);
                let expected = self.model.live(&key, now).is_some();
                if expected {
                    self.model.remove(&key);
                }
                self.agree(got == expected, || format!("delete({key:?}) at {now}"));
            }
            Op::SetDeadline { key, at } => {
                let key = key.bytes();
                let deadline = at.map(|when| when.at(now));
                let got = self.store.set_deadline(&key, deadline, now);
                let expected = self.model.live(&key, now).is_some();
                if expected {
                    match deadline {
                        Some(at) if at <= now => {
                            self.model.remove(&key);
                            self.model.expired_keys += 1;
                        }
                        Some(at) => self.model.set_ttl(&key, Ttl::At(at)),
                        None => self.model.set_ttl(&key, Ttl::Persist),
                    }
                }
                self.agree(got == expected, || {
                    format!("set_deadline({key:?}, {deadline:?}) at {now}")
                });
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
                self.agree(
                    self.store.max_key_len() == max_key && self.store.max_value_len() == max_value,
                    || "set_limits".into(),
                );
            }
            Op::Clear => {
                self.store.clear();
                self.model.clear();
            }
        }
    }

    fn set(&mut self, key: &[u8], value: &[u8], ttl: Ttl) {
        let now = self.now;
        let checked = self.store.check_set(key, value, ttl, now);
        let expired_before = self.model.expired_keys;
        let got = self.store.set(key, value, ttl, now);
        let expected = self.model.expect_set(key, value, ttl, now);
        let over_expired = self.model.expired_keys > expired_before;
        let what = || {
            format!(
                "set({key:?}, {} bytes, {ttl:?}) at {now}: {got:?}, model {expected:?}",
                value.len()
            )
        };
        let allowed = match expected {
            Expected::Answer(answer) => got == answer,
            Expected::Fits => {
                got.is_ok() || (got == Err(StoreError::BytesFull) && BYTES > MAX_BYTES_MOVED)
            }
        };
        self.agree(allowed, what);
        self.agree(checked == got, || {
            format!("check_set answered {checked:?}; then {}", what())
        });
        match got {
            Ok(()) => {
                self.model.apply_set(key, value, ttl, now);
                self.coverage.writes += 1;
                if over_expired {
                    self.coverage.writes_over_expired += 1;
                }
            }
            Err(error) => {
                match (error, expected) {
                    (StoreError::KeysFull, _) => self.coverage.keys_full += 1,
                    (StoreError::BytesFull, Expected::Fits) => {
                        self.coverage.scattered_refusals += 1;
                    }
                    (StoreError::BytesFull, _) => self.coverage.bytes_full += 1,
                    _ => {}
                }
                // Refused: every key keeps its value (the model did not change, except that the
                // key itself is gone if it had expired by `now`). Reading removes keys that have
                // expired, in the store and the model alike.
                let keys: Vec<Vec<u8>> = self.model.entries.keys().cloned().collect();
                for k in keys {
                    let got = self.store.get(&k, now).map(<[u8]>::to_vec);
                    let expected = self.model.live(&k, now).map(|e| e.value.clone());
                    self.agree(got == expected, || {
                        format!("after a refused {}, {k:?} reads {got:?}", what())
                    });
                }
            }
        }
    }

    fn expire(&mut self, now: Tick, budget: u8) {
        let budget = match budget {
            0xff => usize::MAX,
            n => usize::from(n % 8),
        };
        let due = self.model.due(now);
        let mut removed = Vec::new();
        let expiry = self
            .store
            .expire_each(now, budget, |key| removed.push(key.to_vec()));
        let fired = due.len().min(budget);
        self.agree(expiry.fired == fired, || {
            format!(
                "expire({now}, {budget}) fired {} with {} due",
                expiry.fired,
                due.len()
            )
        });
        self.agree(expiry.more_due == (due.len() > budget), || {
            format!("expire({now}, {budget}): more_due {}", expiry.more_due)
        });
        self.agree(removed.len() == expiry.fired, || {
            format!("expire({now}, {budget}) told of {removed:?}")
        });
        if KEYS <= ONE_TIMER_SEGMENT {
            let first: Vec<&Vec<u8>> = due[..fired].iter().map(|(_, _, key)| key).collect();
            let in_order = removed.iter().eq(first.iter().copied());
            self.agree(in_order, || {
                format!("expire({now}, {budget}) removed {removed:?}, model {first:?}")
            });
        }
        for key in &removed {
            let was_due = due.iter().any(|(_, _, due)| due == key);
            let held = self.model.remove(key).is_some();
            self.agree(was_due && held, || {
                format!("expire({now}, {budget}) removed {key:?}, not due (or twice)")
            });
            self.model.expired_keys += 1;
        }
        self.coverage.swept += fired;
        if expiry.more_due {
            self.coverage.budget_cuts += 1;
        }
        // The keys that fired are gone without an access, the rest still there.
        let left = due
            .iter()
            .filter(|(_, _, key)| self.model.entries.contains_key(key))
            .count();
        self.agree(left == due.len() - fired, || {
            format!("{left} of {} due keys left after {fired} fired", due.len())
        });
    }

    fn check(&mut self) {
        let now = self.now;
        let store = &self.store;
        let model = &self.model;
        self.agree(store.len() == model.entries.len(), || {
            format!(
                "len {} at {now}, model {}",
                store.len(),
                model.entries.len()
            )
        });
        self.agree(store.is_empty() == model.entries.is_empty(), || {
            "is_empty".into()
        });
        let volatile = model.entries.values().filter(|e| e.timer.is_some()).count();
        self.agree(store.volatile_len() == volatile, || {
            format!(
                "volatile_len {} at {now}, model {volatile}",
                store.volatile_len()
            )
        });
        let used = model.used;
        self.agree(store.bytes_used() == used, || {
            format!("bytes_used {} at {now}, model {used}", store.bytes_used())
        });
        self.agree(store.bytes_used() <= store.bytes_capacity(), || {
            "bytes_used over capacity".into()
        });
        self.agree(store.expired_keys() == model.expired_keys, || {
            format!(
                "expired_keys {} at {now}, model {}",
                store.expired_keys(),
                model.expired_keys
            )
        });
        let next = store.next_deadline();
        // Work is due the tick after the earliest deadline (a key goes once `now > deadline`).
        let earliest = model.earliest_deadline().map(|at| at.saturating_add(1));
        self.agree(
            next.is_some() == earliest.is_some() && next <= earliest,
            || format!("next_deadline {next:?}, tick after the earliest deadline {earliest:?}"),
        );
        let fill = used * 100 / store.bytes_capacity().max(1);
        self.coverage.peak_fill_pct = self.coverage.peak_fill_pct.max(fill);
        // What the store says its memory holds: the pool blocks, and the keys' and values'
        // own bytes, as the model counts them.
        let memory = store.memory();
        let (keys, values) = (model.key_bytes, model.value_bytes);
        self.agree(
            memory.keys_and_values == used && memory.keys == keys && memory.values == values,
            || {
                format!(
                    "{memory:?} at {now}, model: {used} bytes used, keys {keys}, values {values}"
                )
            },
        );
        let expiring = model
            .entries
            .values()
            .any(|e| e.timer.is_some_and(|(at, _)| at < now));
        if memory.allocated_table > self.table {
            self.coverage.table_growths += 1;
            self.coverage.growths_while_expiring += usize::from(expiring);
        } else if memory.allocated_table < self.table {
            self.coverage.table_shrinks += 1;
            self.coverage.shrinks_while_expiring += usize::from(expiring);
        }
        if self.first_table == 0 && store.len() == 1 {
            self.first_table = memory.allocated_table;
        }
        if store.is_empty() && self.first_table > 0 {
            let first = self.first_table;
            self.agree(memory.allocated_table <= 2 * first, || {
                format!("{memory:?} without keys, {first} bytes once the first key came")
            });
            self.coverage.emptied_tables += usize::from(self.table > memory.allocated_table);
        }
        self.table = memory.allocated_table;
    }
}

/// An op in a few words, for failure messages.
fn describe(op: &Op) -> String {
    match op {
        Op::Set { key, value, ttl } => format!(
            "set {:?} ({} bytes) {ttl:?}",
            String::from_utf8_lossy(&key.bytes()),
            value.bytes().len()
        ),
        other => format!("{other:?}"),
    }
}
