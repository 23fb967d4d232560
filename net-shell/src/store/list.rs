//! How a list is kept as one value in the store, so that a push or pop at either end costs the
//! bytes of the elements it touches, not the list's.
//!
//! # Layout
//!
//! A 12-byte header (the element count, then where the elements start and where they end, as
//! offsets from the value's start, each a little-endian `u32`), then room, the elements head
//! first, and room again. Each element is its length (LEB128), its bytes, and its length again
//! with the LEB128 digits in reverse order (as listpack's back length), so that it can be read
//! from either end: 2 bytes beside an element of up to 127 bytes.
//!
//! # Why one block with room at both ends
//!
//! A push writes into the room at its end and a pop moves the offset: both in place, in
//! the value's own block, without copying the other elements. When an end has no room left,
//! the elements are moved to the middle of the block if the block has room to spare, or the
//! list is written anew into a block a quarter as large again as its elements
//! ([`capacity_for`]): the copy costs the list's bytes, and the room it leaves takes an eighth
//! of them in pushes at one end to fill, so pushes cost O(their bytes) amortized (about 8
//! bytes copied per byte pushed). Pops that leave the block more than twice as large as that
//! ([`List::is_oversized`]) shrink it the same way.
//!
//! Redis' quicklist chains 8 KiB listpack nodes instead. A chain of blocks in this pool would
//! need owners for blocks that are not keys (the pool tells owners when it moves a block) and a
//! second table for them; one block keeps the store's key table as it is, keeps every byte of
//! the list under `maxmemory` (the room is part of the value, which `INFO memory` counts),
//! and keeps reads of the middle (`LINDEX`, `LRANGE`) a walk from the nearer end, as
//! Redis' are. Its cost: a list needs one contiguous block, up to 1.25 times its elements'
//! bytes (a 10 MB list in a fragmented pool may find no place, and is refused with `-OOM`), and
//! a list written anew passes through the reply buffer, so its size is bounded by the room
//! that buffer can have (on a board, its fixed transmit buffer).

use super::leb128;

/// The bytes before the first element's room: count, start, end.
pub const HEADER: usize = 12;
/// Room every block keeps beside its elements (so a short list takes a few pushes in place).
const MIN_ROOM: usize = 8;

/// An end of a list.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum End {
    /// The first element's end (`LPUSH`, `LPOP`, `LEFT`).
    Head,
    /// The last element's end (`RPUSH`, `RPOP`, `RIGHT`).
    Tail,
}

/// A list value, read in place.
///
/// # Examples
///
/// ```
/// use net_shell::store::list::{capacity_for, List, ListWriter};
///
/// let mut bytes = [0u8; 64];
/// let mut writer = ListWriter::new(&mut bytes);
/// writer.push(b"a");
/// writer.push(b"bc");
/// let len = writer.finish_with_room();
/// assert_eq!(len, capacity_for(7));
/// let list = List::new(&bytes[..len]);
/// assert_eq!(list.len(), 2);
/// assert_eq!(list.iter().collect::<Vec<_>>(), [&b"a"[..], b"bc"]);
/// assert_eq!(list.iter().rev().collect::<Vec<_>>(), [&b"bc"[..], b"a"]);
/// assert_eq!(List::new(b"").len(), 0); // an empty value is an empty list
/// ```
#[derive(Clone, Copy, Debug)]
pub struct List<'a> {
    bytes: &'a [u8],
}

impl<'a> List<'a> {
    /// Reads `bytes` as a list (a malformed value reads as fewer elements, never out of bounds).
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        read_u32(self.bytes, 0)
    }

    /// Whether it has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The encoded elements, head first (what [`ListWriter::push_encoded`] takes).
    pub fn body(&self) -> &'a [u8] {
        let (start, end) = (read_u32(self.bytes, 4), read_u32(self.bytes, 8));
        self.bytes.get(start..end).unwrap_or_default()
    }

    /// The elements, head first; `rev()` gives them tail first.
    pub fn iter(&self) -> Elements<'a> {
        Elements {
            rest: self.body(),
            left: self.len(),
        }
    }

    /// The element at `index` from the head, reached from the nearer end.
    pub fn get(&self, index: usize) -> Option<&'a [u8]> {
        self.range(index, 1).next()
    }

    /// The `count` elements from `from` on (from the head; fewer at the end), reached from the
    /// nearer end.
    pub fn range(&self, from: usize, count: usize) -> Elements<'a> {
        let len = self.len();
        let from = from.min(len);
        let mut elements = self.iter();
        let rest = if from <= len / 2 {
            for _ in 0..from {
                elements.next();
            }
            elements.rest
        } else {
            for _ in from..len {
                elements.next_back();
            }
            let body = self.body();
            body.get(elements.rest.len()..).unwrap_or_default()
        };
        Elements {
            rest,
            left: count.min(len - from),
        }
    }

    /// Whether the block is more than twice what [`capacity_for`] its elements asks: pops
    /// left it so, and it should be written anew, smaller.
    pub fn is_oversized(&self) -> bool {
        self.bytes.len() > 2 * capacity_for(self.body().len())
    }
}

/// The elements of a [`List`], from either end.
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let (start, end) = first(self.rest)?;
        let element = self.rest.get(start..end)?;
        self.rest = self.rest.get(end + leb128::len_of(end - start)..)?;
        self.left -= 1;
        Some(element)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

impl<'a> DoubleEndedIterator for Elements<'a> {
    fn next_back(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let (start, end) = last(self.rest)?;
        let element = self.rest.get(start..end)?;
        self.rest = self
            .rest
            .get(..start.checked_sub(leb128::len_of(end - start))?)?;
        self.left -= 1;
        Some(element)
    }
}

/// A list value changed in place: pushes into the room at an end, pops from an end.
///
/// # Examples
///
/// ```
/// use net_shell::store::list::{End, List, ListMut, ListWriter};
///
/// let mut bytes = [0u8; 40];
/// let mut writer = ListWriter::new(&mut bytes);
/// writer.push(b"b");
/// let len = writer.finish_with_room();
/// let mut list = ListMut::new(&mut bytes[..len]);
/// assert_eq!(list.push(End::Head, &[b"a"]), Some(2));
/// assert_eq!(list.push(End::Tail, &[b"c"]), Some(3));
/// assert_eq!(list.push(End::Tail, &[&[0; 64]]), None); // no room: write it anew, larger
/// assert_eq!(list.remove(End::Tail, 1), 2);
/// let list = List::new(&bytes[..len]);
/// assert_eq!(list.iter().collect::<Vec<_>>(), [&b"a"[..], b"b"]);
/// ```
pub struct ListMut<'a> {
    bytes: &'a mut [u8],
}

impl<'a> ListMut<'a> {
    /// Changes `bytes`, a list value, in place.
    pub fn new(bytes: &'a mut [u8]) -> Self {
        Self { bytes }
    }

    /// Pushes `elements` at `end`, each in turn (at the head, the last given comes first), into
    /// the room there, or after moving the elements to the middle when the block has room
    /// enough to spare; the new length. `None` (and nothing changed) when it has not: the list
    /// has to be written anew, larger.
    pub fn push(&mut self, end: End, elements: &[&[u8]]) -> Option<usize> {
        let need = elements.iter().map(|e| element_len(e.len())).sum();
        let (count, start, stop) = self.header();
        let (mut start, mut stop) = self.room_for(end, need, start, stop)?;
        for element in elements {
            let len = element_len(element.len());
            let at = match end {
                End::Head => start - len,
                End::Tail => stop,
            };
            write_element(self.bytes.get_mut(at..at + len)?, element);
            match end {
                End::Head => start -= len,
                End::Tail => stop += len,
            }
        }
        let count = count + elements.len();
        self.set_header(count, start, stop);
        Some(count)
    }

    /// Where the elements are once `need` bytes fit at `end`: where they were, or moved to the
    /// middle of the block if they fit only so and the block keeps room to spare (an eighth
    /// of the elements' bytes, so that moves stay rare: amortized O(1) a byte pushed).
    fn room_for(
        &mut self,
        end: End,
        need: usize,
        start: usize,
        stop: usize,
    ) -> Option<(usize, usize)> {
        let free = match end {
            End::Head => start.saturating_sub(HEADER),
            End::Tail => self.bytes.len().saturating_sub(stop),
        };
        if free >= need {
            return Some((start, stop));
        }
        let used = stop - start;
        let spare = self.bytes.len().checked_sub(HEADER + used + need)?;
        if spare < (used + need) / 8 {
            return None;
        }
        let middle = HEADER + spare / 2 + if end == End::Head { need } else { 0 };
        self.bytes.copy_within(start..stop, middle);
        Some((middle, middle + used))
    }

    /// Removes up to `n` elements from `end`; how many are left.
    pub fn remove(&mut self, end: End, n: usize) -> usize {
        let (count, mut start, mut stop) = self.header();
        let list = List::new(self.bytes);
        let mut elements = list.iter();
        let n = n.min(count);
        for _ in 0..n {
            let taken = match end {
                End::Head => elements.next(),
                End::Tail => elements.next_back(),
            };
            let Some(element) = taken else { break };
            let len = element_len(element.len());
            match end {
                End::Head => start += len,
                End::Tail => stop -= len,
            }
        }
        self.set_header(count - n, start, stop.max(start));
        count - n
    }

    /// Keeps only the elements `from..=to` (from the head; `LTRIM`), walking from the nearer
    /// ends; how many are left.
    pub fn keep(&mut self, from: usize, to: usize) -> usize {
        let (count, _, _) = self.header();
        let to = to.min(count.saturating_sub(1));
        if count == 0 || from > to {
            let (_, start, _) = self.header();
            self.set_header(0, start, start);
            return 0;
        }
        self.remove(End::Head, from);
        self.remove(End::Tail, count - 1 - to)
    }

    fn header(&self) -> (usize, usize, usize) {
        let (count, start, stop) = (
            read_u32(self.bytes, 0),
            read_u32(self.bytes, 4),
            read_u32(self.bytes, 8),
        );
        // A malformed header reads as an empty list at the middle.
        if start < HEADER || start > stop || stop > self.bytes.len() {
            let middle = HEADER.max(self.bytes.len() / 2).min(self.bytes.len());
            return (0, middle, middle);
        }
        (count, start, stop)
    }

    fn set_header(&mut self, count: usize, start: usize, stop: usize) {
        write_header(self.bytes, count, start, stop);
    }
}

/// Writes a list into a buffer: its elements from the head on, then
/// [`finish_with_room`](Self::finish_with_room) puts them in the middle of a block of
/// [`capacity_for`] their bytes.
pub struct ListWriter<'b> {
    buf: &'b mut [u8],
    at: usize,
    count: usize,
}

impl<'b> ListWriter<'b> {
    /// Starts a list at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Self {
            buf,
            at: HEADER,
            count: 0,
        }
    }

    /// Appends `element` (at the tail). The buffer must have room: [`element_len`] says how
    /// much (an element past the end is dropped, never written out of bounds).
    pub fn push(&mut self, element: &[u8]) {
        let need = element_len(element.len());
        let Some(room) = self.buf.get_mut(self.at..self.at + need) else {
            return;
        };
        write_element(room, element);
        self.at += need;
        self.count += 1;
    }

    /// Appends `count` elements already encoded (a [`List::body`]).
    pub fn push_encoded(&mut self, encoded: &[u8], count: usize) {
        let Some(room) = self.buf.get_mut(self.at..self.at + encoded.len()) else {
            return;
        };
        room.copy_from_slice(encoded);
        self.at += encoded.len();
        self.count += count;
    }

    /// Elements pushed so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Writes the header; the list's length in bytes, without room at either end.
    pub fn finish(self) -> usize {
        write_header(self.buf, self.count, HEADER, self.at);
        self.at.min(self.buf.len())
    }

    /// Moves the elements to the middle of the first [`capacity_for`] their bytes of the
    /// buffer (all of it if shorter) and writes the header; the list's length in bytes.
    pub fn finish_with_room(self) -> usize {
        if self.buf.len() < self.at {
            return self.finish();
        }
        let used = self.at - HEADER;
        let len = capacity_for(used).min(self.buf.len());
        let start = HEADER + (len.saturating_sub(HEADER + used)) / 2;
        self.buf.copy_within(HEADER..self.at, start);
        write_header(&mut self.buf[..len], self.count, start, start + used);
        len
    }
}

/// The block a list of `used` bytes of encoded elements is written into: the header, the
/// elements, and a quarter of their bytes again (at least 8) as room, split between the two
/// ends.
pub const fn capacity_for(used: usize) -> usize {
    let room = used / 4;
    HEADER + used + if room < MIN_ROOM { MIN_ROOM } else { room }
}

/// The bytes one element of `len` bytes takes: its length's LEB128 bytes, its bytes, and its
/// length's bytes again.
pub const fn element_len(len: usize) -> usize {
    2 * leb128::len_of(len) + len
}

/// Writes `element` into `room`, which is [`element_len`] long.
fn write_element(room: &mut [u8], element: &[u8]) {
    let n = leb128::len_of(element.len());
    let (front, rest) = room.split_at_mut(n);
    let (bytes, back) = rest.split_at_mut(element.len());
    let mut len = element.len();
    for i in 0..n {
        let digit = (len & 0x7f) as u8;
        len >>= 7;
        let more = if i + 1 < n { 0x80 } else { 0 };
        front[i] = digit | more;
        back[n - 1 - i] = digit | more;
    }
    bytes.copy_from_slice(element);
}

/// Where the first element of `bytes` starts and ends (its bytes, without its lengths).
fn first(bytes: &[u8]) -> Option<(usize, usize)> {
    let (len, start) = leb128::read(bytes)?;
    Some((start, start.checked_add(len)?))
}

/// Where the last element of `bytes` starts and ends (its bytes, without its lengths).
fn last(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut len = 0usize;
    for (i, &byte) in bytes.iter().rev().enumerate().take(5) {
        len |= usize::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            let end = bytes.len() - (i + 1);
            return Some((end.checked_sub(len)?, end));
        }
    }
    None
}

fn read_u32(bytes: &[u8], at: usize) -> usize {
    bytes
        .get(at..at + 4)
        .map_or(0, |n| u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize)
}

fn write_header(bytes: &mut [u8], count: usize, start: usize, stop: usize) {
    if let Some(header) = bytes.get_mut(..HEADER) {
        for (at, n) in [(0, count), (4, start), (8, stop)] {
            header[at..at + 4].copy_from_slice(&(n as u32).to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::vec;
    use std::vec::Vec;

    fn written(elements: &[Vec<u8>]) -> Vec<u8> {
        let used: usize = elements.iter().map(|e| element_len(e.len())).sum();
        let mut buf = vec![0; capacity_for(used)];
        let mut writer = ListWriter::new(&mut buf);
        for e in elements {
            writer.push(e);
        }
        let len = writer.finish_with_room();
        buf.truncate(len);
        buf
    }

    #[test]
    fn elements_of_every_length_class_read_back_from_both_ends() {
        let elements: Vec<Vec<u8>> = [0usize, 1, 127, 128, 300, 16_384]
            .iter()
            .map(|&n| vec![n as u8; n])
            .collect();
        let buf = written(&elements);
        let list = List::new(&buf);
        assert_eq!(list.len(), elements.len());
        assert!(list.iter().eq(elements.iter().map(Vec::as_slice)));
        assert!(list
            .iter()
            .rev()
            .eq(elements.iter().rev().map(Vec::as_slice)));
        for (i, e) in elements.iter().enumerate() {
            assert_eq!(list.get(i), Some(&e[..]));
        }
        assert_eq!(list.get(6), None);
    }

    #[test]
    fn pushes_and_pops_at_both_ends_match_a_deque() {
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        let mut buf = written(&[]);
        let mut rewrites = 0;
        let mut seed = 7u64;
        for step in 0..5_000u32 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let end = if seed >> 63 == 0 {
                End::Head
            } else {
                End::Tail
            };
            let element = vec![step as u8; (seed >> 40) as usize % 200];
            if (seed >> 32) % 5 < 3 {
                if ListMut::new(&mut buf).push(end, &[&element]).is_none() {
                    let old = List::new(&buf);
                    let used = old.body().len() + element_len(element.len());
                    let mut new = vec![0; capacity_for(used)];
                    let mut writer = ListWriter::new(&mut new);
                    if end == End::Head {
                        writer.push(&element);
                    }
                    writer.push_encoded(old.body(), old.len());
                    if end == End::Tail {
                        writer.push(&element);
                    }
                    let len = writer.finish_with_room();
                    new.truncate(len);
                    buf = new;
                    rewrites += 1;
                }
                match end {
                    End::Head => model.push_front(element),
                    End::Tail => model.push_back(element),
                }
            } else {
                let n = (seed >> 20) as usize % 3;
                let left = ListMut::new(&mut buf).remove(end, n);
                for _ in 0..n {
                    match end {
                        End::Head => model.pop_front(),
                        End::Tail => model.pop_back(),
                    };
                }
                assert_eq!(left, model.len());
            }
            let list = List::new(&buf);
            assert_eq!(list.len(), model.len());
            assert_eq!(list.get(0), model.front().map(Vec::as_slice));
            assert_eq!(
                list.get(model.len().wrapping_sub(1)),
                model.back().map(Vec::as_slice)
            );
        }
        assert!(List::new(&buf).iter().eq(model.iter().map(Vec::as_slice)));
        assert!(rewrites < 100, "{rewrites} rewrites");
    }

    #[test]
    fn keep_trims_both_ends() {
        let elements: Vec<Vec<u8>> = (0..10u8).map(|n| vec![n; n as usize]).collect();
        let mut buf = written(&elements);
        assert_eq!(ListMut::new(&mut buf).keep(2, 6), 5);
        assert!(List::new(&buf)
            .iter()
            .eq(elements[2..=6].iter().map(Vec::as_slice)));
        assert_eq!(ListMut::new(&mut buf).keep(3, 1), 0);
        assert!(List::new(&buf).is_empty());
    }

    #[test]
    fn a_malformed_value_reads_as_fewer_elements() {
        let mut buf = written(&[vec![1; 3], vec![2; 200]]);
        buf[HEADER + 9] = 0xff; // inside the elements
        let list = List::new(&buf);
        assert!(list.iter().count() <= 2);
        assert!(list.iter().rev().count() <= 2);
        let _ = ListMut::new(&mut buf).remove(End::Tail, 5);
        let _ = ListMut::new(&mut [0xff; 20]).push(End::Head, &[b"x"]);
        let _ = ListMut::new(&mut [0xff; 5]).push(End::Tail, &[b"x"]);
        let _ = ListMut::new(&mut [0xff; 20]).remove(End::Head, 3);
    }
}
