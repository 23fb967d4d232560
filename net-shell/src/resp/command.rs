//! A parsed request: its arguments, borrowed from the receive buffer.

use core::fmt;
use core::iter::Copied;
use core::slice;

/// One command: its name and arguments, each a slice of the buffer it was parsed from: at most
/// `MAX_ARGS` in all, or (with the `alloc` feature) any number, those over `MAX_ARGS` kept in
/// a `Vec`.
///
/// Arguments are numbered as Redis numbers `argv`: argument 0 is the command's name, so
/// `GET key` has [`len`](Self::len) 2 and [`arg(1)`](Self::arg) is `key`. A command always has
/// its name.
///
/// # Examples
///
/// ```
/// use net_shell::resp::{parse, Limits, Parsed};
///
/// let mut rx = *b"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$5\r\nhello\r\n";
/// let Ok(Parsed::Command { command, .. }) = parse::<8>(&mut rx, &Limits::new(64, 64)) else {
///     panic!("a whole command");
/// };
/// assert!(command.name_is(b"SET"));
/// assert_eq!(command.len(), 3);
/// assert_eq!(command.arg(2), Some(&b"hello"[..]));
/// ```
#[derive(Clone)]
pub struct Command<'a, const MAX_ARGS: usize> {
    /// `args[..len]` are the arguments; the rest are empty.
    args: [&'a [u8]; MAX_ARGS],
    /// At least 1 and at most `MAX_ARGS` (0 when the arguments are in `spill`).
    len: usize,
    /// With the `alloc` feature, the arguments of a command with more than `MAX_ARGS`.
    #[cfg(feature = "alloc")]
    spill: alloc::vec::Vec<&'a [u8]>,
}

impl<'a, const MAX_ARGS: usize> Command<'a, MAX_ARGS> {
    /// A command from arguments already at hand, name first: for tests, and for commands that do
    /// not come off the wire. `None` if `args` is empty or longer than `MAX_ARGS`.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Command;
    ///
    /// let get = Command::<4>::from_args(&[b"GET", b"key"]).unwrap();
    /// assert_eq!(get.name(), b"GET");
    /// assert!(Command::<4>::from_args(&[]).is_none());
    /// assert!(Command::<1>::from_args(&[b"GET", b"key"]).is_none());
    /// ```
    pub fn from_args(args: &[&'a [u8]]) -> Option<Self> {
        if args.is_empty() || args.len() > MAX_ARGS {
            return None;
        }
        let mut all: [&'a [u8]; MAX_ARGS] = [&[]; MAX_ARGS];
        all.get_mut(..args.len())?.copy_from_slice(args);
        Some(Self::from_parts(all, args.len()))
    }

    /// Builds a command from a filled array; `len` must be in `1..=MAX_ARGS`.
    pub(super) fn from_parts(args: [&'a [u8]; MAX_ARGS], len: usize) -> Self {
        debug_assert!(len >= 1 && len <= MAX_ARGS);
        Self {
            args,
            len,
            #[cfg(feature = "alloc")]
            spill: alloc::vec::Vec::new(),
        }
    }

    /// A command of more than `MAX_ARGS` arguments (`spill` is not empty).
    #[cfg(feature = "alloc")]
    pub(super) fn spilled(spill: alloc::vec::Vec<&'a [u8]>) -> Self {
        Self {
            args: [&[]; MAX_ARGS],
            len: 0,
            spill,
        }
    }

    /// How many arguments, counting the name (Redis's `argc`).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Command;
    ///
    /// assert_eq!(Command::<4>::from_args(&[b"PING"]).unwrap().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Always `false`: a command has at least its name.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Command;
    ///
    /// assert!(!Command::<4>::from_args(&[b"PING"]).unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// The command's name (argument 0), as the client spelled it.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Command;
    ///
    /// assert_eq!(Command::<4>::from_args(&[b"get", b"k"]).unwrap().name(), b"get");
    /// ```
    pub fn name(&self) -> &'a [u8] {
        self.as_slice().first().copied().unwrap_or_default()
    }

    /// Whether the name is `name`, ignoring ASCII case, as Redis matches command names.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Command;
    ///
    /// let command = Command::<4>::from_args(&[b"pInG"]).unwrap();
    /// assert!(command.name_is(b"PING"));
    /// assert!(!command.name_is(b"PINGS"));
    /// ```
    pub fn name_is(&self, name: &[u8]) -> bool {
        self.name().eq_ignore_ascii_case(name)
    }

    /// Argument `index`, where 0 is the name; `None` past the last.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Command;
    ///
    /// let command = Command::<4>::from_args(&[b"GET", b"key"]).unwrap();
    /// assert_eq!(command.arg(1), Some(&b"key"[..]));
    /// assert_eq!(command.arg(2), None);
    /// ```
    pub fn arg(&self, index: usize) -> Option<&'a [u8]> {
        self.as_slice().get(index).copied()
    }

    /// The arguments in order, name first.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Command;
    ///
    /// let command = Command::<4>::from_args(&[b"DEL", b"a", b"b"]).unwrap();
    /// let keys: Vec<&[u8]> = command.args().skip(1).collect();
    /// assert_eq!(keys, [b"a", b"b"]);
    /// ```
    pub fn args(&self) -> Copied<slice::Iter<'_, &'a [u8]>> {
        self.as_slice().iter().copied()
    }

    /// The arguments as a slice, name first.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Command;
    ///
    /// let command = Command::<4>::from_args(&[b"SET", b"k", b"v"]).unwrap();
    /// if let [_, key, value] = command.as_slice() {
    ///     assert_eq!((*key, *value), (&b"k"[..], &b"v"[..]));
    /// }
    /// ```
    pub fn as_slice(&self) -> &[&'a [u8]] {
        #[cfg(feature = "alloc")]
        if !self.spill.is_empty() {
            return &self.spill;
        }
        self.args.get(..self.len).unwrap_or_default()
    }
}

impl<const MAX_ARGS: usize> PartialEq for Command<'_, MAX_ARGS> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const MAX_ARGS: usize> Eq for Command<'_, MAX_ARGS> {}

/// Shows arguments as byte strings: `["SET", "k", "\x00"]`.
impl<const MAX_ARGS: usize> fmt::Debug for Command<'_, MAX_ARGS> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.args().map(ByteStr)).finish()
    }
}

/// Shows arguments as byte lists.
#[cfg(feature = "defmt")]
impl<const MAX_ARGS: usize> defmt::Format for Command<'_, MAX_ARGS> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{=[?]}", self.as_slice());
    }
}

/// Debug-prints bytes as an escaped string.
struct ByteStr<'a>(&'a [u8]);

impl fmt::Debug for ByteStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.0.escape_ascii())
    }
}

/// What [`parse`](super::parse) found at the front of the buffer.
///
/// # Examples
///
/// ```
/// use net_shell::resp::{parse, Limits, Parsed};
///
/// let limits = Limits::new(64, 64);
/// let mut rx = *b"*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n";
/// assert_eq!(parse::<4>(&mut rx[..10], &limits), Ok(Parsed::Incomplete));
/// let mut blank = *b"\r\n";
/// assert_eq!(parse::<4>(&mut blank, &limits), Ok(Parsed::Empty { consumed: 2 }));
/// match parse::<4>(&mut rx, &limits) {
///     Ok(Parsed::Command { command, consumed }) => {
///         assert_eq!(command.arg(1), Some(&b"hi"[..]));
///         assert_eq!(consumed, 22);
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed<'a, const MAX_ARGS: usize> {
    /// The buffer holds only part of a request (or nothing): keep the bytes, append what arrives
    /// next and parse again.
    Incomplete,
    /// A whole command, taking the first `consumed` bytes of the buffer.
    Command {
        /// The command, borrowing the buffer.
        command: Command<'a, MAX_ARGS>,
        /// How many bytes, from the front of the buffer, the command took.
        consumed: usize,
    },
    /// A request with no arguments, which Redis skips without a reply: a blank inline line, or a
    /// multibulk count of zero or less (`*0\r\n`, `*-1\r\n`).
    Empty {
        /// How many bytes, from the front of the buffer, to drop.
        consumed: usize,
    },
}

impl<const MAX_ARGS: usize> Parsed<'_, MAX_ARGS> {
    /// How many bytes to drop from the front of the buffer: 0 for [`Parsed::Incomplete`].
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::{parse, Limits};
    ///
    /// let mut rx = *b"PING\r\nPI";
    /// let parsed = parse::<4>(&mut rx, &Limits::new(64, 64)).unwrap();
    /// assert_eq!(parsed.consumed(), 6);
    /// ```
    pub fn consumed(&self) -> usize {
        match self {
            Self::Incomplete => 0,
            Self::Command { consumed, .. } | Self::Empty { consumed } => *consumed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::error::tests::Text;

    #[test]
    fn from_args_empty_or_over_capacity_is_none() {
        assert!(Command::<2>::from_args(&[]).is_none());
        assert!(Command::<2>::from_args(&[b"a", b"b", b"c"]).is_none());
        assert!(Command::<0>::from_args(&[b"a"]).is_none());
    }

    #[test]
    fn from_args_at_capacity_keeps_all() {
        let command = Command::<3>::from_args(&[b"a", b"b", b"c"]).unwrap();
        assert_eq!(command.len(), 3);
        assert_eq!(command.as_slice(), [b"a", b"b", b"c"]);
        assert_eq!(command.arg(3), None);
    }

    #[test]
    fn name_is_ignores_ascii_case_only() {
        let command = Command::<2>::from_args(&[b"GeT"]).unwrap();
        assert!(command.name_is(b"get"));
        assert!(command.name_is(b"GET"));
        assert!(!command.name_is(b"GE"));
        assert!(!command.name_is(b"GET "));
    }

    #[test]
    fn equality_ignores_capacity_padding() {
        let a = Command::<4>::from_args(&[b"x", b"y"]).unwrap();
        let b = Command::<4>::from_args(&[b"x", b"y"]).unwrap();
        let c = Command::<4>::from_args(&[b"x"]).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn debug_shows_escaped_byte_strings() {
        let command = Command::<4>::from_args(&[b"SET", b"k", b"\x00\"\r\n"]).unwrap();
        assert_eq!(
            Text::of(format_args!("{command:?}")).as_bytes(),
            br#"["SET", "k", "\x00\"\r\n"]"#
        );
    }

    #[test]
    fn consumed_of_each_outcome() {
        let command = Command::<1>::from_args(&[b"PING"]).unwrap();
        let incomplete: Parsed<'_, 1> = Parsed::Incomplete;
        let empty: Parsed<'_, 1> = Parsed::Empty { consumed: 3 };
        assert_eq!(incomplete.consumed(), 0);
        assert_eq!(empty.consumed(), 3);
        assert_eq!(
            Parsed::Command {
                command,
                consumed: 6
            }
            .consumed(),
            6
        );
    }
}
