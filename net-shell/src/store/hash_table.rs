//! The key table: entries numbered from 1, chained by hash in buckets, freed entries kept on a
//! free list. Each entry points at its key and value in the pool. The hash is keyed
//! ([`HashKey`](super::HashKey)), so which keys share a bucket cannot be known without the key.
//!
//! The buckets grow and shrink by linear hashing (Litwin's): there are `base + split` buckets,
//! and a key's bucket is its hash modulo `base`, or modulo `2 * base` where that bucket was
//! already split. Each key added past one per bucket splits one more bucket (its chain divides
//! in two); each key removed below one per two buckets merges the last one back. So no write
//! moves more than one chain, whatever the table's size, and entries never move at all (a
//! `SCAN` cursor stays valid). Lent memory has all its buckets from the start.

use core::hash::Hasher as _;

use siphasher::sip::SipHasher13;

use super::chunks::Chunks;
use super::timer_segments::KeyTimer;
use super::{KeySlot, Store, StoreError};
use crate::pool::Owners;
use timer_core::TimerId;

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
    /// What the value holds.
    pub(super) kind: super::ValueKind,
    /// Next entry in the same hash bucket. (The key's hash is not kept: 4 bytes a key. It is
    /// hashed again from the pool where a bucket splits, or the key goes.)
    pub(super) next: u32,
    /// Pool offset of `key ++ value`.
    pub(super) offset: u32,
    pub(super) key_len: u32,
    pub(super) value_len: u32,
    /// The key's timer, in segment `timer_segment` of the key timers (two fields rather than
    /// one [`KeyTimer`], which would pad the entry by 4 bytes).
    timer: Option<TimerId>,
    timer_segment: u16,
    /// Given anew on each write to the key (`WATCH` compares it).
    #[cfg(feature = "alloc")]
    pub(super) stamp: u32,
}

impl Entry {
    pub(super) const VACANT: Self = Self {
        used: false,
        kind: super::ValueKind::String,
        next: NIL,
        offset: 0,
        key_len: 0,
        value_len: 0,
        timer: None,
        timer_segment: 0,
        #[cfg(feature = "alloc")]
        stamp: 0,
    };

    /// A vacant entry on a free list, before entry `next`.
    pub(super) const fn vacant_before(next: u32) -> Self {
        Self {
            next,
            ..Self::VACANT
        }
    }

    /// The key's timer, if it has a time to live.
    pub(super) fn timer(&self) -> Option<KeyTimer> {
        self.timer.map(|id| KeyTimer {
            segment: self.timer_segment,
            id,
        })
    }

    pub(super) fn set_timer(&mut self, timer: Option<KeyTimer>) {
        self.timer = timer.map(|t| t.id);
        self.timer_segment = timer.map_or(0, |t| t.segment);
    }
}

pub(super) struct Entries<'a>(pub(super) Chunks<'a, KeySlot>);

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

/// The hash buckets: chain heads, `base + split` of them in use (linear hashing).
pub(super) struct Buckets<'a> {
    pub(super) heads: Chunks<'a, u32>,
    /// A power of two: buckets below `split` were split into `b` and `b + base`.
    base: usize,
    split: usize,
}

impl<'a> Buckets<'a> {
    /// Over lent heads, all of them from the start (the table cannot grow, so it is as large
    /// as it will be); over growing ones, one bucket.
    pub(super) fn new(heads: Chunks<'a, u32>) -> Self {
        let mut buckets = Self {
            heads,
            base: 1,
            split: 0,
        };
        buckets.start();
        buckets
    }

    /// Sets the bucket count an empty table starts with.
    fn start(&mut self) {
        let count = if self.heads.len() == self.heads.limit() {
            self.heads.len().max(1)
        } else {
            1
        };
        self.base = 1 << count.ilog2();
        self.split = count - self.base;
    }

    /// Buckets in use.
    #[cfg(feature = "alloc")]
    const fn count(&self) -> usize {
        self.base + self.split
    }

    /// The bucket of `hash`.
    pub(super) fn of(&self, hash: u32) -> usize {
        let hash = hash as usize;
        let bucket = hash & (self.base - 1);
        if bucket < self.split {
            hash & (2 * self.base - 1)
        } else {
            bucket
        }
    }

    fn head(&self, bucket: usize) -> u32 {
        self.heads.get(bucket).copied().unwrap_or(NIL)
    }

    fn set_head(&mut self, bucket: usize, index: u32) {
        if let Some(head) = self.heads.get_mut(bucket) {
            *head = index;
        }
    }

    /// Back to one empty bucket; allocated chunks are given back.
    pub(super) fn clear(&mut self) {
        self.heads.reset(NIL);
        self.start();
    }
}

/// `key`'s hash under `hash_key`: keyed SipHash-1-3, its low 32 bits.
fn key_hash(hash_key: &super::HashKey, key: &[u8]) -> u32 {
    let mut hasher = SipHasher13::new_with_key(&hash_key.0);
    hasher.write(key);
    hasher.finish() as u32
}

impl Store<'_> {
    pub(super) fn insert_new(&mut self, key: &[u8], value: &[u8]) -> Result<u32, StoreError> {
        let index = self.vacant_slot().ok_or(StoreError::KeysFull)?;
        let plan = self
            .pool
            .plan(key.len() + value.len(), None)
            .ok_or(StoreError::BytesFull)?;
        // Never refused for memory: the key's bytes fit, and the chunks count against the
        // limit from now on (see `account_growth`). The first key brings the first bucket.
        self.take_slot(index);
        if self.buckets.heads.len() == 0 {
            self.buckets.heads.grow(NIL);
            self.account_growth();
        }
        let offset = self.pool.place(plan, index, &mut self.entries);
        self.write_block(offset, key, value);
        let hash = self.hash(key);
        let bucket = self.buckets.of(hash);
        let entry = Entry {
            used: true,
            next: self.buckets.head(bucket),
            offset,
            key_len: key.len() as u32,
            value_len: value.len() as u32,
            ..Entry::VACANT
        };
        if let Some(slot) = self.entries.get_mut(position(index)) {
            *slot = entry;
        }
        self.buckets.set_head(bucket, index);
        self.len += 1;
        self.key_bytes += key.len();
        self.value_bytes += value.len();
        #[cfg(feature = "alloc")]
        self.split_bucket();
        Ok(index)
    }

    pub(super) fn entry(&self, index: u32) -> Option<&Entry> {
        self.entries.get(position(index)).filter(|e| e.used)
    }

    /// `key`'s hash under the store's [`HashKey`](super::HashKey): keyed SipHash-1-3 (what Rust's `HashMap` uses
    /// against hash flooding), its low 32 bits.
    pub(super) fn hash(&self, key: &[u8]) -> u32 {
        key_hash(&self.hash_key, key)
    }

    /// The key of entry `entry`, from the pool.
    fn key_of(&self, entry: &Entry) -> &[u8] {
        self.pool.slice(entry.offset, entry.key_len as usize)
    }

    pub(super) fn find(&self, key: &[u8]) -> Option<u32> {
        let hash = self.hash(key);
        let mut at = self.buckets.head(self.buckets.of(hash));
        while at != NIL {
            let entry = self.entry(at)?;
            if entry.key_len as usize == key.len() && self.key_of(entry) == key {
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
        if let Some(timer) = entry.timer() {
            let capacity = self.timers.capacity();
            let _ = self.timers.cancel(timer);
            self.account_timers(capacity);
        }
        // Unlink from the bucket chain.
        let bucket = self.buckets.of(self.hash(self.key_of(&entry)));
        if self.buckets.head(bucket) == index {
            self.buckets.set_head(bucket, entry.next);
        } else {
            let mut at = self.buckets.head(bucket);
            while let Some(e) = self.entries.get_mut(position(at)) {
                if e.next == index {
                    e.next = entry.next;
                    break;
                }
                at = e.next;
            }
        }
        self.pool.free(entry.offset);
        self.len -= 1;
        self.key_bytes -= entry.key_len as usize;
        self.value_bytes -= entry.value_len as usize;
        self.free_slot(index);
        #[cfg(feature = "alloc")]
        self.merge_bucket();
    }

    /// After a key was added: splits one bucket while there are more keys than buckets and
    /// room for one more (allocating a chunk of buckets if needed).
    #[cfg(feature = "alloc")]
    fn split_bucket(&mut self) {
        let buckets = &mut self.buckets;
        if self.len <= buckets.count() || buckets.count() >= buckets.heads.limit() {
            return;
        }
        if buckets.count() >= buckets.heads.len() {
            buckets.heads.grow(NIL);
            self.account_growth();
        }
        let buckets = &mut self.buckets;
        let (from, to) = (buckets.split, buckets.split + buckets.base);
        let mask = 2 * buckets.base - 1;
        // Divide `from`'s chain: entries whose hash now says `to` move there, in order.
        let mut at = buckets.head(from);
        let (mut keep, mut moved) = (NIL, NIL);
        buckets.set_head(from, NIL);
        buckets.set_head(to, NIL);
        while let Some(entry) = self.entries.get_mut(position(at)) {
            let next = entry.next;
            let key = self.pool.slice(entry.offset, entry.key_len as usize);
            let (bucket, tail) = if key_hash(&self.hash_key, key) as usize & mask == to {
                (to, &mut moved)
            } else {
                (from, &mut keep)
            };
            entry.next = NIL;
            match self.entries.get_mut(position(*tail)) {
                Some(last) => last.next = at,
                None => buckets.set_head(bucket, at),
            }
            *tail = at;
            at = next;
        }
        buckets.split += 1;
        if buckets.split == buckets.base {
            buckets.base *= 2;
            buckets.split = 0;
        }
    }

    /// After a key was removed: merges the last bucket into its twin while there are fewer
    /// keys than half the buckets, and gives back chunks of buckets no longer used.
    #[cfg(feature = "alloc")]
    fn merge_bucket(&mut self) {
        // Two a time, so the buckets keep up with keys removed in a row.
        for _ in 0..2 {
            self.merge_one_bucket();
        }
    }

    #[cfg(feature = "alloc")]
    fn merge_one_bucket(&mut self) {
        let buckets = &mut self.buckets;
        // Lent buckets stay as they are: there is nothing to give back.
        if self.len * 2 >= buckets.count()
            || buckets.count() <= 1
            || buckets.heads.allocated_bytes() == 0
        {
            return;
        }
        if buckets.split == 0 {
            buckets.base /= 2;
            buckets.split = buckets.base;
        }
        buckets.split -= 1;
        let (into, from) = (buckets.split, buckets.split + buckets.base);
        // `from`'s chain goes in front of `into`'s.
        let moved = buckets.head(from);
        buckets.set_head(from, NIL);
        if moved != NIL {
            let mut last = moved;
            while let Some(next) = self.entries.get(position(last)).map(|e| e.next) {
                if next == NIL {
                    break;
                }
                last = next;
            }
            let rest = buckets.head(into);
            if let Some(entry) = self.entries.get_mut(position(last)) {
                entry.next = rest;
            }
            buckets.set_head(into, moved);
        }
        let before = buckets.heads.allocated_bytes();
        buckets.heads.shrink_to(buckets.count());
        if buckets.heads.allocated_bytes() != before {
            self.account_growth();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::store;
    use super::super::{HashKey, Store, StoreArrays, StoreMemory, Ttl};

    /// An entry is 28 bytes, 32 with the write stamp (`alloc`): the key table's cost per key
    /// beside its bucket (4 bytes) and its timer slot.
    #[test]
    fn an_entry_takes_28_bytes_32_with_its_write_stamp() {
        let stamp = if cfg!(feature = "alloc") { 4 } else { 0 };
        assert_eq!(core::mem::size_of::<super::Entry>(), 28 + stamp);
    }

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
