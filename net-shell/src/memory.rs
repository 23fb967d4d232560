//! Storage the caller provides: a slice it lends (a board's `static`), or, with the `alloc`
//! feature, a `Vec` the server owns (a host sized from its flags). One code path runs over both.
//!
//! This is smoltcp's [`ManagedSlice`], which the socket set and socket buffers already take,
//! made usable as timer-core [`Storage`](timer_core::Storage) too.

use core::ops::{Deref, DerefMut};

use managed::ManagedSlice;

/// A slice of `T` that is either borrowed for `'a` or (with the `alloc` feature) owned.
///
/// # Examples
///
/// ```
/// use net_shell::Memory;
///
/// let mut lent = [0u8; 4];
/// let borrowed: Memory<'_, u8> = Memory::from(&mut lent[..]);
/// assert_eq!(borrowed.len(), 4);
/// ```
///
/// With the `alloc` feature, `Memory::from(vec![0u8; 8])` is an owned one.
pub struct Memory<'a, T: 'a>(ManagedSlice<'a, T>);

impl<'a, T: 'a> Memory<'a, T> {
    /// An empty slice.
    pub fn empty() -> Self {
        Self(ManagedSlice::Borrowed(&mut []))
    }

    /// Splits off the last `n` elements (all, if fewer) into a slice of their own, copying
    /// nothing that stays.
    pub(crate) fn split_off_back(&mut self, n: usize) -> Self {
        match &mut self.0 {
            ManagedSlice::Borrowed(slice) => {
                let whole = core::mem::take(slice);
                let keep = whole.len().saturating_sub(n);
                let (front, back) = whole.split_at_mut(keep);
                *slice = front;
                Self(ManagedSlice::Borrowed(back))
            }
            #[cfg(feature = "alloc")]
            ManagedSlice::Owned(vec) => {
                let keep = vec.len().saturating_sub(n);
                Self(ManagedSlice::Owned(vec.split_off(keep)))
            }
        }
    }

    /// The slice, for smoltcp.
    pub(crate) fn into_managed(self) -> ManagedSlice<'a, T> {
        self.0
    }

    /// Whether the slice can grow: it is owned (a host's), not lent (a board's, whose length
    /// is fixed).
    pub(crate) fn grows(&self) -> bool {
        !matches!(self.0, ManagedSlice::Borrowed(_))
    }

    /// Puts `value` at `index`: over an element there, or appended where the slice is owned
    /// and `index` is its length. Hands `value` back otherwise.
    pub(crate) fn put(&mut self, index: usize, value: T) -> Result<(), T> {
        if let Some(slot) = self.0.get_mut(index) {
            *slot = value;
            return Ok(());
        }
        match &mut self.0 {
            #[cfg(feature = "alloc")]
            ManagedSlice::Owned(vec) if vec.len() == index => {
                vec.push(value);
                Ok(())
            }
            _ => Err(value),
        }
    }
}

impl<'a, T: 'a> From<&'a mut [T]> for Memory<'a, T> {
    fn from(slice: &'a mut [T]) -> Self {
        Self(ManagedSlice::Borrowed(slice))
    }
}

#[cfg(feature = "alloc")]
impl<'a, T: 'a> From<alloc::vec::Vec<T>> for Memory<'a, T> {
    fn from(vec: alloc::vec::Vec<T>) -> Self {
        Self(ManagedSlice::Owned(vec))
    }
}

impl<T> Deref for Memory<'_, T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for Memory<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T> AsRef<[T]> for Memory<'_, T> {
    fn as_ref(&self) -> &[T] {
        &self.0
    }
}

impl<T> AsMut<[T]> for Memory<'_, T> {
    fn as_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

/// Parts of a lent byte slice, carved from its front.
pub(crate) struct Bytes<'a> {
    lent: &'a mut [u8],
}

impl<'a> Bytes<'a> {
    /// Hands out parts of `lent`.
    pub(crate) fn lent(lent: &'a mut [u8]) -> Self {
        Self { lent }
    }

    /// How many bytes are left.
    pub(crate) fn len(&self) -> usize {
        self.lent.len()
    }

    /// The next `len` bytes; `None` when fewer are left.
    pub(crate) fn take(&mut self, len: usize) -> Option<Memory<'a, u8>> {
        if self.lent.len() < len {
            return None;
        }
        let (part, rest) = core::mem::take(&mut self.lent).split_at_mut(len);
        self.lent = rest;
        Some(Memory::from(part))
    }
}
