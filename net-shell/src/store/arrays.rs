//! The memory a [`Store`](super::Store) runs over: lent arrays ([`StoreArrays`], a board's
//! `static`) or, with the `alloc` feature, memory allocated for sizes chosen at run time.

use super::chunks::Chunks;
use super::hash_table::{Entry, NIL};
use super::timer_segments::{KeyTimers, TimerArrays};
use crate::memory::Memory;
use crate::pool::Pool;

/// One key's slot in a store's key table (opaque): see [`StoreMemory`].
#[derive(Clone, Copy)]
pub struct KeySlot(pub(super) Entry);

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

/// The memory a [`Store`](super::Store) runs over: a key table of some number of keys (each key's entry,
/// hash bucket and timer slot) and a byte pool for keys and values.
///
/// Either arrays the caller lends ([`StoreArrays`], a board's `static`: a fixed table), or,
/// with the `alloc` feature, memory [`allocate`](Self::allocate)d as keys arrive (the host:
/// a table that grows and shrinks with its keys). The store is the same code over both: growth
/// is a capability of the memory, not a second store.
pub struct StoreMemory<'a> {
    pub(super) entries: Chunks<'a, KeySlot>,
    pub(super) buckets: Chunks<'a, u32>,
    pub(super) timers: KeyTimers<'a>,
    pub(super) bytes: Memory<'a, u8>,
    /// Whether `bytes` are all zero (allocated zeroed), so the pool need not clear them.
    pub(super) zeroed: bool,
    /// The most keys: the shortest of the lent arrays, or the cap given to `allocate`.
    pub(super) keys: usize,
}

impl StoreMemory<'_> {
    /// The most keys a store holds (its timer queue numbers them in a `u32`).
    pub const MAX_KEYS: usize = u32::MAX as usize - 2;

    /// The pool bytes (`BYTES`) that give a store at least `usable` bytes for keys and values,
    /// [`Store::bytes_usable`](super::Store::bytes_usable) (up to 4 GiB): the pool keeps 4 bytes of bookkeeping per 4 KiB.
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

    /// Memory for up to `keys` keys (at most [`MAX_KEYS`](Self::MAX_KEYS)) and a pool of
    /// `bytes` bytes for keys and values (as [`StoreArrays`]' `BYTES`; a store uses at most
    /// 4 GiB of it), from the global allocator. [`bytes_for`](Self::bytes_for) says how many
    /// bytes make a given [`Store::bytes_usable`](super::Store::bytes_usable).
    ///
    /// Nothing of the key table is allocated yet: its entries, buckets and timers come in
    /// chunks as keys arrive (a few hundred KiB at a time, never moving a key), and go again as
    /// keys leave; what they hold counts against the store's byte limit
    /// ([`Store::set_bytes_limit`](super::Store::set_bytes_limit)). The pool is zeroed memory
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
        let keys = keys.min(Self::MAX_KEYS);
        StoreMemory {
            entries: Chunks::growing(keys),
            buckets: Chunks::growing(keys),
            timers: KeyTimers::growing(keys),
            bytes: Memory::from(alloc::vec![0u8; bytes]),
            zeroed: true,
            keys,
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
    timers: TimerArrays<KEYS>,
    bytes: [u8; BYTES],
}

impl<const KEYS: usize, const BYTES: usize> StoreArrays<KEYS, BYTES> {
    /// Empty arrays (all zero bytes).
    pub const fn new() -> Self {
        Self {
            entries: [KeySlot::new(); KEYS],
            buckets: [NIL; KEYS],
            timers: TimerArrays::new(),
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
            entries: Chunks::lent(Memory::from(&mut arrays.entries[..])),
            buckets: Chunks::lent(Memory::from(&mut arrays.buckets[..])),
            timers: KeyTimers::lent(arrays.timers.lend()),
            bytes: Memory::from(&mut arrays.bytes[..]),
            zeroed: false,
            keys: KEYS.min(StoreMemory::MAX_KEYS),
        }
    }
}
