//! Experiment: a hierarchical wheel whose slots keep their timers in blocks of [`K`] entries,
//! moved on every cascade, instead of one linked node per timer. It measures how much "slots
//! that store timers in small contiguous blocks, so cascading and expiry stream through memory"
//! can gain before any of it goes into timer-core. Opt in with `TIMER_BENCH_QUEUES=...,blocks`;
//! the [`Contender`] impl at the end is its adapter.
//!
//! Layout: a handle table `(generation, position, value)`, 12 bytes per timer; entries
//! `(deadline, handle)`, 8 bytes, in blocks of `K`; each slot's list a doubly linked chain of
//! blocks, and each block knows its list (`prev`, `next`, `owner`: 12 bytes per block). Eleven
//! levels of 64 slots, as `TimerWheel`, one list per slot, and a due list.
//!
//! - A cascade reads its slot's blocks in order and appends each entry to the tail block of its
//!   new list (at most 64 of them, all in cache), writing the entry's new position into its
//!   handle: a store to a random place, which does not hold up the loop as a dependent load
//!   does. Expiry reads due entries in order; the handle loads it makes (value, generation) are
//!   independent of one another, so they overlap.
//! - Cancel and reschedule load one handle, find the list from the block's `owner` (no entry
//!   load), move the list's last entry into the hole (a store), and update that entry's handle.
//!
//! It is *not* a conforming queue:
//!
//! - the hole a cancel leaves is filled with the list's last entry, which puts a later-inserted
//!   timer ahead of earlier ones: first-in first-out among equal deadlines is lost. (Keeping
//!   order means shifting the block, up to `K` - 1 moves and handle updates per cancel, or
//!   holes, which hold capacity until a compaction.)
//! - the entry stores the deadline as a `u32` (the benchmark's deadlines fit), a stand-in for
//!   the offset within the entry's slot that a real version would store: that fits 32 bits on
//!   levels 0-5 only, so levels 6-10 and the due list (any past deadline) need a wider entry.
//! - a deadline already past at insertion is appended to the due list, not sorted into it.
//! - its pool holds n/`K` blocks plus one per list (each list's last block is partly empty):
//!   20 bytes per timer plus 12 per block plus 706 × `K` × 8 bytes, and 16 bytes per list
//!   head. At n = 1,000,000 that is 20.6 bytes a timer; at n = 1,000, 221 (the benchmark's
//!   memory table counts them). No `[Slot; N]` of 24 bytes a timer holds that spare
//!   room for a small `N` whose timers spread over many slots, so exact capacity at 24 bytes a
//!   timer is out of reach with fixed-size blocks.

use crate::contender::Contender;

/// Entries per block.
pub const K: usize = 32;
const NONE: u32 = u32::MAX;
const VACANT: u32 = 1 << 31;
const LEVELS: usize = 11;
const SLOTS: usize = 64;
const SLOT_BITS: u32 = 6;
const SLOT_MASK: u64 = 63;
/// The due list's place among the lists, after every level's.
const DUE: usize = LEVELS * SLOTS;

#[derive(Clone, Copy)]
struct Entry {
    /// Proxy for a slot-relative offset: the benchmark's deadlines all fit 32 bits.
    deadline: u32,
    handle: u32,
}

#[derive(Clone, Copy)]
struct HandleSlot {
    generation: u32,
    /// Entry position while live; `VACANT | next free handle` while free.
    pos: u32,
    value: u32,
}

/// A chain of blocks: entries `[head_off, K)` of `head` (or `[head_off, tail_len)` when the
/// head is the tail), every block between full, `[0, tail_len)` of `tail`.
#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    head_off: u32,
    tail_len: u32,
}

impl List {
    const EMPTY: Self = Self {
        head: NONE,
        tail: NONE,
        head_off: 0,
        tail_len: 0,
    };

    #[inline]
    fn is_empty(&self) -> bool {
        self.head == NONE
    }
}

/// A handle: handle slot and generation.
#[derive(Clone, Copy)]
pub struct BlockId {
    index: u32,
    generation: u32,
}

/// Block storage and its free list.
struct Blocks {
    entries: Vec<Entry>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// The list each block is on.
    owner: Vec<u32>,
    free: u32,
}

impl Blocks {
    #[inline]
    fn alloc(&mut self) -> u32 {
        let block = self.free;
        assert!(block != NONE, "block pool exhausted");
        self.free = self.next[block as usize];
        block
    }

    #[inline]
    fn release(&mut self, block: u32) {
        self.next[block as usize] = self.free;
        self.free = block;
    }

    /// Appends `entry` to `list`; returns its position.
    #[inline]
    fn push_back(&mut self, list: &mut List, number: usize, entry: Entry) -> u32 {
        if list.tail == NONE {
            let block = self.alloc();
            self.owner[block as usize] = number as u32;
            self.prev[block as usize] = NONE;
            self.next[block as usize] = NONE;
            *list = List {
                head: block,
                tail: block,
                head_off: 0,
                tail_len: 0,
            };
        } else if list.tail_len as usize == K {
            let block = self.alloc();
            self.owner[block as usize] = number as u32;
            self.next[list.tail as usize] = block;
            self.prev[block as usize] = list.tail;
            self.next[block as usize] = NONE;
            list.tail = block;
            list.tail_len = 0;
        }
        let pos = list.tail * K as u32 + list.tail_len;
        self.entries[pos as usize] = entry;
        list.tail_len += 1;
        pos
    }

    /// Removes the entry at `pos` from `list`, moving the list's last entry into its place;
    /// returns whether the list is now empty.
    #[inline]
    fn remove(&mut self, list: &mut List, pos: u32, handles: &mut [HandleSlot]) -> bool {
        let last = list.tail * K as u32 + list.tail_len - 1;
        if pos != last {
            let moved = self.entries[last as usize];
            self.entries[pos as usize] = moved;
            handles[moved.handle as usize].pos = pos;
        }
        list.tail_len -= 1;
        if list.head == list.tail {
            if list.tail_len == list.head_off {
                self.release(list.tail);
                *list = List::EMPTY;
                return true;
            }
        } else if list.tail_len == 0 {
            let tail = list.tail;
            list.tail = self.prev[tail as usize];
            self.next[list.tail as usize] = NONE;
            list.tail_len = K as u32;
            self.release(tail);
        }
        false
    }

    /// Takes the first entry of a non-empty `list`.
    #[inline]
    fn pop_front(&mut self, list: &mut List) -> Entry {
        let entry = self.entries[(list.head * K as u32 + list.head_off) as usize];
        list.head_off += 1;
        if list.head == list.tail {
            if list.head_off == list.tail_len {
                self.release(list.head);
                *list = List::EMPTY;
            }
        } else if list.head_off as usize == K {
            let head = list.head;
            list.head = self.next[head as usize];
            self.prev[list.head as usize] = NONE;
            list.head_off = 0;
            self.release(head);
        }
        entry
    }
}

/// The experimental block wheel (see the module docs).
pub struct BlockWheel {
    blocks: Blocks,
    handles: Vec<HandleSlot>,
    free_handle: u32,
    lists: Vec<List>,
    occupied: [u64; LEVELS],
    elapsed: u64,
    check_from: u64,
}

#[inline]
fn level_for(elapsed: u64, when: u64) -> usize {
    let masked = (elapsed ^ when) | SLOT_MASK;
    ((63 - masked.leading_zeros()) / SLOT_BITS) as usize
}

impl BlockWheel {
    /// Room for `n` timers, every page touched.
    pub fn new(n: usize) -> Self {
        let blocks = n.div_ceil(K) + DUE + 2;
        let filler = Entry {
            deadline: 1,
            handle: 1,
        };
        let mut next: Vec<u32> = (1..=blocks as u32).collect();
        next[blocks - 1] = NONE;
        let mut handles: Vec<HandleSlot> = (0..n as u32)
            .map(|i| HandleSlot {
                generation: 0,
                pos: VACANT | (i + 1),
                value: 0,
            })
            .collect();
        if let Some(last) = handles.last_mut() {
            last.pos = VACANT | (VACANT - 1);
        }
        Self {
            blocks: Blocks {
                entries: vec![filler; blocks * K],
                prev: vec![NONE; blocks],
                owner: vec![NONE; blocks],
                next,
                free: 0,
            },
            handles,
            free_handle: 0,
            lists: vec![List::EMPTY; DUE + 1],
            occupied: [0; LEVELS],
            elapsed: 0,
            check_from: 0,
        }
    }

    /// The list an entry due at `deadline` is on, and its level (`LEVELS` for the due list).
    #[inline]
    fn home(&self, deadline: u64) -> (usize, usize) {
        if deadline <= self.elapsed {
            (DUE, LEVELS)
        } else {
            let level = level_for(self.elapsed, deadline);
            let slot = ((deadline >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize;
            (level * SLOTS + slot, level)
        }
    }

    /// Files `entry`; returns its position.
    #[inline]
    fn file(&mut self, entry: Entry) -> u32 {
        let deadline = u64::from(entry.deadline);
        let (list, level) = self.home(deadline);
        if level < LEVELS {
            self.occupied[level] |= 1 << (list % SLOTS);
            let start = deadline & !((1u64 << (level as u32 * SLOT_BITS)) - 1);
            self.check_from = self.check_from.min(start);
        }
        self.blocks.push_back(&mut self.lists[list], list, entry)
    }

    /// Removes the entry at `pos` from the list its block is on.
    #[inline]
    fn unfile(&mut self, pos: u32) {
        let list = self.blocks.owner[pos as usize / K] as usize;
        if self
            .blocks
            .remove(&mut self.lists[list], pos, &mut self.handles)
            && list < DUE
        {
            self.occupied[list / SLOTS] &= !(1 << (list % SLOTS));
        }
    }

    #[inline]
    fn live(&self, id: BlockId) -> u32 {
        let slot = self.handles[id.index as usize];
        assert!(
            slot.pos & VACANT == 0 && slot.generation == id.generation,
            "handle is live"
        );
        slot.pos
    }

    #[inline]
    fn free_handle(&mut self, index: u32) {
        let slot = &mut self.handles[index as usize];
        slot.generation = slot.generation.wrapping_add(1);
        slot.pos = VACANT | self.free_handle;
        self.free_handle = index;
    }

    pub fn insert(&mut self, deadline: u64, value: u32) -> BlockId {
        let index = self.free_handle;
        let slot = self.handles[index as usize];
        self.free_handle = slot.pos & !VACANT;
        let pos = self.file(Entry {
            deadline: u32::try_from(deadline).expect("proxy: deadlines below 2^32"),
            handle: index,
        });
        let slot = &mut self.handles[index as usize];
        slot.pos = pos;
        slot.value = value;
        BlockId {
            index,
            generation: slot.generation,
        }
    }

    pub fn cancel(&mut self, id: BlockId) -> u32 {
        let pos = self.live(id);
        let value = self.handles[id.index as usize].value;
        self.unfile(pos);
        self.free_handle(id.index);
        value
    }

    pub fn reschedule(&mut self, id: BlockId, deadline: u64) {
        let pos = self.live(id);
        self.unfile(pos);
        let pos = self.file(Entry {
            deadline: u32::try_from(deadline).expect("proxy: deadlines below 2^32"),
            handle: id.index,
        });
        self.handles[id.index as usize].pos = pos;
    }

    fn next_expiration(&self) -> Option<(usize, usize, u64)> {
        (0..LEVELS).find_map(|level| {
            let occupied = self.occupied[level];
            if occupied == 0 {
                return None;
            }
            let shift = level as u32 * SLOT_BITS;
            let now_slot = ((self.elapsed >> shift) & SLOT_MASK) as u32;
            let slot = (now_slot + occupied.rotate_right(now_slot).trailing_zeros()) % 64;
            let span_bits = shift + SLOT_BITS;
            let base = if span_bits >= 64 {
                0
            } else {
                self.elapsed & !((1u64 << span_bits) - 1)
            };
            Some((level, slot as usize, base | (u64::from(slot) << shift)))
        })
    }

    /// Takes a slot whole and re-files its entries, block by block.
    fn process(&mut self, level: usize, slot: usize, start: u64) {
        self.elapsed = start;
        self.occupied[level] &= !(1 << slot);
        let list = std::mem::replace(&mut self.lists[level * SLOTS + slot], List::EMPTY);
        if level == 0 && self.lists[DUE].is_empty() {
            // The slot becomes the due list: its blocks change owner.
            let mut block = list.head;
            loop {
                self.blocks.owner[block as usize] = DUE as u32;
                if block == list.tail {
                    break;
                }
                block = self.blocks.next[block as usize];
            }
            self.lists[DUE] = list;
            return;
        }
        let mut block = list.head;
        let mut from = list.head_off as usize;
        loop {
            let end = if block == list.tail {
                list.tail_len as usize
            } else {
                K
            };
            let base = block as usize * K;
            for at in base + from..base + end {
                let entry = self.blocks.entries[at];
                let pos = self.file(entry);
                self.handles[entry.handle as usize].pos = pos;
            }
            let next = self.blocks.next[block as usize];
            self.blocks.release(block);
            if block == list.tail {
                break;
            }
            block = next;
            from = 0;
        }
    }

    /// Fires every timer due at `now`.
    pub fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        loop {
            while !self.lists[DUE].is_empty() {
                let due = &self.lists[DUE];
                let head = self.blocks.entries[(due.head * K as u32 + due.head_off) as usize];
                if u64::from(head.deadline) > now {
                    return;
                }
                let entry = self.blocks.pop_front(&mut self.lists[DUE]);
                let value = self.handles[entry.handle as usize].value;
                self.free_handle(entry.handle);
                fired(value);
            }
            if now <= self.elapsed {
                return;
            }
            if now < self.check_from {
                self.elapsed = now;
                return;
            }
            match self.next_expiration() {
                Some((level, slot, start)) if start <= now => self.process(level, slot, start),
                next => {
                    self.check_from = next.map_or(u64::MAX, |(_, _, start)| start);
                    self.elapsed = now;
                    return;
                }
            }
        }
    }
}

impl Contender for BlockWheel {
    type Handle = BlockId;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> BlockId {
        BlockWheel::insert(self, deadline, value)
    }

    #[inline]
    fn cancel(&mut self, id: BlockId) {
        BlockWheel::cancel(self, id);
    }

    #[inline]
    fn reschedule(&mut self, id: BlockId, deadline: u64) -> BlockId {
        BlockWheel::reschedule(self, id, deadline);
        id
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        BlockWheel::expire(self, now, fired);
    }
}
