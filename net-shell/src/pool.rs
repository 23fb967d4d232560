//! A compacting byte pool: every key and its value live in one fixed byte array.
//!
//! Blocks are bump-allocated; each has an 8-byte header (owner entry, data capacity) so the
//! pool can be walked. Freed blocks become holes; when the tail has no room but the holes do, the
//! pool is compacted in one pass (`copy_within`, O(bytes)), updating each owner's offset. No
//! fragmentation can make a request fail while `used + needed <= capacity`.

const HEADER: usize = 8;
const FREE: u32 = u32::MAX;

/// Something whose blocks the pool may move during compaction.
pub(crate) trait Owners {
    /// Block data of `owner` now starts at `offset`.
    fn moved(&mut self, owner: u32, offset: u32);
}

pub(crate) struct Pool<const BYTES: usize> {
    bytes: [u8; BYTES],
    top: usize,
    used: usize,
}

impl<const BYTES: usize> Pool<BYTES> {
    const FITS_U32: () = assert!(BYTES < u32::MAX as usize, "net-shell: pool must be < 4 GiB");

    pub(crate) const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::FITS_U32;
        Self {
            bytes: [0; BYTES],
            top: 0,
            used: 0,
        }
    }

    /// Bytes taken by live blocks, headers included.
    pub(crate) const fn used(&self) -> usize {
        self.used
    }

    pub(crate) const fn capacity(&self) -> usize {
        BYTES
    }

    /// The pool cost of a block holding `len` data bytes.
    pub(crate) const fn cost(len: usize) -> usize {
        HEADER + len
    }

    /// Whether a block of `len` bytes fits, counting holes that compaction would reclaim.
    pub(crate) fn fits(&self, len: usize) -> bool {
        self.used + Self::cost(len) <= BYTES
    }

    /// Allocates `len` data bytes for `owner`; returns the data offset.
    pub(crate) fn allocate(
        &mut self,
        owner: u32,
        len: usize,
        owners: &mut impl Owners,
    ) -> Option<u32> {
        if !self.fits(len) {
            return None;
        }
        if self.top + Self::cost(len) > BYTES {
            self.compact(owners);
        }
        let at = self.top;
        self.write_header(at, owner, len as u32);
        self.top += Self::cost(len);
        self.used += Self::cost(len);
        Some((at + HEADER) as u32)
    }

    /// Frees the block whose data starts at `offset`.
    pub(crate) fn free(&mut self, offset: u32) {
        let at = offset as usize - HEADER;
        let (_, len) = self.read_header(at);
        self.write_header(at, FREE, len);
        self.used -= Self::cost(len as usize);
        if at + Self::cost(len as usize) == self.top {
            self.top = at;
        }
    }

    /// Cuts the block at `offset` down to `len` data bytes; the rest becomes a hole when it
    /// can hold a header, and otherwise stays with the block.
    pub(crate) fn shrink(&mut self, offset: u32, len: usize) {
        let at = offset as usize - HEADER;
        let (owner, old) = self.read_header(at);
        let old = old as usize;
        if old < len + HEADER {
            return;
        }
        self.write_header(at, owner, len as u32);
        let hole = at + Self::cost(len);
        let hole_len = old - len - HEADER;
        self.write_header(hole, FREE, hole_len as u32);
        self.used -= old - len;
        if hole + Self::cost(hole_len) == self.top {
            self.top = hole;
        }
    }

    /// The data capacity of the block at `offset`.
    pub(crate) fn block_len(&self, offset: u32) -> usize {
        self.read_header(offset as usize - HEADER).1 as usize
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
    }

    fn compact(&mut self, owners: &mut impl Owners) {
        let mut read = 0;
        let mut write = 0;
        while read < self.top {
            let (owner, len) = self.read_header(read);
            let cost = Self::cost(len as usize);
            if owner != FREE {
                if read != write {
                    self.bytes.copy_within(read..read + cost, write);
                }
                owners.moved(owner, (write + HEADER) as u32);
                write += cost;
            }
            read += cost;
        }
        self.top = write;
    }

    fn read_header(&self, at: usize) -> (u32, u32) {
        let word = |i: usize| {
            let mut raw = [0u8; 4];
            raw.copy_from_slice(&self.bytes[i..i + 4]);
            u32::from_le_bytes(raw)
        };
        (word(at), word(at + 4))
    }

    fn write_header(&mut self, at: usize, owner: u32, len: u32) {
        self.bytes[at..at + 4].copy_from_slice(&owner.to_le_bytes());
        self.bytes[at + 4..at + 8].copy_from_slice(&len.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Offsets([u32; 8]);

    impl Owners for Offsets {
        fn moved(&mut self, owner: u32, offset: u32) {
            self.0[owner as usize] = offset;
        }
    }

    #[test]
    fn holes_are_reclaimed_by_compaction() {
        let mut pool: Pool<64> = Pool::new();
        let mut owners = Offsets([0; 8]);
        let a = pool.allocate(0, 16, &mut owners).unwrap();
        owners.0[0] = a;
        let b = pool.allocate(1, 16, &mut owners).unwrap();
        owners.0[1] = b;
        pool.slice_mut(b, 16).copy_from_slice(b"0123456789abcdef");
        pool.free(a);
        // 24 bytes at the tail are not enough for a 20-byte block (28 with header)...
        let c = pool.allocate(2, 20, &mut owners).unwrap();
        // ...so block 1 moved down to the front, and its bytes came along.
        assert_eq!(owners.0[1], 8);
        assert_eq!(pool.slice(owners.0[1], 16), b"0123456789abcdef");
        assert_eq!(c, 24 + 8);
        assert_eq!(pool.used(), 24 + 28);
    }

    #[test]
    fn full_pool_refuses_without_change() {
        let mut pool: Pool<32> = Pool::new();
        let mut owners = Offsets([0; 8]);
        assert!(pool.allocate(0, 24, &mut owners).is_some());
        assert!(pool.allocate(1, 1, &mut owners).is_none());
        assert_eq!(pool.used(), 32);
    }

    #[test]
    fn shrunk_block_leaves_a_hole_that_compaction_reclaims() {
        let mut pool: Pool<64> = Pool::new();
        let mut owners = Offsets([0; 8]);
        let a = pool.allocate(0, 20, &mut owners).unwrap();
        owners.0[0] = a;
        let b = pool.allocate(1, 8, &mut owners).unwrap();
        owners.0[1] = b;
        pool.slice_mut(b, 8).copy_from_slice(b"survivor");
        pool.slice_mut(a, 4).copy_from_slice(b"keep");
        pool.shrink(a, 4);
        assert_eq!(pool.used(), 12 + 16);
        assert_eq!(pool.block_len(a), 4);
        // 64 - 44 = 20 bytes at the tail; 36 are free in all: compaction finds them.
        let c = pool.allocate(2, 28, &mut owners).unwrap();
        assert_eq!(pool.slice(owners.0[0], 4), b"keep");
        assert_eq!(pool.slice(owners.0[1], 8), b"survivor");
        assert_eq!(c as usize, 12 + 16 + HEADER);
        assert_eq!(pool.used(), 64);
    }

    #[test]
    fn shrink_keeps_slack_too_small_for_a_header() {
        let mut pool: Pool<64> = Pool::new();
        let mut owners = Offsets([0; 8]);
        let a = pool.allocate(0, 10, &mut owners).unwrap();
        pool.shrink(a, 3);
        assert_eq!((pool.block_len(a), pool.used()), (10, 18));
        pool.shrink(a, 2);
        assert_eq!((pool.block_len(a), pool.used()), (2, 10));
        // The hole was at the top: the next block goes right after.
        assert_eq!(pool.allocate(1, 1, &mut owners), Some(18));
    }

    #[test]
    fn freeing_the_last_block_lowers_the_top() {
        let mut pool: Pool<32> = Pool::new();
        let mut owners = Offsets([0; 8]);
        let a = pool.allocate(0, 8, &mut owners).unwrap();
        pool.free(a);
        assert_eq!(pool.used(), 0);
        assert_eq!(pool.allocate(1, 24, &mut owners), Some(8));
    }
}
