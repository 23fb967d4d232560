//! The byte pool every key and value lives in: one fixed byte array, blocks placed by
//! segregated fit, and no placement that moves more than [`MAX_BYTES_MOVED`] (32 KiB) of other
//! blocks, whatever the size of the pool.
//!
//! # Blocks and size classes
//!
//! A block starts with an 8-byte header: its owner (live) or the next block of its free list
//! (free), then its size, whose low bits carry two flags (this block is free; the block before
//! it is free). A free block also holds the previous block of its list after the header and its
//! size in its last 4 bytes, so freeing a block merges it at once with free neighbours on both
//! sides: no two free blocks touch, and none ends at `top`. From `top` on, the pool is unused
//! (the tail).
//!
//! A block for `len` bytes of key and value costs [`Pool::cost`]`(len)`: `8 + len` rounded up
//! to a size class. The classes are the multiples of 16 up to 256, then 8 per power of two (256,
//! 288, 320, .., 480, 512, 576, ..), so rounding wastes less than 16 bytes or 1/8 of the block.
//! Every live block is exactly its class, so `used`, the sum of the costs of the live blocks,
//! depends only on what the pool holds, never on its layout.
//!
//! Free blocks are kept in [`LISTS`] circular lists, 8 per power of two of their size (the
//! two-level index of TLSF), with a bitmap of the lists that are not empty. A class is the
//! smallest size of its list, so any block of the request's list, or of a larger one, fits.
//! Lists are first in, first out: a freed block goes last, blocks are taken from the front.
//!
//! A pool larger than [`MAX_BYTES_MOVED`] keeps, in its last bytes, one 4-byte counter per
//! 4 KiB [`REGION`]: the free bytes of the blocks that start there.
//!
//! # Placing a block
//!
//! [`Pool::plan`] decides, reading only; [`Pool::place`] carries the plan out. A block, new or
//! replacing a live one (a rewrite), goes to the first of these that works:
//!
//! 1. for a rewrite of the same class, its own block;
//! 2. a free block of the request's class, taken whole (nothing is left over; a shrinking
//!    rewrite frees its old block whole rather than cut it);
//! 3. for a rewrite, its own block cut to size when it is larger, or merged with the free blocks
//!    either side of it when that is large enough (a value that shrank and grows back takes its
//!    room again);
//! 4. the first block of the next larger list that is not empty, split;
//! 5. the tail;
//! 6. a bounded compaction: a window that starts at the rewritten block, or at one of the first
//!    [`CANDIDATES`] free blocks of the lists of the largest free blocks, or at the start of a
//!    pool of at most [`MAX_BYTES_MOVED`] bytes, and takes whole blocks until its free bytes
//!    (the rewritten block's and the tail's included) cover the request, as long as the live
//!    bytes it passes after its first free block, which are the ones that move, total at most
//!    [`MAX_BYTES_MOVED`]. The region counters rule out, without walking it, a window that
//!    cannot gather enough. The window's live blocks slide down (each owner is told its new
//!    offset) and its free bytes become one block.
//!
//! When none works the request is refused and nothing has changed.
//!
//! # What is guaranteed
//!
//! - No placement moves more than [`MAX_BYTES_MOVED`] bytes of other blocks, headers included,
//!   whatever the size of the pool. (The pool before this one compacted the whole pool in one
//!   pass when its tail ran short: milliseconds for 32 MiB, and one client could cause it on
//!   every write.) Planning walks at most `CANDIDATES + 2` windows, none over
//!   `3 * MAX_BYTES_MOVED / 16` blocks long, and reads a dozen counters before each.
//! - A request is refused when `used`, less the cost of the block it replaces, plus its cost is
//!   more than the usable bytes ([`Pool::capacity`]).
//! - A pool of at most [`MAX_BYTES_MOVED`] bytes refuses only then: a window from its start
//!   reaches every free byte.
//! - A larger pool may also refuse a request that fits by that count, when the free bytes lie
//!   in blocks smaller than the request and no window within the bound gathers enough of them.
//!   `used` counts live blocks, so `capacity - used` is what is free, not the largest block
//!   that can be placed. In `host-tests/benches/pool_fill.rs` (32 MiB, values up to 16 KiB,
//!   random deletes) this starts at about 95% full, and takes the largest values first.

/// The unit of block sizes and offsets.
pub(crate) const GRANULE: usize = 16;
/// The most bytes of other blocks one placement moves.
pub(crate) const MAX_BYTES_MOVED: usize = 32 << 10;
/// Free blocks whose lists are tried as the start of a compaction window.
const CANDIDATES: usize = 8;
/// Bytes of pool per free-byte counter (in pools larger than [`MAX_BYTES_MOVED`]).
const REGION: usize = 4 << 10;
/// Free lists (and size classes) per power of two of sizes.
const SUBLISTS: usize = 1 << SUBLIST_BITS;
const SUBLIST_BITS: u32 = 3;
/// The power of two of the smallest block.
const MIN_SHIFT: u32 = GRANULE.trailing_zeros();
/// Free lists: sizes from 16 to 4 GiB.
const LISTS: usize = (32 - MIN_SHIFT as usize) * SUBLISTS;
/// Words of the bitmap of lists that are not empty.
const WORDS: usize = LISTS.div_ceil(64);

const HEADER: usize = 8;
const FREE: u32 = 1;
const PREV_FREE: u32 = 2;
const FLAGS: u32 = FREE | PREV_FREE;
/// A link to no block (links are block offset + 1, so that an empty pool is all zeros).
const NONE: u32 = 0;

use crate::memory::Memory;

/// Something whose blocks the pool may move while placing another.
pub(crate) trait Owners {
    /// Block data of `owner` now starts at `offset`.
    fn moved(&mut self, owner: u32, offset: u32);
}

/// How a request will be placed: [`Pool::plan`]'s answer, for [`Pool::place`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Plan {
    cost: usize,
    /// Start of the live block the request replaces.
    replacing: Option<usize>,
    site: Site,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Site {
    /// The replaced block, cut to size.
    InPlace,
    /// The replaced block merged with its free neighbours, which starts at `start`.
    Merged { start: usize },
    /// The free block at `start`.
    Free { start: usize },
    /// The tail.
    Tail,
    /// Slide the live blocks of `start..end` down to `start`; take the room they leave.
    Compact { start: usize, end: usize },
}

/// A block's header, read.
#[derive(Clone, Copy)]
struct Header {
    /// Owner (live) or link to the next block of its free list (free).
    word: u32,
    size: usize,
    free: bool,
    prev_free: bool,
}

pub(crate) struct Pool<'a> {
    bytes: Memory<'a, u8>,
    /// Free-byte counters, one per [`REGION`], kept in the last bytes of the pool; a pool that
    /// one compaction can cross whole needs none.
    regions: usize,
    /// Where the counters start.
    counters: usize,
    /// Bytes that can hold blocks: up to the counters, rounded down to 16.
    usable: usize,
    /// The most bytes live blocks may take (`maxmemory`): at most `usable`.
    limit: usize,
    top: usize,
    used: usize,
    /// First (longest free) block of each free list, as a link.
    heads: [u32; LISTS],
    /// Bit `i` set: list `i` is not empty.
    nonempty: [u64; WORDS],
    /// Bytes of other blocks moved by placements so far.
    #[cfg(test)]
    moved: usize,
}

impl<'a> Pool<'a> {
    /// The most bytes a pool uses: offsets are `u32`s.
    pub(crate) const MAX_BYTES: usize = u32::MAX as usize - GRANULE;

    /// An empty pool over `bytes` (of which at most [`MAX_BYTES`](Self::MAX_BYTES) are used),
    /// all of it usable.
    pub(crate) fn new(bytes: Memory<'a, u8>) -> Self {
        Self::over(bytes, false)
    }

    /// [`new`](Self::new) over bytes known to be zero (memory just allocated zeroed), which it
    /// leaves untouched: the pages of an idle pool's free-byte counters then cost no RSS.
    #[cfg(feature = "alloc")]
    pub(crate) fn new_zeroed(bytes: Memory<'a, u8>) -> Self {
        Self::over(bytes, true)
    }

    fn over(mut bytes: Memory<'a, u8>, zeroed: bool) -> Self {
        let len = bytes.len().min(Self::MAX_BYTES);
        let regions = if len > MAX_BYTES_MOVED {
            len / REGION + 1
        } else {
            0
        };
        let counters = len - regions * 4;
        if !zeroed {
            bytes[counters..len].fill(0);
        }
        let usable = counters / GRANULE * GRANULE;
        Self {
            bytes,
            regions,
            counters,
            usable,
            limit: usable,
            top: 0,
            used: 0,
            heads: [NONE; LISTS],
            nonempty: [0; WORDS],
            #[cfg(test)]
            moved: 0,
        }
    }

    /// The length of a pool whose [`usable`](Self::usable) bytes are at least `usable` (up to
    /// [`MAX_BYTES`](Self::MAX_BYTES)).
    pub(crate) const fn len_for(usable: usize) -> usize {
        let mut len = usable + GRANULE;
        loop {
            let regions = if len > MAX_BYTES_MOVED {
                len / REGION + 1
            } else {
                0
            };
            let needed = usable + regions * 4 + GRANULE;
            if needed <= len || len >= Self::MAX_BYTES {
                return if len < Self::MAX_BYTES {
                    len
                } else {
                    Self::MAX_BYTES
                };
            }
            len = needed;
        }
    }

    /// Bytes that can hold blocks: the pool less the free-byte counters, rounded down to 16.
    pub(crate) const fn usable(&self) -> usize {
        self.usable
    }

    /// Live blocks may take at most `limit` bytes from now on (at most [`usable`](Self::usable)).
    /// Blocks already placed stay.
    pub(crate) fn set_limit(&mut self, limit: usize) {
        self.limit = limit.min(self.usable);
    }

    /// Bytes taken by live blocks: the sum of their [`cost`](Self::cost)s.
    pub(crate) const fn used(&self) -> usize {
        self.used
    }

    /// The most bytes live blocks may take: the limit, if one was set, else
    /// [`usable`](Self::usable).
    pub(crate) const fn capacity(&self) -> usize {
        self.limit
    }

    /// The pool cost of a block holding `len` data bytes: `8 + len` rounded up to 16, then up
    /// to a size class (every multiple of 16 below 256; from there 8 per power of two, each
    /// 1/8 of that power apart).
    pub(crate) const fn cost(len: usize) -> usize {
        let size = (HEADER + len).div_ceil(GRANULE) * GRANULE;
        let shift = usize::BITS - 1 - size.leading_zeros();
        if shift <= MIN_SHIFT + SUBLIST_BITS {
            return size;
        }
        let step = 1 << (shift - SUBLIST_BITS);
        size.div_ceil(step) * step
    }

    /// How a block of `len` data bytes would be placed, replacing the live block whose data
    /// starts at `replacing` if given; `None` if it cannot be. Changes nothing.
    pub(crate) fn plan(&self, len: usize, replacing: Option<u32>) -> Option<Plan> {
        let cost = Self::cost(len);
        let replacing = replacing.map(|offset| offset as usize - HEADER);
        let old = replacing.map_or(0, |at| self.header(at).size);
        if self.used - old + cost > self.limit {
            return None;
        }
        let plan = |site| {
            Some(Plan {
                cost,
                replacing,
                site,
            })
        };
        let class = list_of(cost);
        if let Some(at) = replacing {
            if old == cost {
                return plan(Site::InPlace);
            }
            // A free block of the request's own class leaves no remainder: better than cutting
            // this block down (which would leave one).
            if self.heads[class] != NONE {
                return plan(Site::Free {
                    start: self.heads[class] as usize - 1,
                });
            }
            if old > cost {
                return plan(Site::InPlace);
            }
            let (start, end) = self.merged(at);
            if end - start >= cost {
                return plan(Site::Merged { start });
            }
        }
        // Every block of the request's class list, or of a larger one, is large enough.
        if let Some(list) = self.first_nonempty_from(class) {
            return plan(Site::Free {
                start: self.heads[list] as usize - 1,
            });
        }
        if self.usable - self.top >= cost {
            return plan(Site::Tail);
        }
        let window = |start| {
            if !self.may_gather(start, cost, replacing) {
                return None;
            }
            self.window(start, cost, replacing)
                .map(|end| Site::Compact { start, end })
        };
        if self.regions == 0 {
            // One window from the start reaches every free byte.
            return window(0).and_then(plan);
        }
        let mut site = replacing.and_then(|at| window(self.merged(at).0));
        // The first blocks of the lists of the largest blocks, longest free first.
        let mut tried = 0;
        let mut below = LISTS;
        while site.is_none() && tried < CANDIDATES {
            let Some(list) = self.last_nonempty_below(below) else {
                break;
            };
            let first = self.heads[list];
            let mut link = first;
            while site.is_none() && tried < CANDIDATES {
                let at = link as usize - 1;
                site = window(at);
                tried += 1;
                link = self.read_word(at);
                if link == first {
                    break;
                }
            }
            below = list;
        }
        site.and_then(plan)
    }

    /// Carries out `plan` (from [`plan`](Self::plan), with nothing changed since) for `owner`,
    /// telling `owners` of every other block it moves; returns the new block's data offset. A
    /// replaced block is gone afterwards (unless the plan kept it in place).
    pub(crate) fn place(&mut self, plan: Plan, owner: u32, owners: &mut impl Owners) -> u32 {
        let Plan {
            cost,
            replacing,
            site,
        } = plan;
        let at = match site {
            Site::InPlace => {
                let at = replacing.unwrap_or(0);
                self.shrink(at, cost);
                return (at + HEADER) as u32;
            }
            Site::Free { start } => {
                self.take(start, cost, owner);
                start
            }
            Site::Tail => {
                let start = self.top;
                self.take(start, cost, owner);
                start
            }
            Site::Merged { start } => {
                if let Some(old) = replacing {
                    self.release(old);
                }
                self.take(start, cost, owner);
                return (start + HEADER) as u32;
            }
            Site::Compact { mut start, end } => {
                if let Some(old) = replacing {
                    // Merging may have swallowed the start of the window.
                    let (from, to) = self.release(old);
                    if from < start && start < to {
                        start = from;
                    }
                }
                let hole = self.slide(start, end, owners);
                self.take(hole, cost, owner);
                return (hole + HEADER) as u32;
            }
        };
        if let Some(old) = replacing {
            self.release(old);
        }
        (at + HEADER) as u32
    }

    /// Frees the block whose data starts at `offset`.
    pub(crate) fn free(&mut self, offset: u32) {
        self.release(offset as usize - HEADER);
    }

    /// The data capacity of the block at `offset`.
    #[cfg(test)]
    pub(crate) fn block_len(&self, offset: u32) -> usize {
        self.block_size(offset) - HEADER
    }

    /// The pool bytes the live block whose data starts at `offset` takes, header and rounding
    /// included: what it adds to [`used`](Self::used).
    pub(crate) fn block_size(&self, offset: u32) -> usize {
        self.header((offset as usize).saturating_sub(HEADER)).size
    }

    pub(crate) fn slice(&self, offset: u32, len: usize) -> &[u8] {
        let start = offset as usize;
        self.bytes.get(start..start + len).unwrap_or(&[])
    }

    pub(crate) fn slice_mut(&mut self, offset: u32, len: usize) -> &mut [u8] {
        let start = offset as usize;
        self.bytes.get_mut(start..start + len).unwrap_or(&mut [])
    }

    pub(crate) fn clear(&mut self) {
        self.top = 0;
        self.used = 0;
        self.heads = [NONE; LISTS];
        self.nonempty = [0; WORDS];
        self.bytes[self.counters..].fill(0);
    }

    /// The range the block at `at` would cover once freed and merged with free neighbours (up
    /// to the end of the usable bytes if it would join the tail).
    fn merged(&self, at: usize) -> (usize, usize) {
        let header = self.header(at);
        let start = if header.prev_free {
            at - self.footer(at)
        } else {
            at
        };
        let mut end = at + header.size;
        if end == self.top {
            end = self.usable;
        } else {
            let next = self.header(end);
            if next.free {
                end += next.size;
            }
        }
        (start, end)
    }

    /// Whether a compaction window from `start` could gather `cost` free bytes, by the free-byte
    /// counters of the regions it could reach: a window stops once it has `cost` free bytes
    /// or has passed [`MAX_BYTES_MOVED`] live ones, so every free block it meets starts below
    /// `start + MAX_BYTES_MOVED + cost`. Reads a dozen counters instead of walking blocks.
    fn may_gather(&self, start: usize, cost: usize, replacing: Option<usize>) -> bool {
        if self.regions == 0 {
            return true;
        }
        let reach = start + MAX_BYTES_MOVED + cost;
        let mut free = 0;
        if reach > self.top {
            free += self.usable - self.top;
        }
        for region in start / REGION..=(reach.min(self.top) - 1) / REGION {
            free += self.read_word(self.counters + 4 * region) as usize;
        }
        if let Some(at) = replacing.filter(|&at| start <= at && at < reach) {
            free += self.header(at).size;
        }
        free >= cost
    }

    /// Adds `size` free bytes starting at `at` to its region's counter, or takes them away.
    fn count_free(&mut self, at: usize, size: usize, add: bool) {
        if self.regions > 0 {
            let counter = self.counters + 4 * (at / REGION);
            let free = self.read_word(counter);
            let free = if add {
                free + size as u32
            } else {
                free - size as u32
            };
            self.write_word(counter, free);
        }
    }

    /// Where a compaction window from `start` would end to gather `cost` free bytes (the
    /// replaced block counted free), moving at most [`MAX_BYTES_MOVED`]; `None` if it cannot.
    fn window(&self, start: usize, cost: usize, replacing: Option<usize>) -> Option<usize> {
        let mut at = start;
        let mut free = 0;
        let mut moved = 0;
        // Live blocks before the first free one stay where they are.
        let mut packed = true;
        loop {
            if at >= self.top {
                free += self.usable - self.top;
                return (free >= cost).then_some(self.top);
            }
            let header = self.header(at);
            if header.free || replacing == Some(at) {
                free += header.size;
                packed = false;
            } else if !packed {
                moved += header.size;
                if moved > MAX_BYTES_MOVED {
                    return None;
                }
            }
            at += header.size;
            if free >= cost {
                return Some(at);
            }
        }
    }

    /// Slides the live blocks of `start..end` (whole blocks; the last may reach past `end`)
    /// down to `start`; returns where the free room left behind starts (a free block or the
    /// tail).
    fn slide(&mut self, start: usize, end: usize, owners: &mut impl Owners) -> usize {
        let mut read = start;
        let mut write = start;
        while read < end && read < self.top {
            let header = self.header(read);
            if header.free {
                self.unlink(read, header.size);
            } else {
                if read != write {
                    self.bytes.copy_within(read..read + header.size, write);
                    // Its new neighbour below is live.
                    self.write_header(write, header.word, header.size, 0);
                    owners.moved(header.word, (write + HEADER) as u32);
                    #[cfg(test)]
                    {
                        self.moved += header.size;
                    }
                }
                write += header.size;
            }
            read += header.size;
        }
        if read >= self.top {
            self.top = write;
        } else if read > write {
            self.free_range(write, read - write);
        }
        write
    }

    /// Makes the free block at `at` (or the tail, if `at == top`) a live block of `cost`
    /// bytes for `owner`, freeing the rest.
    fn take(&mut self, at: usize, cost: usize, owner: u32) {
        if at == self.top {
            self.top += cost;
        } else {
            let size = self.header(at).size;
            self.unlink(at, size);
            if size > cost {
                self.free_range(at + cost, size - cost);
            } else {
                self.set_prev_free(at + size, false);
            }
        }
        // A block below a free block or the tail is live.
        self.write_header(at, owner, cost, 0);
        self.used += cost;
    }

    /// Cuts the live block at `at` down to `cost` bytes, freeing the rest.
    fn shrink(&mut self, at: usize, cost: usize) {
        let header = self.header(at);
        if header.size > cost {
            let flags = if header.prev_free { PREV_FREE } else { 0 };
            self.write_header(at, header.word, cost, flags);
            self.used -= header.size - cost;
            self.free_range(at + cost, header.size - cost);
        }
    }

    /// Frees the live block at `at`, merging it with free neighbours; returns the range it
    /// now belongs to (a free block, or the tail from its start).
    fn release(&mut self, at: usize) -> (usize, usize) {
        let header = self.header(at);
        self.used -= header.size;
        let mut start = at;
        if header.prev_free {
            let before = self.footer(at);
            start -= before;
            self.unlink(start, before);
        }
        self.free_range(start, at + header.size - start)
    }

    /// Makes `start..start + size`, whose neighbour below is live, free: merged with a free
    /// block above it, or given back to the tail. Returns the range it now belongs to.
    fn free_range(&mut self, start: usize, size: usize) -> (usize, usize) {
        let mut end = start + size;
        if end >= self.top {
            self.top = start;
            return (start, self.usable);
        }
        let next = self.header(end);
        if next.free {
            self.unlink(end, next.size);
            end += next.size;
        }
        // A free block never ends at `top`, so the block at `end` is live.
        self.set_prev_free(end, true);
        self.link(start, end - start);
        (start, end)
    }

    /// Writes a free block at `at` and puts it last in its list. Lists are circular: the
    /// first block's previous one is the last.
    fn link(&mut self, at: usize, size: usize) {
        let list = list_of(size);
        let this = at as u32 + 1;
        let first = self.heads[list];
        let (next, prev) = if first == NONE {
            self.heads[list] = this;
            self.nonempty[list / 64] |= 1 << (list % 64);
            (this, this)
        } else {
            let last = self.read_word(first as usize - 1 + HEADER);
            self.write_word(last as usize - 1, this);
            self.write_word(first as usize - 1 + HEADER, this);
            (first, last)
        };
        self.write_header(at, next, size, FREE);
        self.write_word(at + HEADER, prev);
        self.write_word(at + size - 4, size as u32);
        self.count_free(at, size, true);
    }

    /// Takes the free block at `at` out of its list.
    fn unlink(&mut self, at: usize, size: usize) {
        self.count_free(at, size, false);
        let list = list_of(size);
        let this = at as u32 + 1;
        let next = self.read_word(at);
        if next == this {
            self.heads[list] = NONE;
            self.nonempty[list / 64] &= !(1 << (list % 64));
            return;
        }
        let prev = self.read_word(at + HEADER);
        self.write_word(prev as usize - 1, next);
        self.write_word(next as usize - 1 + HEADER, prev);
        if self.heads[list] == this {
            self.heads[list] = next;
        }
    }

    fn first_nonempty_from(&self, from: usize) -> Option<usize> {
        let mut word = from / 64;
        let mut bits = self.nonempty.get(word)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                return Some(word * 64 + bits.trailing_zeros() as usize);
            }
            word += 1;
            bits = *self.nonempty.get(word)?;
        }
    }

    fn last_nonempty_below(&self, below: usize) -> Option<usize> {
        let mut word = below / 64;
        let mut bits = match below % 64 {
            0 => 0,
            n => self.nonempty.get(word).copied().unwrap_or(0) & (u64::MAX >> (64 - n)),
        };
        loop {
            if bits != 0 {
                return Some(word * 64 + 63 - bits.leading_zeros() as usize);
            }
            word = word.checked_sub(1)?;
            bits = self.nonempty[word];
        }
    }

    fn header(&self, at: usize) -> Header {
        let size = self.read_word(at + 4);
        Header {
            word: self.read_word(at),
            size: (size & !FLAGS) as usize,
            free: size & FREE != 0,
            prev_free: size & PREV_FREE != 0,
        }
    }

    /// The size of the free block that ends at `at`.
    fn footer(&self, at: usize) -> usize {
        self.read_word(at - 4) as usize
    }

    fn write_header(&mut self, at: usize, word: u32, size: usize, flags: u32) {
        self.write_word(at, word);
        self.write_word(at + 4, size as u32 | flags);
    }

    fn set_prev_free(&mut self, at: usize, prev_free: bool) {
        if at < self.top {
            let size = self.read_word(at + 4);
            let size = if prev_free {
                size | PREV_FREE
            } else {
                size & !PREV_FREE
            };
            self.write_word(at + 4, size);
        }
    }

    fn read_word(&self, at: usize) -> u32 {
        let mut raw = [0u8; 4];
        raw.copy_from_slice(&self.bytes[at..at + 4]);
        u32::from_le_bytes(raw)
    }

    fn write_word(&mut self, at: usize, word: u32) {
        self.bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
    }
}

/// The free list of blocks of `size` bytes: 8 lists per power of two.
fn list_of(size: usize) -> usize {
    let shift = usize::BITS - 1 - size.leading_zeros();
    let sub = (size >> (shift - SUBLIST_BITS)) & (SUBLISTS - 1);
    (shift - MIN_SHIFT) as usize * SUBLISTS + sub
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;

    /// An empty pool over `bytes`.
    fn pool_of(bytes: &mut [u8]) -> Pool<'_> {
        Pool::new(Memory::from(bytes))
    }

    /// Owners numbered by their index, tracking offsets and the bytes they were given.
    struct Offsets(Vec<u32>);

    impl Owners for Offsets {
        fn moved(&mut self, owner: u32, offset: u32) {
            self.0[owner as usize] = offset;
        }
    }

    fn allocate(pool: &mut Pool<'_>, owners: &mut Offsets, owner: u32, len: usize) -> Option<u32> {
        let plan = pool.plan(len, None)?;
        let offset = pool.place(plan, owner, owners);
        owners.0[owner as usize] = offset;
        Some(offset)
    }

    fn rewrite(pool: &mut Pool<'_>, owners: &mut Offsets, owner: u32, len: usize) -> Option<u32> {
        let plan = pool.plan(len, Some(owners.0[owner as usize]))?;
        let offset = pool.place(plan, owner, owners);
        owners.0[owner as usize] = offset;
        Some(offset)
    }

    /// Walks the pool and checks every invariant of the module docs; returns the free bytes
    /// in blocks (not the tail).
    fn check(pool: &Pool<'_>) -> usize {
        let mut at = 0;
        let mut used = 0;
        let mut free = 0;
        let mut free_blocks = 0;
        let mut prev_free = false;
        while at < pool.top {
            let header = pool.header(at);
            assert!(
                header.size >= GRANULE && header.size % GRANULE == 0,
                "size at {at}"
            );
            assert_eq!(header.prev_free, prev_free, "prev_free flag at {at}");
            if header.free {
                assert!(!prev_free, "two free blocks touch at {at}");
                assert_eq!(pool.footer(at + header.size), header.size, "footer at {at}");
                let list = list_of(header.size);
                assert!(pool.nonempty[list / 64] & (1 << (list % 64)) != 0);
                free += header.size;
                free_blocks += 1;
            } else {
                used += header.size;
            }
            prev_free = header.free;
            at += header.size;
        }
        assert_eq!(at, pool.top);
        assert!(!prev_free, "a free block ends at the top");
        assert!(pool.top <= pool.usable());
        assert_eq!(used, pool.used);
        // Every list holds exactly the free blocks of its sizes, linked both ways in a circle.
        let mut listed = 0;
        for list in 0..LISTS {
            let first = pool.heads[list];
            assert_eq!(
                first != NONE,
                pool.nonempty[list / 64] & (1 << (list % 64)) != 0,
                "bitmap of list {list}"
            );
            if first == NONE {
                continue;
            }
            let mut link = first;
            let mut prev = pool.read_word(first as usize - 1 + HEADER);
            loop {
                let at = link as usize - 1;
                let header = pool.header(at);
                assert!(header.free);
                assert_eq!(list_of(header.size), list);
                assert_eq!(pool.read_word(at + HEADER), prev, "list {list}");
                listed += 1;
                assert!(listed <= free_blocks, "list {list} does not close");
                prev = link;
                link = header.word;
                if link == first {
                    break;
                }
            }
        }
        assert_eq!(listed, free_blocks);
        // The free-byte counters add up the free blocks that start in each region.
        if pool.regions > 0 {
            let mut counted = vec![0u32; pool.regions];
            let mut at = 0;
            while at < pool.top {
                let header = pool.header(at);
                if header.free {
                    counted[at / REGION] += header.size as u32;
                }
                at += header.size;
            }
            for (region, free) in counted.iter().enumerate() {
                let counter = pool.read_word(pool.counters + 4 * region);
                assert_eq!(counter, *free, "counter of region {region}");
            }
        }
        free
    }

    #[test]
    fn cost_is_header_and_data_rounded_up_to_a_class() {
        assert_eq!(Pool::cost(0), 16);
        assert_eq!(Pool::cost(8), 16);
        assert_eq!(Pool::cost(9), 32);
        assert_eq!(Pool::cost(24), 32);
        assert_eq!(Pool::cost(25), 48);
        assert_eq!(Pool::cost(232), 240);
        assert_eq!(Pool::cost(248), 256);
        // From 256 on, 8 classes per power of two.
        assert_eq!(Pool::cost(249), 288);
        assert_eq!(Pool::cost(504), 512);
        assert_eq!(Pool::cost(505), 576);
        assert_eq!(Pool::cost(1000), 1024);
        assert_eq!(Pool::cost(16 << 10), (16 << 10) + 2048);
        // Every class is the smallest size of its free list, so any block of that list fits.
        for len in 0..100_000 {
            let cost = Pool::cost(len);
            assert!(cost >= len + HEADER && cost % GRANULE == 0);
            assert!(cost - (len + HEADER) < GRANULE.max(cost / 8), "{len}");
            assert!(
                cost == GRANULE || list_of(cost) > list_of(cost - GRANULE),
                "{len}"
            );
        }
    }

    #[test]
    fn lists_cover_sizes_in_order() {
        let mut last = 0;
        for size in (16..1 << 20).step_by(16) {
            let list = list_of(size);
            assert!(list >= last && list < LISTS);
            last = list;
        }
        assert_eq!(list_of(u32::MAX as usize & !15), LISTS - 1);
    }

    #[test]
    fn empty_pool_bumps_the_top() {
        let mut bytes = vec![0u8; 64];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 4]);
        assert_eq!(allocate(&mut pool, &mut owners, 0, 8), Some(8));
        assert_eq!(allocate(&mut pool, &mut owners, 1, 20), Some(24));
        assert_eq!((pool.top, pool.used()), (48, 48));
        check(&pool);
    }

    #[test]
    fn full_pool_refuses_without_change() {
        let mut bytes = vec![0u8; 40];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 4]);
        // Only 32 of 40 bytes are usable.
        assert!(allocate(&mut pool, &mut owners, 0, 24).is_some());
        assert_eq!(pool.plan(0, None), None);
        assert_eq!(pool.used(), 32);
        check(&pool);
    }

    #[test]
    fn freed_neighbours_merge_into_one_block() {
        let mut bytes = vec![0u8; 128];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 4]);
        for owner in 0..4 {
            allocate(&mut pool, &mut owners, owner, 8);
        }
        pool.free(owners.0[0]);
        pool.free(owners.0[2]);
        assert_eq!(check(&pool), 32);
        // Freeing the block between merges all three.
        pool.free(owners.0[1]);
        assert_eq!(check(&pool), 48);
        assert_eq!(
            pool.plan(40, None).map(|plan| plan.site),
            Some(Site::Free { start: 0 })
        );
        // Freeing the last block gives everything back to the tail.
        pool.free(owners.0[3]);
        assert_eq!((check(&pool), pool.top, pool.used()), (0, 0, 0));
    }

    #[test]
    fn freed_block_is_reused_without_moving() {
        let mut bytes = vec![0u8; 128];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 4]);
        allocate(&mut pool, &mut owners, 0, 40);
        allocate(&mut pool, &mut owners, 1, 8);
        pool.free(owners.0[0]);
        // A smaller block goes into the hole, the rest stays free.
        assert_eq!(allocate(&mut pool, &mut owners, 2, 8), Some(8));
        assert_eq!(check(&pool), 32);
        assert_eq!(pool.moved, 0);
    }

    #[test]
    fn rewrite_that_fits_stays_in_place_and_frees_the_rest() {
        let mut bytes = vec![0u8; 128];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 4]);
        allocate(&mut pool, &mut owners, 0, 40);
        allocate(&mut pool, &mut owners, 1, 8);
        assert_eq!(rewrite(&mut pool, &mut owners, 0, 4), Some(8));
        assert_eq!(pool.block_len(8), 8);
        assert_eq!((check(&pool), pool.used()), (32, 32));
    }

    #[test]
    fn rewrite_of_the_same_class_stays_in_place() {
        let mut bytes = vec![0u8; 128];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 4]);
        allocate(&mut pool, &mut owners, 0, 20);
        allocate(&mut pool, &mut owners, 1, 8);
        pool.free(owners.0[1]);
        assert_eq!(rewrite(&mut pool, &mut owners, 0, 17), Some(8));
        assert_eq!((check(&pool), pool.used(), pool.top), (0, 32, 32));
    }

    #[test]
    fn shrinking_rewrite_takes_a_free_block_of_its_class_rather_than_cut_its_own() {
        let mut bytes = vec![0u8; 128];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 4]);
        allocate(&mut pool, &mut owners, 0, 40); // 48 bytes at 0
        for owner in 1..4 {
            allocate(&mut pool, &mut owners, owner, 8); // 16 bytes at 48, 64, 80
        }
        pool.free(owners.0[2]);
        // The 16-byte hole at 64 fits exactly; the 48-byte block is freed whole.
        assert_eq!(rewrite(&mut pool, &mut owners, 0, 4), Some(64 + 8));
        assert_eq!((check(&pool), pool.moved), (48, 0));
        assert_eq!(
            pool.plan(40, None).map(|plan| plan.site),
            Some(Site::Free { start: 0 })
        );
    }

    #[test]
    fn shrunk_then_regrown_block_grows_back_in_place() {
        // Shrink a block near the start of a full pool, then regrow it: it must grow back in
        // place, not move.
        let mut bytes = vec![0u8; 4096];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 300]);
        let mut owner = 0;
        while allocate(&mut pool, &mut owners, owner, 24).is_some() {
            owner += 1;
        }
        let first = owners.0[1];
        for _ in 0..100 {
            assert_eq!(rewrite(&mut pool, &mut owners, 1, 4), Some(first));
            assert_eq!(rewrite(&mut pool, &mut owners, 1, 24), Some(first));
        }
        assert_eq!(pool.moved, 0);
        check(&pool);
    }

    #[test]
    fn rewrite_merges_with_free_blocks_on_both_sides() {
        let mut bytes = vec![0u8; 256];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 8]);
        for owner in 0..5 {
            allocate(&mut pool, &mut owners, owner, 8);
        }
        pool.free(owners.0[1]);
        pool.free(owners.0[3]);
        // 16 + 16 + 16 bytes: the block grows into both neighbours and starts at the lower one.
        assert_eq!(rewrite(&mut pool, &mut owners, 2, 40), Some(16 + 8));
        assert_eq!((check(&pool), pool.moved), (0, 0));
    }

    #[test]
    fn allocate_when_only_scattered_holes_compacts_a_window() {
        let mut bytes = vec![0u8; 256];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 16]);
        for owner in 0..16 {
            allocate(&mut pool, &mut owners, owner, 8);
        }
        for owner in 0..16u8 {
            pool.slice_mut(owners.0[owner as usize], 8).fill(owner);
        }
        for owner in [1, 5, 9] {
            pool.free(owners.0[owner]);
        }
        // 48 bytes free, 16 a block: a 48-byte block needs the holes gathered.
        let offset = allocate(&mut pool, &mut owners, 1, 40).unwrap();
        for owner in (0..16u8).filter(|o| ![1, 5, 9].contains(o)) {
            assert_eq!(pool.slice(owners.0[owner as usize], 8), &[owner; 8]);
        }
        assert_eq!(offset, 112 + 8);
        assert_eq!(pool.moved, 6 * 16);
        assert_eq!(check(&pool), 0);
    }

    /// The bound: a pool much larger than `MAX_BYTES_MOVED`, full of small holes, asked for
    /// blocks that need compaction, never moves more than the bound in one placement, and
    /// refuses (changing nothing) when no window within the bound gathers enough.
    #[test]
    fn allocate_when_full_of_holes_moves_at_most_bound() {
        const BYTES: usize = 1 << 20;
        let mut bytes = vec![0u8; BYTES];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; BYTES / 16 + 64]);
        let mut owner = 0;
        while allocate(&mut pool, &mut owners, owner, 8).is_some() {
            owner += 1;
        }
        // Every other block free: half the pool, in 16-byte holes.
        for o in (0..owner).step_by(2) {
            pool.free(owners.0[o as usize]);
        }
        let free = check(&pool);
        // (The last block, if freed, went back to the tail.)
        assert!(free >= pool.capacity() / 2 - 32, "{free}");
        // Each block needs 2 KiB of holes, behind 2 KiB of live blocks.
        let mut placed = 0;
        let mut next = owner;
        for len in [2040, 4088, 8184, 16376] {
            let before = pool.moved;
            if allocate(&mut pool, &mut owners, next, len).is_some() {
                placed += 1;
                next += 1;
            }
            let moved = pool.moved - before;
            assert!(moved <= MAX_BYTES_MOVED, "moved {moved}");
            assert!(moved >= Pool::cost(len) - 16, "moved {moved}");
            check(&pool);
        }
        assert_eq!(placed, 4);
        // 44 KiB of holes are 44 KiB of live blocks apart: more than the bound.
        let used = pool.used();
        let top = pool.top;
        assert_eq!(pool.plan(40 << 10, None), None);
        assert_eq!((pool.used(), pool.top), (used, top));
        assert!(pool.capacity() - used >= Pool::cost(40 << 10));
    }

    #[test]
    fn small_pool_refuses_only_when_full_by_count() {
        let mut bytes = vec![0u8; 512];
        let mut pool = pool_of(&mut bytes);
        let mut owners = Offsets(vec![0; 64]);
        let mut owner = 0;
        while allocate(&mut pool, &mut owners, owner, 8).is_some() {
            owner += 1;
        }
        for o in (0..owner).step_by(2) {
            pool.free(owners.0[o as usize]);
        }
        let free = pool.usable() - pool.used();
        assert!(allocate(&mut pool, &mut owners, 0, free - HEADER).is_some());
        assert_eq!(pool.used(), pool.usable());
        check(&pool);
    }

    /// Random allocations, rewrites and frees: the invariants hold, every block keeps its
    /// bytes wherever it moves, `plan` answers `None` only when the pool is full by count or
    /// too scattered, and no placement moves more than the bound.
    #[test]
    fn random_workload_keeps_blocks_and_invariants() {
        fn run<const B: usize>(rounds: usize, max_len: usize, seed: u64) {
            let mut bytes = vec![0u8; B];
            let mut pool = pool_of(&mut bytes);
            let mut owners = Offsets(vec![0; 512]);
            let mut lens: Vec<Option<usize>> = vec![None; 512];
            let mut rng = crate::xorshift::Xorshift::new(seed);
            let mut next = |n: usize| rng.below(n as u64) as usize;
            let mut refused_fitting = 0;
            for round in 0..rounds {
                let owner = next(lens.len());
                let len = next(max_len);
                let before = pool.moved;
                match lens[owner] {
                    Some(old) if next(3) == 0 => {
                        pool.free(owners.0[owner]);
                        let _ = old;
                        lens[owner] = None;
                    }
                    Some(old) => {
                        let fits = pool.used() - Pool::cost(old) + Pool::cost(len) <= pool.usable();
                        match rewrite(&mut pool, &mut owners, owner as u32, len) {
                            Some(_) => lens[owner] = Some(len),
                            None => {
                                assert!(B > MAX_BYTES_MOVED || !fits, "round {round}");
                                refused_fitting += usize::from(fits);
                            }
                        }
                    }
                    None => {
                        let fits = pool.used() + Pool::cost(len) <= pool.usable();
                        match allocate(&mut pool, &mut owners, owner as u32, len) {
                            Some(_) => lens[owner] = Some(len),
                            None => {
                                assert!(B > MAX_BYTES_MOVED || !fits, "round {round}");
                                refused_fitting += usize::from(fits);
                            }
                        }
                    }
                }
                if let Some(len) = lens[owner] {
                    let stamp = (owner as u8).wrapping_mul(31) ^ len as u8;
                    pool.slice_mut(owners.0[owner], len).fill(stamp);
                }
                assert!(pool.moved - before <= MAX_BYTES_MOVED);
                if round % 64 == 0 || B <= 4096 {
                    check(&pool);
                    for (owner, len) in lens.iter().enumerate() {
                        if let Some(len) = *len {
                            let stamp = (owner as u8).wrapping_mul(31) ^ len as u8;
                            assert!(
                                pool.slice(owners.0[owner], len).iter().all(|&b| b == stamp),
                                "owner {owner} lost its bytes in round {round}"
                            );
                        }
                    }
                }
            }
            let _ = refused_fitting;
        }
        run::<512>(20_000, 80, 1);
        run::<4096>(20_000, 300, 2);
        run::<{ 256 << 10 }>(20_000, 3000, 3);
    }
}
