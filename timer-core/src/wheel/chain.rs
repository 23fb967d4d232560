//! Chains of blocks: how a wheel slot keeps its timers in contiguous memory.
//!
//! The wheel's storage lends it two `u32` *cells* per timer slot. The cells are cut into blocks
//! of `K` (a power of two, chosen from the capacity): a block's first cell links to the next
//! block of its chain (in the chain's last block, it holds where the chain starts), the other
//! `K - 1` hold timers, as the slot numbers of their handles. A chain (one per wheel slot, and
//! the due list) is a singly linked run of blocks read front to back, named by one `u32`: a
//! cascade or an expiry streams through whole blocks, and the handle loads it makes for one cell
//! do not wait on those of the cell before (a list of linked nodes would make each load wait for
//! the last).
//!
//! A cell is *live* while its handle points back at it; cancel and reschedule only change the
//! handle, so the cell they leave behind goes *stale* and is dropped when its chain is next read
//! (a cascade, an expiry) or compacted. Compaction keeps live cells in their order, so first-in
//! first-out among equal deadlines survives it.

use crate::list::List;

/// "No block": the end of a chain, an empty chain, an empty free list. Blocks count from 1.
pub(super) const NIL: u32 = 0;

/// The most cells per block (`K`): a block copied out by [`Chain::take_front_block`] fits a
/// buffer of this many.
pub(super) const MAX_BLOCK: usize = 64;

/// Free blocks kept back for cascades: a cascade frees each block it reads before it files the
/// block's timers, but filing may open a new tail block on each of the 64 finer lists and the
/// due list.
pub(super) const RESERVE: u32 = 68;

/// What a chain reads of the storage: its cells, and for each cell whether it is live.
pub(super) trait Cells {
    /// The cell at position `at` (0 if out of range).
    fn cell(&self, at: u32) -> u32;
    /// Whether the cell at `at`, holding `value`, is the one its timer is filed by.
    fn is_live(&self, value: u32, at: u32) -> bool;
    /// Which cells of `from..end` are live, bit `i` for the cell at `from + i`: at most 64
    /// cells, all in one block. Asked of all of them before any moves, so that the handle
    /// loads, independent of one another, overlap their misses.
    fn live_mask(&self, from: u32, end: u32) -> u64 {
        live_mask_cell_by_cell(self, from, end)
    }
}

/// [`Cells::live_mask`] asked of each cell in turn.
pub(super) fn live_mask_cell_by_cell(cells: &(impl Cells + ?Sized), from: u32, end: u32) -> u64 {
    (from..end).rev().fold(0, |live, at| {
        live << 1 | u64::from(cells.is_live(cells.cell(at), at))
    })
}

/// What a chain changes in the storage.
pub(super) trait CellsMut: Cells {
    fn set_cell(&mut self, at: u32, value: u32);
    /// The live cell holding `value` moved to `to`.
    fn relocate(&mut self, value: u32, to: u32);
    /// Moves the live cell at `from` to `to`, and tells its timer.
    fn move_cell(&mut self, from: u32, to: u32) {
        let value = self.cell(from);
        self.set_cell(to, value);
        self.relocate(value, to);
    }
}

/// The capacity from which a wheel keeps its timers in blocks. Below it, a wheel's timers fit
/// the caches well enough that following links costs less than the blocks' bookkeeping and
/// compaction; above it, linked nodes are cache misses one after another and blocks stream.
/// The benchmark `timer_peers` measures both layouts side by side (see its results: at 100,000
/// timers links lead on the sum of the four workloads).
pub(super) const BLOCKS_FROM: usize = 1 << 19;

/// The block geometry and the free blocks. All zero bytes until first used (`shift == 0`), so
/// that an empty wheel stays all zeros.
#[derive(Clone, Copy)]
pub(super) struct Blocks {
    /// Cells per block, as a power of two.
    shift: u32,
    /// Blocks there are: numbered `1..=count`.
    count: u32,
    /// The first free block; each free block's link cell names the next.
    free: u32,
    /// Blocks on the free list.
    free_count: u32,
    /// Blocks `unused_from + 1 ..= count` were never handed out.
    unused_from: u32,
    /// Blocks at any capacity they fit, not only from [`BLOCKS_FROM`] (for tests).
    force: bool,
}

impl Blocks {
    pub(super) const EMPTY: Self = Self {
        shift: 0,
        count: 0,
        free: NIL,
        free_count: 0,
        unused_from: 0,
        force: false,
    };

    /// Blocks at any capacity they fit (from about 8,900 timers), not only from
    /// [`BLOCKS_FROM`].
    pub(super) const FORCED: Self = Self {
        force: true,
        ..Self::EMPTY
    };

    /// Cells per block for a wheel of `capacity` timers over `2 * capacity` cells (less the live
    /// counts'): the largest `K <= MAX_BLOCK` for which a wheel full of live timers, packed,
    /// leaves an eighth of its blocks free beyond the reserve when every list holds a
    /// part-filled tail block. 2 (the shift 1) means the linked layout: below [`BLOCKS_FROM`]
    /// unless `force`, and below about 8,900 timers always, where no `K > 2` fits.
    pub(super) const fn shift_for(capacity: usize, force: bool) -> u32 {
        if !force && capacity < BLOCKS_FROM {
            return 1;
        }
        let cells = cells_for(capacity).saturating_sub(LIVE_CELLS) as usize;
        let lists = super::level::LISTS + 1;
        let mut shift = MAX_BLOCK.trailing_zeros();
        while shift > 1 {
            let per_block = (1 << shift) - 1;
            let count = cells >> shift;
            let need = capacity.div_ceil(per_block) + lists + RESERVE as usize;
            if need * 8 <= count * 7 {
                return shift;
            }
            shift -= 1;
        }
        1
    }

    /// Sets the geometry for `capacity` timers, if not yet set; `true` when it was set now. In
    /// the blocks layout the lists' live counts ([`LIVE_CELLS`]) follow the last block.
    #[inline]
    pub(super) fn init(&mut self, capacity: usize) -> bool {
        if self.shift != 0 {
            return false;
        }
        self.shift = Self::shift_for(capacity, self.force);
        self.count = if self.shift > 1 {
            cells_for(capacity).saturating_sub(LIVE_CELLS) >> self.shift
        } else {
            cells_for(capacity) >> self.shift
        };
        true
    }

    /// The cell that counts list `list`'s live timers (blocks layout).
    #[inline]
    pub(super) fn live_cell(&self, list: usize) -> u32 {
        (self.count << self.shift) + list as u32
    }

    /// Cells per block.
    #[inline]
    pub(super) fn block_len(&self) -> u32 {
        1 << self.shift
    }

    /// The position of block `block`'s link cell; its timers follow it.
    #[inline]
    pub(super) fn first(&self, block: u32) -> u32 {
        (block - 1) << self.shift
    }

    /// Blocks that can be handed out.
    #[inline]
    pub(super) fn available(&self) -> u32 {
        self.free_count + (self.count - self.unused_from)
    }

    /// Free blocks below which a new timer or a reschedule first compacts the lists.
    #[inline]
    pub(super) fn low_water(&self) -> u32 {
        if self.shift > 1 {
            RESERVE
        } else {
            // Blocks of one timer: a cascade reuses each block it frees, so it needs no reserve.
            0
        }
    }

    fn alloc(&mut self, cells: &(impl Cells + ?Sized)) -> Option<u32> {
        if self.free != NIL {
            let block = self.free;
            self.free = cells.cell(self.first(block));
            self.free_count -= 1;
            Some(block)
        } else if self.unused_from < self.count {
            self.unused_from += 1;
            Some(self.unused_from)
        } else {
            None
        }
    }

    fn release(&mut self, cells: &mut (impl CellsMut + ?Sized), block: u32) {
        cells.set_cell(self.first(block), self.free);
        self.free = block;
        self.free_count += 1;
    }

    /// Forgets every block (for a wheel emptied by [`Chain`]s it no longer uses).
    pub(super) fn reset(&mut self) {
        *self = Self {
            shift: self.shift,
            count: self.count,
            force: self.force,
            ..Self::EMPTY
        };
    }
}

/// The cells a wheel of `capacity` timers has: two per slot, as positions fit a `u32`.
const fn cells_for(capacity: usize) -> u32 {
    let cells = capacity.saturating_mul(2);
    if cells > u32::MAX as usize {
        u32::MAX
    } else {
        cells as u32
    }
}

/// Cells the lists' live counts take in the blocks layout, after the last block: one a list, so
/// that a slot is unmarked the moment its last live timer leaves (a cancelled timer's cell stays
/// behind until it is read or compacted, and `next_deadline` must not name a slot of those only).
pub(super) const LIVE_CELLS: u32 = super::level::LISTS as u32;

/// The most timers a wheel can hold: its cell positions must fit a `u32`.
pub(super) const MAX_TIMERS: usize = (u32::MAX / 2) as usize;

/// One list of timers: a chain of blocks, in 4 bytes.
///
/// In the blocks layout a chain is named by its *end*: the position after its last cell (the
/// position just past its tail block when that block is full). The tail block's link cell, which
/// no next block needs, holds the chain's *head*: the position of its first unread cell. Every
/// other block's link cell names the block after it. So a list costs the wheel one `u32`, the
/// same as a linked list's tail, and appending, the commonest change, reads and writes nothing
/// but the end and the new cell (and, once a block, a link cell).
///
/// In the linked layout the same `u32` is the list's tail ([`List`]). `NIL` is the empty list
/// in either layout: no cell is at position 0 (a link cell), and no end is either.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Chain {
    end: u32,
}

/// Where a non-empty chain starts and ends.
#[derive(Clone, Copy)]
struct Ends {
    /// The position of the first unread cell.
    head: u32,
    /// The position after the last cell.
    end: u32,
    /// The block `head` is in.
    head_block: u32,
    /// The block the last cell is in.
    tail_block: u32,
}

impl Blocks {
    /// The block a cell (never a link cell) at `at` is in.
    #[inline]
    fn block_of(&self, at: u32) -> u32 {
        (at >> self.shift) + 1
    }

    /// The block of the last cell before `end`.
    #[inline]
    fn block_before(&self, end: u32) -> u32 {
        ((end - 1) >> self.shift) + 1
    }

    /// Whether the cell at `at` is the first of its block's timers (a chain's head there has
    /// nothing of its block read yet).
    #[inline]
    pub(super) fn starts_block(&self, at: u32) -> bool {
        at & (self.block_len() - 1) == 1
    }

    /// The first cell after the link cell of block `block`.
    #[inline]
    pub(super) fn data(&self, block: u32) -> u32 {
        self.first(block) + 1
    }

    /// The position just past block `block`.
    #[inline]
    pub(super) fn past(&self, block: u32) -> u32 {
        self.first(block) + self.block_len()
    }
}

impl Chain {
    /// No blocks: all zero bytes.
    pub(super) const EMPTY: Self = Self { end: NIL };

    #[inline]
    pub(super) const fn is_empty(&self) -> bool {
        self.end == NIL
    }

    /// A small wheel's list of linked timers (see the wheel's *linked* layout).
    #[inline]
    pub(super) const fn from_linked(list: List) -> Self {
        Self {
            end: list.raw_tail(),
        }
    }

    /// The list of linked timers this chain holds in the *linked* layout.
    #[inline]
    pub(super) const fn linked(&self) -> List {
        List::from_tail(self.end)
    }

    /// Detaches the whole chain, leaving this one empty.
    #[inline]
    pub(super) fn take(&mut self) -> Chain {
        core::mem::replace(self, Chain::EMPTY)
    }

    #[inline]
    fn ends(&self, cells: &(impl Cells + ?Sized), blocks: &Blocks) -> Option<Ends> {
        if self.end == NIL {
            return None;
        }
        let tail_block = blocks.block_before(self.end);
        let head = cells.cell(blocks.first(tail_block));
        Some(Ends {
            head,
            end: self.end,
            head_block: blocks.block_of(head),
            tail_block,
        })
    }

    /// Where the head block's unread cells end.
    #[inline]
    fn head_block_end(ends: &Ends, blocks: &Blocks) -> u32 {
        if ends.head_block == ends.tail_block {
            ends.end
        } else {
            blocks.past(ends.head_block)
        }
    }

    /// Appends `value`; returns its position, or `None` when no block is free.
    #[inline]
    pub(super) fn push_back(
        &mut self,
        cells: &mut (impl CellsMut + ?Sized),
        blocks: &mut Blocks,
        value: u32,
    ) -> Option<u32> {
        let end = self.end;
        if end != NIL && end & (blocks.block_len() - 1) != 0 {
            cells.set_cell(end, value);
            self.end = end + 1;
            return Some(end);
        }
        // A new tail block: it takes over the head from the old one, whose link cell names it.
        let block = blocks.alloc(cells)?;
        let at = blocks.data(block);
        let head = if end == NIL {
            at
        } else {
            let tail = blocks.block_before(end);
            let head = cells.cell(blocks.first(tail));
            cells.set_cell(blocks.first(tail), block);
            head
        };
        cells.set_cell(blocks.first(block), head);
        cells.set_cell(at, value);
        self.end = at + 1;
        Some(at)
    }

    /// Where the head is kept: the tail block's link cell.
    #[inline]
    fn head_cell(&self, blocks: &Blocks) -> u32 {
        blocks.first(blocks.block_before(self.end))
    }

    /// The first cell and its position.
    #[inline]
    pub(super) fn front(
        &self,
        cells: &(impl Cells + ?Sized),
        blocks: &Blocks,
    ) -> Option<(u32, u32)> {
        if self.end == NIL {
            return None;
        }
        let head = cells.cell(self.head_cell(blocks));
        Some((cells.cell(head), head))
    }

    /// The cells of the head block not yet read.
    #[inline]
    pub(super) fn block_cells<'a, C: Cells + ?Sized>(
        &self,
        cells: &'a C,
        blocks: &Blocks,
    ) -> impl Iterator<Item = u32> + 'a {
        let range = self
            .ends(cells, blocks)
            .map_or(0..0, |ends| ends.head..Self::head_block_end(&ends, blocks));
        range.map(move |at| cells.cell(at))
    }

    /// Drops the first cell, releasing its block once read to the end.
    #[inline]
    pub(super) fn pop_front(&mut self, cells: &mut (impl CellsMut + ?Sized), blocks: &mut Blocks) {
        if self.end == NIL {
            return;
        }
        let head_cell = self.head_cell(blocks);
        let next = cells.cell(head_cell) + 1;
        // The common case: more of the head block to read (its end is not a block's end, nor
        // the chain's).
        if next & (blocks.block_len() - 1) != 0 && next != self.end {
            cells.set_cell(head_cell, next);
        } else if let Some(ends) = self.ends(cells, blocks) {
            self.drop_head_block(cells, blocks, &ends);
        }
    }

    /// Releases the head block (read to its end), the next block becoming the head.
    #[inline]
    fn drop_head_block(
        &mut self,
        cells: &mut (impl CellsMut + ?Sized),
        blocks: &mut Blocks,
        ends: &Ends,
    ) {
        if ends.head_block == ends.tail_block {
            *self = Chain::EMPTY;
        } else {
            let next = cells.cell(blocks.first(ends.head_block));
            cells.set_cell(blocks.first(ends.tail_block), blocks.data(next));
        }
        blocks.release(cells, ends.head_block);
    }

    /// Moves the unread cells of the head block into `out` and releases the block: returns the
    /// position the first of them had and how many there were, `None` when the chain is empty.
    #[inline]
    pub(super) fn take_front_block(
        &mut self,
        cells: &mut (impl CellsMut + ?Sized),
        blocks: &mut Blocks,
        out: &mut [u32; MAX_BLOCK],
    ) -> Option<(u32, usize)> {
        let ends = self.ends(cells, blocks)?;
        let end = Self::head_block_end(&ends, blocks);
        let len = (end - ends.head) as usize;
        for (at, slot) in (ends.head..end).zip(out.iter_mut()) {
            *slot = cells.cell(at);
        }
        self.drop_head_block(cells, blocks, &ends);
        Some((ends.head, len))
    }

    /// Releases every block of the chain, leaving it empty (for a chain whose timers were all
    /// filed elsewhere).
    pub(super) fn release(&mut self, cells: &mut (impl CellsMut + ?Sized), blocks: &mut Blocks) {
        if let Some(ends) = self.ends(cells, blocks) {
            Self::release_blocks(cells, blocks, ends.head_block, ends.tail_block);
        }
        *self = Chain::EMPTY;
    }

    /// Releases the blocks from `from` through `to`, following their links.
    fn release_blocks(
        cells: &mut (impl CellsMut + ?Sized),
        blocks: &mut Blocks,
        from: u32,
        to: u32,
    ) {
        let mut block = from;
        loop {
            // Read before `release` rewrites the link cell; the tail's holds no link.
            let next = cells.cell(blocks.first(block));
            blocks.release(cells, block);
            if block == to {
                break;
            }
            block = next;
        }
    }

    /// The chain's cells and their positions, front to back (stale ones included).
    pub(super) fn cells_in_order<'a, C: Cells + ?Sized>(
        &'a self,
        cells: &'a C,
        blocks: &'a Blocks,
    ) -> impl Iterator<Item = (u32, u32)> + 'a {
        let mut cursor = Cursor::start(self, cells, blocks);
        core::iter::from_fn(move || {
            let at = cursor.next(self, cells, blocks)?;
            Some((cells.cell(at), at))
        })
    }

    /// Inserts `value` before the first live cell `goes_before` picks (at the back if none),
    /// moving the cells after it one place back: O(cells in the chain). For the due list, where
    /// a deadline already past is sorted in. Returns `value`'s position.
    pub(super) fn insert_before<C: CellsMut + ?Sized>(
        &mut self,
        cells: &mut C,
        blocks: &mut Blocks,
        value: u32,
        goes_before: impl Fn(&C, u32) -> bool,
    ) -> Option<u32> {
        let mut cursor = Cursor::start(self, cells, blocks);
        let mut found = None;
        loop {
            let before = cursor;
            let Some(at) = cursor.next(self, cells, blocks) else {
                break;
            };
            let other = cells.cell(at);
            if cells.is_live(other, at) && goes_before(cells, other) {
                found = Some(before);
                break;
            }
        }
        let Some(mut cursor) = found else {
            return self.push_back(cells, blocks, value);
        };
        // Room at the back first, so that nothing moves unless the whole shift can complete.
        let last = self.push_back(cells, blocks, NIL)?;
        let (mut carry, mut carry_live) = (value, false);
        let mut inserted = None;
        while let Some(at) = cursor.next(self, cells, blocks) {
            let displaced = cells.cell(at);
            let displaced_live = cells.is_live(displaced, at);
            cells.set_cell(at, carry);
            if carry_live {
                cells.relocate(carry, at);
            }
            inserted.get_or_insert(at);
            if at == last {
                break;
            }
            (carry, carry_live) = (displaced, displaced_live);
        }
        inserted
    }

    /// Drops the stale cells, keeping the live ones in order at the front of the chain, and
    /// releases the blocks left empty. O(cells in the chain).
    pub(super) fn compact(&mut self, cells: &mut (impl CellsMut + ?Sized), blocks: &mut Blocks) {
        let Some(ends) = self.ends(cells, blocks) else {
            return;
        };
        let block_len = blocks.block_len();
        // Writing trails reading, in the same blocks: nothing is overwritten before it is read.
        // Only data cells are written, so every link cell stays as it was until the end.
        let mut write = ends.head;
        let mut write_block = ends.head_block;
        let mut kept = false;
        let mut read_block = ends.head_block;
        let mut read_from = ends.head;
        loop {
            let end = if read_block == ends.tail_block {
                ends.end
            } else {
                blocks.past(read_block)
            };
            let mut live = cells.live_mask(read_from, end);
            while live != 0 {
                let from = read_from + live.trailing_zeros();
                live &= live - 1;
                if write & (block_len - 1) == 0 {
                    // `write` is just past `write_block`: on to the block its link names.
                    write_block = cells.cell(blocks.first(write_block));
                    write = blocks.data(write_block);
                }
                if write != from {
                    cells.move_cell(from, write);
                }
                write += 1;
                kept = true;
            }
            if read_block == ends.tail_block {
                break;
            }
            read_block = cells.cell(blocks.first(read_block));
            read_from = blocks.data(read_block);
        }
        if !kept {
            Self::release_blocks(cells, blocks, ends.head_block, ends.tail_block);
            *self = Chain::EMPTY;
            return;
        }
        // The last block written is the new tail: release the blocks after it, then give it the
        // head (which did not move: the first live cell was written where the head was).
        if write_block != ends.tail_block {
            let spare = cells.cell(blocks.first(write_block));
            Self::release_blocks(cells, blocks, spare, ends.tail_block);
        }
        cells.set_cell(blocks.first(write_block), ends.head);
        self.end = write;
    }
}

/// A place in a chain, for walking it front to back.
#[derive(Clone, Copy)]
struct Cursor {
    /// The next position to read; `NIL` once past the end.
    at: u32,
}

impl Cursor {
    fn start(chain: &Chain, cells: &(impl Cells + ?Sized), blocks: &Blocks) -> Self {
        Self {
            at: chain.ends(cells, blocks).map_or(NIL, |ends| ends.head),
        }
    }

    /// The next position of `chain`, if any. The chain's end is read at every step, so a
    /// cursor keeps working while cells are appended.
    fn next(
        &mut self,
        chain: &Chain,
        cells: &(impl Cells + ?Sized),
        blocks: &Blocks,
    ) -> Option<u32> {
        if self.at == NIL || self.at == chain.end {
            return None;
        }
        let at = self.at;
        let block = blocks.block_of(at);
        self.at = if at + 1 < blocks.past(block) {
            at + 1
        } else if block == blocks.block_before(chain.end) {
            NIL
        } else {
            blocks.data(cells.cell(blocks.first(block)))
        };
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Plain cells; values at or above 1000 are stale.
    struct Plain {
        cells: Vec<u32>,
        moved: Vec<(u32, u32)>,
    }

    impl Cells for Plain {
        fn cell(&self, at: u32) -> u32 {
            self.cells.get(at as usize).copied().unwrap_or(0)
        }
        fn is_live(&self, value: u32, _at: u32) -> bool {
            value < 1000
        }
    }

    impl CellsMut for Plain {
        fn set_cell(&mut self, at: u32, value: u32) {
            self.cells[at as usize] = value;
        }
        fn relocate(&mut self, value: u32, to: u32) {
            self.moved.push((value, to));
        }
    }

    fn plain(cells: usize) -> Plain {
        Plain {
            cells: std::vec![0; cells],
            moved: Vec::new(),
        }
    }

    fn blocks(shift: u32, count: u32) -> Blocks {
        Blocks {
            shift,
            count,
            ..Blocks::FORCED
        }
    }

    fn drain(chain: &mut Chain, cells: &mut Plain, blocks: &mut Blocks) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some((value, _)) = chain.front(cells, blocks) {
            out.push(value);
            chain.pop_front(cells, blocks);
        }
        out
    }

    #[test]
    fn push_back_then_pop_front_is_fifo_across_blocks() {
        let mut cells = plain(64);
        let mut blocks = blocks(2, 16);
        let mut chain = Chain::EMPTY;
        for value in 1..=10 {
            chain.push_back(&mut cells, &mut blocks, value).unwrap();
        }
        // Three timers per block of four: four blocks.
        assert_eq!(blocks.available(), 12);
        assert_eq!(
            drain(&mut chain, &mut cells, &mut blocks),
            (1..=10).collect::<Vec<_>>()
        );
        assert!(chain.is_empty());
        assert_eq!(blocks.available(), 16);
    }

    #[test]
    fn full_pool_refuses_a_new_block() {
        let mut cells = plain(8);
        let mut blocks = blocks(1, 4);
        let mut chain = Chain::EMPTY;
        for value in 1..=4 {
            assert!(chain.push_back(&mut cells, &mut blocks, value).is_some());
        }
        assert_eq!(chain.push_back(&mut cells, &mut blocks, 5), None);
    }

    #[test]
    fn compaction_keeps_live_cells_in_order_at_every_block_boundary() {
        // Every pattern of stale cells over 3 blocks of 3 timers (plus a partial fourth).
        for mask in 0u32..(1 << 11) {
            let mut cells = plain(64);
            let mut blocks = blocks(2, 16);
            let mut chain = Chain::EMPTY;
            let mut live = Vec::new();
            for i in 0..11 {
                let value = if mask & (1 << i) != 0 { 1000 + i } else { i };
                chain.push_back(&mut cells, &mut blocks, value).unwrap();
                if value < 1000 {
                    live.push(value);
                }
            }
            chain.compact(&mut cells, &mut blocks);
            let used = live.len().div_ceil(3) as u32;
            assert_eq!(blocks.available(), 16 - used, "mask {mask:#b}");
            // Each move was reported with the position the value now has.
            for &(value, to) in &cells.moved {
                assert_eq!(cells.cells[to as usize], value);
            }
            assert_eq!(
                drain(&mut chain, &mut cells, &mut blocks),
                live,
                "mask {mask:#b}"
            );
            assert_eq!(blocks.available(), 16);
        }
    }

    #[test]
    fn compaction_after_partial_reads_keeps_the_unread_order() {
        let mut cells = plain(64);
        let mut blocks = blocks(2, 16);
        let mut chain = Chain::EMPTY;
        for value in [1, 1001, 2, 3, 1002, 4, 5] {
            chain.push_back(&mut cells, &mut blocks, value).unwrap();
        }
        chain.pop_front(&mut cells, &mut blocks);
        chain.compact(&mut cells, &mut blocks);
        assert_eq!(drain(&mut chain, &mut cells, &mut blocks), [2, 3, 4, 5]);
    }

    #[test]
    fn take_front_block_hands_out_unread_cells_and_frees_the_block() {
        let mut cells = plain(64);
        let mut blocks = blocks(2, 16);
        let mut chain = Chain::EMPTY;
        for value in 1..=5 {
            chain.push_back(&mut cells, &mut blocks, value).unwrap();
        }
        chain.pop_front(&mut cells, &mut blocks);
        let mut out = [0; MAX_BLOCK];
        let (at, len) = chain
            .take_front_block(&mut cells, &mut blocks, &mut out)
            .unwrap();
        assert_eq!((&out[..len], at), (&[2, 3][..], 2));
        let (_, len) = chain
            .take_front_block(&mut cells, &mut blocks, &mut out)
            .unwrap();
        assert_eq!(&out[..len], [4, 5]);
        assert!(chain.is_empty());
        assert_eq!(blocks.available(), 16);
    }

    #[test]
    fn block_size_grows_with_capacity() {
        assert_eq!(Blocks::shift_for(8, true), 1);
        assert_eq!(Blocks::shift_for(1_000, true), 1);
        // The live counts' cells come first: 8,192 timers are too few for blocks of four.
        assert_eq!(Blocks::shift_for(8_192, true), 1);
        assert_eq!(Blocks::shift_for(9_216, true), 2);
        assert_eq!(Blocks::shift_for(16_384, true), 3);
        assert_eq!(Blocks::shift_for(100_000, true), 6);
        assert_eq!(Blocks::shift_for(100_000, false), 1);
        assert_eq!(Blocks::shift_for(BLOCKS_FROM - 1, false), 1);
        assert_eq!(Blocks::shift_for(BLOCKS_FROM, false), 6);
    }
}
