//! The key space: string keys with optional time-to-live, fixed capacity, over memory the
//! caller provides ([`StoreMemory`]: arrays in a `static`, or allocated at run time).
//!
//! Entries live in a table with hash chains; key and value bytes share one byte pool of
//! size-classed blocks in which no write moves more than [`MAX_BYTES_MOVED`] bytes of other
//! keys (see [`Store::bytes_used`] for what that costs). Each volatile key has exactly one
//! timer in the key timers, which have a slot for every key the table can hold, so timer
//! capacity can never be what fails. A key is invisible from its deadline on (checked on every
//! access) and is removed by its timer within one tick of it.
//!
//! Over lent arrays (a board) the table is fixed. Over allocated memory (a host) its entries,
//! buckets and timers grow in chunks as keys arrive and shrink as they leave, without ever
//! moving a key: [`Store::memory`] says what each part holds.
//!
//! One concern per file:
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | [`Store`]: reading and writing keys, limits |
//! | `arrays.rs` | [`StoreMemory`], [`StoreArrays`]: the memory a store runs over |
//! | `chunks.rs` | arrays that grow and shrink in chunks (the table's entries and buckets) |
//! | `entry_slots.rs` | which entry a new key takes, and which chunks of entries can go |
//! | `fields.rs` | [`fields`]: a large hash's value, an index over its entries, changed in place |
//! | `hash_table.rs` | the key table: entries, hash chains (keyed SipHash, linear hashing), the free list |
//! | `key_timers.rs` | [`Ttl`]: deadlines, expiry on access and by timer |
//! | `leb128.rs` | the element lengths the list, packed and hash encodings share |
//! | `list.rs` | [`list`]: a list's value, with room at both ends, changed in place |
//! | `packed.rs` | [`packed`]: elements packed in one value (a small hash's fields) |
//! | `timer_segments.rs` | the key timers: timer-core queues, added as volatile keys arrive |
//! | `usage.rs` | [`MemoryUse`]: what the store's memory holds, and the byte limit |

mod arrays;
mod chunks;
mod entry_slots;
pub mod fields;
mod hash_table;
mod key_timers;
mod leb128;
pub mod list;
pub mod packed;
mod timer_segments;
mod usage;
mod value_kind;

use core::fmt;

use timer_core::Tick;

use crate::pool::Pool;
pub use arrays::{KeySlot, StoreArrays, StoreMemory};
use hash_table::{position, Buckets, Entries, Entry, NIL};
pub use key_timers::Ttl;
use timer_segments::KeyTimers;
pub use usage::MemoryUse;
pub use value_kind::ValueKind;

/// The most bytes of other keys' blocks one write moves, whatever the size of the store: a
/// write that needs a block where the free bytes are scattered may slide the blocks of a window
/// of the pool together, and is refused rather than move more.
pub const MAX_BYTES_MOVED: usize = crate::pool::MAX_BYTES_MOVED;

/// The key of the store's keyed hash (SipHash-1-3), 128 bits. Whoever knows it can choose keys
/// that all land in one hash chain; drawn at random at start, it keeps lookups short whatever
/// keys clients send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HashKey(pub [u8; 16]);

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
    buckets: Buckets<'a>,
    /// Key capacity: the shortest of the lent arrays, or the cap of allocated memory.
    keys: usize,
    /// The most bytes keys, values and the table's allocated chunks may take together.
    bytes_limit: usize,
    /// Where new keys go.
    slots: entry_slots::EntrySlots,
    len: usize,
    /// Bytes of the keys themselves (no headers, no rounding).
    key_bytes: usize,
    /// Bytes of the values themselves.
    value_bytes: usize,
    pool: Pool<'a>,
    timers: KeyTimers<'a>,
    max_key_len: usize,
    max_value_len: usize,
    expired_keys: u64,
    /// Keys removed on access after their deadline, kept for keyspace notifications while
    /// [`record_expired_on_access`](Self::record_expired_on_access) is on.
    #[cfg(feature = "pubsub")]
    expired_on_access: Option<alloc::vec::Vec<alloc::vec::Vec<u8>>>,
    hash_key: HashKey,
    /// The next write stamp.
    #[cfg(feature = "alloc")]
    next_stamp: u32,
}

impl<'a> Store<'a> {
    /// An empty store over `memory` that refuses keys over `max_key_len` and values over
    /// `max_value_len` bytes, hashing keys with the all-zero [`HashKey`]: give it a random one
    /// ([`with_hash_key`](Self::with_hash_key)) where clients choose the keys.
    pub fn new(memory: StoreMemory<'a>, max_key_len: usize, max_value_len: usize) -> Self {
        Self::with_hash_key(memory, max_key_len, max_value_len, HashKey::default())
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

    /// Sets the hash key. Only allowed while empty (the key places keys in buckets).
    ///
    /// # Errors
    ///
    /// `Err(())` if the store holds keys; nothing changes.
    #[allow(clippy::result_unit_err)]
    pub fn set_hash_key(&mut self, key: HashKey) -> Result<(), ()> {
        if self.is_empty() {
            self.hash_key = key;
            Ok(())
        } else {
            Err(())
        }
    }

    /// Like [`new`](Self::new) with a hash key: draw it at random when the process starts (the
    /// host's randomness, a board's RNG or a build-time seed), so no client can know which keys
    /// collide and fill one hash chain (hash flooding).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{HashKey, Store, StoreArrays, StoreMemory, Ttl};
    ///
    /// let mut arrays: StoreArrays<16, 1024> = StoreArrays::new();
    /// let key = HashKey([7; 16]); // on a host: 16 bytes from the OS's random source
    /// let mut store = Store::with_hash_key(StoreMemory::from(&mut arrays), 64, 256, key);
    /// store.set(b"k", b"v", Ttl::Persist, 0).unwrap();
    /// assert_eq!(store.get(b"k", 0), Some(&b"v"[..]));
    /// ```
    pub fn with_hash_key(
        memory: StoreMemory<'a>,
        max_key_len: usize,
        max_value_len: usize,
        hash_key: HashKey,
    ) -> Self {
        let StoreMemory {
            mut entries,
            mut buckets,
            timers,
            bytes,
            zeroed,
            keys,
        } = memory;
        // Lent memory may hold an earlier store's keys. (Allocated memory has none yet.)
        entries.fill_first(keys, KeySlot::new());
        buckets.fill_first(keys, NIL);
        #[cfg(feature = "alloc")]
        let pool = if zeroed {
            Pool::new_zeroed(bytes)
        } else {
            Pool::new(bytes)
        };
        #[cfg(not(feature = "alloc"))]
        let pool = {
            let _ = zeroed; // only allocated memory is known to be zero
            Pool::new(bytes)
        };
        Self {
            entries: Entries(entries),
            buckets: Buckets::new(buckets),
            keys,
            bytes_limit: usize::MAX,
            slots: entry_slots::EntrySlots::default(),
            len: 0,
            key_bytes: 0,
            value_bytes: 0,
            pool,
            timers,
            max_key_len,
            max_value_len,
            expired_keys: 0,
            #[cfg(feature = "pubsub")]
            expired_on_access: None,
            hash_key,
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

    /// The most keys the store can hold: the lent arrays' length, or the cap given to
    /// [`StoreMemory::allocate`] (whose table grows up to it as memory allows).
    pub const fn key_capacity(&self) -> usize {
        self.keys
    }

    /// Key slots numbered so far: [`key_at_or_after`](Self::key_at_or_after) finds every key
    /// below this slot.
    pub fn key_slots(&self) -> usize {
        self.slots_numbered()
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

    /// Pool bytes keys can use: the limit set by [`set_bytes_limit`](Self::set_bytes_limit)
    /// less what the table has allocated as it grew, else the pool's bytes rounded down to 16,
    /// less (in a store of more than [`MAX_BYTES_MOVED`] bytes) 4 bytes of bookkeeping per
    /// 4 KiB.
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
    /// less what the table has allocated as it grew ([`MemoryUse::allocated_table`]), clamped
    /// to [`bytes_usable`](Self::bytes_usable); returns the limit now in force for keys and
    /// values ([`bytes_capacity`](Self::bytes_capacity)). Keys
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
        self.bytes_limit = limit;
        self.account_growth();
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

    /// The value of a live key.
    pub fn get(&mut self, key: &[u8], now: Tick) -> Option<&[u8]> {
        let index = self.find_live(key, now)?;
        let entry = self.entry(index)?;
        Some(
            self.pool
                .slice(entry.offset + entry.key_len, entry.value_len as usize),
        )
    }

    /// The value of a live key, with what it holds.
    pub fn get_kind(&mut self, key: &[u8], now: Tick) -> Option<(ValueKind, &[u8])> {
        let index = self.find_live(key, now)?;
        let entry = self.entry(index)?;
        Some((
            entry.kind,
            self.pool
                .slice(entry.offset + entry.key_len, entry.value_len as usize),
        ))
    }

    /// The value of a live key, to change in place (its length stays; its block does not
    /// move): a write, with a new write stamp. For values laid out to be edited in place, as
    /// lists are ([`list`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreArrays, Ttl};
    ///
    /// let mut arrays: StoreArrays<4, 256> = StoreArrays::new();
    /// let mut store = Store::new((&mut arrays).into(), 16, 16);
    /// store.set(b"k", b"abc", Ttl::Persist, 0).unwrap();
    /// store.value_mut(b"k", 0).unwrap()[1] = b'x';
    /// assert_eq!(store.get(b"k", 0), Some(&b"axc"[..]));
    /// assert!(store.value_mut(b"other", 0).is_none());
    /// ```
    pub fn value_mut(&mut self, key: &[u8], now: Tick) -> Option<&mut [u8]> {
        let index = self.find_live(key, now)?;
        self.stamp_written(index);
        self.value_at_mut(index)
    }

    /// The value of the key at entry `index`.
    fn value_at_mut(&mut self, index: u32) -> Option<&mut [u8]> {
        let entry = self.entry(index)?;
        let (offset, len) = (entry.offset + entry.key_len, entry.value_len as usize);
        Some(self.pool.slice_mut(offset, len))
    }

    /// The value of a live key, to change in place without a new write stamp: for bookkeeping
    /// in a value that no reply depends on, as a large hash's bound on its fields' deadlines
    /// ([`fields::Fields::earliest`]), which a sweep raises without `WATCH` seeing a write.
    #[cfg(feature = "hashes")]
    pub(crate) fn value_mut_unwritten(&mut self, key: &[u8], now: Tick) -> Option<&mut [u8]> {
        let index = self.find_live(key, now)?;
        self.value_at_mut(index)
    }

    /// The keyed hash that places a large hash's fields in its index ([`fields`]): the
    /// store's [`HashKey`], so clients cannot choose fields that collide.
    #[cfg(feature = "hashes")]
    pub(crate) const fn field_hasher(&self) -> fields::FieldHasher {
        fields::FieldHasher(self.hash_key.0)
    }

    /// Whether a live key exists.
    pub fn contains(&mut self, key: &[u8], now: Tick) -> bool {
        self.find_live(key, now).is_some()
    }

    /// What a live key holds.
    pub fn value_kind(&mut self, key: &[u8], now: Tick) -> Option<ValueKind> {
        let index = self.find_live(key, now)?;
        self.entry(index).map(|entry| entry.kind)
    }

    /// What the key in slot `slot` holds (a slot [`key_at_or_after`](Self::key_at_or_after)
    /// gave).
    pub fn value_kind_at(&self, slot: usize) -> Option<ValueKind> {
        let index = u32::try_from(slot + 1).ok()?;
        self.entry(index).map(|entry| entry.kind)
    }

    /// [`set`](Self::set) for a value of kind `kind` (a string is [`set`](Self::set)'s).
    ///
    /// # Errors
    ///
    /// As [`set`](Self::set).
    pub fn set_kind(
        &mut self,
        key: &[u8],
        value: &[u8],
        kind: ValueKind,
        ttl: Ttl,
        now: Tick,
    ) -> Result<(), StoreError> {
        self.set(key, value, ttl, now)?;
        if kind != ValueKind::String {
            if let Some(index) = self.find(key) {
                if let Some(entry) = self.entries.get_mut(position(index)) {
                    entry.kind = kind;
                }
            }
        }
        Ok(())
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
        let (at, entry) = self
            .entries
            .0
            .iter_from(slot)
            .take(self.key_slots().saturating_sub(slot))
            .map(|(at, slot)| (at, &slot.0))
            .find(|(_, e)| e.used && !self.is_expired(e, now))?;
        Some((at, self.pool.slice(entry.offset, entry.key_len as usize)))
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
        self.timers.clear();
        self.entries.0.reset(KeySlot::new());
        self.buckets.clear();
        self.clear_slots();
        self.len = 0;
        self.key_bytes = 0;
        self.value_bytes = 0;
        self.pool.clear();
        self.account_growth();
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
                    if let Some(timer) = entry.timer() {
                        let capacity = self.timers.capacity();
                        let _ = self.timers.cancel(timer);
                        self.account_timers(capacity);
                    }
                    self.expired_keys += 1;
                }
                let offset = self.pool.place(plan, index, &mut self.entries);
                self.write_block(offset, key, value);
                if let Some(e) = self.entries.get_mut(position(index)) {
                    e.offset = offset;
                    self.value_bytes = self.value_bytes + value.len() - e.value_len as usize;
                    e.value_len = value.len() as u32;
                    if expired {
                        e.set_timer(None);
                    }
                }
                index
            }
            None => self.insert_new(key, value)?,
        };
        self.apply_ttl(index, ttl);
        self.stamp_written(index);
        if let Some(entry) = self.entries.get_mut(position(index)) {
            entry.kind = ValueKind::String; // `set_kind` says otherwise after
        }
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
            None if self.vacant_slot().is_none() => return Err(StoreError::KeysFull),
            None => self.pool.plan(needed, None),
        };
        plan.map(|_| ()).ok_or(StoreError::BytesFull)
    }

    fn write_block(&mut self, offset: u32, key: &[u8], value: &[u8]) {
        let block = self.pool.slice_mut(offset, key.len() + value.len());
        let (k, v) = block.split_at_mut(key.len());
        k.copy_from_slice(key);
        v.copy_from_slice(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store over `arrays`.
    pub(super) fn store<const KEYS: usize, const BYTES: usize>(
        arrays: &mut StoreArrays<KEYS, BYTES>,
        max_key_len: usize,
        max_value_len: usize,
    ) -> Store<'_> {
        Store::new(StoreMemory::from(arrays), max_key_len, max_value_len)
    }

    #[test]
    fn full_key_table_refuses_and_keeps_everything() {
        let mut arrays = StoreArrays::<2, 256>::new();
        let mut s = store(&mut arrays, 16, 64);
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
        let mut arrays = StoreArrays::<4, 64>::new();
        let mut s = store(&mut arrays, 16, 64);
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
        let mut arrays = StoreArrays::<4, 48>::new();
        let mut s = store(&mut arrays, 16, 64);
        s.set(b"a", b"0123456789", Ttl::Persist, 0).unwrap(); // 32 of 48
        s.set(b"a", b"0123456789abcdefghijklmnop", Ttl::Persist, 0)
            .unwrap(); // 48 of 48
        assert_eq!(s.get(b"a", 0), Some(&b"0123456789abcdefghijklmnop"[..]));
        assert_eq!(s.bytes_used(), 48);
    }

    #[test]
    fn deleted_keys_free_slots_and_bytes() {
        let mut arrays = StoreArrays::<2, 64>::new();
        let mut s = store(&mut arrays, 16, 64);
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
    fn shorter_value_frees_bytes() {
        let mut arrays = StoreArrays::<4, 80>::new();
        let mut s = store(&mut arrays, 16, 64);
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
        let mut arrays = StoreArrays::<4, 96>::new();
        let mut s = store(&mut arrays, 6, 40);
        let mut rng = crate::xorshift::Xorshift::new(0x2545_f491_4f6c_dd1d);
        let mut next = |n: u64| rng.below(n);
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
}
