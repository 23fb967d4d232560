//! Which entry a new key takes, and which chunks of entries can go.
//!
//! Over lent entries (a board's) there is one free list for the whole table, then the entries
//! never used yet. Over allocated ones (a host's) each chunk of entries has its own free list
//! and key count, and a new key takes a slot in the lowest chunk with room: keys gather in the
//! low chunks, and a chunk whose keys have all gone (deleted or expired) is given back. One
//! empty chunk is kept as a spare, the lowest, so that a table at a chunk's edge does not
//! allocate and free by turns; any other goes at once, one chunk per removed key at most. No
//! key ever moves (a `SCAN` cursor stays valid), so a chunk that keeps one key keeps its memory.

use super::hash_table::{position, Entry, NIL};
#[cfg(feature = "alloc")]
use super::KeySlot;
use super::Store;

/// One allocated chunk's keys and free slots.
#[cfg(feature = "alloc")]
#[derive(Clone, Copy, Default)]
struct ChunkKeys {
    /// Keys in it.
    keys: u32,
    /// The first of its free entries (`NIL`: none), chained through [`Entry::next`].
    free: u32,
    /// Its entries numbered so far: the rest were never used since it was made.
    fresh: u32,
}

/// Where new keys go: see the module's documentation.
#[derive(Default)]
pub(super) struct EntrySlots {
    /// Lent entries: the first free one (`NIL`: none), chained through [`Entry::next`].
    free: u32,
    /// Lent entries numbered so far.
    unused_from: u32,
    /// Allocated chunks, by position (as the entries' chunks).
    #[cfg(feature = "alloc")]
    chunks: alloc::vec::Vec<ChunkKeys>,
    /// No allocated chunk below this one has a free slot.
    #[cfg(feature = "alloc")]
    room_from: usize,
    /// The empty chunk kept.
    #[cfg(feature = "alloc")]
    spare: Option<usize>,
}

impl Store<'_> {
    /// The entry a new key would take: `None` if every key slot is taken.
    pub(super) fn vacant_slot(&self) -> Option<u32> {
        #[cfg(feature = "alloc")]
        if self.entries.0.grows() {
            return self.vacant_allocated_slot();
        }
        let slots = &self.slots;
        if slots.free != NIL {
            Some(slots.free)
        } else if (slots.unused_from as usize) < self.keys {
            Some(slots.unused_from + 1)
        } else {
            None
        }
    }

    /// Takes entry `index` (from [`vacant_slot`](Self::vacant_slot)) for a new key, making
    /// its chunk if needed.
    #[inline]
    pub(super) fn take_slot(&mut self, index: u32) {
        #[cfg(feature = "alloc")]
        if self.entries.0.grows() {
            return self.take_allocated_slot(index);
        }
        let slots = &mut self.slots;
        if index == slots.free {
            slots.free = self.entries.get(position(index)).map_or(NIL, |e| e.next);
        } else {
            slots.unused_from += 1;
        }
    }

    /// Frees entry `index`, whose key is gone (giving back its chunk if that empties it).
    #[inline]
    pub(super) fn free_slot(&mut self, index: u32) {
        #[cfg(feature = "alloc")]
        if self.entries.0.grows() {
            return self.free_allocated_slot(index);
        }
        if let Some(slot) = self.entries.get_mut(position(index)) {
            *slot = Entry::vacant_before(self.slots.free);
        }
        self.slots.free = index;
    }

    /// Key slots numbered so far: every key is in a slot below this.
    #[inline]
    pub(super) fn slots_numbered(&self) -> usize {
        #[cfg(feature = "alloc")]
        if self.entries.0.grows() {
            return self.entries.0.len();
        }
        self.slots.unused_from as usize
    }

    /// Forgets every key's slot (the entries were cleared).
    pub(super) fn clear_slots(&mut self) {
        self.slots = EntrySlots::default();
    }

    /// The first entry of the lowest allocated chunk with room (a new chunk's, past the last).
    #[cfg(feature = "alloc")]
    fn vacant_allocated_slot(&self) -> Option<u32> {
        let shift = self.entries.0.chunk_shift();
        let mut chunk = self.slots.room_from;
        loop {
            let base = chunk << shift;
            // Entries past the key cap are never used (the last chunk may reach past it).
            let room = self.keys.checked_sub(base).filter(|room| *room > 0)?;
            let room = room.min(1 << shift) as u32;
            let Some(keys) = self.slots.chunks.get(chunk) else {
                return u32::try_from(base + 1).ok();
            };
            if keys.keys < room {
                return Some(if keys.free != NIL {
                    keys.free
                } else {
                    base as u32 + keys.fresh + 1
                });
            }
            chunk += 1;
        }
    }

    #[cfg(feature = "alloc")]
    fn take_allocated_slot(&mut self, index: u32) {
        let at = position(index);
        let chunk = at >> self.entries.0.chunk_shift();
        if self.entries.get(at).is_none() {
            if chunk >= self.slots.chunks.len() {
                self.entries.0.grow(KeySlot::new());
                self.slots.chunks.push(ChunkKeys::default());
            } else {
                self.entries.0.remake(chunk, KeySlot::new());
            }
            self.account_growth();
        }
        let next = self.entries.get(at).map_or(NIL, |e| e.next);
        let slots = &mut self.slots;
        if let Some(keys) = slots.chunks.get_mut(chunk) {
            if keys.free == index {
                keys.free = next;
            } else {
                keys.fresh += 1;
            }
            keys.keys += 1;
        }
        if slots.spare == Some(chunk) {
            slots.spare = None;
        }
        slots.room_from = chunk;
    }

    #[cfg(feature = "alloc")]
    fn free_allocated_slot(&mut self, index: u32) {
        let at = position(index);
        let chunk = at >> self.entries.0.chunk_shift();
        let slots = &mut self.slots;
        let Some(keys) = slots.chunks.get_mut(chunk) else {
            return;
        };
        if let Some(slot) = self.entries.get_mut(at) {
            *slot = Entry::vacant_before(keys.free);
        }
        keys.free = index;
        keys.keys -= 1;
        slots.room_from = slots.room_from.min(chunk);
        if keys.keys > 0 {
            return;
        }
        // Empty: the lower of it and the spare stays as the spare, the other goes.
        let (keep, give_back) = match slots.spare {
            None => {
                slots.spare = Some(chunk);
                return;
            }
            Some(spare) => (spare.min(chunk), spare.max(chunk)),
        };
        slots.spare = Some(keep);
        self.entries.0.give_back(give_back);
        if let Some(keys) = slots.chunks.get_mut(give_back) {
            *keys = ChunkKeys::default();
        }
        // Positions past the last chunk present are gone.
        let positions = self.entries.0.len() >> self.entries.0.chunk_shift();
        slots.chunks.truncate(positions);
        self.account_growth();
    }
}
