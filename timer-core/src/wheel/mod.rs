//! A hierarchical timing wheel over the whole `u64` tick range, its timers kept in blocks.

mod back_half;
mod batch;
mod chain;
mod level;
mod slot;
#[cfg(test)]
mod tests;

use crate::arena::{self, Arena};
use crate::list::{Links, List};
use crate::{Expired, Full, StaleTimer, Storage, Sweep, Tick, TimerId, TimerQueue};
use back_half::BackHalf;
#[cfg(test)]
use batch::LATE_POLL;
use batch::{Batch, LateBatches, ONE_AT_A_TIME};
use chain::{Blocks, Cells, CellsMut, Chain, MAX_BLOCK, MAX_TIMERS};
use level::{level_for, same_slot, slot_for, slot_start, Expiration, Level, DUE, LISTS};
pub use level::{LEVELS, SLOTS};
use slot::{live_deadline, node, node_mut, set_filed_on, Store, WheelNode, WheelStorage};
pub use slot::{WheelCells, WheelSlot};

/// A hierarchical timing wheel of `N` timers inline: [`TimerWheelOn`] over `[WheelSlot<T>; N]`
/// and `[WheelCells; N]`, with a `const fn new()` for `static`s.
pub type TimerWheel<T, const N: usize> = TimerWheelOn<T, [WheelSlot<T>; N], [WheelCells; N]>;

/// A hierarchical timing wheel: O(1) insert, cancel and reschedule over the full `u64` range,
/// over storage the caller provides in two parts, one of each per timer: `S` of [`WheelSlot`]s
/// (handles) and `C` of [`WheelCells`] (where the lists are kept). Inline: [`TimerWheel<T, N>`];
/// slices the caller owns: [`with_storage`](Self::with_storage).
///
/// Eleven levels of 64 slots, level `l` slots each `64^l` ticks wide:
///
/// | level | slot width (ticks) | level span (ticks) |
/// |------:|-------------------:|-------------------:|
/// | 0     | 1                  | 64                 |
/// | 1     | 64                 | 4 096              |
/// | 2     | 4 096              | 262 144            |
/// | 3     | 2^18               | 2^24               |
/// | 4     | 2^24               | 2^30               |
/// | …     | 64^l               | 64^(l+1)           |
/// | 10    | 2^60               | 2^64 (16 slots used) |
///
/// A timer is filed on the level of the highest bit in which its deadline differs from the
/// wheel's `elapsed` time (the last `now` it expired up to). When time reaches a coarse slot the
/// whole slot is taken and its timers re-filed on finer levels ("cascading"); a timer cascades at
/// most 10 times in its life, usually 0–3. The next slot is found from the bitmaps with
/// `rotate_right` and `trailing_zeros`, so an expiry after a long pause costs work proportional
/// to the timers and occupied slots it meets, never to the ticks that passed. A slot that
/// falls due whole in such an expiry (it ends by `now`) and holds at most 2,048 timers (on a
/// 64-bit target with an operating system; 128 on bare metal, and in `pop_expired`) is not
/// cascaded: its timers are sorted on the stack and fired from there (those a budget leaves go
/// on the due list), together with those of the level's next slots while they fit.
///
/// **Blocks.** Each slot keeps its timers in a chain of blocks of handle numbers, carved from
/// the two cells every [`WheelCells`] lends (blocks of 4 to 64 cells, the more the larger the
/// wheel). A cascade or an expiry reads whole blocks in order, and the handle it loads for one
/// timer does not wait on the one before, so at a million timers the cache misses overlap
/// instead of following one another down a linked list. Cancel and reschedule touch only the
/// timer's handle: the cell left behind goes stale (its handle no longer points at it) and is
/// dropped when its block is next read, or when free blocks run low and the chains are compacted,
/// in order (O(1) amortized). Each level slot's live timers are counted (in cells after the
/// last block), so a slot whose last live timer left is unmarked at once and
/// [`next_deadline`](TimerQueue::next_deadline) never names a slot of stale cells only.
///
/// **Linked.** A wheel of fewer than 2^19 timers threads them instead on doubly linked lists
/// through the same cells, and unlinks eagerly: its timers fit the caches well enough that
/// following links costs less than the blocks' bookkeeping (and below about 8,900 timers there
/// are too few cells for a part-filled block on each of the 705 lists).
///
/// Either way all timers with one deadline share one list, in arrival order, and a reschedule
/// files the timer at the back of its new list, so first-in first-out among equal deadlines
/// holds through cascades, cancels, reschedules and compaction.
///
/// Memory: 28 bytes per timer for a `u32` value (a 20-byte [`WheelSlot`] and 8 bytes of
/// [`WheelCells`]), plus 2,960 bytes (on a 64-bit host) of list heads, 4 bytes a list in either
/// layout, and bookkeeping. The handles sit apart from the cells so that the ones a cancel or a
/// reschedule loads are 20 bytes from one another, not 28: at a million timers each such load
/// misses the caches and the TLB, and misses over a smaller span cost less.
///
/// # Examples
///
/// ```
/// use timer_core::{TimerQueue, TimerWheel};
///
/// let mut wheel: TimerWheel<&str, 32> = TimerWheel::new();
/// wheel.insert(1_000, "flush").unwrap();
/// let io = wheel.insert(250, "io timeout").unwrap();
/// wheel.insert(1 << 50, "far future").unwrap();
///
/// // 250 sits in the level-1 slot [192, 256): the wheel may wake a caller at its start.
/// assert_eq!(wheel.next_deadline(), Some(192));
/// wheel.reschedule(io, 5_000).unwrap(); // the I/O made progress
///
/// let mut fired = Vec::new();
/// let _ = wheel.expire(10_000, usize::MAX, |e| fired.push((e.deadline, e.value)));
/// assert_eq!(fired, [(1_000, "flush"), (5_000, "io timeout")]);
///
/// // A pause of 2^50 ticks costs one pass per occupied slot, not per tick.
/// let _ = wheel.expire(u64::MAX, usize::MAX, |e| fired.push((e.deadline, e.value)));
/// assert_eq!(fired.last(), Some(&(1 << 50, "far future")));
/// assert!(wheel.is_empty());
/// ```
///
/// The same wheel over a slice sized at run time:
///
/// ```
/// use timer_core::{TimerQueue, TimerWheelOn, WheelCells, WheelSlot};
///
/// let mut slots: Vec<WheelSlot<&str>> = (0..100_000).map(|_| WheelSlot::new()).collect();
/// let mut cells = vec![WheelCells::new(); 100_000];
/// let mut wheel = TimerWheelOn::with_storage(&mut slots[..], &mut cells[..]);
/// wheel.insert(70, "b").unwrap();
/// wheel.insert(65, "a").unwrap();
/// assert_eq!(wheel.capacity(), 100_000);
/// assert_eq!(wheel.pop_expired(100).map(|e| e.value), Some("a"));
/// ```
pub struct TimerWheelOn<T, S, C> {
    nodes: WheelStorage<T, S, C>,
    /// Block geometry and free blocks; unused in the linked layout.
    blocks: Blocks,
    levels: [Level; LEVELS],
    /// Every slot's list, level by level, then the due list ([`DUE`]): timers with deadline
    /// `<= elapsed`, in deadline order, waiting to be handed out.
    lists: [Chain; LISTS],
    elapsed: Tick,
    /// No occupied slot starts before this tick, and it is 0 while the due list holds timers: a
    /// lower bound on every pending deadline, so that `expire` can return at once, after one
    /// comparison, when nothing can be due. 0 means "unknown": it keeps an empty wheel all
    /// zero bytes.
    check_from: Tick,
    /// How many times the chains were compacted.
    #[cfg(test)]
    compactions: usize,
}

impl<T, S, C> TimerWheelOn<T, S, C> {
    /// An empty wheel at time 0 over `nodes`: the one place the fields are set, `const` so that
    /// [`TimerWheel::new`] can use it.
    const fn over(nodes: WheelStorage<T, S, C>) -> Self {
        Self {
            nodes,
            blocks: Blocks::EMPTY,
            levels: [Level::EMPTY; LEVELS],
            lists: [Chain::EMPTY; LISTS],
            elapsed: 0,
            check_from: 0,
            #[cfg(test)]
            compactions: 0,
        }
    }
}

impl<T, const N: usize> Default for TimerWheel<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const N: usize> TimerWheel<T, N> {
    /// An empty wheel of `N` timers at time 0: all zero bytes, and `const`, so it can live in a
    /// `static` (in `.bss`).
    pub const fn new() -> Self {
        Self::over(WheelStorage::new(
            Arena::new(),
            [const { WheelCells::new() }; N],
        ))
    }
}

#[cfg(feature = "alloc")]
impl<T> TimerWheelOn<T, alloc::boxed::Box<[WheelSlot<T>]>, alloc::boxed::Box<[WheelCells]>> {
    /// An empty wheel of `capacity` timers at time 0, its slots and its cells in two heap
    /// allocations.
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::{TimerQueue, TimerWheelOn};
    ///
    /// let mut wheel = TimerWheelOn::<u32, _, _>::with_capacity(1_000_000);
    /// assert_eq!(wheel.capacity(), 1_000_000);
    /// wheel.insert(5, 1).unwrap();
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_storage(
            (0..capacity).map(|_| WheelSlot::new()).collect(),
            alloc::vec![WheelCells::new(); capacity].into_boxed_slice(),
        )
    }
}

impl<T, S: Storage<WheelSlot<T>>, C: Storage<WheelCells>> TimerWheelOn<T, S, C> {
    /// An empty wheel at time 0 over `slots` and `cells`, one of each per timer: its capacity is
    /// the shorter one's length (at most `u32::MAX / 2`). O(capacity): both are emptied (values
    /// left in the slots are dropped).
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::{TimerQueue, TimerWheelOn, WheelCells, WheelSlot};
    ///
    /// // Owned storage works too: a `Vec` or `Box<[_]>` moves into the wheel.
    /// let slots = vec![WheelSlot::<u8>::new(), WheelSlot::new()];
    /// let mut wheel = TimerWheelOn::with_storage(slots, vec![WheelCells::new(); 2]);
    /// wheel.insert(1, 1).unwrap();
    /// wheel.insert(2, 2).unwrap();
    /// assert!(wheel.is_full());
    /// ```
    pub fn with_storage(slots: S, cells: C) -> Self {
        Self::over(WheelStorage::with_storage(slots, cells))
    }

    /// [`with_storage`](Self::with_storage), but keeping the timers in blocks at any capacity
    /// where they fit (from about 8,900 timers) rather than only from 2^19: for tests, which
    /// reach the blocks layout's every path sooner at a small capacity.
    #[doc(hidden)]
    pub fn with_storage_in_blocks(slots: S, cells: C) -> Self {
        Self {
            blocks: Blocks::FORCED,
            ..Self::with_storage(slots, cells)
        }
    }

    /// Gives the storage back (for reuse): the slots and the cells, every pending timer dropped.
    pub fn into_storage(self) -> (S, C) {
        self.nodes.into_storage()
    }

    /// The time the wheel has expired up to: the largest `now` it has fully processed.
    pub const fn elapsed(&self) -> Tick {
        self.elapsed
    }

    /// The list a timer due at `deadline` belongs on, and its level (`LEVELS` for the due list).
    #[inline]
    fn home(&self, deadline: Tick) -> (usize, usize) {
        if deadline <= self.elapsed {
            (DUE, LEVELS)
        } else {
            let level = level_for(self.elapsed, deadline);
            (level * SLOTS + slot_for(level, deadline), level)
        }
    }

    /// Marks the level slot of list `list` occupied (the due list: see
    /// [`due_gains`](Self::due_gains)).
    #[inline]
    fn occupy(&mut self, list: usize, level: usize, deadline: Tick) {
        if level < LEVELS {
            self.levels[level].occupy(list % SLOTS);
            self.check_from = self.check_from.min(slot_start(level, deadline));
        } else {
            self.due_gains();
        }
    }

    /// To be called whenever timers go onto the due list: while it holds any, `check_from` is 0,
    /// so the one comparison a poll makes first cannot miss them (even for a `now` before
    /// `elapsed`).
    #[inline]
    fn due_gains(&mut self) {
        self.check_from = 0;
    }

    /// Whether timers are kept in blocks (from 2^19), not threaded on linked lists.
    #[inline]
    fn in_blocks(&self) -> bool {
        self.blocks.block_len() > 2
    }

    /// Appends timer `index` to the back of its list in the blocks layout (not the due list:
    /// [`file`](Self::file) sorts into that). Returns its cell's position. Out of line: a
    /// cascade's loop, which calls it for the few timers it files on the due list, runs
    /// faster without it inlined.
    #[inline(never)]
    fn push_block_cell(&mut self, index: u32, deadline: Tick) -> Option<u32> {
        self.push_block_cell_inline(index, deadline)
    }

    /// [`push_block_cell`](Self::push_block_cell), always inlined: for an insert and a
    /// reschedule, which do little else.
    #[inline(always)]
    fn push_block_cell_inline(&mut self, index: u32, deadline: Tick) -> Option<u32> {
        let (list, level) = self.home(deadline);
        let cells = &mut self.nodes.store_mut();
        let at = self.lists[list].push_back(cells, &mut self.blocks, index)?;
        // As in `push_linked`: a level list with live timers has its slot marked already. The
        // due list is not counted: `occupy` only keeps `check_from` at 0 for it.
        if level == LEVELS || self.add_live(list) {
            self.occupy(list, level, deadline);
        }
        Some(at)
    }

    /// Counts one more live timer on level list `list` (blocks layout); `true` when it is the
    /// only one.
    #[inline]
    fn add_live(&mut self, list: usize) -> bool {
        self.recount_live(list, |live| live.saturating_add(1)) == 1
    }

    /// Counts one live timer fewer on level list `list` (blocks layout); `true` when none is
    /// left.
    #[inline]
    fn remove_live(&mut self, list: usize) -> bool {
        self.recount_live(list, |live| live.saturating_sub(1)) == 0
    }

    /// Level list `list`'s live count (blocks layout).
    #[inline]
    fn live_count(&self, list: usize) -> u32 {
        self.nodes.store().cell(self.blocks.live_cell(list))
    }

    /// Replaces level list `list`'s live count by `change` of it; returns the new count.
    #[inline]
    fn recount_live(&mut self, list: usize, change: impl FnOnce(u32) -> u32) -> u32 {
        let at = self.blocks.live_cell(list);
        match self.nodes.store_mut().cell_mut(at) {
            Some(count) => {
                *count = change(*count);
                *count
            }
            // The geometry leaves room for every list's count.
            None => change(0),
        }
    }

    /// Sets every list's live count to 0 (blocks layout): when the geometry is first set, over
    /// storage that may hold anything, and when the wheel empties.
    fn clear_live(&mut self) {
        for list in 0..LISTS {
            self.recount_live(list, |_| 0);
        }
    }

    /// Counts timer `index`, due at `deadline`, off its list in the blocks layout: its cell
    /// just goes stale, and a level slot left with no live timer is marked empty, so that
    /// `next_deadline` never answers with the start of a slot of stale cells only.
    #[inline]
    fn unfile_blocks(&mut self, deadline: Tick) {
        let (list, level) = self.home(deadline);
        if level < LEVELS && self.remove_live(list) {
            self.levels[level].vacate(list % SLOTS);
        }
    }

    /// Appends timer `index` to the back of its list in the linked layout (not the due list).
    #[inline]
    fn push_linked(&mut self, index: u32, deadline: Tick) {
        let (list, level) = self.home(deadline);
        let mut linked = self.lists[list].linked();
        let was_empty = linked.is_empty();
        let store = &mut self.nodes.store_mut();
        linked.push_back(store, index);
        set_filed_on(store, index, list);
        self.lists[list] = Chain::from_linked(linked);
        // A list with timers on it has its slot marked already, and `check_from` at or before
        // that slot's start (every timer on one list shares its slot's start).
        if was_empty {
            self.occupy(list, level, deadline);
        }
    }

    /// Makes sure a new cell can be filed: compacts when free blocks run low. `false` only if a
    /// wheel that is not full has no room, which its block size rules out.
    #[inline]
    fn make_room(&mut self) -> bool {
        if !self.in_blocks() {
            return true;
        }
        if self.blocks.available() <= self.blocks.low_water() {
            self.compact();
        }
        self.blocks.available() > 0
    }

    /// Files timer `index` (already in its handle, due at `deadline`) where it belongs: at the
    /// back of its level list, or into the due list in deadline order. Requires
    /// [`make_room`](Self::make_room) first.
    #[inline]
    fn file(&mut self, index: u32, deadline: Tick) {
        if !self.in_blocks() {
            self.file_linked(index, deadline);
            return;
        }
        let at = if deadline >= self.elapsed {
            // After every due timer (all due at or before `elapsed`), or on a level.
            self.push_block_cell_inline(index, deadline)
        } else {
            self.due_gains();
            let cells = &mut self.nodes.store_mut();
            self.lists[DUE].insert_before(cells, &mut self.blocks, index, |cells, other| {
                node(cells, other).is_some_and(|n| n.deadline() > deadline)
            })
        };
        match (at, node_mut(&mut self.nodes.store_mut(), index)) {
            (Some(at), Some(node)) => node.position = at,
            // `make_room` went first.
            _ => debug_assert!(false, "timer-core: no room to file a timer"),
        }
    }

    /// [`file`](Self::file) in the linked layout: small enough to inline into every caller,
    /// which a reschedule, the commonest call, gains most from.
    #[inline(always)]
    fn file_linked(&mut self, index: u32, deadline: Tick) {
        // `>`, not `>=`: the compiler then knows `push_linked` files on a level, and leaves
        // the due list's branch out of every reschedule (a deadline of `elapsed` goes after
        // every due timer either way).
        if deadline > self.elapsed {
            self.push_linked(index, deadline);
        } else {
            self.due_gains();
            let mut due = self.lists[DUE].linked();
            due.insert_sorted(&mut self.nodes.store_mut(), index);
            self.lists[DUE] = Chain::from_linked(due);
        }
    }

    /// Takes timer `index`, due at `deadline` and last filed on level list `filed_on`, off its
    /// list (the linked layout; in blocks, its cell just goes stale).
    ///
    /// The due list holds exactly the timers due by `elapsed`; any other timer is on the level
    /// list it was last filed on (a level list is re-filed whole when `elapsed` reaches its
    /// slot, and a level-0 slot's becomes the due list then). Reading that list from the handle,
    /// already loaded, costs less than finding it from the deadline, which every reschedule
    /// would do.
    #[inline]
    fn unfile_linked(&mut self, index: u32, deadline: Tick, filed_on: u32) {
        let list = if deadline <= self.elapsed {
            DUE
        } else {
            filed_on as usize
        };
        let level = list / SLOTS;
        debug_assert_eq!((list, level), self.home(deadline));
        let mut linked = self.lists[list].linked();
        linked.unlink(&mut self.nodes.store_mut(), index);
        self.lists[list] = Chain::from_linked(linked);
        if level < LEVELS && linked.is_empty() {
            self.levels[level].vacate(list % SLOTS);
        }
    }

    /// [`reschedule`](TimerQueue::reschedule) in the blocks layout, timer `index` already
    /// holding its new deadline. Out of line: the linked layout's path, inlined into
    /// `reschedule`, then needs fewer registers saved around it.
    #[inline(never)]
    fn reschedule_in_blocks(&mut self, index: u32, old: Tick, deadline: Tick) {
        if !self.make_room() {
            self.keep_place(index, old);
            return;
        }
        let (list, level) = self.home(old);
        if level < LEVELS && same_slot(level, old, deadline) {
            // Staying in its level slot: a new cell at the back of the same list, whose slot
            // bit stays as it is.
            let cells = &mut self.nodes.store_mut();
            match self.lists[list].push_back(cells, &mut self.blocks, index) {
                Some(at) => cells.relocate(index, at),
                // `make_room` went first.
                None => self.keep_place(index, old),
            }
        } else {
            self.unfile_blocks(old);
            self.file(index, deadline);
        }
    }

    /// [`insert`](TimerQueue::insert) in the blocks layout of a timer not yet due, after
    /// [`make_room`](Self::make_room): its cell is filed first, at the back of its list, so
    /// that its handle is written once, already naming the cell. Out of line: inlined, it
    /// makes the linked layout's insert save more registers.
    #[inline(never)]
    fn insert_on_level_in_blocks(&mut self, deadline: Tick, value: T) -> Result<TimerId, Full<T>> {
        let Some(index) = self.nodes.arena.next_index() else {
            return Err(Full(value));
        };
        let Some(position) = self.push_block_cell_inline(index, deadline) else {
            // `make_room` went first.
            debug_assert!(false, "timer-core: no room to file a timer");
            return Err(Full(value));
        };
        let allocated = self.nodes.arena.allocate(value, |value, generation| {
            WheelNode::new(deadline, position, generation, value)
        });
        debug_assert!(allocated.as_ref().is_ok_and(|id| id.slot() == index));
        allocated.map_err(|value| {
            // Unreachable (`next_index` named a free slot): the cell, naming no timer, is
            // stale already; take back the live timer it counted.
            self.unfile_blocks(deadline);
            Full(value)
        })
    }

    /// Puts back the deadline `old` of timer `index` when a reschedule finds no room: the
    /// timer keeps its place rather than being lost.
    #[cold]
    fn keep_place(&mut self, index: u32, old: Tick) {
        // Unreachable (a wheel's block size leaves room for every timer it holds).
        debug_assert!(false, "timer-core: no room to reschedule a timer");
        if let Some(node) = node_mut(&mut self.nodes.store_mut(), index) {
            node.set_deadline(old);
        }
    }

    /// Drops every stale cell, keeping the live ones in order: O(cells in use). Out of line:
    /// it runs once in many thousand calls, and inlined it makes its callers save registers on
    /// every call.
    #[inline(never)]
    fn compact(&mut self) {
        #[cfg(test)]
        {
            self.compactions += 1;
        }
        // Every chain, not only the occupied slots': a slot whose live timers all left keeps
        // its stale cells until then (its slot bit went with its last live timer).
        let cells = &mut self.nodes.store_mut();
        for chain in &mut self.lists {
            chain.compact(cells, &mut self.blocks);
        }
    }

    /// The earliest occupied slot. Any occupied slot on a finer level starts before every slot
    /// on a coarser one, so the first occupied level wins.
    fn next_expiration(&self) -> Option<Expiration> {
        self.levels
            .iter()
            .enumerate()
            .find_map(|(number, level)| level.next_expiration(number, self.elapsed))
    }

    /// Takes the whole slot (the earliest occupied one, the due list empty) and re-files its
    /// timers relative to its start time, in the order they were filed (so timers with one
    /// deadline keep theirs). A slot that ends by `now` and holds few timers goes to the due
    /// list whole instead, sorted.
    fn process(&mut self, expiration: Expiration, now: Tick) {
        if expiration.level == 0 && self.lists[DUE].is_empty() {
            // Every timer in a level-0 slot is due exactly at its start, in order.
            let taken = self.take_slot(&expiration);
            self.due_gains();
            self.lists[DUE] = taken;
            return;
        }
        if expiration.end() <= now {
            self.file_due_whole(&expiration);
        } else {
            let taken = self.take_slot(&expiration);
            self.cascade(taken, expiration.level);
        }
    }

    /// Takes the list of slot `expiration` off the wheel, its bit cleared.
    #[inline]
    fn take_slot(&mut self, expiration: &Expiration) -> Chain {
        self.elapsed = expiration.start;
        self.levels[expiration.level].vacate(expiration.slot);
        if self.in_blocks() {
            // Its timers are counted again wherever they are filed next.
            self.recount_live(expiration.list(), |_| 0);
        }
        self.lists[expiration.list()].take()
    }

    /// Re-files every timer of `taken`, the list of a level-`level` slot, relative to `elapsed`
    /// (the slot's start).
    #[inline(always)]
    fn cascade(&mut self, taken: Chain, level: usize) {
        if self.in_blocks() {
            self.cascade_blocks(taken, level);
        } else {
            self.cascade_linked(taken.linked(), level);
        }
    }

    /// [`cascade`](Self::cascade) in the linked layout: a short list from the front, node by
    /// node, each node's successor read before the node is relinked; a long one from both ends
    /// ([`cascade_from_both_ends`](Self::cascade_from_both_ends)).
    #[inline(always)]
    fn cascade_linked(&mut self, taken: List, level: usize) {
        let (Some(mut front), Some(back)) = (taken.head(&self.nodes.store()), taken.tail()) else {
            return;
        };
        // A short list (the per-tick expiry's) is filed from the front alone: setting the back
        // half up would cost more than the waits it saves.
        for _ in 0..ONE_ENDED_CASCADE {
            let cells = &self.nodes.store();
            let (next, deadline) = (cells.next(front), cells.key(front));
            self.push_linked(front, deadline);
            if front == back {
                return;
            }
            front = next;
        }
        self.cascade_from_both_ends(front, back, level);
    }

    /// Files the rest of a linked-layout cascade, the timers from `front` to `back` (the taken
    /// list's tail), walking from both ends at once (see [`BackHalf`]). Each node's links are
    /// read before the node is relinked, and a walk writes only the node it files and nodes
    /// already filed, so neither walk meets a node the other changed.
    #[inline(never)]
    fn cascade_from_both_ends(&mut self, mut front: u32, mut back: u32, level: usize) {
        let finer = level.wrapping_sub(1);
        let mut back_half = BackHalf::EMPTY;
        loop {
            let cells = &self.nodes.store();
            if front == back {
                let deadline = cells.key(front);
                self.push_linked(front, deadline);
                break;
            }
            let (after, before) = (cells.next(front), cells.prev(back));
            let (front_deadline, back_deadline) = (cells.key(front), cells.key(back));
            self.push_linked(front, front_deadline);
            let (list, list_level) = self.home(back_deadline);
            let slot = (list_level == finer).then_some(list % SLOTS);
            if slot.is_some() {
                // Where `back_half.append` files it.
                set_filed_on(&mut self.nodes.store_mut(), back, list);
            }
            back_half.push_front(&mut self.nodes.store_mut(), slot, back);
            if after == back {
                break;
            }
            (front, back) = (after, before);
        }
        for slot in back_half.used_slots() {
            let list = finer * SLOTS + slot;
            let mut linked = self.lists[list].linked();
            let was_empty = linked.is_empty();
            let head = back_half.append(&mut self.nodes.store_mut(), slot, &mut linked);
            self.lists[list] = Chain::from_linked(linked);
            if was_empty {
                let deadline = self.nodes.store().key(head);
                self.occupy(list, finer, deadline);
            }
        }
        let mut at = back_half.other_head();
        while at != arena::NIL {
            let cells = &self.nodes.store();
            let (next, deadline) = (cells.next(at), cells.key(at));
            self.push_linked(at, deadline);
            at = next;
        }
    }

    /// Files the timers of slot `expiration`, which ends by now, on the due list in deadline
    /// order if they fit a [`Batch`], else cascades them.
    #[inline(never)]
    fn file_due_whole(&mut self, expiration: &Expiration) {
        let mut batch = Batch::<ONE_AT_A_TIME>::new(expiration.start);
        if self.gather_in_place(expiration, &mut batch) {
            self.take_gathered(expiration, &mut batch);
            self.file_on_due(&batch, 0);
        } else {
            let taken = self.take_slot(expiration);
            self.cascade(taken, expiration.level);
        }
    }

    /// [`file_due_whole`](Self::file_due_whole) for an expiry up to `now` that fires what it
    /// gathers, once [`advance_or_gather`](Self::advance_or_gather) found that the earliest
    /// occupied slot falls due whole: fires the slot's timers straight from a sorted batch, at
    /// most `budget` of them (the rest go on the due list). The batch is the small one of
    /// `batches` if the slot's timers fit it, else the large one where there is one, else the
    /// slot is cascaded. Returns how many fired.
    #[inline(never)]
    fn fire_due_whole(
        &mut self,
        now: Tick,
        budget: usize,
        on_expired: &mut impl FnMut(Expired<T>),
        batches: &mut LateBatches,
    ) -> usize {
        let Some(expiration) = self.next_expiration() else {
            return 0;
        };
        // What `advance_or_gather` found; were it not (unreachable), firing the gathered timers
        // could fire some early, and the slot is cascaded instead.
        let due_whole = expiration.level > 0 && expiration.end() <= now;
        debug_assert!(due_whole, "timer-core: the slot found due whole is not");
        if due_whole {
            let small = batches.small();
            if self.gather_in_place(&expiration, small) {
                return self.fire_gathered(&expiration, now, budget, on_expired, small);
            }
            if let Some(large) = batches.large() {
                if self.gather_in_place(&expiration, large) {
                    return self.fire_gathered(&expiration, now, budget, on_expired, large);
                }
            }
        }
        let taken = self.take_slot(&expiration);
        self.cascade(taken, expiration.level);
        0
    }

    /// Gathers every live timer of slot `expiration`, the earliest occupied one and still on
    /// the wheel, into `batch` (emptied first) in list order, if it holds at most `N` timers
    /// (so that sorting them costs O(log N) per timer) and their deadlines pack into the
    /// batch's keys (a slot of level 4 for a batch of [`ONE_AT_A_TIME`], of level 3 for a
    /// larger one); `false` otherwise. Reads only: the wheel is as it was either way.
    ///
    /// With the due list empty, every timer due by the slot's end is in it, so with them
    /// gathered ([`take_gathered`](Self::take_gathered)) the wheel has processed up to that end.
    /// A late poll meets such slots below the level its timers were filed on; sorting a few
    /// timers here costs less than cascading each through the finer levels, one slot at a time.
    #[inline]
    fn gather_in_place<const N: usize>(
        &self,
        expiration: &Expiration,
        batch: &mut Batch<N>,
    ) -> bool {
        debug_assert!(self.lists[DUE].is_empty());
        batch.restart(expiration.start);
        self.gather_list(expiration.list(), batch)
    }

    /// Adds every live timer of list `list`, still on the wheel, to `batch` after those it
    /// holds; `false` if the batch cannot take them all (some may be in it then). In the blocks
    /// layout the list's live count refuses one that is too large before it is walked.
    #[inline]
    fn gather_list<const N: usize>(&self, list: usize, batch: &mut Batch<N>) -> bool {
        if self.in_blocks() && self.live_count(list) as usize > N - batch.len() {
            return false;
        }
        self.gather_chain(&self.lists[list], batch)
    }

    /// After [`gather_in_place`](Self::gather_in_place) gathered slot `expiration` into
    /// `batch`: takes the slot off the wheel (its timers are on no list now: the caller fires
    /// them, or files them on the due list with [`file_on_due`](Self::file_on_due)), sorts them
    /// and moves `elapsed` to the slot's end.
    #[inline]
    fn take_gathered<const N: usize>(&mut self, expiration: &Expiration, batch: &mut Batch<N>) {
        let taken = self.take_slot(expiration);
        self.drop_gathered(taken);
        batch.sort_from(0);
        self.elapsed = expiration.end();
    }

    /// After [`gather_in_place`](Self::gather_in_place) gathered slot `expiration` into
    /// `batch`: takes it ([`take_gathered`](Self::take_gathered)), gathers the level's next
    /// slots while they fit ([`gather_following`](Self::gather_following)) and fires the batch,
    /// at most `budget` timers. Returns how many fired.
    fn fire_gathered<const N: usize>(
        &mut self,
        expiration: &Expiration,
        now: Tick,
        budget: usize,
        on_expired: &mut impl FnMut(Expired<T>),
        batch: &mut Batch<N>,
    ) -> usize {
        self.take_gathered(expiration, batch);
        self.gather_following(now, expiration.level, budget, batch);
        self.fire_batch(batch, budget, on_expired)
    }

    /// Adds every live timer of `chain` to `batch`, in the chain's order, with its deadline;
    /// `false` if the batch cannot take them all (some may be in it then). Reads only.
    #[inline]
    fn gather_chain<const N: usize>(&self, chain: &Chain, batch: &mut Batch<N>) -> bool {
        let cells = &self.nodes.store();
        if !self.in_blocks() {
            return gather_linked(cells, chain.linked(), batch);
        }
        for (index, at) in chain.cells_in_order(cells, &self.blocks) {
            if let Some(deadline) = live_deadline(cells, index, at) {
                if !batch.push(index, deadline) {
                    return false;
                }
            }
        }
        true
    }

    /// Lets go of a chain taken off the wheel whose timers are all in a batch now: its blocks
    /// are freed; in the linked layout, the links left in its timers are rewritten when each is
    /// fired or filed on the due list.
    #[inline]
    fn drop_gathered(&mut self, mut taken: Chain) {
        if self.in_blocks() {
            taken.release(&mut self.nodes.store_mut(), &mut self.blocks);
        }
    }

    /// After [`take_gathered`](Self::take_gathered) took a level-`level` slot: gathers
    /// the level's next occupied slots into `batch` too, one after another, while each falls
    /// due whole by `now` and fits, and the batch holds fewer than `budget` timers.
    ///
    /// The slot just gathered was the earliest occupied one, so every finer level is empty and
    /// the level's next occupied slot is the wheel's next: its timers are all due after the
    /// batch's. A late poll over a wheel of 10,000 timers meets a thousand slots of about ten
    /// timers each; gathering a dozen into one batch spares each slot a search of the levels,
    /// a call and a fire loop.
    fn gather_following<const N: usize>(
        &mut self,
        now: Tick,
        level: usize,
        budget: usize,
        batch: &mut Batch<N>,
    ) {
        // Timers the last slot gathered brought: a next slot that is likely as large and does
        // not fit would be walked for nothing (a wheel of 1,000 timers meets slots of 70).
        let mut last = batch.len();
        while batch.len() < budget && last <= N - batch.len() {
            let Some(next) = self.levels[level].next_expiration(level, self.elapsed) else {
                return;
            };
            // `next.start > elapsed` holds while the filing invariant does; checked regardless,
            // as a slot before `elapsed` would be gathered out of order.
            if next.start <= self.elapsed || next.end() > now || !batch.reaches(next.end()) {
                return;
            }
            let mark = batch.len();
            if !self.gather_list(next.list(), batch) {
                // Too many: the slot stays on the wheel as it was.
                batch.truncate(mark);
                return;
            }
            let taken = self.take_slot(&next);
            self.drop_gathered(taken);
            batch.sort_from(mark);
            self.elapsed = next.end();
            last = batch.len() - mark;
        }
    }

    /// Files the timers of a gathered `batch` from its `from`th on onto the empty due list, in
    /// the batch's order: those the caller did not fire. Each is due by `elapsed`.
    fn file_on_due<const N: usize>(&mut self, batch: &Batch<N>, from: usize) {
        if from >= batch.len() {
            return;
        }
        self.due_gains();
        if !self.in_blocks() {
            let order = batch.iter().skip(from).map(|(index, _)| index);
            let due = List::from_order(&mut self.nodes.store_mut(), order);
            self.lists[DUE] = Chain::from_linked(due);
            return;
        }
        // Every deadline is at or before `elapsed`: each goes to the back of the due list.
        for (index, deadline) in batch.iter().skip(from) {
            match self.push_block_cell(index, deadline) {
                Some(to) => self.nodes.store_mut().relocate(index, to),
                // The reserve (kept before every `process`) makes this unreachable.
                None => debug_assert!(false, "timer-core: no free block for the due list"),
            }
        }
    }

    /// Fires the timers of a gathered `batch`, in order, at most `budget` of them; files the
    /// rest on the due list, also if `on_expired` panics. Returns how many fired.
    ///
    /// Firing straight from the batch spares each timer a trip through the due list (its links
    /// or a cell written, then read back).
    fn fire_batch<const N: usize>(
        &mut self,
        batch: &Batch<N>,
        budget: usize,
        on_expired: &mut impl FnMut(Expired<T>),
    ) -> usize {
        let mut rest = BatchRest {
            wheel: self,
            batch,
            next: 0,
        };
        let mut fired = 0;
        while fired < budget {
            let Some((index, _)) = batch.get(rest.next) else {
                break;
            };
            rest.next += 1;
            if let Some(expired) = rest.wheel.nodes.arena.take_wheel_expired(index) {
                on_expired(expired);
                fired += 1;
            }
        }
        fired
    }

    /// Re-files the live timers of a chain taken off its level-`level` slot, block by block:
    /// each block is copied out and freed before its timers are filed, so the cascade needs free
    /// blocks only for the new tails it opens (the reserve).
    ///
    /// A block's handles are read in one pass before any is filed: the loads do not depend on
    /// one another, so their cache misses overlap; filing between them would leave one miss at a
    /// time in flight.
    ///
    /// Nearly every timer goes to the level just below (all but those in the slot's first
    /// sixty-fourth, which go further down). That level is empty (the slot was the earliest
    /// occupied one), so its slots' live counts are kept here, on the stack, and written with
    /// their slot bits once at the end, instead of a read and a write of a count for each timer.
    fn cascade_blocks(&mut self, mut taken: Chain, level: usize) {
        let finer = level.wrapping_sub(1);
        let finer_shift = (finer as u32).wrapping_mul(level::SLOT_BITS);
        let mut counts = [0u32; SLOTS];
        let mut block = [0; MAX_BLOCK];
        let mut deadlines = [0; MAX_BLOCK];
        while let Some((first, len)) =
            taken.take_front_block(&mut self.nodes.store_mut(), &mut self.blocks, &mut block)
        {
            let mut live = 0u64;
            let cells = &self.nodes.store();
            for (i, (&index, at)) in block[..len].iter().zip(first..).enumerate() {
                if let Some(deadline) = live_deadline(cells, index, at) {
                    deadlines[i] = deadline;
                    live |= 1 << i;
                }
            }
            while live != 0 {
                let i = live.trailing_zeros() as usize;
                live &= live - 1;
                let (index, deadline) = (block[i], deadlines[i]);
                // The timer's slot on the level below, if that is its level (`home` would say
                // so): it is after `elapsed` and differs from it there and in no higher bit.
                let below = (deadline ^ self.elapsed)
                    .checked_shr(finer_shift)
                    .unwrap_or(0);
                let finer_slot = (deadline > self.elapsed && below != 0 && below < SLOTS as u64)
                    .then(|| slot_for(finer, deadline));
                let push = |wheel: &mut Self| match finer_slot {
                    Some(slot) => wheel.push_cell(finer * SLOTS + slot, index),
                    None => wheel.push_block_cell(index, deadline),
                };
                let to = match push(self) {
                    Some(to) => to,
                    None => {
                        // The reserve makes this unreachable; compacting would still make room.
                        self.compact();
                        match push(self) {
                            Some(to) => to,
                            None => unreachable!("timer-core: a cascade found no free block"),
                        }
                    }
                };
                if let Some(slot) = finer_slot {
                    counts[slot] += 1;
                }
                self.nodes.store_mut().relocate(index, to);
            }
        }
        for (slot, &count) in counts.iter().enumerate().filter(|(_, &count)| count > 0) {
            let list = finer * SLOTS + slot;
            self.recount_live(list, |live| live.saturating_add(count));
            let start = self.elapsed | ((slot as Tick) << finer_shift);
            self.occupy(list, finer, start);
        }
    }

    /// Appends timer `index` to level list `list` (blocks layout) without counting it: for a
    /// cascade, which counts the timers it files and marks their slots at its end.
    #[inline]
    fn push_cell(&mut self, list: usize, index: u32) -> Option<u32> {
        self.lists[list].push_back(&mut self.nodes.store_mut(), &mut self.blocks, index)
    }

    /// The first live timer on the due list, dropping stale cells before it.
    #[inline(always)]
    fn due_front(&mut self) -> Option<u32> {
        if !self.in_blocks() {
            return self.lists[DUE].linked().head(&self.nodes.store());
        }
        let cells = &mut self.nodes.store_mut();
        while let Some((index, at)) = self.lists[DUE].front(cells, &self.blocks) {
            if self.blocks.starts_block(at) {
                // About to hand out a block's timers one call at a time: load all their handles
                // now, together, so that their misses overlap.
                let sink = self.lists[DUE]
                    .block_cells(cells, &self.blocks)
                    .fold(0, |sink, other| {
                        sink ^ node(cells, other).map_or(0, |n| n.position)
                    });
                core::hint::black_box(sink);
            }
            if cells.is_live(index, at) {
                return Some(index);
            }
            self.lists[DUE].pop_front(cells, &mut self.blocks);
        }
        None
    }

    /// Removes timer `index`, the due list's first live one.
    #[inline]
    fn pop_due_front(&mut self, index: u32) {
        if self.in_blocks() {
            self.lists[DUE].pop_front(&mut self.nodes.store_mut(), &mut self.blocks);
        } else {
            let mut due = self.lists[DUE].linked();
            due.unlink(&mut self.nodes.store_mut(), index);
            self.lists[DUE] = Chain::from_linked(due);
        }
    }

    /// Cascades until the earliest timer due at `now` heads the due list; returns it.
    #[inline]
    fn advance(&mut self, now: Tick) -> Option<u32> {
        match self.advance_or_gather(now, false) {
            Advanced::Head(head) => Some(head),
            Advanced::DueWhole | Advanced::NothingDue => None,
        }
    }

    /// [`advance`](Self::advance), or, if `gather`, stops before a slot (above level 0) that
    /// falls due whole by `now`, for the caller to fire its timers straight from a batch
    /// ([`fire_due_whole`](Self::fire_due_whole)).
    fn advance_or_gather(&mut self, now: Tick, gather: bool) -> Advanced {
        loop {
            if let Some(head) = self.due_front() {
                return if self.nodes.store().key(head) <= now {
                    Advanced::Head(head)
                } else {
                    Advanced::NothingDue
                };
            }
            if now <= self.elapsed {
                self.renew_check_from(now);
                return Advanced::NothingDue;
            }
            if now < self.check_from {
                // No slot starts by `now`: nothing to cascade, nothing due.
                self.elapsed = now;
                return Advanced::NothingDue;
            }
            match self.next_expiration() {
                Some(next) if next.start <= now => {
                    if self.in_blocks() && self.blocks.available() < chain::RESERVE {
                        self.compact();
                    }
                    if gather && next.level > 0 && next.end() <= now {
                        return Advanced::DueWhole;
                    }
                    self.process(next, now);
                }
                next => {
                    self.check_from = next.map_or(Tick::MAX, |next| next.start);
                    self.elapsed = now;
                    return Advanced::NothingDue;
                }
            }
        }
    }

    /// With `now <= elapsed` and the due list empty: makes `check_from` exact again if it is
    /// stale (at or before `now`, while every occupied slot starts after `elapsed`), as it is
    /// once the due list runs dry, so that the next polls return inline rather than each
    /// calling the expiry proper to find nothing.
    #[inline]
    fn renew_check_from(&mut self, now: Tick) {
        if self.check_from <= now {
            self.check_from = self.next_expiration().map_or(Tick::MAX, |next| next.start);
        }
    }

    /// Whether an expiry up to `now` can return at once: nothing on the due list and no
    /// occupied slot starting by `now`, which one comparison with `check_from` tells. Then
    /// `elapsed` moves to `now`, as `advance` would move it. Inline, so that the commonest poll,
    /// one that finds nothing, costs a few instructions and no call.
    #[inline(always)]
    fn nothing_due_by(&mut self, now: Tick) -> bool {
        debug_assert!(self.check_from == 0 || self.lists[DUE].is_empty());
        let idle = now < self.check_from;
        if idle && now > self.elapsed {
            self.elapsed = now;
        }
        idle
    }

    /// [`TimerQueue::expire`] past its shortcut, with one more: once the due list is found and
    /// `elapsed <= now`, every timer on it is due (all are due by `elapsed`), so they are handed
    /// out one after another without asking `advance` each time (in the blocks layout that
    /// question cost more than handing the timer out).
    ///
    /// `fired` timers have fired already. A slot that falls due whole needs `batches`; with
    /// none, the expiry goes on in [`expire_late`](Self::expire_late), which has them: this
    /// frame then stays small, and the per-tick expiry, which never meets such a slot, does not
    /// pay to set up a frame of several KiB.
    #[inline(never)]
    fn expire_some<F: FnMut(Expired<T>)>(
        &mut self,
        now: Tick,
        budget: usize,
        mut fired: usize,
        on_expired: &mut F,
        mut batches: Option<&mut LateBatches>,
    ) -> Sweep {
        while fired < budget {
            let head = match self.advance_or_gather(now, true) {
                Advanced::Head(head) => head,
                Advanced::DueWhole => {
                    let Some(batches) = batches.as_deref_mut() else {
                        return self.expire_late(now, budget, fired, on_expired);
                    };
                    fired += self.fire_due_whole(now, budget - fired, on_expired, batches);
                    continue;
                }
                Advanced::NothingDue => {
                    return Sweep {
                        fired,
                        more_due: false,
                    }
                }
            };
            if self.elapsed > now {
                self.pop_due_front(head);
                if let Some(expired) = self.nodes.arena.take_wheel_expired(head) {
                    on_expired(expired);
                    fired += 1;
                }
                continue;
            }
            if self.in_blocks() {
                fired += self.fire_due_blocks(head, budget - fired, on_expired);
            } else {
                let mut due = self.lists[DUE].linked();
                while fired < budget {
                    let Some(index) = due.pop_front(&mut self.nodes.store_mut()) else {
                        break;
                    };
                    // The list stays whole before the callback runs.
                    self.lists[DUE] = Chain::from_linked(due);
                    if let Some(expired) = self.nodes.arena.take_wheel_expired(index) {
                        on_expired(expired);
                        fired += 1;
                    }
                }
            }
            if fired < budget && self.elapsed == now {
                // The due list ran dry, and every timer left is due after `elapsed`.
                self.renew_check_from(now);
                return Sweep {
                    fired,
                    more_due: false,
                };
            }
        }
        Sweep {
            fired,
            more_due: self.has_expired(now),
        }
    }

    /// [`expire_some`](Self::expire_some) from its first slot that falls due whole on, with
    /// the batches to sort such slots in: made empty here, each zeroed when first needed
    /// (the large one only for a slot too big for the small one), and reused for the rest.
    #[inline(never)]
    fn expire_late<F: FnMut(Expired<T>)>(
        &mut self,
        now: Tick,
        budget: usize,
        fired: usize,
        on_expired: &mut F,
    ) -> Sweep {
        let mut batches = LateBatches::new();
        self.expire_some(now, budget, fired, on_expired, Some(&mut batches))
    }

    /// Fires the due list's timers from `head` (its first) on, at most `budget` of them, in the
    /// blocks layout, every one of them due; returns how many fired. Out of line: inlined into
    /// `expire_some`, it cost the per-tick expiry 1.7% more instructions at 1,000 timers (linked
    /// layout) and 1.3% at a million (blocks).
    #[inline(never)]
    fn fire_due_blocks(
        &mut self,
        mut head: u32,
        budget: usize,
        on_expired: &mut impl FnMut(Expired<T>),
    ) -> usize {
        let mut fired = 0;
        loop {
            self.pop_due_front(head);
            if let Some(expired) = self.nodes.arena.take_wheel_expired(head) {
                on_expired(expired);
                fired += 1;
            }
            if fired >= budget {
                return fired;
            }
            match self.due_front() {
                Some(next) => head = next,
                None => return fired,
            }
        }
    }

    /// Removes the first live timer of `list` (dropping stale cells before it), for draining.
    fn pop_front_of(&mut self, list: usize) -> Option<u32> {
        if !self.in_blocks() {
            let mut linked = self.lists[list].linked();
            let index = linked.pop_front(&mut self.nodes.store_mut());
            self.lists[list] = Chain::from_linked(linked);
            return index;
        }
        let cells = &mut self.nodes.store_mut();
        while let Some((index, at)) = self.lists[list].front(cells, &self.blocks) {
            self.lists[list].pop_front(cells, &mut self.blocks);
            if cells.is_live(index, at) {
                return Some(index);
            }
        }
        None
    }
}

/// Timers a linked-layout cascade files walking from the front alone before it walks from both
/// ends ([`BackHalf`]).
const ONE_ENDED_CASCADE: usize = 32;

/// Adds the timers of `list` (linked layout) to `batch` in list order, each with its deadline;
/// `false` if the batch cannot take them all (some may be in it then) or the list is empty.
///
/// Each timer's deadline and successor are read once, into the batch; sorting them on the stack
/// beats sorting by insertion into a list, which reads a node's deadline at every step. The list
/// is walked from both ends at once: each step's next node is known only once the last one's
/// links are read, and two walks keep two of those reads in flight instead of one.
#[inline(always)]
fn gather_linked<T, const N: usize>(
    cells: &Store<'_, T>,
    list: List,
    batch: &mut Batch<N>,
) -> bool {
    let (Some(mut front), Some(mut back)) = (list.head(cells), list.tail()) else {
        return false;
    };
    loop {
        if front == back {
            if !batch.push(front, cells.key(front)) {
                return false;
            }
            break;
        }
        if !batch.push(front, cells.key(front)) || !batch.push_from_end(back, cells.key(back)) {
            return false;
        }
        let after = cells.next(front);
        if after == back {
            break;
        }
        (front, back) = (after, cells.prev(back));
    }
    batch.join_ends();
    true
}

/// Where [`TimerWheelOn::advance_or_gather`] stopped.
enum Advanced {
    /// This timer, due, heads the due list.
    Head(u32),
    /// The earliest occupied slot (above level 0) falls due whole: still on the wheel, for
    /// [`TimerWheelOn::fire_due_whole`]. (Named by no payload: a small enum comes back in
    /// registers, which the per-tick expiry, where this never happens, gains from.)
    DueWhole,
    /// Nothing is due.
    NothingDue,
}

/// The timers of a gathered batch not yet fired, from `next` on: filed on the due list when
/// this is dropped, so that none is lost if the expiry callback panics.
struct BatchRest<'a, T, S: Storage<WheelSlot<T>>, C: Storage<WheelCells>, const N: usize> {
    wheel: &'a mut TimerWheelOn<T, S, C>,
    batch: &'a Batch<N>,
    next: usize,
}

impl<T, S: Storage<WheelSlot<T>>, C: Storage<WheelCells>, const N: usize> Drop
    for BatchRest<'_, T, S, C, N>
{
    fn drop(&mut self) {
        self.wheel.file_on_due(self.batch, self.next);
    }
}

impl<T, S: Storage<WheelSlot<T>>, C: Storage<WheelCells>> TimerQueue<T> for TimerWheelOn<T, S, C> {
    fn insert(&mut self, deadline: Tick, value: T) -> Result<TimerId, Full<T>> {
        if self.is_full() {
            return Err(Full(value));
        }
        if self.blocks.init(self.capacity()) && self.in_blocks() {
            self.clear_live();
        }
        if self.in_blocks() {
            if !self.make_room() {
                return Err(Full(value));
            }
            if deadline >= self.elapsed {
                return self.insert_on_level_in_blocks(deadline, value);
            }
        }
        let id = self
            .nodes
            .arena
            .allocate(value, |value, generation| {
                WheelNode::new(deadline, 0, generation, value)
            })
            .map_err(Full)?;
        self.file(id.slot(), deadline);
        Ok(id)
    }

    fn cancel(&mut self, id: TimerId) -> Result<T, StaleTimer> {
        // Freed first, in one look at the handle: taking it off its list needs only the
        // deadline and the list, and the cells (the handle is not read again).
        let node = self.nodes.arena.release_live(id).ok_or(StaleTimer)?;
        if !self.in_blocks() {
            self.unfile_linked(id.slot(), node.deadline(), node.position);
        } else {
            self.unfile_blocks(node.deadline());
        }
        Ok(node.value)
    }

    fn reschedule(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        let node = self.nodes.arena.live_mut(id).ok_or(StaleTimer)?;
        let (old, filed_on) = (node.deadline(), node.position);
        node.set_deadline(deadline);
        let index = id.slot();
        if self.in_blocks() {
            self.reschedule_in_blocks(index, old, deadline);
        } else {
            // Off its list and onto the new one's back, even when they are one: a branch on
            // "same list" (an idle touch stays in its slot about three times in four)
            // mispredicts often enough to cost more than the relinking it saves.
            self.unfile_linked(index, old, filed_on);
            self.file_linked(index, deadline);
        }
        Ok(())
    }

    fn deadline(&self, id: TimerId) -> Option<Tick> {
        self.nodes.arena.live(id).map(WheelNode::deadline)
    }

    fn get(&self, id: TimerId) -> Option<&T> {
        self.nodes.arena.live(id).map(|node| &node.value)
    }

    fn get_mut(&mut self, id: TimerId) -> Option<&mut T> {
        self.nodes.arena.live_mut(id).map(|node| &mut node.value)
    }

    fn next_deadline(&self) -> Option<Tick> {
        if self.is_empty() {
            return None;
        }
        let cells = &self.nodes.store();
        let due = if self.in_blocks() {
            self.lists[DUE]
                .cells_in_order(cells, &self.blocks)
                .find_map(|(index, at)| live_deadline(cells, index, at))
        } else {
            self.lists[DUE]
                .linked()
                .head(cells)
                .map(|head| cells.key(head))
        };
        due.or_else(|| self.next_expiration().map(|next| next.start))
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Expired<T>> {
        if self.nothing_due_by(now) {
            return None;
        }
        let index = self.advance(now)?;
        self.pop_due_front(index);
        self.nodes.arena.take_wheel_expired(index)
    }

    /// As [`TimerQueue::expire`]; a poll that finds nothing due returns without a call.
    #[inline]
    fn expire(&mut self, now: Tick, budget: usize, mut on_expired: impl FnMut(Expired<T>)) -> Sweep
    where
        Self: Sized,
    {
        if self.nothing_due_by(now) {
            return Sweep {
                fired: 0,
                more_due: false,
            };
        }
        self.expire_some(now, budget, 0, &mut on_expired, None)
    }

    fn has_expired(&mut self, now: Tick) -> bool {
        !self.nothing_due_by(now) && self.advance(now).is_some()
    }

    fn pop_any(&mut self) -> Option<Expired<T>> {
        let mut found = self.pop_front_of(DUE);
        for number in 0..LEVELS {
            if found.is_some() {
                break;
            }
            for slot in self.levels[number].occupied() {
                let list = number * SLOTS + slot;
                found = self.pop_front_of(list);
                let emptied = if self.in_blocks() {
                    found.is_none() || self.remove_live(list)
                } else {
                    self.lists[list].is_empty()
                };
                if emptied {
                    self.levels[number].vacate(slot);
                }
                if found.is_some() {
                    break;
                }
            }
        }
        let expired = self.nodes.arena.take_wheel_expired(found?);
        if self.nodes.arena.len() == 0 && self.in_blocks() {
            // Nothing pending: drop whatever stale cells remain, all blocks free again.
            self.lists = [Chain::EMPTY; LISTS];
            self.levels = [Level::EMPTY; LEVELS];
            self.blocks.reset();
            self.clear_live();
        }
        expired
    }

    fn len(&self) -> usize {
        self.nodes.arena.len()
    }

    fn capacity(&self) -> usize {
        self.nodes.capacity().min(MAX_TIMERS)
    }

    fn is_full(&self) -> bool {
        self.nodes.arena.len() >= self.capacity()
    }
}
