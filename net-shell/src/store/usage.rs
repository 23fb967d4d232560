//! What a store's memory holds ([`MemoryUse`], `INFO memory`), and the byte limit that covers
//! the table's growth as well as keys and values.

use timer_core::Tick;

use super::timer_segments::TIMER_BYTES;
use super::{KeySlot, Store};

/// The bytes a store holds, by part: what `INFO memory` reports.
///
/// # Examples
///
/// ```
/// use net_shell::store::{Store, StoreMemory, Ttl};
///
/// let mut store = Store::new(StoreMemory::allocate(1_000_000, 1 << 20), 64, 256);
/// let empty = store.memory();
/// assert_eq!(empty.entries + empty.buckets, 0); // nothing allocated yet
/// assert_eq!(empty.allocated_table, 0); // (`timers` is the timer queue's own list heads)
/// store.set(b"greeting", b"hello", Ttl::At(100), 0).unwrap();
/// let one = store.memory();
/// assert_eq!(one.keys_and_values, 32); // 8 + 8 + 5 bytes, rounded up to a size class
/// assert_eq!((one.keys, one.values), (8, 5)); // of which the key and the value themselves
/// assert!(one.entries > 0 && one.buckets > 0 && one.timers > empty.timers); // a first chunk of each
/// assert_eq!(one.total(), one.keys_and_values + one.table());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct MemoryUse {
    /// Pool bytes of live keys and values, with their 8-byte headers, rounded up to size
    /// classes ([`Store::bytes_used`]).
    pub keys_and_values: usize,
    /// Of `keys_and_values`, the bytes of the keys themselves.
    pub keys: usize,
    /// Of `keys_and_values`, the bytes of the values themselves (the rest is block headers
    /// and rounding).
    pub values: usize,
    /// The key table's entries (one per key slot present, used or free).
    pub entries: usize,
    /// The hash buckets present.
    pub buckets: usize,
    /// The key timers: slots present and the queues' list heads.
    pub timers: usize,
    /// Of `entries`, `buckets` and `timers`, what was allocated as the table grew (the rest
    /// is lent arrays, a board's fixed cost): this counts against the byte limit.
    pub allocated_table: usize,
}

impl MemoryUse {
    /// The key table: entries, buckets and timers.
    pub const fn table(&self) -> usize {
        self.entries + self.buckets + self.timers
    }

    /// Everything the store holds but its free pool bytes.
    pub const fn total(&self) -> usize {
        self.keys_and_values + self.table()
    }
}

impl Store<'_> {
    /// What the store's memory holds, by part.
    pub fn memory(&self) -> MemoryUse {
        MemoryUse {
            keys_and_values: self.pool.used(),
            keys: self.key_bytes,
            values: self.value_bytes,
            entries: self.entries.0.bytes(),
            buckets: self.buckets.heads.bytes(),
            timers: self.timers.bytes(),
            allocated_table: self.entries.0.allocated_bytes()
                + self.buckets.heads.allocated_bytes()
                + self.timers.allocated_bytes(),
        }
    }

    /// The bytes live `key` takes (`MEMORY USAGE`), counted as [`memory`](Self::memory)
    /// counts them: its pool block (key, value and the 8-byte header, rounded up to a size
    /// class: a hash's index, fields and field deadlines, a list's room, are all in it), its
    /// entry and hash bucket in the key table, and its timer slot if it has a time to live.
    /// `None` if there is no such key, or it is past its deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreArrays, Ttl};
    ///
    /// let mut arrays: StoreArrays<4, 1024> = StoreArrays::new();
    /// let mut store = Store::new((&mut arrays).into(), 16, 512);
    /// store.set(b"k", b"v", Ttl::Persist, 0).unwrap();
    /// let small = store.key_memory(b"k", 0).unwrap();
    /// store.set(b"k", &[0; 300], Ttl::Persist, 0).unwrap();
    /// let large = store.key_memory(b"k", 0).unwrap();
    /// assert_eq!(large - small, 320 - 16); // its block: 8 + 1 + 300 bytes, in a class of 320
    /// store.set(b"k", &[0; 300], Ttl::At(10), 0).unwrap();
    /// assert!(store.key_memory(b"k", 0).unwrap() > large); // and a timer slot
    /// assert_eq!(store.key_memory(b"k", 11), None); // past its deadline
    /// assert_eq!(store.key_memory(b"other", 0), None);
    /// ```
    pub fn key_memory(&mut self, key: &[u8], now: Tick) -> Option<usize> {
        let index = self.find_live(key, now)?;
        let entry = self.entry(index)?;
        let timer = if entry.timer().is_some() {
            TIMER_BYTES
        } else {
            0
        };
        let table = core::mem::size_of::<KeySlot>() + core::mem::size_of::<u32>();
        Some(self.pool.block_size(entry.offset) + table + timer)
    }

    /// Sets the pool's limit after the table grew or shrank: what the byte limit leaves once
    /// the table's allocated chunks are paid for.
    pub(super) fn account_growth(&mut self) {
        #[cfg(feature = "alloc")]
        let table = self.memory().allocated_table;
        #[cfg(not(feature = "alloc"))]
        let table = 0; // lent memory is all there is
        self.pool.set_limit(self.bytes_limit.saturating_sub(table));
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::super::{Store, StoreMemory, Ttl};

    /// A store sized at run time grows past several chunks of entries and buckets and
    /// several timer segments while keys expire on the way, finds every key, and gives its
    /// entries, buckets and timer segments back as the keys go.
    #[test]
    fn table_grows_while_keys_expire_then_shrinks() {
        const KEYS: u32 = 20_000;
        let mut store = Store::new(StoreMemory::allocate(1 << 20, 4 << 20), 16, 16);
        let empty = store.memory();
        assert_eq!(empty.table(), empty.timers);
        for n in 0..KEYS {
            let now = u64::from(n);
            // Every third key lives 100 ticks; the sweep runs as the server's loop would.
            let ttl = if n % 3 == 0 {
                Ttl::At(now + 5_000)
            } else {
                Ttl::Persist
            };
            store.set(&n.to_le_bytes(), b"value", ttl, now).unwrap();
            let _ = store.expire(now, 8);
        }
        let now = u64::from(KEYS);
        let grown = store.memory();
        assert!(grown.allocated_table > 18_000 * 32, "{grown:?}");
        for n in 0..KEYS {
            let live = n % 3 != 0 || u64::from(n) + 5_000 >= now;
            assert_eq!(store.get(&n.to_le_bytes(), now).is_some(), live, "key {n}");
        }
        let volatile_left = store.volatile_len();
        assert!(volatile_left <= 1_667, "{volatile_left}");
        for n in (0..KEYS).filter(|n| n % 3 != 0) {
            assert!(store.delete(&n.to_le_bytes(), now));
        }
        let _ = store.expire(now + 10_000, usize::MAX);
        assert!(store.is_empty());
        let shrunk = store.memory();
        // One chunk of buckets in use and one spare (4096 buckets each).
        assert!(shrunk.buckets <= 2 * 4096 * 4, "{shrunk:?} after {grown:?}");
        assert!(shrunk.timers < grown.timers, "{shrunk:?} after {grown:?}");
        assert_eq!(store.timers.capacity(), 0, "{shrunk:?}");
        // One spare chunk of entries (4096 of them) stays.
        assert_eq!(
            shrunk.entries,
            grown.entries / 4,
            "{shrunk:?} after {grown:?}"
        );
        store.clear();
        assert_eq!(store.memory().table(), empty.table());
    }

    /// Keys deleted at random, nine in ten: the timers of the keys left gather in the first
    /// segments and the others go; entries stay in every chunk that keeps a key (keys never
    /// move), and come back as new keys fill the holes first; the buckets halve and halve.
    #[test]
    fn random_deletes_give_back_timer_segments_and_buckets() {
        const KEYS: u32 = 100_000;
        let mut store = Store::new(StoreMemory::allocate(1 << 20, 16 << 20), 16, 16);
        for n in 0..KEYS {
            let ttl = Ttl::At(1_000_000 + u64::from(n % 1000));
            store.set(&n.to_le_bytes(), b"value", ttl, 0).unwrap();
        }
        let grown = store.memory();
        let mut rng = crate::xorshift::Xorshift::new(0x9e37_79b9_7f4a_7c15);
        let mut kept = std::vec::Vec::new();
        for n in 0..KEYS {
            if rng.below(10) == 0 {
                kept.push(n);
            } else {
                assert!(store.delete(&n.to_le_bytes(), 0));
            }
        }
        let shrunk = store.memory();
        let volatile = store.volatile_len();
        assert_eq!(volatile, kept.len());
        assert!(
            store.timers.capacity() <= 4 * volatile,
            "{} slots for {volatile} timers",
            store.timers.capacity()
        );
        assert!(
            shrunk.timers < grown.timers / 3,
            "{shrunk:?} after {grown:?}"
        );
        assert!(
            shrunk.buckets <= grown.buckets / 4,
            "{shrunk:?} after {grown:?}"
        );
        assert_eq!(shrunk.entries, grown.entries, "every chunk keeps keys");
        for n in &kept {
            assert_eq!(
                store.deadline(&n.to_le_bytes(), 0),
                Some(Some(1_000_000 + u64::from(n % 1000)))
            );
        }
        // New keys fill the holes: no entry is added.
        for n in KEYS..2 * KEYS - kept.len() as u32 {
            store.set(&n.to_le_bytes(), b"v", Ttl::Persist, 0).unwrap();
        }
        assert_eq!(store.memory().entries, grown.entries);
        // Every key expires: the timers go, and the entries but one spare chunk as keys go.
        let sweep = store.expire(2_000_000, usize::MAX);
        assert_eq!(sweep.fired, kept.len());
        assert_eq!(store.timers.capacity(), 0);
    }

    /// `key_memory` is `memory`'s count taken key by key: over keys of every size, some with a
    /// time to live, the keys' figures add up to the pool bytes in use plus an entry and a
    /// bucket per key and a timer slot per volatile key.
    #[test]
    fn key_memory_adds_up_to_the_stores_count() {
        use super::super::KeySlot;
        let mut store = Store::new(StoreMemory::allocate(1 << 10, 1 << 20), 16, 4096);
        let mut rng = crate::xorshift::Xorshift::new(0x2545_f491_4f6c_dd1d);
        let mut next = |n: u64| rng.below(n);
        for _ in 0..3_000 {
            let key = (next(500) as u32).to_le_bytes();
            let value = std::vec![7; next(4096) as usize];
            let ttl = if next(3) == 0 {
                Ttl::At(1_000 + next(1_000))
            } else {
                Ttl::Persist
            };
            store.set(&key, &value, ttl, 0).unwrap();
            if next(5) == 0 {
                store.delete(&key, 0);
            }
        }
        let keys: u32 = 500;
        let sum: usize = (0..keys)
            .filter_map(|k| store.key_memory(&k.to_le_bytes(), 0))
            .sum();
        let table = core::mem::size_of::<KeySlot>() + core::mem::size_of::<u32>();
        let timer = super::super::timer_segments::TIMER_BYTES;
        assert!(store.volatile_len() > 10 && store.len() > 100);
        assert_eq!(
            sum,
            store.memory().keys_and_values + store.len() * table + store.volatile_len() * timer
        );
    }

    /// The table's allocated chunks count against the byte limit: a store whose limit its
    /// table fills refuses new keys with `BytesFull` and keeps the ones it has.
    #[test]
    fn the_table_counts_against_the_byte_limit() {
        let mut store = Store::new(StoreMemory::allocate(1 << 20, 1 << 20), 16, 16);
        store.set_bytes_limit(256 << 10);
        let mut n = 0u32;
        while store.set(&n.to_le_bytes(), b"v", Ttl::Persist, 0).is_ok() {
            n += 1;
        }
        let memory = store.memory();
        assert!(
            memory.total() <= (256 << 10) + memory.allocated_table / 2,
            "{memory:?}"
        );
        assert!(memory.keys_and_values < 200 << 10, "{memory:?}");
        let missing: std::vec::Vec<u32> = (0..n)
            .filter(|k| !store.contains(&k.to_le_bytes(), 0))
            .collect();
        assert!(
            missing.is_empty(),
            "{n} keys, missing {missing:?}, {memory:?}"
        );
    }
}
