//! An array that may grow in chunks: the memory under the key table's entries and buckets.
//!
//! Lent memory (a board's `static` arrays) is one fixed part and never grows. With the `alloc`
//! feature, a store sized at run time adds chunks as keys arrive and gives back chunks it no
//! longer uses: trailing ones, or (for entries) any one, whose positions then read as absent
//! until it is made again. No element ever moves, so no write pays for more than one chunk's
//! allocation, whatever the table's size. A chunk holds [`MAX_CHUNK`] elements, or a sixteenth
//! of the limit in a smaller store (so a small store grows in small steps too).

use crate::memory::Memory;

/// The most elements per allocated chunk: small enough that adding one is cheap (a few hundred
/// KiB at most), large enough that a million keys need few of them.
#[cfg(feature = "alloc")]
pub(super) const MAX_CHUNK: usize = 4096;
/// The fewest elements per allocated chunk (unless the limit is lower).
#[cfg(feature = "alloc")]
const MIN_CHUNK: usize = 4;

/// Elements `0..len()`: lent ones first, then allocated chunks.
pub(super) struct Chunks<'a, T> {
    lent: Memory<'a, T>,
    /// Allocated chunks by position; `None` where one was given back (never the last).
    #[cfg(feature = "alloc")]
    allocated: alloc::vec::Vec<Option<alloc::boxed::Box<[T]>>>,
    /// Allocated chunks present (not given back).
    #[cfg(feature = "alloc")]
    present: usize,
    /// Elements per allocated chunk: `1 << chunk_shift`.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    chunk_shift: u32,
    /// The most elements: chunks are added up to it.
    limit: usize,
}

impl<'a, T: Copy> Chunks<'a, T> {
    /// Over lent memory, which is all there ever is.
    pub(super) fn lent(lent: Memory<'a, T>) -> Self {
        let limit = lent.len();
        Self {
            lent,
            #[cfg(feature = "alloc")]
            allocated: alloc::vec::Vec::new(),
            #[cfg(feature = "alloc")]
            present: 0,
            chunk_shift: 0,
            limit,
        }
    }

    /// Empty, growing up to `limit` elements.
    #[cfg(feature = "alloc")]
    pub(super) fn growing(limit: usize) -> Self {
        let chunk = (limit / 16)
            .clamp(MIN_CHUNK, MAX_CHUNK)
            .min(limit)
            .max(1)
            .next_power_of_two();
        Self {
            lent: Memory::empty(),
            allocated: alloc::vec::Vec::new(),
            present: 0,
            chunk_shift: chunk.trailing_zeros(),
            limit,
        }
    }

    /// Elements per allocated chunk.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(super) const fn chunk(&self) -> usize {
        1 << self.chunk_shift
    }

    /// `log2` of [`chunk`](Self::chunk).
    #[cfg(feature = "alloc")]
    pub(super) const fn chunk_shift(&self) -> u32 {
        self.chunk_shift
    }

    /// Whether chunks are allocated as needed (memory sized at run time), past the lent part.
    #[cfg(feature = "alloc")]
    pub(super) fn grows(&self) -> bool {
        self.limit > self.lent.len()
    }

    /// Positions up to the end of the last chunk (lent or allocated): elements of chunks
    /// given back among them read as absent.
    pub(super) fn len(&self) -> usize {
        #[cfg(feature = "alloc")]
        return self.lent.len() + (self.allocated.len() << self.chunk_shift);
        #[cfg(not(feature = "alloc"))]
        self.lent.len()
    }

    /// Elements of the allocated chunks present.
    fn allocated_len(&self) -> usize {
        #[cfg(feature = "alloc")]
        return self.present << self.chunk_shift;
        #[cfg(not(feature = "alloc"))]
        0
    }

    /// The most elements there can be.
    pub(super) const fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes of the elements present.
    pub(super) fn bytes(&self) -> usize {
        (self.lent.len() + self.allocated_len()) * core::mem::size_of::<T>()
    }

    /// Bytes allocated as the store grew (not lent).
    pub(super) fn allocated_bytes(&self) -> usize {
        self.allocated_len() * core::mem::size_of::<T>()
    }

    /// Bytes one more chunk would take: 0 if none can be added.
    pub(super) fn chunk_bytes(&self) -> usize {
        if cfg!(feature = "alloc") && self.len() < self.limit {
            self.chunk() * core::mem::size_of::<T>()
        } else {
            0
        }
    }

    pub(super) fn get(&self, at: usize) -> Option<&T> {
        match at.checked_sub(self.lent.len()) {
            None => self.lent.get(at),
            #[cfg(feature = "alloc")]
            Some(at) => self
                .allocated
                .get(at >> self.chunk_shift)
                .and_then(Option::as_deref)
                .and_then(|chunk| chunk.get(at & (self.chunk() - 1))),
            #[cfg(not(feature = "alloc"))]
            Some(_) => None,
        }
    }

    pub(super) fn get_mut(&mut self, at: usize) -> Option<&mut T> {
        match at.checked_sub(self.lent.len()) {
            None => self.lent.get_mut(at),
            #[cfg(feature = "alloc")]
            Some(at) => {
                let mask = self.chunk() - 1;
                self.allocated
                    .get_mut(at >> self.chunk_shift)
                    .and_then(Option::as_deref_mut)
                    .and_then(|chunk| chunk.get_mut(at & mask))
            }
            #[cfg(not(feature = "alloc"))]
            Some(_) => None,
        }
    }

    /// Adds a chunk of `fill`s; `false` if the limit (or lent memory) allows none.
    pub(super) fn grow(&mut self, fill: T) -> bool {
        if self.chunk_bytes() == 0 {
            return false;
        }
        #[cfg(feature = "alloc")]
        {
            self.allocated
                .push(Some(alloc::vec![fill; self.chunk()].into_boxed_slice()));
            self.present += 1;
        }
        #[cfg(not(feature = "alloc"))]
        let _ = fill;
        true
    }

    /// Makes allocated chunk `chunk` (numbered from 0 after the lent part) again, of `fill`s,
    /// if it was given back; `false` if it is there already or past the last.
    #[cfg(feature = "alloc")]
    pub(super) fn remake(&mut self, chunk: usize, fill: T) -> bool {
        let size = self.chunk();
        match self.allocated.get_mut(chunk) {
            Some(slot @ None) => {
                *slot = Some(alloc::vec![fill; size].into_boxed_slice());
                self.present += 1;
                true
            }
            _ => false,
        }
    }

    /// Gives back allocated chunk `chunk`: its positions read as absent until it is
    /// [`remake`](Self::remake)n (or, once no chunk present follows it, are gone).
    #[cfg(feature = "alloc")]
    pub(super) fn give_back(&mut self, chunk: usize) {
        if let Some(slot) = self.allocated.get_mut(chunk) {
            if slot.take().is_some() {
                self.present -= 1;
            }
        }
        while self.allocated.last().is_some_and(Option::is_none) {
            self.allocated.pop();
        }
    }

    /// Drops allocated chunks that hold no element below `used`, keeping one spare chunk so
    /// that a store hovering at a chunk's edge does not allocate and free on every write.
    #[cfg(feature = "alloc")]
    pub(super) fn shrink_to(&mut self, used: usize) {
        while self.len() >= used + 2 * self.chunk() {
            match self.allocated.pop() {
                Some(Some(_)) => self.present -= 1,
                Some(None) => {}
                None => break,
            }
        }
    }

    /// Sets every element to `value` and drops every allocated chunk.
    pub(super) fn reset(&mut self, value: T) {
        self.lent.fill(value);
        #[cfg(feature = "alloc")]
        {
            self.allocated = alloc::vec::Vec::new();
            self.present = 0;
        }
    }

    /// Sets elements `0..n` (at most those present) to `value`.
    pub(super) fn fill_first(&mut self, n: usize, value: T) {
        for at in 0..n.min(self.len()) {
            if let Some(slot) = self.get_mut(at) {
                *slot = value;
            }
        }
    }

    /// The elements from `at` on, in order, with their positions.
    pub(super) fn iter_from(&self, at: usize) -> impl Iterator<Item = (usize, &T)> + '_ {
        (at..self.len()).filter_map(move |at| self.get(at).map(|value| (at, value)))
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;

    #[test]
    fn growing_chunks_add_and_drop_whole_chunks_up_to_the_limit() {
        let mut chunks: Chunks<'_, u32> = Chunks::growing(1 << 20);
        assert_eq!(chunks.chunk(), MAX_CHUNK);
        const CHUNK: usize = MAX_CHUNK;
        chunks.limit = 2 * CHUNK + 1;
        assert_eq!((chunks.len(), chunks.get(0)), (0, None));
        assert!(chunks.grow(7) && chunks.grow(7) && chunks.grow(7));
        assert!(!chunks.grow(7), "past the limit");
        assert_eq!(chunks.len(), 3 * CHUNK);
        *chunks.get_mut(CHUNK + 5).unwrap() = 9;
        assert_eq!(chunks.get(CHUNK + 5), Some(&9));
        assert_eq!(chunks.get(3 * CHUNK), None);
        chunks.shrink_to(CHUNK - 1);
        assert_eq!(chunks.len(), 2 * CHUNK, "one spare chunk stays");
        assert_eq!(chunks.get(CHUNK + 5), Some(&9));
        chunks.reset(0);
        assert_eq!(chunks.len(), 0);
    }

    #[test]
    fn a_small_limit_makes_small_chunks() {
        assert_eq!(Chunks::<u8>::growing(4).chunk(), 4);
        assert_eq!(Chunks::<u8>::growing(16).chunk(), MIN_CHUNK);
        assert_eq!(Chunks::<u8>::growing(256).chunk(), 16);
        assert_eq!(Chunks::<u8>::growing(1024).chunk(), 64);
        assert_eq!(Chunks::<u8>::growing(usize::MAX).chunk(), MAX_CHUNK);
    }

    #[test]
    fn lent_chunks_never_grow() {
        let mut lent = [1u32; 3];
        let mut chunks = Chunks::lent(Memory::from(&mut lent[..]));
        assert_eq!((chunks.len(), chunks.chunk_bytes()), (3, 0));
        assert!(!chunks.grow(0));
        chunks.shrink_to(0);
        assert_eq!(chunks.len(), 3);
        assert_eq!(
            chunks
                .iter_from(1)
                .map(|(at, v)| at + *v as usize)
                .sum::<usize>(),
            5
        );
    }
}
