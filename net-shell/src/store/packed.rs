//! A sequence of elements packed in one value: a 4-byte little-endian element count, then
//! each element as its length (LEB128) and its bytes, in order. Compact (1 to 5 bytes per
//! element beside its bytes), read in place, and rewritten whole by a change, so a change costs
//! time in proportion to the value's bytes. Hashes keep their fields this way (fields, values
//! and deadlines alternating, as Redis' listpack does for small hashes); lists have their own
//! encoding, with room at both ends ([`crate::store::list`]).

use super::leb128;

/// A packed sequence, read in place.
///
/// # Examples
///
/// ```
/// use net_shell::store::packed::{Packed, PackedWriter};
///
/// let mut bytes = [0u8; 32];
/// let mut writer = PackedWriter::new(&mut bytes);
/// writer.push(b"a");
/// writer.push(b"bc");
/// let len = writer.finish();
/// let list = Packed::new(&bytes[..len]);
/// assert_eq!(list.len(), 2);
/// assert_eq!(list.iter().collect::<Vec<_>>(), [&b"a"[..], b"bc"]);
/// assert_eq!(Packed::new(b"").len(), 0); // an empty value has no element
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Packed<'a> {
    bytes: &'a [u8],
}

impl<'a> Packed<'a> {
    /// Reads `bytes` as a packed sequence (a malformed tail reads as the end).
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        self.bytes
            .get(..4)
            .map_or(0, |n| u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize)
    }

    /// Whether it has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements, head first.
    pub fn iter(&self) -> Elements<'a> {
        Elements {
            rest: self.bytes.get(4..).unwrap_or_default(),
            left: self.len(),
        }
    }

    /// The element at `index` from the head.
    pub fn get(&self, index: usize) -> Option<&'a [u8]> {
        self.iter().nth(index)
    }

    /// The encoded bytes of the first `n` elements and of the rest (for
    /// [`PackedWriter::push_encoded`]): a change at an end copies the rest as it is, without
    /// reading each element. Found by walking the lengths only.
    pub fn split(&self, n: usize) -> (&'a [u8], &'a [u8]) {
        let body = self.bytes.get(4..).unwrap_or_default();
        let mut at = 0;
        for _ in 0..n.min(self.len()) {
            let Some((len, used)) = body.get(at..).and_then(leb128::read) else {
                break;
            };
            at = (at + used + len).min(body.len());
        }
        body.split_at(at)
    }
}

/// The elements of a [`Packed`], head first.
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
        let (len, used) = leb128::read(self.rest)?;
        let element = self.rest.get(used..used.checked_add(len)?)?;
        self.rest = &self.rest[used + len..];
        self.left -= 1;
        Some(element)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// Writes a packed sequence into a buffer sized with [`encoded_len`].
pub struct PackedWriter<'b> {
    buf: &'b mut [u8],
    at: usize,
    count: u32,
}

impl<'b> PackedWriter<'b> {
    /// Starts a sequence at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Self {
            buf,
            at: 4,
            count: 0,
        }
    }

    /// Appends `element` (at the tail). The buffer must have room: [`encoded_len`] says how
    /// much (an element past the end is dropped, never written out of bounds).
    pub fn push(&mut self, element: &[u8]) {
        let len = element.len();
        let need = element_len(len);
        let Some(room) = self.buf.get_mut(self.at..self.at + need) else {
            return;
        };
        let used = leb128::write(room, len);
        room[used..].copy_from_slice(element);
        self.at += need;
        self.count += 1;
    }

    /// Appends `count` elements already encoded (a part [`Packed::split`] gave).
    pub fn push_encoded(&mut self, encoded: &[u8], count: usize) {
        let Some(room) = self.buf.get_mut(self.at..self.at + encoded.len()) else {
            return;
        };
        room.copy_from_slice(encoded);
        self.at += encoded.len();
        self.count += count as u32;
    }

    /// Elements pushed so far.
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// Writes the count; the list's length in bytes.
    pub fn finish(self) -> usize {
        if let Some(head) = self.buf.get_mut(..4) {
            head.copy_from_slice(&self.count.to_le_bytes());
        }
        self.at.min(self.buf.len())
    }
}

/// The bytes one element of `len` bytes takes: its length's LEB128 bytes, then its bytes.
pub const fn element_len(len: usize) -> usize {
    leb128::len_of(len) + len
}

/// The bytes a sequence of these elements takes.
pub fn encoded_len<'e>(elements: impl IntoIterator<Item = &'e [u8]>) -> usize {
    4 + elements
        .into_iter()
        .map(|e| element_len(e.len()))
        .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn elements_of_every_length_class_read_back() {
        let elements: Vec<Vec<u8>> = [0usize, 1, 127, 128, 300, 16_384]
            .iter()
            .map(|&n| vec![n as u8; n])
            .collect();
        let size = encoded_len(elements.iter().map(Vec::as_slice));
        let mut buf = vec![0; size];
        let mut writer = PackedWriter::new(&mut buf);
        for e in &elements {
            writer.push(e);
        }
        assert_eq!(writer.finish(), size);
        let list = Packed::new(&buf);
        assert_eq!(list.len(), elements.len());
        assert!(list.iter().eq(elements.iter().map(Vec::as_slice)));
        assert_eq!(list.get(3), Some(&elements[3][..]));
        assert_eq!(list.get(6), None);
    }

    #[test]
    fn split_parts_copy_back_as_the_same_elements() {
        let elements: Vec<Vec<u8>> = (0..6usize).map(|n| vec![n as u8; n * 60]).collect();
        let size = encoded_len(elements.iter().map(Vec::as_slice));
        let mut buf = vec![0; size];
        let mut writer = PackedWriter::new(&mut buf);
        for e in &elements {
            writer.push(e);
        }
        writer.finish();
        let list = Packed::new(&buf);
        for n in 0..=7 {
            let (head, tail) = list.split(n);
            let mut copy = vec![0; size + 8];
            let mut writer = PackedWriter::new(&mut copy);
            writer.push_encoded(tail, list.len() - n.min(6));
            writer.push_encoded(head, n.min(6));
            let len = writer.finish();
            let rotated: Vec<&[u8]> = Packed::new(&copy[..len]).iter().collect();
            let expected: Vec<&[u8]> = elements[n.min(6)..]
                .iter()
                .chain(&elements[..n.min(6)])
                .map(Vec::as_slice)
                .collect();
            assert_eq!(rotated, expected, "split at {n}");
        }
    }

    #[test]
    fn a_short_buffer_drops_what_does_not_fit() {
        let mut buf = [0u8; 6];
        let mut writer = PackedWriter::new(&mut buf);
        writer.push(b"a");
        writer.push(b"bcd");
        assert_eq!(writer.finish(), 6);
        assert_eq!(Packed::new(&buf).iter().collect::<Vec<_>>(), [&b"a"[..]]);
    }
}
