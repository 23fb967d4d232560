//! The key table: entries numbered from 1 in the caller's memory, chained by hash in buckets,
//! freed entries kept on a free list. Each entry points at its key and value in the pool. The
//! hash is keyed ([`HashKey`](super::HashKey)), so which keys share a bucket cannot be known without the key.

use core::hash::Hasher as _;

use siphasher::sip::SipHasher13;

use super::{KeySlot, Store, StoreError};
use crate::memory::Memory;
use crate::pool::Owners;
use timer_core::{TimerId, TimerQueue};

/// "No entry". Entries are numbered from 1 so that an empty store is all zero bytes: a
/// `static` of it lands in `.bss` (no flash image, no stack temporary at boot).
pub(super) const NIL: u32 = 0;

/// The array position of entry number `index` (`NIL` maps out of range).
#[inline]
pub(super) fn position(index: u32) -> usize {
    (index as usize).wrapping_sub(1)
}

#[derive(Clone, Copy)]
pub(super) struct Entry {
    pub(super) used: bool,
    /// Next entry in the same hash bucket.
    pub(super) next: u32,
    pub(super) hash: u32,
    /// Pool offset of `key ++ value`.
    pub(super) offset: u32,
    pub(super) key_len: u32,
    pub(super) value_len: u32,
    pub(super) timer: Option<TimerId>,
    /// Given anew on each write to the key (`WATCH` compares it).
    #[cfg(feature = "alloc")]
    pub(super) stamp: u32,
}

impl Entry {
    pub(super) const VACANT: Self = Self {
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

pub(super) struct Entries<'a>(pub(super) Memory<'a, KeySlot>);

impl Entries<'_> {
    pub(super) fn get(&self, position: usize) -> Option<&Entry> {
        self.0.get(position).map(|slot| &slot.0)
    }

    pub(super) fn get_mut(&mut self, position: usize) -> Option<&mut Entry> {
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

impl Store<'_> {
    pub(super) fn insert_new(&mut self, key: &[u8], value: &[u8]) -> Result<u32, StoreError> {
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

    pub(super) fn entry(&self, index: u32) -> Option<&Entry> {
        self.entries.get(position(index)).filter(|e| e.used)
    }

    /// `key`'s hash under the store's [`HashKey`](super::HashKey): keyed SipHash-1-3 (what Rust's `HashMap` uses
    /// against hash flooding), its low 32 bits.
    pub(super) fn hash(&self, key: &[u8]) -> u32 {
        let mut hasher = SipHasher13::new_with_key(&self.hash_key.0);
        hasher.write(key);
        hasher.finish() as u32
    }

    /// The hash bucket of `hash` (an index into `buckets`, unless the store has no keys).
    pub(super) fn bucket(&self, hash: u32) -> usize {
        hash as usize % self.keys.max(1)
    }

    pub(super) fn find(&self, key: &[u8]) -> Option<u32> {
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

    pub(super) fn remove_index(&mut self, index: u32) {
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
    use super::super::tests::store;
    use super::super::{HashKey, Store, StoreArrays, StoreMemory, Ttl};

    #[test]
    fn hash_depends_on_the_hash_key() {
        let mut arrays = StoreArrays::<4, 64>::new();
        let zero = Store::new(StoreMemory::from(&mut arrays), 16, 16);
        let mut arrays2 = StoreArrays::<4, 64>::new();
        let keyed = Store::with_hash_key(StoreMemory::from(&mut arrays2), 16, 16, HashKey([1; 16]));
        let differ = (0..16u8)
            .filter(|n| zero.hash(&[*n]) != keyed.hash(&[*n]))
            .count();
        assert!(differ >= 15, "{differ} of 16 hashes differ");
        assert_eq!(zero.hash(b"k"), zero.hash(b"k"));
    }

    #[test]
    pub(super) fn colliding_hash_chains_unlink_correctly() {
        // One bucket: every key collides.
        let mut arrays = StoreArrays::<1, 64>::new();
        let mut s = store(&mut arrays, 16, 64);
        s.set(b"a", b"1", Ttl::Persist, 0).unwrap();
        assert!(s.delete(b"a", 0));
        let mut arrays2 = StoreArrays::<3, 128>::new();
        let mut s = store(&mut arrays2, 16, 64);
        for k in [b"a", b"b", b"c"] {
            s.set(k, b"v", Ttl::Persist, 0).unwrap();
        }
        assert!(s.delete(b"b", 0));
        assert!(s.contains(b"a", 0) && s.contains(b"c", 0));
        assert!(!s.contains(b"b", 0));
    }
}
