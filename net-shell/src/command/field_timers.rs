//! The timers of hash fields with deadlines: one timer on timer-core's heap per hash, at the
//! tick after the earliest deadline of its fields (the deadlines themselves live with the
//! fields, in the hash's value).
//!
//! Two memories, one interface, as the rest of the server has ([`Memory`]):
//!
//! | memory | capacity | finding a hash's timer |
//! | --- | --- | --- |
//! | lent, [`FieldTimerArrays`] (a board's `static`) | fixed: that many hashes with field deadlines at once | a scan of the keys held beside the timers |
//! | allocated (`alloc`, a host) | grows, twice the size when full | an ordered map of the keys |
//!
//! A command that gives a field a deadline asks first whether its hash can have a timer
//! ([`FieldTimers::has_room_for`]): fixed memory that is full (after the timers of hashes that
//! no longer have deadlines are given back) refuses it before anything changes, so no field
//! ever has a deadline without a timer.

#[cfg(feature = "alloc")]
use alloc::{boxed::Box, collections::BTreeMap};

use timer_core::{HeapSlot, Tick, TimerHeapOn, TimerId, TimerQueue};

use crate::memory::Memory;

/// Fixed memory for `N` field timers (`N` hashes with field deadlines at once), each with
/// room for a key of `KEY_LEN` bytes (at least the store's longest key, which
/// [`Server::new`](crate::Server::new) checks), lent with
/// [`ServerMemory::with_field_timers`](crate::ServerMemory::with_field_timers). All zero bytes:
/// a `static` of it lands in `.bss`.
///
/// # Examples
///
/// ```
/// use net_shell::command::FieldTimerArrays;
///
/// let timers: FieldTimerArrays<16, 64> = FieldTimerArrays::new();
/// // 16 timers, a 64-byte key each, and their heap and bookkeeping:
/// assert!(core::mem::size_of::<FieldTimerArrays<16, 64>>() < 16 * (64 + 64));
/// ```
pub struct FieldTimerArrays<const N: usize, const KEY_LEN: usize> {
    heap: [HeapSlot<u16>; N],
    armed: [ArmedKey; N],
    keys: [[u8; KEY_LEN]; N],
}

impl<const N: usize, const KEY_LEN: usize> FieldTimerArrays<N, KEY_LEN> {
    /// Slots are numbered in a `u16`.
    const FITS: () = assert!(N <= u16::MAX as usize, "at most 65,535 field timers");

    /// Empty memory.
    pub const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::FITS;
        Self {
            heap: [const { HeapSlot::new() }; N],
            armed: [ArmedKey::FREE; N],
            keys: [[0; KEY_LEN]; N],
        }
    }

    /// The memory as the slices [`FieldTimers`] run over.
    pub(crate) fn lend(&mut self) -> FieldTimerMemory<'_> {
        FieldTimerMemory {
            heap: &mut self.heap,
            armed: &mut self.armed,
            keys: self.keys.as_flattened_mut(),
            key_len: KEY_LEN,
        }
    }
}

impl<const N: usize, const KEY_LEN: usize> Default for FieldTimerArrays<N, KEY_LEN> {
    fn default() -> Self {
        Self::new()
    }
}

/// [`FieldTimerArrays`] with their sizes erased.
pub(crate) struct FieldTimerMemory<'a> {
    heap: &'a mut [HeapSlot<u16>],
    armed: &'a mut [ArmedKey],
    keys: &'a mut [u8],
    /// Room for each key, in `keys`.
    key_len: usize,
}

impl FieldTimerMemory<'_> {
    /// The longest key a timer holds.
    pub(crate) fn key_len(&self) -> usize {
        self.key_len
    }
}

/// Which hash a fixed slot's timer is for.
#[derive(Clone, Copy)]
struct ArmedKey {
    /// The slot's timer (`None`: no timer).
    id: Option<TimerId>,
    /// The key's length, its bytes at the slot's place in the key table.
    len: u16,
    /// The timer fired and the key is still in use ([`FieldTimers::rearm`] ends that).
    fired: bool,
}

impl ArmedKey {
    const FREE: Self = Self {
        id: None,
        len: 0,
        fired: false,
    };

    fn is_free(&self) -> bool {
        self.id.is_none() && !self.fired
    }
}

/// A timer that fired: its hash's key is [`FieldTimers::key`] until it is handed back to
/// [`FieldTimers::rearm`].
pub(crate) struct Fired(FiredKey);

enum FiredKey {
    /// The slot of fixed memory.
    Slot(usize),
    #[cfg(feature = "alloc")]
    Key(Box<[u8]>),
}

/// The field timers of a server: fixed (lent) or growing (allocated). See the module's table.
pub struct FieldTimers<'a>(Timers<'a>);

enum Timers<'a> {
    Fixed(FixedTimers<'a>),
    #[cfg(feature = "alloc")]
    Growing(GrowingTimers),
}

impl<'a> FieldTimers<'a> {
    /// No field timers: every field deadline is refused (fixed memory of no timers).
    #[cfg_attr(feature = "alloc", allow(dead_code))]
    pub(crate) fn none() -> Self {
        Self::lent(FieldTimerMemory {
            heap: &mut [],
            armed: &mut [],
            keys: &mut [],
            key_len: 0,
        })
    }

    /// Timers that grow as hashes get deadlines, from the global allocator (64 to start with).
    #[cfg(feature = "alloc")]
    pub(crate) fn growing() -> Self {
        Self(Timers::Growing(GrowingTimers::new()))
    }

    /// Timers in fixed memory: as many hashes with field deadlines as `memory` has slots.
    pub(crate) fn lent(memory: FieldTimerMemory<'a>) -> Self {
        let capacity = memory.armed.len().min(memory.heap.len());
        let FieldTimerMemory {
            heap,
            armed,
            keys,
            key_len,
        } = memory;
        for slot in armed.iter_mut() {
            *slot = ArmedKey::FREE;
        }
        Self(Timers::Fixed(FixedTimers {
            heap: TimerHeapOn::with_storage(Memory::from(heap)),
            armed: &mut armed[..capacity],
            keys,
            key_len,
        }))
    }

    /// The most hashes with field deadlines at once (`None`: the timers grow).
    pub(crate) fn capacity(&self) -> Option<usize> {
        match &self.0 {
            Timers::Fixed(fixed) => Some(fixed.armed.len()),
            #[cfg(feature = "alloc")]
            Timers::Growing(_) => None,
        }
    }

    /// Whether hash `key` can be given a field deadline: it has a timer, or one is free. Where
    /// none is, the timers of hashes `needs_timer` says have no deadline any more (deleted,
    /// renamed, their deadlines removed) are given back first.
    pub(crate) fn has_room_for(
        &mut self,
        key: &[u8],
        needs_timer: impl FnMut(&[u8]) -> bool,
    ) -> bool {
        match &mut self.0 {
            Timers::Fixed(fixed) => fixed.has_room_for(key, needs_timer),
            #[cfg(feature = "alloc")]
            Timers::Growing(_) => true,
        }
    }

    /// A field of hash `key` has deadline `deadline` (its last live tick): the hash's timer
    /// fires at the tick after, or earlier if another field's deadline comes first.
    ///
    /// # Errors
    ///
    /// [`Full`] where the memory is fixed and no timer is free (ask
    /// [`has_room_for`](Self::has_room_for) first).
    pub(crate) fn add(&mut self, key: &[u8], deadline: Tick) -> Result<(), Full> {
        let at = deadline.saturating_add(1);
        match &mut self.0 {
            Timers::Fixed(fixed) => fixed.add(key, at),
            #[cfg(feature = "alloc")]
            Timers::Growing(growing) => {
                growing.add(key, at);
                Ok(())
            }
        }
    }

    /// The next hash whose timer is due by `now`: its timer is gone until
    /// [`rearm`](Self::rearm).
    pub(crate) fn pop_expired(&mut self, now: Tick) -> Option<Fired> {
        match &mut self.0 {
            Timers::Fixed(fixed) => fixed.pop_expired(now).map(FiredKey::Slot),
            #[cfg(feature = "alloc")]
            Timers::Growing(growing) => growing.pop_expired(now).map(FiredKey::Key),
        }
        .map(Fired)
    }

    /// The key of the hash whose timer fired.
    pub(crate) fn key<'s>(&'s self, fired: &'s Fired) -> &'s [u8] {
        match (&self.0, &fired.0) {
            (Timers::Fixed(fixed), FiredKey::Slot(slot)) => fixed.key(*slot),
            #[cfg(feature = "alloc")]
            (_, FiredKey::Key(key)) => key,
            #[cfg(feature = "alloc")]
            (Timers::Growing(_), FiredKey::Slot(_)) => &[],
        }
    }

    /// Arms the fired hash's timer again for its fields' next deadline `next` (its last live
    /// tick), or gives its timer back (`None`). The hash had a timer a moment ago, so it has
    /// room for one.
    pub(crate) fn rearm(&mut self, fired: Fired, next: Option<Tick>) {
        match (&mut self.0, fired.0) {
            (Timers::Fixed(fixed), FiredKey::Slot(slot)) => fixed.rearm(slot, next),
            #[cfg(feature = "alloc")]
            (Timers::Growing(growing), FiredKey::Key(key)) => {
                if let Some(next) = next {
                    growing.add(&key, next.saturating_add(1));
                }
            }
            #[cfg(feature = "alloc")]
            _ => {}
        }
    }

    /// When the next timer is due.
    pub(crate) fn next_deadline(&self) -> Option<Tick> {
        match &self.0 {
            Timers::Fixed(fixed) => fixed.heap.next_deadline(),
            #[cfg(feature = "alloc")]
            Timers::Growing(growing) => growing.heap.next_deadline(),
        }
    }

    /// How many hashes have a timer.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match &self.0 {
            Timers::Fixed(fixed) => fixed.heap.len(),
            #[cfg(feature = "alloc")]
            Timers::Growing(growing) => growing.heap.len(),
        }
    }
}

/// Every field timer of fixed memory is in use: a board's limit of hashes with field
/// deadlines at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Full;

/// Fixed field timers: a heap of slot numbers, and per slot its timer and key.
struct FixedTimers<'a> {
    heap: TimerHeapOn<u16, Memory<'a, HeapSlot<u16>>>,
    armed: &'a mut [ArmedKey],
    keys: &'a mut [u8],
    key_len: usize,
}

impl FixedTimers<'_> {
    fn key(&self, slot: usize) -> &[u8] {
        let at = slot * self.key_len;
        let len = self.armed.get(slot).map_or(0, |a| usize::from(a.len));
        self.keys.get(at..at + len).unwrap_or_default()
    }

    /// The slot whose timer is for `key`.
    fn find(&self, key: &[u8]) -> Option<usize> {
        (0..self.armed.len()).find(|&slot| self.armed[slot].id.is_some() && self.key(slot) == key)
    }

    fn has_room_for(&mut self, key: &[u8], mut needs_timer: impl FnMut(&[u8]) -> bool) -> bool {
        if self.find(key).is_some() {
            return true;
        }
        if key.len() > self.key_len {
            return false;
        }
        if self.armed.iter().any(ArmedKey::is_free) {
            return true;
        }
        let mut freed = false;
        for slot in 0..self.armed.len() {
            let Some(id) = self.armed[slot].id else {
                continue;
            };
            if !needs_timer(self.key(slot)) {
                let _ = self.heap.cancel(id);
                self.armed[slot] = ArmedKey::FREE;
                freed = true;
            }
        }
        freed
    }

    fn add(&mut self, key: &[u8], at: Tick) -> Result<(), Full> {
        if let Some(slot) = self.find(key) {
            let Some(id) = self.armed[slot].id else {
                return Err(Full);
            };
            if self
                .heap
                .deadline(id)
                .is_some_and(|armed_at| armed_at <= at)
            {
                return Ok(());
            }
            return self.heap.reschedule(id, at).map_err(|_| Full);
        }
        let len = u16::try_from(key.len()).map_err(|_| Full)?;
        if key.len() > self.key_len {
            return Err(Full);
        }
        let slot = self.armed.iter().position(ArmedKey::is_free).ok_or(Full)?;
        let number = u16::try_from(slot).map_err(|_| Full)?;
        let id = self.heap.insert(at, number).map_err(|_| Full)?;
        let start = slot * self.key_len;
        self.keys[start..start + key.len()].copy_from_slice(key);
        self.armed[slot] = ArmedKey {
            id: Some(id),
            len,
            fired: false,
        };
        Ok(())
    }

    fn pop_expired(&mut self, now: Tick) -> Option<usize> {
        let slot = usize::from(self.heap.pop_expired(now)?.value);
        if let Some(armed) = self.armed.get_mut(slot) {
            armed.id = None;
            armed.fired = true;
        }
        Some(slot)
    }

    fn rearm(&mut self, slot: usize, next: Option<Tick>) {
        let Some(armed) = self.armed.get_mut(slot) else {
            return;
        };
        armed.fired = false;
        let number = u16::try_from(slot).unwrap_or(u16::MAX);
        // The slot's own timer just left the heap: there is room for it again.
        armed.id = next.and_then(|next| self.heap.insert(next.saturating_add(1), number).ok());
    }
}

/// Which hash a growing heap's timer is for.
#[cfg(feature = "alloc")]
struct GrowingTimer {
    key: Box<[u8]>,
}

/// Growing field timers: a heap that doubles when full, and each hash's timer in a map.
#[cfg(feature = "alloc")]
struct GrowingTimers {
    heap: TimerHeapOn<GrowingTimer, Box<[HeapSlot<GrowingTimer>]>>,
    /// Each hash's timer and when it fires.
    armed: BTreeMap<Box<[u8]>, (TimerId, Tick)>,
}

#[cfg(feature = "alloc")]
impl GrowingTimers {
    fn new() -> Self {
        Self {
            heap: TimerHeapOn::with_capacity(64),
            armed: BTreeMap::new(),
        }
    }

    fn add(&mut self, key: &[u8], at: Tick) {
        if let Some(&(id, armed_at)) = self.armed.get(key) {
            if armed_at <= at {
                return;
            }
            if self.heap.reschedule(id, at).is_ok() {
                self.armed.insert(key.into(), (id, at));
                return;
            }
        }
        let mut timer = GrowingTimer { key: key.into() };
        loop {
            match self.heap.insert(at, timer) {
                Ok(id) => {
                    self.armed.insert(key.into(), (id, at));
                    return;
                }
                Err(full) => {
                    timer = full.0;
                    self.grow();
                }
            }
        }
    }

    /// Files every timer anew in a heap twice the size.
    fn grow(&mut self) {
        let mut bigger = TimerHeapOn::with_capacity(2 * self.heap.capacity().max(1));
        for old in self.heap.drain() {
            let deadline = old.deadline;
            let key = old.value.key.clone();
            if let Ok(id) = bigger.insert(deadline, old.value) {
                self.armed.insert(key, (id, deadline));
            }
        }
        self.heap = bigger;
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Box<[u8]>> {
        let expired = self.heap.pop_expired(now)?;
        self.armed.remove(&expired.value.key);
        Some(expired.value.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash has one timer however many of its fields have deadlines, due the tick after
    /// the earliest; a later deadline leaves it, an earlier one moves it. Fixed and growing
    /// memory alike.
    fn one_timer_per_hash(mut timers: FieldTimers<'_>) {
        let mut rng = crate::xorshift::Xorshift::new(0x9E37_79B9_7F4A_7C15);
        let mut earliest = Tick::MAX;
        for _ in 0..10_000 {
            let deadline = 1_000 + rng.below(1_000_000);
            earliest = earliest.min(deadline);
            timers.add(b"k", deadline).unwrap();
            assert_eq!(timers.len(), 1);
            assert_eq!(timers.next_deadline(), Some(earliest + 1));
        }
        assert!(timers.pop_expired(earliest).is_none(), "never early");
        let fired = timers.pop_expired(earliest + 1).unwrap();
        assert_eq!(timers.key(&fired), b"k");
        timers.rearm(fired, None);
        assert_eq!(timers.len(), 0);
        assert_eq!(timers.next_deadline(), None);
    }

    #[test]
    fn a_hash_has_one_timer_whatever_its_fields() {
        let mut arrays: FieldTimerArrays<4, 8> = FieldTimerArrays::new();
        one_timer_per_hash(FieldTimers::lent(arrays.lend()));
        #[cfg(feature = "alloc")]
        one_timer_per_hash(FieldTimers::growing());
    }

    /// Fixed memory of 4 timers holds 4 hashes' timers; a fifth hash is refused, and the
    /// hashes there keep theirs. A hash that no longer needs its timer gives it back when room
    /// is asked for, and a fired timer re-armed keeps its slot.
    #[test]
    fn fixed_timers_refuse_a_fifth_hash_and_reclaim_unneeded_ones() {
        let mut arrays: FieldTimerArrays<4, 8> = FieldTimerArrays::new();
        let mut timers = FieldTimers::lent(arrays.lend());
        assert_eq!(timers.capacity(), Some(4));
        for i in 0..4u64 {
            let key = [b'k', b'0' + i as u8];
            assert!(timers.has_room_for(&key, |_| true));
            timers.add(&key, 100 + i).unwrap();
        }
        assert!(timers.has_room_for(b"k2", |_| true), "its own timer");
        assert!(!timers.has_room_for(b"k9", |_| true));
        assert_eq!(timers.add(b"k9", 50), Err(Full));
        assert_eq!(timers.len(), 4);
        assert_eq!(timers.next_deadline(), Some(101));
        // Too long a key for the memory's room.
        assert!(!timers.has_room_for(b"a key longer than 8", |_| false));

        // k1 was deleted: its timer is given back for k9.
        assert!(timers.has_room_for(b"k9", |key| key != b"k1"));
        timers.add(b"k9", 50).unwrap();
        assert_eq!(timers.len(), 4);

        let mut fired = std::vec::Vec::new();
        while let Some(f) = timers.pop_expired(1_000) {
            let key = timers.key(&f).to_vec();
            // k0 has more fields with deadlines: its timer comes back, in the same slot.
            let next = (key == b"k0").then_some(2_000);
            timers.rearm(f, next);
            fired.push(key);
        }
        assert_eq!(fired, [&b"k9"[..], b"k0", b"k2", b"k3"]);
        assert_eq!(timers.len(), 1);
        assert_eq!(timers.next_deadline(), Some(2_001));
        let f = timers.pop_expired(2_001).unwrap();
        assert_eq!(timers.key(&f), b"k0");
        timers.rearm(f, None);
        assert!(timers.has_room_for(b"k9", |_| true));
    }

    #[test]
    fn no_memory_refuses_every_deadline() {
        let mut timers = FieldTimers::none();
        assert!(!timers.has_room_for(b"", |_| true));
        assert_eq!(timers.add(b"", 1), Err(Full));
        assert_eq!(timers.capacity(), Some(0));
    }

    /// What a hash's timer costs in fixed memory beside its key's room: a heap slot and its
    /// bookkeeping.
    #[test]
    fn a_fixed_timer_costs_this_much_beside_its_key() {
        let slot = core::mem::size_of::<HeapSlot<u16>>() + core::mem::size_of::<ArmedKey>();
        std::println!("fixed field timer: {slot} bytes plus its key's room");
        assert!(slot <= 48, "{slot}");
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn a_full_heap_grows_and_keeps_its_timers() {
        let mut timers = FieldTimers::growing();
        for i in 0..200u64 {
            timers.add(&i.to_le_bytes(), 1_000 - i).unwrap();
        }
        assert_eq!(timers.len(), 200);
        // Moved earlier after the heap grew: the map follows the timers filed anew.
        timers.add(&5u64.to_le_bytes(), 10).unwrap();
        assert_eq!(timers.len(), 200);
        assert_eq!(timers.next_deadline(), Some(11));
        let mut fired = std::vec::Vec::new();
        while let Some(f) = timers.pop_expired(2_000) {
            fired.push(u64::from_le_bytes(timers.key(&f).try_into().unwrap()));
            timers.rearm(f, None);
        }
        assert_eq!(fired.len(), 200);
        assert_eq!(fired[0], 5);
        assert_eq!(fired[1], 199, "then the earliest deadline, 801");
        let Timers::Growing(growing) = &timers.0 else {
            unreachable!()
        };
        assert!(growing.armed.is_empty());
    }

    /// What a hash's timer costs in growing memory: one heap slot and one entry of the armed
    /// map, each with a copy of the key, whatever the number of its fields with deadlines.
    #[cfg(feature = "alloc")]
    #[test]
    fn a_hash_timer_slot_is_this_large() {
        let slot = core::mem::size_of::<HeapSlot<GrowingTimer>>();
        let armed = core::mem::size_of::<(Box<[u8]>, (TimerId, Tick))>();
        std::println!("timer slot: {slot} bytes, armed entry: {armed} bytes, plus two key copies");
        assert!(slot <= 48, "{slot}");
        assert!(armed <= 48, "{armed}");
    }
}
