//! How a large hash is kept as one value in the store, so that a field is found, set or
//! removed in O(1) (amortized), whatever the hash's size.
//!
//! A hash starts packed ([`crate::store::packed`]: fields, values and deadlines in the order
//! they were added, found by a scan), as Redis' listpack; past Redis' thresholds (more than
//! 512 fields, or a field or value over 64 bytes) it is written in this encoding for good, as
//! Redis converts a listpack to a hash table.
//!
//! # Layout
//!
//! A 36-byte header (the tag `ff ff ff ff`, which no packed value starts with; then, as
//! little-endian `u32`s, the fields, the fields with a deadline, the index's slots, the slots
//! left by removed fields, where the entries end, and the bytes of removed entries; then, as a
//! little-endian `u64`, a tick no field's deadline is before, [`Fields::earliest`]), the
//! index, the entries, and room. The index is open addressing with linear probing over a
//! power of two of `u32` slots, each 0 (empty), 1 (a removed field's) or the offset of a
//! field's entry; the slot is chosen by keyed SipHash-1-3 of the field under the store's
//! [`HashKey`](super::HashKey), so clients cannot choose fields that collide. An entry is a
//! state byte (1 live, 0 removed), the field and the value, each after its LEB128 length, and
//! the deadline: the last tick the field lives through, 8 bytes little-endian, 0 for none (a
//! deadline is always after the tick it was set at, so never 0). A deadline is given or taken
//! in place: a field's time to live costs no byte beyond those 8.
//!
//! # Costs
//!
//! A value of the same size is written over the old one; any other is appended into the room
//! and the old entry marked removed. When the room, or the index's slots, run out, the live
//! entries are written anew into a block with twice the slots they need and half their bytes
//! again as room ([`capacity_for`]), so each change costs O(1) amortized. A field costs its
//! bytes, 11 bytes of lengths, state and deadline, 8 to 16 bytes of index, and its share of the
//! room.

use super::leb128;
use core::hash::Hasher;

use siphasher::sip::SipHasher13;

/// The first bytes of a value in this encoding.
pub const TAG: [u8; 4] = [0xff; 4];
/// Bytes before the index.
pub const HEADER: usize = 36;
const EMPTY: u32 = 0;
const REMOVED: u32 = 1;
/// Header fields, by offset.
const COUNT: usize = 4;
const VOLATILE: usize = 8;
const SLOTS: usize = 12;
const GONE: usize = 16;
const END: usize = 20;
const DEAD: usize = 24;
/// A tick no field's deadline is before (`u64`).
const EARLIEST: usize = 28;
/// The bytes of a field's deadline in its entry: the tick, or 0 for none.
const DEADLINE: usize = 8;

/// Whether `value` is in this encoding.
pub fn is_indexed(value: &[u8]) -> bool {
    value.get(..4) == Some(&TAG[..])
}

/// The keyed hash the index places fields by.
#[derive(Clone, Copy, Debug, Default)]
pub struct FieldHasher(pub(crate) [u8; 16]);

impl FieldHasher {
    /// `field`'s hash.
    pub fn hash(&self, field: &[u8]) -> u32 {
        let mut hasher = SipHasher13::new_with_key(&self.0);
        hasher.write(field);
        hasher.finish() as u32
    }
}

/// A field's entry: field, value, deadline bytes (empty or 8).
pub type Entry<'a> = (&'a [u8], &'a [u8], &'a [u8]);

/// A hash in this encoding, read in place.
///
/// # Examples
///
/// ```
/// use net_shell::store::fields::{capacity_for, entry_len, FieldHasher, Fields, FieldsMut, FieldsWriter};
///
/// let hasher = FieldHasher::default();
/// let (slots, len) = capacity_for(1, entry_len(b"f", b"v"));
/// let mut bytes = vec![0; len];
/// let mut writer = FieldsWriter::new(&mut bytes, slots);
/// writer.push(&hasher, b"f", b"v", b"");
/// writer.finish();
/// assert_eq!(FieldsMut::new(&mut bytes).set(&hasher, b"g", b"w", b""), Some(true));
/// let fields = Fields::new(&bytes);
/// assert_eq!(fields.len(), 2);
/// assert_eq!(fields.find(&hasher, b"g"), Some((&b"g"[..], &b"w"[..], &b""[..])));
/// assert_eq!(fields.entries().count(), 2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Fields<'a> {
    bytes: &'a [u8],
}

impl<'a> Fields<'a> {
    /// Reads `bytes` (a value in this encoding; a malformed one reads as fewer fields).
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// How many fields (some may be past their deadline, not yet removed).
    pub fn len(&self) -> usize {
        read_u32(self.bytes, COUNT)
    }

    /// Whether it has no field.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many fields have a deadline.
    pub fn volatile(&self) -> usize {
        read_u32(self.bytes, VOLATILE)
    }

    /// A tick no field's deadline is before (`u64::MAX` when no field has one): the earliest
    /// deadline itself after the hash is written anew or swept
    /// ([`remove_where`](FieldsMut::remove_where), [`FieldsMut::note_earliest`]), and in between
    /// the earliest of those and every deadline given since (a deadline removed leaves it as it
    /// is). So while `earliest() >= now` no field is past its deadline, and [`len`](Self::len)
    /// counts live fields only: `HLEN` in O(1).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::fields::{capacity_for, entry_len, FieldHasher, Fields, FieldsMut, FieldsWriter};
    ///
    /// let hasher = FieldHasher::default();
    /// let (slots, len) = capacity_for(2, 2 * entry_len(b"f", b"v"));
    /// let mut bytes = vec![0; len];
    /// let mut writer = FieldsWriter::new(&mut bytes, slots);
    /// writer.push(&hasher, b"f", b"v", &50u64.to_le_bytes());
    /// writer.push(&hasher, b"g", b"v", &90u64.to_le_bytes());
    /// writer.finish();
    /// assert_eq!(Fields::new(&bytes).earliest(), 50);
    /// let mut fields = FieldsMut::new(&mut bytes);
    /// fields.set_meta(&hasher, b"f", b""); // f's deadline goes: 50 stays a bound
    /// assert_eq!(Fields::new(&bytes).earliest(), 50);
    /// FieldsMut::new(&mut bytes).note_earliest();
    /// assert_eq!(Fields::new(&bytes).earliest(), 90);
    /// ```
    pub fn earliest(&self) -> u64 {
        read_u64(self.bytes, EARLIEST)
    }

    /// How many fields are live at `now` (a field lives through its deadline), when that is
    /// known in O(1): no field has a deadline, or none is before `now`
    /// ([`earliest`](Self::earliest)). `None` while some field may be past its deadline and
    /// not yet removed: the caller counts.
    pub fn live_len(&self, now: u64) -> Option<usize> {
        (self.volatile() == 0 || self.earliest() >= now).then(|| self.len())
    }

    /// Every field's entry, in the order they were written.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'a>> {
        let bytes = self.bytes;
        let mut at = slot_at(read_u32(bytes, SLOTS));
        let end = read_u32(bytes, END).min(bytes.len());
        core::iter::from_fn(move || loop {
            if at >= end {
                return None;
            }
            let (live, entry, next) = read_entry(bytes, at)?;
            at = next;
            if live {
                return Some(entry);
            }
        })
    }

    /// Whether `fields` more fields and `bytes` more bytes of entries fit without writing the
    /// hash anew.
    pub fn has_room(&self, fields: usize, bytes: usize) -> bool {
        let used = read_u32(self.bytes, COUNT) + read_u32(self.bytes, GONE) + fields;
        let room = self.bytes.len().saturating_sub(read_u32(self.bytes, END));
        used.saturating_mul(4) <= read_u32(self.bytes, SLOTS).saturating_mul(3) && room >= bytes
    }

    /// `field`'s entry.
    pub fn find(&self, hasher: &FieldHasher, field: &[u8]) -> Option<Entry<'a>> {
        match probe(self.bytes, hasher.hash(field), field) {
            Probe::Found { offset, .. } => read_entry(self.bytes, offset).map(|(_, e, _)| e),
            _ => None,
        }
    }
}

impl<'a> Fields<'a> {
    /// A step of a scan over the fields (`HSCAN`): from `cursor` (0 to start), visits home
    /// slots in Redis' reverse-binary cursor order, giving `each` the entries whose home slot
    /// it is, until `each` has had `count` entries or `10 * count` slots were visited; the
    /// cursor to go on from, 0 when the scan is complete. As with Redis' `dictScan`, a field
    /// present from the scan's start to its end is given at least once, even if the hash is
    /// written anew with more or fewer slots between steps (a field is found from its home slot,
    /// `hash & (slots - 1)`, and slots are a power of two); some may be given twice.
    pub fn scan(
        &self,
        hasher: &FieldHasher,
        cursor: u64,
        count: usize,
        mut each: impl FnMut(Entry<'a>),
    ) -> u64 {
        let slots = read_u32(self.bytes, SLOTS);
        if slots == 0 || !slots.is_power_of_two() {
            return 0;
        }
        let mask = (slots - 1) as u64;
        let (mut cursor, mut given, mut visited) = (cursor, 0, 0);
        loop {
            let home = (cursor & mask) as usize;
            let mut i = home;
            // The entries of `home` lie in the run of used slots from it.
            for _ in 0..slots {
                match read_u32(self.bytes, slot_at(i)) as u32 {
                    EMPTY => break,
                    REMOVED => {}
                    offset => {
                        if let Some((_, entry, _)) = read_entry(self.bytes, offset as usize) {
                            if hasher.hash(entry.0) as usize & (slots - 1) == home {
                                each(entry);
                                given += 1;
                            }
                        }
                    }
                }
                i = (i + 1) & (slots - 1);
            }
            // Redis' cursor step: increment the reversed bits above the mask.
            cursor |= !mask;
            cursor = cursor.reverse_bits().wrapping_add(1).reverse_bits();
            visited += 1;
            if cursor == 0 || given >= count || visited >= count.saturating_mul(10) {
                return cursor;
            }
        }
    }
}

/// What probing the index for a field found.
enum Probe {
    /// Its entry, at slot `slot`.
    Found { slot: usize, offset: usize },
    /// Not there: the slot to put it in.
    Absent { slot: usize },
    /// Not there, and no slot is free (a malformed value).
    Full,
}

fn probe(bytes: &[u8], hash: u32, field: &[u8]) -> Probe {
    let slots = read_u32(bytes, SLOTS);
    if slots == 0 || !slots.is_power_of_two() {
        return Probe::Full;
    }
    let mask = slots - 1;
    let mut i = hash as usize & mask;
    let mut free = None;
    for _ in 0..slots {
        match read_u32(bytes, slot_at(i)) as u32 {
            EMPTY => {
                return Probe::Absent {
                    slot: free.unwrap_or(i),
                }
            }
            REMOVED => {
                free.get_or_insert(i);
            }
            offset => {
                let offset = offset as usize;
                if read_entry(bytes, offset).is_some_and(|(_, (f, _, _), _)| f == field) {
                    return Probe::Found { slot: i, offset };
                }
            }
        }
        i = (i + 1) & mask;
    }
    free.map_or(Probe::Full, |slot| Probe::Absent { slot })
}

/// A hash in this encoding changed in place.
pub struct FieldsMut<'a> {
    bytes: &'a mut [u8],
}

impl<'a> FieldsMut<'a> {
    /// Changes `bytes`, a value in this encoding, in place.
    pub fn new(bytes: &'a mut [u8]) -> Self {
        Self { bytes }
    }

    /// Whether `fields` more fields and `bytes` more bytes of entries fit without writing the
    /// hash anew (then every [`set`](Self::set) of them succeeds).
    pub fn has_room(&self, fields: usize, bytes: usize) -> bool {
        Fields::new(self.bytes).has_room(fields, bytes)
    }

    /// `field`'s entry.
    pub fn find(&self, hasher: &FieldHasher, field: &[u8]) -> Option<Entry<'_>> {
        Fields::new(self.bytes).find(hasher, field)
    }

    /// Gives `field` (if there) deadline bytes `meta` (empty: none), in place, keeping its
    /// value; whether it was there.
    pub fn set_meta(&mut self, hasher: &FieldHasher, field: &[u8], meta: &[u8]) -> bool {
        let Probe::Found { offset, .. } = probe(self.bytes, hasher.hash(field), field) else {
            return false;
        };
        let Some((_, (_, _, old_meta), next)) = read_entry(self.bytes, offset) else {
            return false;
        };
        let volatile = read_u32(self.bytes, VOLATILE) + usize::from(!meta.is_empty());
        self.set_u32(VOLATILE, volatile - usize::from(!old_meta.is_empty()));
        if let Some(at) = self.bytes.get_mut(next - DEADLINE..next) {
            write_deadline(at, meta);
        }
        self.lower_earliest(meta);
        true
    }

    /// Sets `field` to `value` with deadline bytes `meta`: `Some(true)` if it was added,
    /// `Some(false)` if it was there; `None` (nothing changed) if the hash has no room for it.
    pub fn set(
        &mut self,
        hasher: &FieldHasher,
        field: &[u8],
        value: &[u8],
        meta: &[u8],
    ) -> Option<bool> {
        let need = entry_len(field, value);
        let end = read_u32(self.bytes, END);
        let room = self.bytes.len().saturating_sub(end);
        match probe(self.bytes, hasher.hash(field), field) {
            Probe::Found { slot, offset } => {
                let (_, (_, _, old_meta), next) = read_entry(self.bytes, offset)?;
                let old_volatile = !old_meta.is_empty();
                if next - offset == need {
                    write_entry(self.bytes.get_mut(offset..next)?, field, value, meta);
                } else {
                    if room < need {
                        return None;
                    }
                    write_entry(self.bytes.get_mut(end..end + need)?, field, value, meta);
                    self.kill(offset, next);
                    self.set_u32(slot_at(slot), end);
                    self.set_u32(END, end + need);
                }
                let volatile = read_u32(self.bytes, VOLATILE) + usize::from(!meta.is_empty());
                self.set_u32(VOLATILE, volatile - usize::from(old_volatile));
                self.lower_earliest(meta);
                Some(false)
            }
            Probe::Absent { slot } => {
                if !self.has_room(1, need) {
                    return None;
                }
                write_entry(self.bytes.get_mut(end..end + need)?, field, value, meta);
                if read_u32(self.bytes, slot_at(slot)) as u32 == REMOVED {
                    self.add(GONE, -1);
                }
                self.set_u32(slot_at(slot), end);
                self.set_u32(END, end + need);
                self.add(COUNT, 1);
                if !meta.is_empty() {
                    self.add(VOLATILE, 1);
                }
                self.lower_earliest(meta);
                Some(true)
            }
            Probe::Full => None,
        }
    }

    /// Removes `field`; whether it was there.
    pub fn remove(&mut self, hasher: &FieldHasher, field: &[u8]) -> bool {
        let Probe::Found { slot, offset } = probe(self.bytes, hasher.hash(field), field) else {
            return false;
        };
        let Some((_, (_, _, meta), next)) = read_entry(self.bytes, offset) else {
            return false;
        };
        if !meta.is_empty() {
            self.add(VOLATILE, -1);
        }
        self.kill(offset, next);
        self.set_u32(slot_at(slot), REMOVED as usize);
        self.add(GONE, 1);
        self.add(COUNT, -1);
        true
    }

    /// Removes every field whose entry `remove` picks, in one walk and in place (nothing is
    /// copied out); how many went.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::fields::{capacity_for, entry_len, FieldHasher, Fields, FieldsMut, FieldsWriter};
    ///
    /// let hasher = FieldHasher::default();
    /// let (slots, len) = capacity_for(3, 3 * entry_len(b"f", b"v"));
    /// let mut bytes = vec![0; len];
    /// let mut writer = FieldsWriter::new(&mut bytes, slots);
    /// for field in [b"a", b"b", b"c"] {
    ///     writer.push(&hasher, field, b"v", b"");
    /// }
    /// writer.finish();
    /// let gone = FieldsMut::new(&mut bytes).remove_where(&hasher, |(f, _, _)| f != b"b");
    /// assert_eq!(gone, 2);
    /// let fields = Fields::new(&bytes);
    /// assert_eq!(fields.len(), 1);
    /// assert!(fields.find(&hasher, b"b").is_some());
    /// assert!(fields.find(&hasher, b"a").is_none());
    /// ```
    pub fn remove_where(
        &mut self,
        hasher: &FieldHasher,
        mut remove: impl FnMut(Entry<'_>) -> bool,
    ) -> usize {
        let mut at = slot_at(read_u32(self.bytes, SLOTS));
        let end = read_u32(self.bytes, END).min(self.bytes.len());
        let mut removed = 0;
        let mut earliest = u64::MAX;
        while at < end {
            let Some((live, entry, next)) = read_entry(self.bytes, at) else {
                // A malformed value: no bound is known.
                earliest = 0;
                break;
            };
            let deadline = deadline_of(entry.2);
            // The entry's slot, found while the entry is borrowed; changed after.
            let slot = (live && remove(entry))
                .then(|| match probe(self.bytes, hasher.hash(entry.0), entry.0) {
                    Probe::Found { slot, offset } if offset == at => {
                        Some((slot, !entry.2.is_empty()))
                    }
                    _ => None,
                })
                .flatten();
            if let Some((slot, volatile)) = slot {
                if volatile {
                    self.add(VOLATILE, -1);
                }
                self.kill(at, next);
                self.set_u32(slot_at(slot), REMOVED as usize);
                self.add(GONE, 1);
                self.add(COUNT, -1);
                removed += 1;
            } else if live {
                earliest = earliest.min(deadline);
            }
            at = next;
        }
        write_u64(self.bytes, EARLIEST, earliest);
        removed
    }

    /// Sets [`Fields::earliest`] to the earliest deadline of the fields, in one walk (a sweep
    /// that found no field past its deadline: a bound left low by a deadline removed since is
    /// raised, so `HLEN` is O(1) again).
    pub fn note_earliest(&mut self) {
        let _ = self.remove_where(&FieldHasher::default(), |_| false);
    }

    /// A deadline `meta` (empty: none) was given: [`Fields::earliest`] is at most it.
    fn lower_earliest(&mut self, meta: &[u8]) {
        let earliest = read_u64(self.bytes, EARLIEST).min(deadline_of(meta));
        write_u64(self.bytes, EARLIEST, earliest);
    }

    /// Marks the entry at `offset..next` removed.
    fn kill(&mut self, offset: usize, next: usize) {
        if let Some(state) = self.bytes.get_mut(offset) {
            *state = 0;
        }
        let dead = read_u32(self.bytes, DEAD) + (next - offset);
        self.set_u32(DEAD, dead);
    }

    fn add(&mut self, at: usize, n: isize) {
        let value = read_u32(self.bytes, at).saturating_add_signed(n);
        self.set_u32(at, value);
    }

    fn set_u32(&mut self, at: usize, n: usize) {
        write_u32(self.bytes, at, n);
    }
}

/// Writes a hash in this encoding into a buffer sized with [`capacity_for`], its fields one
/// by one (each once).
pub struct FieldsWriter<'b> {
    bytes: &'b mut [u8],
}

impl<'b> FieldsWriter<'b> {
    /// Starts an empty hash with `slots` (a power of two) in `buf`, which it takes whole.
    pub fn new(buf: &'b mut [u8], slots: usize) -> Self {
        let start = slot_at(slots);
        if let Some(head) = buf.get_mut(..start) {
            head.fill(0);
            head[..4].copy_from_slice(&TAG);
        }
        write_u32(buf, SLOTS, slots);
        write_u32(buf, END, start);
        write_u64(buf, EARLIEST, u64::MAX);
        Self { bytes: buf }
    }

    /// Adds `field`, which it does not have yet (dropped if there is no room).
    pub fn push(&mut self, hasher: &FieldHasher, field: &[u8], value: &[u8], meta: &[u8]) {
        let _ = FieldsMut::new(self.bytes).set(hasher, field, value, meta);
    }

    /// The fields written.
    pub fn len(&self) -> usize {
        read_u32(self.bytes, COUNT)
    }

    /// Whether no field was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hash's length in bytes: the whole buffer.
    pub fn finish(self) -> usize {
        self.bytes.len()
    }
}

/// The index slots and the block for `fields` fields whose entries take `bytes`: twice the
/// slots they need (at least 16), and half their bytes again as room (at least 64).
pub const fn capacity_for(fields: usize, bytes: usize) -> (usize, usize) {
    let slots = (2 * fields).next_power_of_two();
    let slots = if slots < 16 { 16 } else { slots };
    let room = if bytes / 2 < 64 { 64 } else { bytes / 2 };
    (slots, HEADER + 4 * slots + bytes + room)
}

/// The bytes of an entry.
pub const fn entry_len(field: &[u8], value: &[u8]) -> usize {
    1 + leb128::len_of(field.len())
        + field.len()
        + leb128::len_of(value.len())
        + value.len()
        + DEADLINE
}

/// The bytes of a hash's live entries (what [`capacity_for`] takes).
pub fn live_bytes(fields: &Fields<'_>) -> usize {
    let written =
        read_u32(fields.bytes, END).saturating_sub(slot_at(read_u32(fields.bytes, SLOTS)));
    written.saturating_sub(read_u32(fields.bytes, DEAD))
}

fn write_entry(room: &mut [u8], field: &[u8], value: &[u8], meta: &[u8]) {
    room[0] = 1;
    let mut at = 1;
    for part in [field, value] {
        write_part(&mut room[at..], part);
        at += leb128::len_of(part.len()) + part.len();
    }
    write_deadline(&mut room[at..at + DEADLINE], meta);
}

/// Writes deadline bytes `meta` (empty: none, written as 0) into `room`.
fn write_deadline(room: &mut [u8], meta: &[u8]) {
    match <[u8; DEADLINE]>::try_from(meta) {
        Ok(at) => room.copy_from_slice(&at),
        Err(_) => room.fill(0),
    }
}

/// Writes `part` after its LEB128 length at the start of `room`.
fn write_part(room: &mut [u8], part: &[u8]) {
    let at = leb128::write(room, part.len());
    room[at..at + part.len()].copy_from_slice(part);
}

/// The entry at `at`: whether it is live, its parts, and where the next starts.
fn read_entry(bytes: &[u8], at: usize) -> Option<(bool, Entry<'_>, usize)> {
    let live = *bytes.get(at)? == 1;
    let mut next = at + 1;
    let mut part = || {
        let (len, used) = leb128::read(bytes.get(next..)?)?;
        let start = next + used;
        let bytes = bytes.get(start..start.checked_add(len)?)?;
        next = start + len;
        Some(bytes)
    };
    let (field, value) = (part()?, part()?);
    let deadline = bytes.get(next..next.checked_add(DEADLINE)?)?;
    // No deadline is stored as 0 (a real one is always past the tick it was set at).
    let meta = if deadline.iter().all(|&b| b == 0) {
        &deadline[..0]
    } else {
        deadline
    };
    Some((live, (field, value, meta), next + DEADLINE))
}

/// A field's deadline from its deadline bytes; `u64::MAX` for none.
fn deadline_of(meta: &[u8]) -> u64 {
    <[u8; DEADLINE]>::try_from(meta).map_or(u64::MAX, u64::from_le_bytes)
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at.saturating_add(8))
        .and_then(|n| <[u8; 8]>::try_from(n).ok())
        .map_or(0, u64::from_le_bytes)
}

fn write_u64(bytes: &mut [u8], at: usize, n: u64) {
    if let Some(word) = bytes.get_mut(at..at.saturating_add(8)) {
        word.copy_from_slice(&n.to_le_bytes());
    }
}

fn write_u32(bytes: &mut [u8], at: usize, n: usize) {
    if let Some(word) = bytes.get_mut(at..at.saturating_add(4)) {
        word.copy_from_slice(&(n as u32).to_le_bytes());
    }
}

/// Where index slot `i` is.
fn slot_at(i: usize) -> usize {
    HEADER.saturating_add(i.saturating_mul(4))
}

fn read_u32(bytes: &[u8], at: usize) -> usize {
    bytes
        .get(at..at.saturating_add(4))
        .map_or(0, |n| u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::vec;
    use std::vec::Vec;

    /// Writes the model's fields anew (what the commands do when room runs out).
    fn written(model: &HashMap<Vec<u8>, (Vec<u8>, Vec<u8>)>, hasher: &FieldHasher) -> Vec<u8> {
        let bytes = model.iter().map(|(f, (v, _))| entry_len(f, v)).sum();
        let (slots, len) = capacity_for(model.len(), bytes);
        let mut buf = vec![0; len];
        let mut writer = FieldsWriter::new(&mut buf, slots);
        for (f, (v, m)) in model {
            writer.push(hasher, f, v, m);
        }
        assert_eq!(writer.len(), model.len());
        buf
    }

    #[test]
    fn sets_and_removes_match_a_map_through_rewrites() {
        let hasher = FieldHasher([7; 16]);
        let mut model: HashMap<Vec<u8>, (Vec<u8>, Vec<u8>)> = HashMap::new();
        let mut bytes = written(&model, &hasher);
        let mut seed = 11u64;
        let mut rewrites = 0;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let field = std::format!("f{}", (seed >> 33) % 3000).into_bytes();
            let value = vec![b'v'; (seed >> 20) as usize % 150];
            let meta = if seed >> 63 == 0 { vec![] } else { vec![9; 8] };
            if (seed >> 40) % 8 == 1 {
                let there = model
                    .get_mut(&field)
                    .map(|(_, m)| *m = meta.clone())
                    .is_some();
                assert_eq!(
                    FieldsMut::new(&mut bytes).set_meta(&hasher, &field, &meta),
                    there
                );
            } else if (seed >> 40) % 4 == 0 {
                let was = model.remove(&field).is_some();
                assert_eq!(FieldsMut::new(&mut bytes).remove(&hasher, &field), was);
            } else {
                let added = !model.contains_key(&field);
                model.insert(field.clone(), (value.clone(), meta.clone()));
                if FieldsMut::new(&mut bytes).set(&hasher, &field, &value, &meta) != Some(added) {
                    bytes = written(&model, &hasher);
                    rewrites += 1;
                }
            }
            let fields = Fields::new(&bytes);
            assert_eq!(fields.len(), model.len());
            let found = fields.find(&hasher, &field);
            let expected = model.get(&field).map(|(v, m)| (&field[..], &v[..], &m[..]));
            assert_eq!(found, expected);
        }
        let fields = Fields::new(&bytes);
        assert_eq!(fields.entries().count(), model.len());
        let volatile = model.values().filter(|(_, m)| !m.is_empty()).count();
        assert_eq!(fields.volatile(), volatile);
        for (f, v, m) in fields.entries() {
            assert_eq!(model.get(f), Some(&(v.to_vec(), m.to_vec())));
        }
        assert!(rewrites < 200, "{rewrites} rewrites");
    }

    #[test]
    fn a_scan_gives_every_field_present_throughout_across_rewrites() {
        let hasher = FieldHasher([3; 16]);
        let mut model: HashMap<Vec<u8>, (Vec<u8>, Vec<u8>)> = (0..300)
            .map(|i| {
                (
                    std::format!("a{i}").into_bytes(),
                    (b"v".to_vec(), Vec::new()),
                )
            })
            .collect();
        let kept: Vec<Vec<u8>> = model.keys().cloned().collect();
        let mut bytes = written(&model, &hasher);
        let mut seen = std::collections::HashSet::new();
        let (mut cursor, mut steps, mut n) = (0, 0, 0);
        loop {
            let fields = Fields::new(&bytes);
            cursor = fields.scan(&hasher, cursor, 10, |(f, _, _)| {
                seen.insert(f.to_vec());
            });
            steps += 1;
            if cursor == 0 {
                break;
            }
            // Between steps the hash grows (more slots) or shrinks (fewer).
            for _ in 0..40 {
                n += 1;
                let field = std::format!("b{n}").into_bytes();
                if steps % 4 == 3 {
                    model.remove(&std::format!("b{}", n / 2).into_bytes());
                } else {
                    model.insert(field, (b"w".to_vec(), Vec::new()));
                }
            }
            bytes = written(&model, &hasher);
        }
        assert!(steps > 5, "{steps} steps");
        for field in &kept {
            assert!(seen.contains(field), "{field:?} not given");
        }
    }

    /// The deadline of a model field's deadline bytes (`u64::MAX`: none).
    fn model_deadline(meta: &[u8]) -> u64 {
        deadline_of(meta)
    }

    /// Fields given deadlines at exact ticks, deadlines moved, removed (`HPERSIST`) and fields
    /// deleted while time moves a tick or two at a time, swept at random ticks (as the field
    /// timer does, sometimes late): `earliest` is never after a live field's deadline, is the
    /// earliest deadline itself after a sweep or a rewrite, and `live_len` (`HLEN`), when it
    /// answers, answers the model's count of live fields, which it always does right after a
    /// sweep.
    #[test]
    fn live_len_matches_a_model_with_fields_expiring_at_exact_ticks() {
        let hasher = FieldHasher([5; 16]);
        let mut model: HashMap<Vec<u8>, (Vec<u8>, Vec<u8>)> = HashMap::new();
        let mut bytes = written(&model, &hasher);
        let mut rng = crate::xorshift::Xorshift::new(0x2545_f491_4f6c_dd1d);
        let mut next = |n: u64| rng.below(n);
        let (mut now, mut answered, mut counted) = (1u64, 0, 0);
        for step in 0..30_000 {
            let moved = next(3) / 2;
            now += moved;
            // The sweep runs when time moves, as the server's does, but not always (its
            // budget spent on other hashes), and at other times too.
            let op = if moved > 0 && next(4) > 0 {
                12
            } else {
                next(16)
            };
            let field = std::format!("f{}", next(700)).into_bytes();
            let meta = match next(3) {
                0 => Vec::new(),
                _ => (now + 1 + next(40)).to_le_bytes().to_vec(),
            };
            let mut exact = false;
            match op {
                0..=6 => {
                    let value = vec![b'v'; next(80) as usize];
                    let added = !model.contains_key(&field);
                    model.insert(field.clone(), (value.clone(), meta.clone()));
                    if FieldsMut::new(&mut bytes).set(&hasher, &field, &value, &meta) != Some(added)
                    {
                        bytes = written(&model, &hasher);
                        exact = true;
                    }
                }
                7..=9 => {
                    let there = model
                        .get_mut(&field)
                        .map(|(_, m)| *m = meta.clone())
                        .is_some();
                    let set = FieldsMut::new(&mut bytes).set_meta(&hasher, &field, &meta);
                    assert_eq!(set, there);
                }
                10..=11 => {
                    let was = model.remove(&field).is_some();
                    assert_eq!(FieldsMut::new(&mut bytes).remove(&hasher, &field), was);
                }
                12..=14 => {
                    // The field timer's sweep at `now`: fields before `now` go.
                    let due = |meta: &[u8]| model_deadline(meta) < now;
                    let before = model.len();
                    model.retain(|_, (_, m)| !due(m));
                    let gone = FieldsMut::new(&mut bytes).remove_where(&hasher, |e| due(e.2));
                    assert_eq!(gone, before - model.len());
                    exact = true;
                }
                _ => {
                    FieldsMut::new(&mut bytes).note_earliest();
                    exact = true;
                }
            }
            let fields = Fields::new(&bytes);
            let earliest = model.values().map(|(_, m)| model_deadline(m)).min();
            let earliest = earliest.unwrap_or(u64::MAX);
            assert!(fields.earliest() <= earliest, "step {step}");
            if exact {
                assert_eq!(fields.earliest(), earliest, "step {step}");
            }
            let live = model
                .values()
                .filter(|(_, m)| model_deadline(m) >= now)
                .count();
            match fields.live_len(now) {
                Some(len) => {
                    assert_eq!(len, live, "step {step} at {now}");
                    answered += 1;
                }
                None => counted += 1,
            }
            let swept = exact && model.values().all(|(_, m)| model_deadline(m) >= now);
            assert!(!swept || fields.live_len(now).is_some(), "step {step}");
        }
        // Both paths ran: O(1) mostly, counting while fields were due and not yet swept.
        assert!(
            answered > 3 * counted && counted > 100,
            "{answered} {counted}"
        );
    }

    #[test]
    fn a_malformed_value_reads_as_fewer_fields() {
        let hasher = FieldHasher::default();
        let mut bytes = vec![0xff; 64];
        let _ = Fields::new(&bytes).entries().count();
        assert_eq!(Fields::new(&bytes).find(&hasher, b"x"), None);
        let _ = FieldsMut::new(&mut bytes).set(&hasher, b"x", b"y", b"");
        let _ = FieldsMut::new(&mut bytes).remove(&hasher, b"x");
        let _ = FieldsMut::new(&mut [0xff; 3]).set(&hasher, b"x", b"y", b"");
    }
}
