//! Writing RESP2 or RESP3 replies into a byte slice, each reply whole or not at all.
//!
//! The writer knows the connection's [`Protocol`]: commands call [`ReplyWriter::null`],
//! [`ReplyWriter::map_header`], [`ReplyWriter::set_header`], [`ReplyWriter::verbatim`] or
//! [`ReplyWriter::push_header`] once, and each writes what that protocol has for it (RESP2's
//! flattened arrays and `$-1`, RESP3's `%`, `~`, `_`, `=` and `>`), as Redis' `addReplyMapLen`
//! and friends do.

use super::{ProtocolError, WriteFull};
use crate::decimal::{decimal_len, Decimal};

const CRLF: &[u8] = b"\r\n";

/// Writes replies into a caller's buffer, such as the free space smoltcp's `TcpSocket::send`
/// hands its closure.
///
/// Each method writes one whole reply or, if it does not fit in what is left, nothing, and
/// returns [`WriteFull`]. To make a multi-part reply (an array and its elements) all-or-nothing
/// too, note [`len`](Self::len) before it and [`truncate`](Self::truncate) back on failure.
///
/// # Examples
///
/// ```
/// use net_shell::resp::ReplyWriter;
///
/// let mut tx = [0u8; 64];
/// let mut replies = ReplyWriter::new(&mut tx);
/// replies.array_header(2).unwrap();
/// replies.bulk(b"a").unwrap();
/// replies.null().unwrap();
/// replies.integer(-7).unwrap();
/// assert_eq!(replies.written(), b"*2\r\n$1\r\na\r\n$-1\r\n:-7\r\n");
/// ```
#[derive(Debug)]
pub struct ReplyWriter<'a> {
    /// Where replies go; its first `len` bytes are written.
    buf: Buf<'a>,
    /// How many bytes are written.
    len: usize,
    /// The protocol the client speaks (`HELLO`).
    protocol: Protocol,
    /// A push was written ([`push_header`](Self::push_header)).
    pushed: bool,
}

/// The protocol a connection speaks: RESP2 until the client says `HELLO 3`.
///
/// # Examples
///
/// ```
/// use net_shell::resp::{Protocol, ReplyWriter};
///
/// let mut tx = [0u8; 32];
/// let mut replies = ReplyWriter::new(&mut tx).speaking(Protocol::Resp3);
/// replies.map_header(1).unwrap();
/// replies.bulk(b"k").unwrap();
/// replies.null().unwrap();
/// assert_eq!(replies.written(), b"%1\r\n$1\r\nk\r\n_\r\n");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Protocol {
    /// RESP2: maps and sets as flat arrays, `$-1` and `*-1` for nil.
    #[default]
    Resp2,
    /// RESP3: maps, sets, `_` for nil, verbatim strings, pushes.
    Resp3,
}

impl Protocol {
    /// The version number, as `HELLO` and `CLIENT LIST` show it.
    pub const fn version(self) -> i64 {
        match self {
            Self::Resp2 => 2,
            Self::Resp3 => 3,
        }
    }
}

/// A reply buffer: a slice of fixed size, or (with the `alloc` feature) a `Vec` that grows.
#[derive(Debug)]
enum Buf<'a> {
    Slice(&'a mut [u8]),
    #[cfg(feature = "alloc")]
    Vec(&'a mut alloc::vec::Vec<u8>),
}

impl Buf<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Slice(slice) => slice,
            #[cfg(feature = "alloc")]
            Self::Vec(vec) => vec,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Self::Slice(slice) => slice,
            #[cfg(feature = "alloc")]
            Self::Vec(vec) => vec,
        }
    }

    /// Makes the buffer at least `end` bytes long if it can grow; whether it is.
    fn ensure(&mut self, end: usize) -> bool {
        match self {
            Self::Slice(slice) => end <= slice.len(),
            #[cfg(feature = "alloc")]
            Self::Vec(vec) => {
                if end > vec.len() {
                    let grown = end.max(vec.len().saturating_mul(2));
                    if vec.try_reserve(grown - vec.len()).is_err() {
                        return false;
                    }
                    vec.resize(grown, 0);
                }
                true
            }
        }
    }

    /// Whether it grows.
    fn grows(&self) -> bool {
        !matches!(self, Self::Slice(_))
    }
}

impl<'a> ReplyWriter<'a> {
    /// A writer filling `buf` from its start.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 16];
    /// let replies = ReplyWriter::new(&mut tx);
    /// assert_eq!(replies.remaining(), 16);
    /// ```
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self {
            buf: Buf::Slice(buf),
            len: 0,
            protocol: Protocol::Resp2,
            pushed: false,
        }
    }

    /// The same writer, writing in `protocol` (RESP2 unless told).
    #[must_use]
    pub fn speaking(mut self, protocol: Protocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// Writes in `protocol` from here on (`HELLO` switching protocols mid-reply).
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = protocol;
    }

    /// The protocol written.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// A writer filling `vec` from its start, growing it as replies need (its length is the
    /// room; what is written is [`written`](Self::written)).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut vec = Vec::new();
    /// let mut replies = ReplyWriter::growable(&mut vec);
    /// replies.bulk(&[b'x'; 100_000]).unwrap();
    /// assert_eq!(replies.len(), 100_011); // "$100000\r\n", the value, "\r\n"
    /// ```
    #[cfg(feature = "alloc")]
    pub fn growable(vec: &'a mut alloc::vec::Vec<u8>) -> Self {
        Self {
            buf: Buf::Vec(vec),
            len: 0,
            protocol: Protocol::Resp2,
            pushed: false,
        }
    }

    /// The bytes written so far.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 16];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.simple("OK").unwrap();
    /// assert_eq!(replies.written(), b"+OK\r\n");
    /// ```
    pub fn written(&self) -> &[u8] {
        self.buf.bytes().get(..self.len).unwrap_or_default()
    }

    /// How many bytes are written: what to tell smoltcp's `send` closure it used.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 16];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.integer(42).unwrap();
    /// assert_eq!(replies.len(), 5);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is written yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 16];
    /// assert!(ReplyWriter::new(&mut tx).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many more bytes fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::{bulk_reply_len, ReplyWriter};
    ///
    /// let mut tx = [0u8; 16];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.null().unwrap();
    /// assert_eq!(replies.remaining(), 11);
    /// assert!(bulk_reply_len(5) <= replies.remaining());
    /// ```
    pub fn remaining(&self) -> usize {
        if self.buf.grows() {
            return usize::MAX - self.len;
        }
        self.buf.bytes().len() - self.len
    }

    /// The part of the buffer not written yet, as scratch space: a command can build a value
    /// there (`APPEND`, `SETRANGE`) before it writes its reply, which then overwrites it.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 16];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.spare()[..2].copy_from_slice(b"ab");
    /// assert_eq!(replies.spare().len(), 16);
    /// replies.integer(2).unwrap();
    /// assert_eq!(replies.written(), b":2\r\n");
    /// ```
    pub fn spare(&mut self) -> &mut [u8] {
        let len = self.len;
        self.buf.bytes_mut().get_mut(len..).unwrap_or_default()
    }

    /// The first `len` bytes of [`spare`](Self::spare), growing a growable buffer to have
    /// them; `None` if they do not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 16];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// assert!(replies.spare_for(16).is_some());
    /// assert!(replies.spare_for(17).is_none());
    /// ```
    pub fn spare_for(&mut self, len: usize) -> Option<&mut [u8]> {
        let end = self.len.checked_add(len)?;
        if !self.buf.ensure(end) {
            return None;
        }
        let start = self.len;
        self.buf.bytes_mut().get_mut(start..end)
    }

    /// What is written so far, beside the first `len` bytes of [`spare`](Self::spare) (a
    /// growable buffer grows to have them): for building a value from parts of the reply
    /// already written. `None` if they do not fit.
    #[cfg_attr(not(feature = "lists"), allow(dead_code))]
    pub(crate) fn written_and_spare(&mut self, len: usize) -> Option<(&[u8], &mut [u8])> {
        let end = self.len.checked_add(len)?;
        if !self.buf.ensure(end) {
            return None;
        }
        let (written, rest) = self.buf.bytes_mut().split_at_mut(self.len);
        Some((written, rest.get_mut(..len)?))
    }

    /// Drops what was written after the first `len` bytes; does nothing if `len` is not less than
    /// [`len`](Self::len). For taking back the start of a multi-part reply that did not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 12];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// let mark = replies.len();
    /// let whole = replies
    ///     .array_header(2)
    ///     .and_then(|()| replies.bulk(b"first"))
    ///     .and_then(|()| replies.bulk(b"second"));
    /// if whole.is_err() {
    ///     replies.truncate(mark);
    /// }
    /// assert!(replies.is_empty());
    /// ```
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// A simple string, `+<text>\r\n`. `\r` and `\n` in `text` are written as spaces, since a
    /// simple string cannot hold them.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if [`simple_reply_len`] of `text` exceeds
    /// [`remaining`](Self::remaining).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 16];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.simple("PONG").unwrap();
    /// assert_eq!(replies.written(), b"+PONG\r\n");
    /// ```
    pub fn simple(&mut self, text: &str) -> Result<(), WriteFull> {
        self.line(b"+", text.as_bytes())
    }

    /// An error, `-<text>\r\n`. Start `text` with the error code: `"ERR unknown command"`,
    /// `"WRONGTYPE Operation against a key holding the wrong kind of value"`. `\r` and `\n` in
    /// `text` are written as spaces, as Redis does.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if [`simple_reply_len`] of `text` exceeds
    /// [`remaining`](Self::remaining).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 32];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.error("ERR syntax error").unwrap();
    /// assert_eq!(replies.written(), b"-ERR syntax error\r\n");
    /// ```
    pub fn error(&mut self, text: &str) -> Result<(), WriteFull> {
        self.line(b"-", text.as_bytes())
    }

    /// The reply Redis sends for a protocol error, `-ERR <message>\r\n`, byte for byte (the byte
    /// in [`ProtocolError::ExpectedDollar`] is written as is, `\r` and `\n` as spaces).
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if the reply does not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::{ProtocolError, ReplyWriter};
    ///
    /// let mut tx = [0u8; 64];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.protocol_error(ProtocolError::InvalidBulkLength).unwrap();
    /// assert_eq!(replies.written(), b"-ERR Protocol error: invalid bulk length\r\n");
    /// ```
    pub fn protocol_error(&mut self, error: ProtocolError) -> Result<(), WriteFull> {
        let (head, byte, tail) = error.wire_parts();
        let byte = byte.as_slice();
        self.put(&[b"-ERR ", head.as_bytes(), byte, tail.as_bytes(), CRLF])
    }

    /// An integer, `:<n>\r\n`.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if [`integer_reply_len`] of `n` exceeds
    /// [`remaining`](Self::remaining).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 32];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.integer(i64::MIN).unwrap();
    /// assert_eq!(replies.written(), b":-9223372036854775808\r\n");
    /// ```
    pub fn integer(&mut self, n: i64) -> Result<(), WriteFull> {
        let sign: &[u8] = if n < 0 { b"-" } else { b"" };
        let digits = Decimal::new(n.unsigned_abs());
        self.put(&[b":", sign, digits.as_bytes(), CRLF])
    }

    /// A bulk string, `$<len>\r\n<value>\r\n`.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if [`bulk_reply_len`] of `value.len()` exceeds
    /// [`remaining`](Self::remaining).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 32];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.bulk(b"a\r\nb").unwrap();
    /// assert_eq!(replies.written(), b"$4\r\na\r\nb\r\n");
    /// ```
    pub fn bulk(&mut self, value: &[u8]) -> Result<(), WriteFull> {
        let digits = Decimal::new(value.len() as u64);
        self.put(&[b"$", digits.as_bytes(), CRLF, value, CRLF])
    }

    /// A bulk string's header, `$<len>\r\n`, for a value whose bytes (and CRLF) follow
    /// with [`raw`](Self::raw).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 32];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.bulk_header(3).unwrap();
    /// replies.raw(b"abc\r\n").unwrap();
    /// assert_eq!(replies.written(), b"$3\r\nabc\r\n");
    /// ```
    pub fn bulk_header(&mut self, len: usize) -> Result<(), WriteFull> {
        let digits = Decimal::new(len as u64);
        self.put(&[b"$", digits.as_bytes(), CRLF])
    }

    /// Bytes as they are: the body of a bulk string begun with
    /// [`bulk_header`](Self::bulk_header).
    pub fn raw(&mut self, bytes: &[u8]) -> Result<(), WriteFull> {
        self.put(&[bytes])
    }

    /// The null bulk string, `$-1\r\n`: what `GET` answers for a missing key.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if fewer than 5 bytes remain.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 8];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.null().unwrap();
    /// assert_eq!(replies.written(), b"$-1\r\n");
    /// ```
    pub fn null(&mut self) -> Result<(), WriteFull> {
        match self.protocol {
            Protocol::Resp2 => self.put(&[b"$-1\r\n"]),
            Protocol::Resp3 => self.put(&[b"_\r\n"]),
        }
    }

    /// The header of an array of `count` elements, `*<count>\r\n`; write the elements next.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if [`array_header_len`] of `count` exceeds
    /// [`remaining`](Self::remaining).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 32];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.array_header(0).unwrap();
    /// assert_eq!(replies.written(), b"*0\r\n");
    /// ```
    pub fn array_header(&mut self, count: usize) -> Result<(), WriteFull> {
        let digits = Decimal::new(count as u64);
        self.put(&[b"*", digits.as_bytes(), CRLF])
    }

    /// The null array, `*-1\r\n`.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if fewer than 5 bytes remain.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 8];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.null_array().unwrap();
    /// assert_eq!(replies.written(), b"*-1\r\n");
    /// ```
    pub fn null_array(&mut self) -> Result<(), WriteFull> {
        match self.protocol {
            Protocol::Resp2 => self.put(&[b"*-1\r\n"]),
            Protocol::Resp3 => self.put(&[b"_\r\n"]),
        }
    }

    /// The header of a map of `pairs` key-value pairs: RESP3's `%<pairs>`, RESP2's array of
    /// twice as many elements. Write the keys and values next, alternating.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if the header does not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 8];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// replies.map_header(2).unwrap();
    /// assert_eq!(replies.written(), b"*4\r\n");
    /// ```
    pub fn map_header(&mut self, pairs: usize) -> Result<(), WriteFull> {
        match self.protocol {
            Protocol::Resp2 => self.aggregate(b"*", pairs.saturating_mul(2)),
            Protocol::Resp3 => self.aggregate(b"%", pairs),
        }
    }

    /// The header of a set of `count` elements: RESP3's `~<count>`, RESP2's array.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if the header does not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::{Protocol, ReplyWriter};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut replies = ReplyWriter::new(&mut tx).speaking(Protocol::Resp3);
    /// replies.set_header(3).unwrap();
    /// assert_eq!(replies.written(), b"~3\r\n");
    /// ```
    pub fn set_header(&mut self, count: usize) -> Result<(), WriteFull> {
        match self.protocol {
            Protocol::Resp2 => self.aggregate(b"*", count),
            Protocol::Resp3 => self.aggregate(b"~", count),
        }
    }

    /// The header of an out-of-band message of `count` elements (a pub/sub message): RESP3's
    /// push, `><count>`, RESP2's array.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if the header does not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::{Protocol, ReplyWriter};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut replies = ReplyWriter::new(&mut tx).speaking(Protocol::Resp3);
    /// replies.push_header(3).unwrap();
    /// assert_eq!(replies.written(), b">3\r\n");
    /// ```
    pub fn push_header(&mut self, count: usize) -> Result<(), WriteFull> {
        self.pushed = true;
        match self.protocol {
            Protocol::Resp2 => self.aggregate(b"*", count),
            Protocol::Resp3 => self.aggregate(b">", count),
        }
    }

    /// Whether a push ([`push_header`](Self::push_header): a pub/sub confirmation or message)
    /// was written: Redis sends those whatever `CLIENT REPLY` says (its `CLIENT_PUSHING`).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::ReplyWriter;
    ///
    /// let mut tx = [0u8; 8];
    /// let mut replies = ReplyWriter::new(&mut tx);
    /// assert!(!replies.wrote_push());
    /// replies.push_header(3).unwrap();
    /// assert!(replies.wrote_push());
    /// ```
    pub fn wrote_push(&self) -> bool {
        self.pushed
    }

    /// Text for a person to read (`INFO`, `CLIENT LIST`): RESP3's verbatim string of format
    /// `txt`, RESP2's bulk string.
    ///
    /// # Errors
    ///
    /// [`WriteFull`], writing nothing, if it does not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::{Protocol, ReplyWriter};
    ///
    /// let mut tx = [0u8; 32];
    /// let mut replies = ReplyWriter::new(&mut tx).speaking(Protocol::Resp3);
    /// replies.verbatim(b"a:1\r\n").unwrap();
    /// assert_eq!(replies.written(), b"=9\r\ntxt:a:1\r\n\r\n");
    /// ```
    pub fn verbatim(&mut self, text: &[u8]) -> Result<(), WriteFull> {
        match self.protocol {
            Protocol::Resp2 => self.bulk(text),
            Protocol::Resp3 => {
                let digits = Decimal::new(text.len() as u64 + 4);
                self.put(&[b"=", digits.as_bytes(), CRLF, b"txt:", text, CRLF])
            }
        }
    }

    /// `marker`, `count`, CRLF.
    fn aggregate(&mut self, marker: &[u8], count: usize) -> Result<(), WriteFull> {
        let digits = Decimal::new(count as u64);
        self.put(&[marker, digits.as_bytes(), CRLF])
    }

    /// `marker`, `text` with CR and LF as spaces, CRLF.
    fn line(&mut self, marker: &[u8], text: &[u8]) -> Result<(), WriteFull> {
        let text_start = self.len + marker.len();
        self.put(&[marker, text, CRLF])?;
        let text_end = text_start + text.len();
        for byte in self
            .buf
            .bytes_mut()
            .get_mut(text_start..text_end)
            .unwrap_or_default()
        {
            if matches!(*byte, b'\r' | b'\n') {
                *byte = b' ';
            }
        }
        Ok(())
    }

    /// Writes `parts` one after another, or nothing if they do not all fit.
    fn put(&mut self, parts: &[&[u8]]) -> Result<(), WriteFull> {
        let total = parts
            .iter()
            .fold(0usize, |total, part| total.saturating_add(part.len()));
        let end = self.len.checked_add(total).ok_or(WriteFull)?;
        if !self.buf.ensure(end) {
            return Err(WriteFull);
        }
        let start = self.len;
        let mut out = self.buf.bytes_mut().get_mut(start..end).ok_or(WriteFull)?;
        for part in parts {
            let (head, tail) = out.split_at_mut(part.len());
            head.copy_from_slice(part);
            out = tail;
        }
        self.len = end;
        Ok(())
    }
}

/// The bytes [`ReplyWriter::bulk`] writes for a value of `len` bytes: `$<len>\r\n`, the value,
/// `\r\n`. Saturates at `usize::MAX`.
///
/// # Examples
///
/// ```
/// use net_shell::resp::bulk_reply_len;
///
/// assert_eq!(bulk_reply_len(5), b"$5\r\nhello\r\n".len());
/// assert_eq!(bulk_reply_len(10), 17);
/// ```
pub const fn bulk_reply_len(len: usize) -> usize {
    len.saturating_add(5 + decimal_len(len as u64))
}

/// The bytes [`ReplyWriter::integer`] writes for `n`.
///
/// # Examples
///
/// ```
/// use net_shell::resp::integer_reply_len;
///
/// assert_eq!(integer_reply_len(-12), b":-12\r\n".len());
/// assert_eq!(integer_reply_len(i64::MIN), 23);
/// ```
pub const fn integer_reply_len(n: i64) -> usize {
    let sign = if n < 0 { 1 } else { 0 };
    3 + sign + decimal_len(n.unsigned_abs())
}

/// The bytes [`ReplyWriter::array_header`] writes for `count` elements.
///
/// # Examples
///
/// ```
/// use net_shell::resp::array_header_len;
///
/// assert_eq!(array_header_len(12), b"*12\r\n".len());
/// ```
pub const fn array_header_len(count: usize) -> usize {
    3 + decimal_len(count as u64)
}

/// The bytes [`ReplyWriter::simple`] or [`ReplyWriter::error`] writes for `text`.
///
/// # Examples
///
/// ```
/// use net_shell::resp::simple_reply_len;
///
/// assert_eq!(simple_reply_len("OK"), b"+OK\r\n".len());
/// ```
pub const fn simple_reply_len(text: &str) -> usize {
    text.len().saturating_add(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `write` on writers with room for 0 up to `expected.len()` bytes: all but the last must
    /// fail and leave the buffer as it was; the last must write exactly `expected`.
    fn assert_all_or_nothing(
        expected: &[u8],
        write: impl Fn(&mut ReplyWriter<'_>) -> Result<(), WriteFull>,
    ) {
        for room in 0..=expected.len() {
            // Something already written, to check it is kept and appended to.
            let mut buf = [0xaau8; 128];
            let mut replies = ReplyWriter::new(&mut buf[..3 + room]);
            replies.put(&[b"abc"]).unwrap();
            let result = write(&mut replies);
            if room < expected.len() {
                assert_eq!(result, Err(WriteFull), "room {room}");
                assert_eq!(replies.written(), b"abc", "room {room}");
                assert!(
                    buf[3..].iter().all(|&b| b == 0xaa),
                    "room {room}: wrote a partial reply"
                );
            } else {
                assert_eq!(result, Ok(()));
                assert_eq!(&replies.written()[3..], expected);
                assert_eq!(replies.remaining(), 0);
            }
        }
    }

    #[test]
    fn simple_writes_plus_line() {
        assert_all_or_nothing(b"+OK\r\n", |w| w.simple("OK"));
        assert_all_or_nothing(b"+\r\n", |w| w.simple(""));
    }

    #[test]
    fn simple_with_line_breaks_writes_spaces() {
        assert_all_or_nothing(b"+a  b \r\n", |w| w.simple("a\r\nb\n"));
    }

    #[test]
    fn error_writes_minus_line() {
        assert_all_or_nothing(b"-ERR unknown command\r\n", |w| {
            w.error("ERR unknown command")
        });
        assert_all_or_nothing(b"-WRONGTYPE x y\r\n", |w| w.error("WRONGTYPE x\ny"));
    }

    #[test]
    fn protocol_error_writes_redis_reply() {
        assert_all_or_nothing(b"-ERR Protocol error: too big inline request\r\n", |w| {
            w.protocol_error(ProtocolError::TooBigInlineRequest)
        });
        assert_all_or_nothing(
            b"-ERR Protocol error: unbalanced quotes in request\r\n",
            |w| w.protocol_error(ProtocolError::UnbalancedQuotes),
        );
    }

    #[test]
    fn protocol_error_expected_dollar_writes_raw_byte() {
        assert_all_or_nothing(b"-ERR Protocol error: expected '$', got 'P'\r\n", |w| {
            w.protocol_error(ProtocolError::ExpectedDollar(b'P'))
        });
        assert_all_or_nothing(b"-ERR Protocol error: expected '$', got '\xff'\r\n", |w| {
            w.protocol_error(ProtocolError::ExpectedDollar(0xff))
        });
        assert_all_or_nothing(b"-ERR Protocol error: expected '$', got '\x00'\r\n", |w| {
            w.protocol_error(ProtocolError::ExpectedDollar(0))
        });
        assert_all_or_nothing(b"-ERR Protocol error: expected '$', got ' '\r\n", |w| {
            w.protocol_error(ProtocolError::ExpectedDollar(b'\r'))
        });
    }

    #[test]
    fn integer_writes_colon_line() {
        assert_all_or_nothing(b":0\r\n", |w| w.integer(0));
        assert_all_or_nothing(b":-1\r\n", |w| w.integer(-1));
        assert_all_or_nothing(b":1000\r\n", |w| w.integer(1000));
        assert_all_or_nothing(b":9223372036854775807\r\n", |w| w.integer(i64::MAX));
        assert_all_or_nothing(b":-9223372036854775808\r\n", |w| w.integer(i64::MIN));
    }

    #[test]
    fn bulk_writes_length_and_bytes() {
        assert_all_or_nothing(b"$0\r\n\r\n", |w| w.bulk(b""));
        assert_all_or_nothing(b"$5\r\nhello\r\n", |w| w.bulk(b"hello"));
        assert_all_or_nothing(b"$4\r\n\r\n\x00\xff\r\n", |w| w.bulk(b"\r\n\x00\xff"));
        let long = [b'x'; 100];
        let mut expected = [0u8; 108];
        expected[..6].copy_from_slice(b"$100\r\n");
        expected[6..106].copy_from_slice(&long);
        expected[106..].copy_from_slice(b"\r\n");
        assert_all_or_nothing(&expected, |w| w.bulk(&long));
    }

    #[test]
    fn null_and_null_array() {
        assert_all_or_nothing(b"$-1\r\n", |w| w.null());
        assert_all_or_nothing(b"*-1\r\n", |w| w.null_array());
    }

    #[test]
    fn array_header_writes_star_line() {
        assert_all_or_nothing(b"*0\r\n", |w| w.array_header(0));
        assert_all_or_nothing(b"*3\r\n", |w| w.array_header(3));
        assert_all_or_nothing(b"*12345\r\n", |w| w.array_header(12345));
    }

    #[test]
    fn full_writer_then_truncate_takes_back_a_partial_array() {
        let mut buf = [0u8; 20];
        let mut replies = ReplyWriter::new(&mut buf);
        replies.simple("OK").unwrap();
        let mark = replies.len();
        replies.array_header(2).unwrap();
        replies.bulk(b"ab").unwrap();
        assert_eq!(replies.bulk(b"cd"), Err(WriteFull));
        replies.truncate(mark);
        assert_eq!(replies.written(), b"+OK\r\n");
        replies.truncate(100);
        assert_eq!(replies.written(), b"+OK\r\n");
        assert_eq!(replies.remaining(), 15);
    }

    #[test]
    fn empty_buffer_takes_nothing() {
        let mut replies = ReplyWriter::new(&mut []);
        assert_eq!(replies.null(), Err(WriteFull));
        assert_eq!(replies.bulk(b""), Err(WriteFull));
        assert!(replies.is_empty());
        assert_eq!(replies.remaining(), 0);
    }

    #[test]
    fn length_helpers_match_what_is_written() {
        let mut buf = [0u8; 64];
        let integers = [
            0,
            1,
            -1,
            9,
            10,
            -10,
            99,
            100,
            12_345,
            -99_999,
            i64::from(i32::MAX),
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ];
        for n in integers {
            let mut replies = ReplyWriter::new(&mut buf);
            replies.integer(n).unwrap();
            assert_eq!(replies.len(), integer_reply_len(n), "{n}");
        }
        let bytes = [b'v'; 40];
        for len in [0, 1, 9, 10, 11, 39, 40] {
            let mut replies = ReplyWriter::new(&mut buf);
            replies.bulk(&bytes[..len]).unwrap();
            assert_eq!(replies.len(), bulk_reply_len(len), "{len}");
        }
        for count in [0, 9, 10, 1_000_000, usize::MAX] {
            let mut replies = ReplyWriter::new(&mut buf);
            replies.array_header(count).unwrap();
            assert_eq!(replies.len(), array_header_len(count), "{count}");
        }
        for text in ["", "OK", "ERR no"] {
            let mut replies = ReplyWriter::new(&mut buf);
            replies.simple(text).unwrap();
            assert_eq!(replies.len(), simple_reply_len(text));
        }
        assert_eq!(bulk_reply_len(usize::MAX), usize::MAX);
    }
}
