//! The key space: string keys with optional time-to-live, fixed capacity, over memory the
//! caller provides ([`StoreMemory`]: arrays in a `static`, or allocated at run time).
//!
//! Entries live in a fixed table with hash chains; key and value bytes share one byte pool of
//! size-classed blocks in which no write moves more than [`MAX_BYTES_MOVED`] bytes of other
//! keys (see [`Store::bytes_used`] for what that costs). Each volatile key has exactly one
//! timer in a timer queue of the same capacity as the table ([`KeyTimers`]), so timer capacity
//! can never be what fails. A key is invisible from its deadline on (checked on every access)
//! and is removed by its timer within one tick of it.

use core::fmt;

#[cfg(not(feature = "alloc"))]
use timer_core::{HeapSlot as TimerSlot, TimerHeapOn as KeyTimersOn};
use timer_core::{Tick, TimerId, TimerQueue};
#[cfg(feature = "alloc")]
use timer_core::{TimerWheelOn as KeyTimersOn, WheelSlot as TimerSlot};

use crate::memory::Memory;
use crate::pool::{Owners, Pool};

/// The store's key timers, one per volatile key, over the timer slots of its [`StoreMemory`].
///
/// With `alloc` (a host sized at run time, up to millions of keys), timer-core's wheel: O(1)
/// per operation whatever the count, for 5 KiB of list heads that do not grow with it. Without
/// (a board's static arrays, a few hundred keys at most), timer-core's 4-ary heap: O(log n)
/// with a tiny n, and nothing beyond its slots (32 bytes each, 8 more than the wheel's), so a
/// 128-key board saves some 4 KiB of RAM. Both keep the same contract ([`TimerQueue`]):
/// deadline order, equal deadlines first in first out, budgeted expiry.
pub type KeyTimers<'a> = KeyTimersOn<u32, Memory<'a, TimerSlot<u32>>>;

/// The most bytes of other keys' blocks one write moves, whatever the size of the store: a
/// write that needs a block where the free bytes are scattered may slide the blocks of a window
/// of the pool together, and is refused rather than move more.
pub const MAX_BYTES_MOVED: usize = crate::pool::MAX_BYTES_MOVED;

/// "No entry". Entries are numbered from 1 so that an empty store is all zero bytes: a
/// `static` of it lands in `.bss` (no flash image, no stack temporary at boot).
const NIL: u32 = 0;

/// The array position of entry number `index` (`NIL` maps out of range).
#[inline]
fn position(index: u32) -> usize {
    (index as usize).wrapping_sub(1)
}

/// Why a write was refused. Nothing was changed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum StoreError {
    /// Every key slot is taken.
    KeysFull,
    /// The byte pool has no room for this key and value: by count, or (in a store of more than
    /// [`MAX_BYTES_MOVED`] bytes) in one place; see [`Store::bytes_used`].
    BytesFull,
    /// The key is longer than the configured limit.
    KeyTooLong,
    /// The value is longer than the configured limit.
    ValueTooLarge,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::KeysFull => "key table is full",
            Self::BytesFull => "value memory is full",
            Self::KeyTooLong => "key is too long",
            Self::ValueTooLarge => "value is too large",
        })
    }
}

impl core::error::Error for StoreError {}

/// What a write does to the key's time to live.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ttl {
    /// Remove any time to live (plain `SET`).
    Persist,
    /// Keep the current time to live (`KEEPTTL`, `INCR`).
    Keep,
    /// Expire at this tick: the key is live through tick `at` and gone from the next one,
    /// as in Redis, whose key is expired once `mstime() > when`. With whole-millisecond ticks
    /// that read a clock rounded down, this is what keeps a key from going before its time
    /// (`PX 5` set at 10.9 ms lives until 16 ms, not 15) while `PTTL` never reports more than
    /// was set. Deadlines are capped at `Tick::MAX - 1`, some 585 million years of
    /// milliseconds.
    At(Tick),
}

/// A key with deadline `at` goes at the tick after it ([`Ttl::At`]): its timer's deadline.
const fn timer_for_deadline(at: Tick) -> Tick {
    if at >= Tick::MAX - 1 {
        Tick::MAX
    } else {
        at + 1
    }
}

/// The key's deadline, from its timer's.
const fn deadline_of_timer(timer: Tick) -> Tick {
    timer.saturating_sub(1)
}

#[derive(Clone, Copy)]
struct Entry {
    used: bool,
    /// Next entry in the same hash bucket.
    next: u32,
    hash: u32,
    /// Pool offset of `key ++ value`.
    offset: u32,
    key_len: u32,
    value_len: u32,
    timer: Option<TimerId>,
    /// Given anew on each write to the key (`WATCH` compares it).
    #[cfg(feature = "alloc")]
    stamp: u32,
}

impl Entry {
    const VACANT: Self = Self {
        used: false,
        next: NIL,
        hash: 0,
        offset: 0,
        key_len: 0,
        value_len: 0,
        timer: None,
        #[cfg(feature = "alloc")]
        stamp: 0,
    };
}

/// One key's slot in a store's key table (opaque): see [`StoreMemory`].
#[derive(Clone, Copy)]
pub struct KeySlot(Entry);

impl KeySlot {
    /// A vacant slot.
    pub const fn new() -> Self {
        Self(Entry::VACANT)
    }
}

impl Default for KeySlot {
    fn default() -> Self {
        Self::new()
    }
}

struct Entries<'a>(Memory<'a, KeySlot>);

impl Entries<'_> {
    fn get(&self, position: usize) -> Option<&Entry> {
        self.0.get(position).map(|slot| &slot.0)
    }

    fn get_mut(&mut self, position: usize) -> Option<&mut Entry> {
        self.0.get_mut(position).map(|slot| &mut slot.0)
    }
}

impl Owners for Entries<'_> {
    fn moved(&mut self, owner: u32, offset: u32) {
        if let Some(entry) = self.get_mut(position(owner)) {
            entry.offset = offset;
        }
    }
}

/// The memory a [`Store`] runs over: a key table of some number of keys (each key's entry,
/// hash bucket and timer slot) and a byte pool for keys and values.
///
/// Either arrays the caller lends ([`StoreArrays`], a board's `static`), or, with the `alloc`
/// feature, memory [`allocate`](Self::allocate)d for sizes chosen at run time (the host's
/// flags). The store is the same code over both.
pub struct StoreMemory<'a> {
    entries: Memory<'a, KeySlot>,
    buckets: Memory<'a, u32>,
    timers: Memory<'a, TimerSlot<u32>>,
    bytes: Memory<'a, u8>,
    /// Made empty just now (allocated): the store need not clear it.
    fresh: bool,
}

impl StoreMemory<'_> {
    /// The most keys a store holds (its timer queue numbers them in a `u32`).
    pub const MAX_KEYS: usize = u32::MAX as usize - 2;

    /// The pool bytes (`BYTES`) that give a store at least `usable` bytes for keys and values,
    /// [`Store::bytes_usable`] (up to 4 GiB): the pool keeps 4 bytes of bookkeeping per 4 KiB.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::StoreMemory;
    ///
    /// assert_eq!(StoreMemory::bytes_for(1024), 1040);
    /// assert!(StoreMemory::bytes_for(1 << 30) < (1 << 30) + (1 << 21));
    /// ```
    pub const fn bytes_for(usable: usize) -> usize {
        Pool::len_for(usable)
    }

    /// Memory for `keys` keys (at most [`MAX_KEYS`](Self::MAX_KEYS)) and a pool of `bytes`
    /// bytes for keys and values (as [`StoreArrays`]' `BYTES`; a store uses at most 4 GiB of
    /// it), from the global allocator. [`bytes_for`](Self::bytes_for) says how many bytes
    /// make a given [`Store::bytes_usable`].
    ///
    /// The key table (about 64 bytes per key) is written at once. The pool is zeroed memory
    /// from the allocator, so its pages cost no RSS until keys reach them: a large
    /// `--maxmemory` on an idle host server stays cheap.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreMemory, Ttl};
    ///
    /// let bytes = StoreMemory::bytes_for(64 << 20);
    /// let mut store = Store::new(StoreMemory::allocate(100_000, bytes), 512, 1 << 20);
    /// assert_eq!(store.key_capacity(), 100_000);
    /// assert!(store.bytes_usable() >= 64 << 20);
    /// store.set(b"k", b"v", Ttl::Persist, 0).unwrap();
    /// ```
    #[cfg(feature = "alloc")]
    pub fn allocate(keys: usize, bytes: usize) -> StoreMemory<'static> {
        use alloc::vec::Vec;
        let keys = keys.min(Self::MAX_KEYS);
        StoreMemory {
            entries: Memory::from(alloc::vec![KeySlot::new(); keys]),
            buckets: Memory::from(alloc::vec![NIL; keys]),
            timers: Memory::from((0..keys).map(|_| TimerSlot::new()).collect::<Vec<_>>()),
            bytes: Memory::from(alloc::vec![0u8; bytes]),
            fresh: true,
        }
    }
}

/// A store's memory as arrays: `KEYS` keys and `BYTES` bytes for keys and values. `new` is a
/// `const fn` and an empty one is all zero bytes, so it can be a `static` in `.bss` (see
/// `static_cell::ConstStaticCell`); lend it to a store with `StoreMemory::from(&mut arrays)`.
///
/// # Examples
///
/// ```
/// use net_shell::store::{Store, StoreArrays, StoreMemory, Ttl};
///
/// let mut arrays: StoreArrays<16, 1024> = StoreArrays::new();
/// let mut store = Store::new(StoreMemory::from(&mut arrays), 64, 256);
/// store.set(b"greeting", b"hello", Ttl::Persist, 0).unwrap();
/// assert_eq!(store.key_capacity(), 16);
/// ```
pub struct StoreArrays<const KEYS: usize, const BYTES: usize> {
    entries: [KeySlot; KEYS],
    buckets: [u32; KEYS],
    timers: [TimerSlot<u32>; KEYS],
    bytes: [u8; BYTES],
}

impl<const KEYS: usize, const BYTES: usize> StoreArrays<KEYS, BYTES> {
    /// Empty arrays (all zero bytes).
    pub const fn new() -> Self {
        Self {
            entries: [KeySlot::new(); KEYS],
            buckets: [NIL; KEYS],
            timers: [const { TimerSlot::new() }; KEYS],
            bytes: [0; BYTES],
        }
    }
}

impl<const KEYS: usize, const BYTES: usize> Default for StoreArrays<KEYS, BYTES> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a, const KEYS: usize, const BYTES: usize> From<&'a mut StoreArrays<KEYS, BYTES>>
    for StoreMemory<'a>
{
    fn from(arrays: &'a mut StoreArrays<KEYS, BYTES>) -> Self {
        Self {
            entries: Memory::from(&mut arrays.entries[..]),
            buckets: Memory::from(&mut arrays.buckets[..]),
            timers: Memory::from(&mut arrays.timers[..]),
            bytes: Memory::from(&mut arrays.bytes[..]),
            fresh: false,
        }
    }
}

/// A fixed-capacity key space over [`StoreMemory`]: its keys and values share one byte pool.
///
/// # Examples
///
/// ```
/// use net_shell::store::{Store, StoreArrays, StoreMemory, Ttl};
///
/// let mut arrays: StoreArrays<16, 1024> = StoreArrays::new();
/// let mut store = Store::new(StoreMemory::from(&mut arrays), 64, 256);
/// store.set(b"greeting", b"hello", Ttl::At(1_000), 0).unwrap();
/// assert_eq!(store.get(b"greeting", 1_000), Some(&b"hello"[..])); // live through its deadline
/// assert_eq!(store.get(b"greeting", 1_001), None); // and gone after it, as in Redis
/// assert_eq!(store.expired_keys(), 1);
/// ```
pub struct Store<'a> {
    entries: Entries<'a>,
    buckets: Memory<'a, u32>,
    /// Key capacity: the shortest of the key table's arrays.
    keys: usize,
    free: u32,
    unused_from: u32,
    len: usize,
    pool: Pool<'a>,
    timers: KeyTimers<'a>,
    max_key_len: usize,
    max_value_len: usize,
    expired_keys: u64,
    /// Keys removed on access after their deadline, kept for keyspace notifications while
    /// [`record_expired_on_access`](Self::record_expired_on_access) is on.
    #[cfg(feature = "alloc")]
    expired_on_access: Option<alloc::vec::Vec<alloc::vec::Vec<u8>>>,
    seed: u32,
    /// The next write stamp.
    #[cfg(feature = "alloc")]
    next_stamp: u32,
}

impl<'a> Store<'a> {
    /// An empty store over `memory` that refuses keys over `max_key_len` and values over
    /// `max_value_len` bytes.
    pub fn new(memory: StoreMemory<'a>, max_key_len: usize, max_value_len: usize) -> Self {
        Self::with_seed(memory, max_key_len, max_value_len, 0)
    }

    /// Sets the largest key and value accepted from now on (keys already stored stay).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreError, Ttl};
    ///
    /// use net_shell::store::StoreArrays;
    ///
    /// let mut arrays: StoreArrays<4, 256> = StoreArrays::new();
    /// let mut store = Store::new((&mut arrays).into(), 0, 0);
    /// assert_eq!(store.set(b"k", b"v", Ttl::Persist, 0), Err(StoreError::KeyTooLong));
    /// store.set_limits(16, 64);
    /// assert_eq!(store.set(b"k", b"v", Ttl::Persist, 0), Ok(()));
    /// ```
    pub fn set_limits(&mut self, max_key_len: usize, max_value_len: usize) {
        self.max_key_len = max_key_len;
        self.max_value_len = max_value_len;
    }

    /// Sets the hash seed. Only allowed while empty (the seed places keys in buckets).
    ///
    /// # Errors
    ///
    /// `Err(())` if the store holds keys; nothing changes.
    #[allow(clippy::result_unit_err)]
    pub fn set_seed(&mut self, seed: u32) -> Result<(), ()> {
        if self.is_empty() {
            self.seed = seed;
            Ok(())
        } else {
            Err(())
        }
    }

    /// Like [`new`](Self::new) with a hash seed; give each process a random one where an
    /// attacker could choose keys (hash flooding).
    pub fn with_seed(
        memory: StoreMemory<'a>,
        max_key_len: usize,
        max_value_len: usize,
        seed: u32,
    ) -> Self {
        let StoreMemory {
            mut entries,
            mut buckets,
            timers,
            bytes,
            fresh,
        } = memory;
        let keys = entries
            .len()
            .min(buckets.len())
            .min(timers.len())
            .min(StoreMemory::MAX_KEYS);
        // Lent memory may hold an earlier store's keys. (Allocated memory is empty already,
        // and its untouched bucket pages cost no RSS.)
        if !fresh {
            entries[..keys].fill(KeySlot::new());
            buckets[..keys].fill(NIL);
        }
        Self {
            entries: Entries(entries),
            buckets,
            keys,
            free: NIL,
            unused_from: 0,
            len: 0,
            pool: Pool::new(bytes),
            timers: KeyTimers::with_storage(timers),
            max_key_len,
            max_value_len,
            expired_keys: 0,
            #[cfg(feature = "alloc")]
            expired_on_access: None,
            seed,
            #[cfg(feature = "alloc")]
            next_stamp: 1,
        }
    }

    /// Number of keys, including expired keys not yet removed (like Redis' `DBSIZE`).
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the store holds no key.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of keys that carry a time to live.
    pub fn volatile_len(&self) -> usize {
        self.timers.len()
    }

    /// The key capacity.
    pub const fn key_capacity(&self) -> usize {
        self.keys
    }

    /// Pool bytes held by keys: for each key, an 8-byte header plus its key and value, rounded
    /// up to a size class (a multiple of 16 below 256 bytes, then one of 8 classes per power of
    /// two, at most 1/8 above the size).
    ///
    /// This is what the blocks take, rounding included, whatever their layout. It does not say
    /// how the free bytes lie: a write needs its whole block in one place, and in a store of
    /// more than [`MAX_BYTES_MOVED`] bytes it gathers scattered free bytes only by moving at
    /// most that many bytes of other keys. So a write can be refused with
    /// [`StoreError::BytesFull`] even though `bytes_used()`, less the key's current block, plus
    /// its block is within [`bytes_capacity`](Self::bytes_capacity): rarely below 95% full, and
    /// then the largest values first. A store of at most [`MAX_BYTES_MOVED`] bytes refuses a
    /// write only when it does not fit by that count.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreArrays, Ttl};
    ///
    /// let mut arrays: StoreArrays<4, 256> = StoreArrays::new();
    /// let mut store = Store::new((&mut arrays).into(), 16, 64);
    /// store.set(b"key", b"value", Ttl::Persist, 0).unwrap();
    /// assert_eq!(store.bytes_used(), 16); // 8 + 3 + 5, rounded up to 16
    /// store.set(b"key", &[0; 60], Ttl::Persist, 0).unwrap();
    /// assert_eq!(store.bytes_used(), 80); // 8 + 3 + 60 = 71: 80
    /// ```
    pub const fn bytes_used(&self) -> usize {
        self.pool.used()
    }

    /// Pool bytes keys can use: the limit set by [`set_bytes_limit`](Self::set_bytes_limit),
    /// else the pool's bytes rounded down to 16, less (in a store of more than
    /// [`MAX_BYTES_MOVED`] bytes) 4 bytes of bookkeeping per 4 KiB.
    pub const fn bytes_capacity(&self) -> usize {
        self.pool.capacity()
    }

    /// The most pool bytes keys could use: the memory the store was given, less bookkeeping.
    /// [`set_bytes_limit`](Self::set_bytes_limit) can lower the limit below this, or raise it
    /// back up to this.
    pub const fn bytes_usable(&self) -> usize {
        self.pool.usable()
    }

    /// Keys and values may take at most `limit` pool bytes from now on (Redis' `maxmemory`),
    /// clamped to [`bytes_usable`](Self::bytes_usable); returns the limit now in force. Keys
    /// already stored stay, even above a lowered limit: writes that would grow the total are
    /// refused with [`StoreError::BytesFull`] until deletes bring it under.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreArrays, StoreError, Ttl};
    ///
    /// let mut arrays: StoreArrays<4, 1024> = StoreArrays::new();
    /// let mut store = Store::new((&mut arrays).into(), 16, 512);
    /// assert_eq!(store.set_bytes_limit(64), 64);
    /// assert_eq!(store.set(b"k", &[0; 100], Ttl::Persist, 0), Err(StoreError::BytesFull));
    /// store.set_bytes_limit(usize::MAX);
    /// assert_eq!(store.set(b"k", &[0; 100], Ttl::Persist, 0), Ok(()));
    /// ```
    pub fn set_bytes_limit(&mut self, limit: usize) -> usize {
        self.pool.set_limit(limit);
        self.pool.capacity()
    }

    /// The longest key accepted.
    pub const fn max_key_len(&self) -> usize {
        self.max_key_len
    }

    /// The largest value accepted.
    pub const fn max_value_len(&self) -> usize {
        self.max_value_len
    }

    /// Keys removed because their time to live ran out (on access or by the timer).
    pub const fn expired_keys(&self) -> u64 {
        self.expired_keys
    }

    /// Whether to keep the keys removed on access after their deadline (a command met them
    /// before the timer sweep did), for [`take_expired_on_access`](Self::take_expired_on_access):
    /// keyspace notifications publish those too.
    #[cfg(feature = "alloc")]
    pub fn record_expired_on_access(&mut self, on: bool) {
        if on != self.expired_on_access.is_some() {
            self.expired_on_access = on.then(alloc::vec::Vec::new);
        }
    }

    /// The keys removed on access since the last call (none unless recording).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreMemory, Ttl};
    ///
    /// let mut store = Store::new(StoreMemory::allocate(8, 1024), 16, 64);
    /// store.record_expired_on_access(true);
    /// store.set(b"a", b"1", Ttl::At(5), 0).unwrap();
    /// assert_eq!(store.get(b"a", 6), None); // past its deadline: removed
    /// assert_eq!(store.take_expired_on_access(), [b"a".to_vec()]);
    /// ```
    #[cfg(feature = "alloc")]
    pub fn take_expired_on_access(&mut self) -> alloc::vec::Vec<alloc::vec::Vec<u8>> {
        match &mut self.expired_on_access {
            Some(keys) => core::mem::take(keys),
            None => alloc::vec::Vec::new(),
        }
    }

    /// The earliest tick at which [`expire`](Self::expire) has work (may be early, never late).
    pub fn next_deadline(&self) -> Option<Tick> {
        self.timers.next_deadline()
    }

    /// Removes keys whose deadline has passed (`< now`), at most `budget` of them; returns how many were
    /// removed and whether more are due.
    pub fn expire(&mut self, now: Tick, budget: usize) -> timer_core::Sweep {
        self.expire_each(now, budget, |_| {})
    }

    /// [`expire`](Self::expire), telling `removed` each key just before it goes (for
    /// keyspace notifications).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreMemory, Ttl};
    ///
    /// let mut store = Store::new(StoreMemory::allocate(8, 1024), 16, 64);
    /// store.set(b"a", b"1", Ttl::At(5), 0).unwrap();
    /// store.set(b"b", b"2", Ttl::At(9), 0).unwrap();
    /// let mut gone = Vec::new();
    /// store.expire_each(6, 10, |key| gone.push(key.to_vec()));
    /// assert_eq!(gone, [b"a".to_vec()]);
    /// ```
    pub fn expire_each(
        &mut self,
        now: Tick,
        budget: usize,
        mut removed: impl FnMut(&[u8]),
    ) -> timer_core::Sweep {
        let mut fired = 0;
        while fired < budget {
            let Some(expired) = self.timers.pop_expired(now) else {
                return timer_core::Sweep {
                    fired,
                    more_due: false,
                };
            };
            let index = expired.value;
            if self
                .entry(index)
                .is_some_and(|e| e.timer == Some(expired.id))
            {
                if let Some(entry) = self.entries.get_mut(position(index)) {
                    entry.timer = None;
                    removed(self.pool.slice(entry.offset, entry.key_len as usize));
                }
                self.remove_index(index);
                self.expired_keys += 1;
                fired += 1;
            }
        }
        timer_core::Sweep {
            fired,
            more_due: self.timers.has_expired(now),
        }
    }

    /// The value of a live key.
    pub fn get(&mut self, key: &[u8], now: Tick) -> Option<&[u8]> {
        let index = self.find_live(key, now)?;
        let entry = self.entry(index)?;
        Some(
            self.pool
                .slice(entry.offset + entry.key_len, entry.value_len as usize),
        )
    }

    /// Whether a live key exists.
    pub fn contains(&mut self, key: &[u8], now: Tick) -> bool {
        self.find_live(key, now).is_some()
    }

    /// The deadline of a live key: `None` if there is no such key, `Some(None)` if it is
    /// persistent.
    pub fn deadline(&mut self, key: &[u8], now: Tick) -> Option<Option<Tick>> {
        let index = self.find_live(key, now)?;
        let timer = self.entry(index)?.timer;
        Some(
            timer
                .and_then(|id| self.timers.deadline(id))
                .map(deadline_of_timer),
        )
    }

    /// Sets a live key's deadline (`None`: persist). Returns `false` if there is no such key.
    ///
    /// A deadline `<= now` deletes the key, as Redis does.
    pub fn set_deadline(&mut self, key: &[u8], deadline: Option<Tick>, now: Tick) -> bool {
        let Some(index) = self.find_live(key, now) else {
            return false;
        };
        match deadline {
            Some(at) if at <= now => {
                self.remove_index(index);
                self.expired_keys += 1;
            }
            _ => {
                self.apply_ttl(index, deadline.map_or(Ttl::Persist, Ttl::At));
                self.stamp_written(index);
            }
        }
        true
    }

    /// A live key's write stamp, new on every write to it (a value, a time to live): what
    /// `WATCH` notes and `EXEC` compares. `None` if there is no such key (or it has expired).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreArrays, Ttl};
    ///
    /// let mut arrays: StoreArrays<4, 256> = StoreArrays::new();
    /// let mut store = Store::new((&mut arrays).into(), 16, 64);
    /// store.set(b"k", b"1", Ttl::Persist, 0).unwrap();
    /// let watched = store.stamp(b"k", 0);
    /// store.set(b"k", b"1", Ttl::Persist, 0).unwrap();
    /// assert_ne!(store.stamp(b"k", 0), watched);
    /// assert_eq!(store.stamp(b"other", 0), None);
    /// ```
    #[cfg(feature = "alloc")]
    pub fn stamp(&mut self, key: &[u8], now: Tick) -> Option<u32> {
        let index = self.find_live(key, now)?;
        self.entry(index).map(|entry| entry.stamp)
    }

    /// A live key's entry, write stamp and value length, to read its value later with
    /// [`value_by_handle`](Self::value_by_handle) (sending a large value in parts).
    #[cfg(feature = "alloc")]
    pub(crate) fn value_handle(&mut self, key: &[u8], now: Tick) -> Option<(u32, u32, usize)> {
        let index = self.find_live(key, now)?;
        let entry = self.entry(index)?;
        Some((index, entry.stamp, entry.value_len as usize))
    }

    /// The value of entry `index` if it still has write stamp `stamp` (the key was not
    /// written, deleted or removed since).
    #[cfg(feature = "alloc")]
    pub(crate) fn value_by_handle(&self, index: u32, stamp: u32) -> Option<&[u8]> {
        let entry = self.entry(index).filter(|entry| entry.stamp == stamp)?;
        Some(
            self.pool
                .slice(entry.offset + entry.key_len, entry.value_len as usize),
        )
    }

    /// Gives entry `index` a new write stamp.
    #[cfg_attr(not(feature = "alloc"), allow(unused_variables))]
    fn stamp_written(&mut self, index: u32) {
        #[cfg(feature = "alloc")]
        {
            let stamp = self.next_stamp;
            self.next_stamp = self.next_stamp.wrapping_add(1);
            if let Some(entry) = self.entries.get_mut(position(index)) {
                entry.stamp = stamp;
            }
        }
    }

    /// The first live key in slot `slot` or after, with its slot: for walking the keys
    /// (`KEYS`, `SCAN`, `RANDOMKEY`), from slot 0 until `None`. Keys never move between slots,
    /// so a key present for a whole walk is met exactly once, whatever else is written or
    /// deleted on the way.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreArrays, Ttl};
    ///
    /// let mut arrays: StoreArrays<4, 256> = StoreArrays::new();
    /// let mut store = Store::new((&mut arrays).into(), 16, 16);
    /// store.set(b"a", b"1", Ttl::Persist, 0).unwrap();
    /// store.set(b"b", b"2", Ttl::At(10), 0).unwrap();
    /// let mut keys = Vec::new();
    /// let mut slot = 0;
    /// while let Some((at, key)) = store.key_at_or_after(slot, 11) {
    ///     keys.push(key.to_vec());
    ///     slot = at + 1;
    /// }
    /// assert_eq!(keys, [b"a".to_vec()]); // b is past its deadline
    /// ```
    pub fn key_at_or_after(&self, slot: usize, now: Tick) -> Option<(usize, &[u8])> {
        let entries = self.entries.0.get(slot..self.keys)?;
        let (offset, entry) = entries
            .iter()
            .map(|slot| &slot.0)
            .enumerate()
            .find(|(_, e)| e.used && !self.is_expired(e, now))?;
        Some((
            slot + offset,
            self.pool.slice(entry.offset, entry.key_len as usize),
        ))
    }

    /// Deletes a key; returns whether a live key was deleted.
    pub fn delete(&mut self, key: &[u8], now: Tick) -> bool {
        match self.find_live(key, now) {
            Some(index) => {
                self.remove_index(index);
                true
            }
            None => false,
        }
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        let _ = self.timers.drain().count();
        self.entries.0[..self.keys].fill(KeySlot::new());
        self.buckets.fill(NIL);
        self.free = NIL;
        self.unused_from = 0;
        self.len = 0;
        self.pool.clear();
    }

    /// Sets `key` to `value`, creating it if needed.
    ///
    /// A `Ttl::At` deadline `<= now` deletes the key instead (and succeeds), as Redis does.
    /// Other keys' bytes may move (at most [`MAX_BYTES_MOVED`] of them).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the key or value is too long or the store is full of keys or of
    /// bytes (see [`bytes_used`](Self::bytes_used) for when bytes are full); the store is then
    /// unchanged, the old value (if any) intact, except that the key is gone if it had
    /// expired.
    pub fn set(&mut self, key: &[u8], value: &[u8], ttl: Ttl, now: Tick) -> Result<(), StoreError> {
        if key.len() > self.max_key_len {
            return Err(StoreError::KeyTooLong);
        }
        if value.len() > self.max_value_len {
            return Err(StoreError::ValueTooLarge);
        }
        let found = self.find(key);
        if let Ttl::At(at) = ttl {
            if at <= now {
                // Deleted, live or expired; counted as expired either way.
                if let Some(index) = found {
                    self.remove_index(index);
                    self.expired_keys += 1;
                }
                return Ok(());
            }
        }
        let index = match found {
            Some(index) => {
                let entry = self.entry(index).copied().unwrap_or(Entry::VACANT);
                let expired = self.is_expired(&entry, now);
                let plan = self.pool.plan(key.len() + value.len(), Some(entry.offset));
                let Some(plan) = plan else {
                    if expired {
                        self.remove_index(index);
                        self.expired_keys += 1;
                    }
                    return Err(StoreError::BytesFull);
                };
                if expired {
                    // The key is made anew in its old slot: it loses its time to live.
                    if let Some(id) = entry.timer {
                        let _ = self.timers.cancel(id);
                    }
                    self.expired_keys += 1;
                }
                let offset = self.pool.place(plan, index, &mut self.entries);
                self.write_block(offset, key, value);
                if let Some(e) = self.entries.get_mut(position(index)) {
                    e.offset = offset;
                    e.value_len = value.len() as u32;
                    if expired {
                        e.timer = None;
                    }
                }
                index
            }
            None => self.insert_new(key, value)?,
        };
        self.apply_ttl(index, ttl);
        self.stamp_written(index);
        Ok(())
    }

    /// Whether [`set`](Self::set) with these arguments would succeed, changing nothing: the
    /// same checks in the same order (so a caller can reply before writing, as `SET .. GET`
    /// does).
    ///
    /// # Errors
    ///
    /// The [`StoreError`] that [`set`](Self::set) would return.
    pub fn check_set(
        &self,
        key: &[u8],
        value: &[u8],
        ttl: Ttl,
        now: Tick,
    ) -> Result<(), StoreError> {
        if key.len() > self.max_key_len {
            return Err(StoreError::KeyTooLong);
        }
        if value.len() > self.max_value_len {
            return Err(StoreError::ValueTooLarge);
        }
        if matches!(ttl, Ttl::At(at) if at <= now) {
            return Ok(()); // deletes
        }
        let needed = key.len() + value.len();
        let plan = match self.find(key).and_then(|index| self.entry(index)) {
            // Rewritten in its block's place or elsewhere, expired or not.
            Some(entry) => self.pool.plan(needed, Some(entry.offset)),
            None if self.free == NIL && self.unused_from as usize >= self.keys => {
                return Err(StoreError::KeysFull)
            }
            None => self.pool.plan(needed, None),
        };
        plan.map(|_| ()).ok_or(StoreError::BytesFull)
    }

    fn insert_new(&mut self, key: &[u8], value: &[u8]) -> Result<u32, StoreError> {
        let index = if self.free != NIL {
            self.free
        } else if (self.unused_from as usize) < self.keys {
            self.unused_from + 1
        } else {
            return Err(StoreError::KeysFull);
        };
        let plan = self
            .pool
            .plan(key.len() + value.len(), None)
            .ok_or(StoreError::BytesFull)?;
        let offset = self.pool.place(plan, index, &mut self.entries);
        if index == self.free {
            self.free = self.entries.0[position(index)].0.next;
        } else {
            self.unused_from += 1;
        }
        self.write_block(offset, key, value);
        let hash = self.hash(key);
        let bucket = self.bucket(hash);
        // (The update fills `stamp`, there with the `alloc` feature.)
        #[allow(clippy::needless_update)]
        let entry = Entry {
            used: true,
            next: self.buckets[bucket],
            hash,
            offset,
            key_len: key.len() as u32,
            value_len: value.len() as u32,
            timer: None,
            ..Entry::VACANT
        };
        self.entries.0[position(index)].0 = entry;
        self.buckets[bucket] = index;
        self.len += 1;
        Ok(index)
    }

    fn write_block(&mut self, offset: u32, key: &[u8], value: &[u8]) {
        let block = self.pool.slice_mut(offset, key.len() + value.len());
        let (k, v) = block.split_at_mut(key.len());
        k.copy_from_slice(key);
        v.copy_from_slice(value);
    }

    fn apply_ttl(&mut self, index: u32, ttl: Ttl) {
        let current = self.entry(index).and_then(|e| e.timer);
        let timer = match (ttl, current) {
            (Ttl::Keep, current) => current,
            (Ttl::Persist, None) => None,
            (Ttl::Persist, Some(id)) => {
                let _ = self.timers.cancel(id);
                None
            }
            (Ttl::At(at), Some(id)) => match self.timers.reschedule(id, timer_for_deadline(at)) {
                Ok(()) => Some(id),
                Err(_) => self.timers.insert(timer_for_deadline(at), index).ok(),
            },
            // The timer queue has one slot per key: this cannot be full.
            (Ttl::At(at), None) => self.timers.insert(timer_for_deadline(at), index).ok(),
        };
        if let Some(entry) = self.entries.get_mut(position(index)) {
            entry.timer = timer;
        }
    }

    fn entry(&self, index: u32) -> Option<&Entry> {
        self.entries.get(position(index)).filter(|e| e.used)
    }

    fn hash(&self, key: &[u8]) -> u32 {
        // FNV-1a, seeded.
        let mut hash = 0x811c_9dc5 ^ self.seed;
        for &byte in key {
            hash ^= u32::from(byte);
            hash = hash.wrapping_mul(0x0100_0193);
        }
        hash
    }

    /// The hash bucket of `hash` (an index into `buckets`, unless the store has no keys).
    fn bucket(&self, hash: u32) -> usize {
        hash as usize % self.keys.max(1)
    }

    fn find(&self, key: &[u8]) -> Option<u32> {
        let hash = self.hash(key);
        let mut at = self.buckets.get(self.bucket(hash)).copied().unwrap_or(NIL);
        while at != NIL {
            let entry = self.entry(at)?;
            if entry.hash == hash
                && entry.key_len as usize == key.len()
                && self.pool.slice(entry.offset, key.len()) == key
            {
                return Some(at);
            }
            at = entry.next;
        }
        None
    }

    /// Finds a key and removes it if its deadline has passed (lazy expiry).
    fn find_live(&mut self, key: &[u8], now: Tick) -> Option<u32> {
        let index = self.find(key)?;
        if self.entry(index).is_some_and(|e| self.is_expired(e, now)) {
            #[cfg(feature = "alloc")]
            if let (Some(keys), Some(entry)) = (
                &mut self.expired_on_access,
                self.entries.get(position(index)),
            ) {
                keys.push(
                    self.pool
                        .slice(entry.offset, entry.key_len as usize)
                        .to_vec(),
                );
            }
            self.remove_index(index);
            self.expired_keys += 1;
            return None;
        }
        Some(index)
    }

    /// Whether `entry`'s deadline is `< now` (its timer `<= now`).
    fn is_expired(&self, entry: &Entry, now: Tick) -> bool {
        entry
            .timer
            .and_then(|id| self.timers.deadline(id))
            .is_some_and(|at| at <= now)
    }

    fn remove_index(&mut self, index: u32) {
        let Some(entry) = self.entry(index).copied() else {
            return;
        };
        if let Some(id) = entry.timer {
            let _ = self.timers.cancel(id);
        }
        // Unlink from the bucket chain.
        let bucket = self.bucket(entry.hash);
        if self.buckets[bucket] == index {
            self.buckets[bucket] = entry.next;
        } else {
            let mut at = self.buckets[bucket];
            while at != NIL {
                let next = self.entries.0[position(at)].0.next;
                if next == index {
                    self.entries.0[position(at)].0.next = entry.next;
                    break;
                }
                at = next;
            }
        }
        self.pool.free(entry.offset);
        self.entries.0[position(index)].0 = Entry {
            next: self.free,
            ..Entry::VACANT
        };
        self.free = index;
        self.len -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::boxed::Box;

    /// A store over leaked arrays (tests only).
    fn store<const KEYS: usize, const BYTES: usize>(
        max_key_len: usize,
        max_value_len: usize,
    ) -> Store<'static> {
        let arrays = Box::leak(Box::new(StoreArrays::<KEYS, BYTES>::new()));
        Store::new(StoreMemory::from(arrays), max_key_len, max_value_len)
    }

    #[test]
    fn key_visible_until_deadline_then_gone() {
        let mut s = store::<8, 256>(16, 64);
        s.set(b"k", b"v", Ttl::At(100), 0).unwrap();
        assert_eq!(s.get(b"k", 100), Some(&b"v"[..]));
        assert_eq!(s.get(b"k", 101), None);
        assert_eq!(s.len(), 0);
        assert_eq!(s.expired_keys(), 1);
    }

    #[test]
    fn timer_removes_key_without_access() {
        let mut s = store::<8, 256>(16, 64);
        s.set(b"a", b"1", Ttl::At(50), 0).unwrap();
        s.set(b"b", b"2", Ttl::Persist, 0).unwrap();
        assert_eq!(s.expire(50, 10).fired, 0);
        let sweep = s.expire(51, 10);
        assert_eq!((sweep.fired, sweep.more_due), (1, false));
        assert_eq!(s.len(), 1);
        assert_eq!(s.volatile_len(), 0);
    }

    /// Runs on the key timers of either build (`KeyTimers`): the heap without `alloc`
    /// (`cargo test -p net-shell --lib`), the wheel with it.
    #[test]
    fn budgeted_expiry_goes_in_deadline_order_with_ties_first_in_first_out() {
        let mut s = store::<16, 512>(16, 64);
        // Keys set out of deadline order; c, a, e share a deadline and were set in that order.
        let keys: [(&[u8], Tick); 6] = [
            (b"d", 40),
            (b"c", 30),
            (b"a", 30),
            (b"b", 20),
            (b"e", 30),
            (b"f", 50),
        ];
        for (key, at) in keys {
            s.set(key, b"v", Ttl::At(at), 0).unwrap();
        }
        // Moving a key's deadline counts as setting it anew: it now follows e.
        s.set(b"d", b"v", Ttl::At(30), 0).unwrap();
        assert!(s.next_deadline().is_some_and(|next| next <= 21));
        // The heap's next deadline is exact; the wheel's may be the start of a coarse slot.
        #[cfg(not(feature = "alloc"))]
        assert_eq!(s.next_deadline(), Some(21));
        let mut gone = std::vec::Vec::new();
        let sweep = s.expire_each(30, 10, |key| gone.push(key[0]));
        assert_eq!((sweep.fired, sweep.more_due), (1, false));
        let sweep = s.expire_each(31, 2, |key| gone.push(key[0]));
        assert_eq!((sweep.fired, sweep.more_due), (2, true));
        let sweep = s.expire_each(31, 2, |key| gone.push(key[0]));
        assert_eq!((sweep.fired, sweep.more_due), (2, false));
        assert_eq!(gone, b"bcaed");
        assert_eq!(s.len(), 1);
        assert_eq!(s.deadline(b"f", 31), Some(Some(50)));
        assert_eq!(s.expire(50, 10).fired, 0);
        assert_eq!(s.expire(51, 10).fired, 1);
        assert!(s.is_empty() && s.next_deadline().is_none());
    }

    #[test]
    fn full_key_table_refuses_and_keeps_everything() {
        let mut s = store::<2, 256>(16, 64);
        s.set(b"a", b"1", Ttl::Persist, 0).unwrap();
        s.set(b"b", b"2", Ttl::Persist, 0).unwrap();
        assert_eq!(
            s.set(b"c", b"3", Ttl::Persist, 0),
            Err(StoreError::KeysFull)
        );
        assert_eq!(s.get(b"a", 0), Some(&b"1"[..]));
        assert_eq!(s.get(b"b", 0), Some(&b"2"[..]));
        // Overwriting an existing key still works when the table is full.
        s.set(b"a", b"11", Ttl::Persist, 0).unwrap();
        assert_eq!(s.get(b"a", 0), Some(&b"11"[..]));
    }

    #[test]
    fn full_pool_keeps_old_value_on_growing_overwrite() {
        let mut s = store::<4, 64>(16, 64);
        s.set(b"a", b"0123456789", Ttl::Persist, 0).unwrap(); // 8 + 11, rounded up: 32
        s.set(b"b", b"0123456789", Ttl::Persist, 0).unwrap(); // 64
        assert_eq!(
            s.set(b"a", b"0123456789abcdefghijklmnop", Ttl::Persist, 0), // 8 + 27: 48
            Err(StoreError::BytesFull)
        );
        assert_eq!(s.get(b"a", 0), Some(&b"0123456789"[..]));
        assert_eq!(s.bytes_used(), 64);
    }

    #[test]
    fn growing_overwrite_uses_space_of_old_block() {
        let mut s = store::<4, 48>(16, 64);
        s.set(b"a", b"0123456789", Ttl::Persist, 0).unwrap(); // 32 of 48
        s.set(b"a", b"0123456789abcdefghijklmnop", Ttl::Persist, 0)
            .unwrap(); // 48 of 48
        assert_eq!(s.get(b"a", 0), Some(&b"0123456789abcdefghijklmnop"[..]));
        assert_eq!(s.bytes_used(), 48);
    }

    #[test]
    fn deleted_keys_free_slots_and_bytes() {
        let mut s = store::<2, 64>(16, 64);
        for round in 0..100u32 {
            let key = round.to_le_bytes();
            s.set(
                &key,
                b"value",
                Ttl::At(u64::from(round) + 10),
                u64::from(round),
            )
            .unwrap();
            assert!(s.delete(&key, u64::from(round)));
        }
        assert!(s.is_empty());
        assert_eq!(s.bytes_used(), 0);
    }

    #[test]
    fn past_deadline_on_set_deletes() {
        let mut s = store::<4, 64>(16, 64);
        s.set(b"k", b"v", Ttl::Persist, 10).unwrap();
        s.set(b"k", b"w", Ttl::At(5), 10).unwrap();
        assert_eq!(s.get(b"k", 10), None);
    }

    #[test]
    fn keep_ttl_preserves_deadline() {
        let mut s = store::<4, 64>(16, 64);
        s.set(b"k", b"v", Ttl::At(500), 0).unwrap();
        s.set(b"k", b"w", Ttl::Keep, 1).unwrap();
        assert_eq!(s.deadline(b"k", 1), Some(Some(500)));
        s.set(b"k", b"x", Ttl::Persist, 2).unwrap();
        assert_eq!(s.deadline(b"k", 2), Some(None));
    }

    #[test]
    fn shorter_value_frees_bytes() {
        let mut s = store::<4, 80>(16, 64);
        s.set(b"a", b"0123456789abcdef", Ttl::Persist, 0).unwrap(); // 8 + 17: 32
        s.set(b"a", b"x", Ttl::Persist, 0).unwrap();
        assert_eq!(s.bytes_used(), 16);
        s.set(b"b", &[7; 40], Ttl::Persist, 0).unwrap(); // 8 + 41: 64, fits only now
        assert_eq!(s.get(b"a", 0), Some(&b"x"[..]));
        assert_eq!(s.get(b"b", 0), Some(&[7u8; 40][..]));
    }

    /// `check_set` answers what `set` then does, over a seeded random workload on a tiny
    /// store that is often full of keys, of bytes, or holds expired keys.
    #[test]
    fn check_set_predicts_set() {
        let mut s = store::<4, 96>(6, 40);
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut now = 0;
        for _ in 0..20_000 {
            now += next(3);
            let key = [b'k', b'0' + next(6) as u8, b'x'];
            let key = &key[..1 + next(3) as usize];
            let value = [b'v'; 48];
            let value = &value[..next(48) as usize];
            let ttl = match next(4) {
                0 => Ttl::Keep,
                1 => Ttl::At(now + next(20)),
                _ => Ttl::Persist,
            };
            if next(5) == 0 {
                let _ = s.expire(now, 2);
            }
            let predicted = s.check_set(key, value, ttl, now);
            assert_eq!(
                predicted,
                s.set(key, value, ttl, now),
                "{key:?} {}",
                value.len()
            );
            if next(4) == 0 {
                s.delete(key, now);
            }
        }
    }

    #[test]
    fn colliding_hash_chains_unlink_correctly() {
        // One bucket: every key collides.
        let mut s = store::<1, 64>(16, 64);
        s.set(b"a", b"1", Ttl::Persist, 0).unwrap();
        assert!(s.delete(b"a", 0));
        let mut s = store::<3, 128>(16, 64);
        for k in [b"a", b"b", b"c"] {
            s.set(k, b"v", Ttl::Persist, 0).unwrap();
        }
        assert!(s.delete(b"b", 0));
        assert!(s.contains(b"a", 0) && s.contains(b"c", 0));
        assert!(!s.contains(b"b", 0));
    }
}
