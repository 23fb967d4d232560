//! RESP2, the Redis serialization protocol: a request parser and a reply writer, both
//! allocation-free.
//!
//! # Requests
//!
//! [`parse`] takes a connection's receive buffer and returns one command from its front, or
//! [`Parsed::Incomplete`] when the buffer holds only part of one. It keeps no state between calls:
//! the caller keeps the unconsumed bytes, appends what arrives next and calls again. So a command
//! split across any number of TCP segments parses the same as one that arrived whole, and pipelined
//! commands are taken one call at a time.
//!
//! Both request forms Redis accepts are understood:
//!
//! | form | example | arguments |
//! | --- | --- | --- |
//! | multibulk | `*2\r\n$3\r\nGET\r\n$1\r\nk\r\n` | length-prefixed, binary-safe |
//! | inline | `SET k "hello world"\n` | split on blanks, with quotes and escapes |
//!
//! Arguments are slices of the receive buffer, never copies. Inline arguments in double quotes
//! can hold escapes (`"\x00\r\n"`) whose decoded bytes differ from the wire bytes, so [`parse`]
//! takes the buffer as `&mut [u8]` and decodes them in place, over the line they came from. The
//! decoded form is never longer than the escaped one, and the line is consumed either way, so
//! nothing the caller keeps is disturbed. Multibulk requests are only read.
//!
//! Every bound is set by the caller: the argument count by the `MAX_ARGS` const parameter, the
//! bulk and line lengths by [`Limits`]. A request past a bound is a [`ProtocolError`] whose text is
//! the one Redis 7 sends for the same fault, so a client sees the reply it would from Redis.
//!
//! # Replies
//!
//! [`ReplyWriter`] writes replies into a caller's byte slice, for example the free space smoltcp
//! offers in `TcpSocket::send`. Each call writes a whole reply or nothing, and says
//! [`WriteFull`] when it does not fit; [`bulk_reply_len`] and friends give sizes up front.
//!
//! # Examples
//!
//! A connection's loop: parse, reply, drop what was consumed, repeat until the buffer runs out.
//!
//! ```
//! use net_shell::resp::{parse, Limits, Parsed, ReplyWriter};
//!
//! const LIMITS: Limits = Limits::new(512, 256);
//! let mut rx = [0u8; 128];
//! let arrived = b"*1\r\n$4\r\nPING\r\nECHO \"hi there\"\r\n*2\r\n$4\r\nECHO\r\n$3\r\nab";
//! rx[..arrived.len()].copy_from_slice(arrived);
//! let mut filled = arrived.len();
//!
//! let mut tx = [0u8; 128];
//! let mut replies = ReplyWriter::new(&mut tx);
//! loop {
//!     let consumed = match parse::<4>(&mut rx[..filled], &LIMITS) {
//!         Ok(Parsed::Incomplete) => break, // wait for more bytes
//!         Ok(Parsed::Empty { consumed }) => consumed,
//!         Ok(Parsed::Command { command, consumed }) => {
//!             if command.name_is(b"PING") {
//!                 replies.simple("PONG").unwrap();
//!             } else if command.name_is(b"ECHO") && command.len() == 2 {
//!                 replies.bulk(command.arg(1).unwrap()).unwrap();
//!             } else {
//!                 replies.error("ERR unknown command").unwrap();
//!             }
//!             consumed
//!         }
//!         Err(error) => {
//!             replies.protocol_error(error).unwrap();
//!             break; // then close the connection, as Redis does
//!         }
//!     };
//!     rx.copy_within(consumed..filled, 0);
//!     filled -= consumed;
//! }
//! assert_eq!(replies.written(), b"+PONG\r\n$8\r\nhi there\r\n");
//! assert_eq!(&rx[..filled], b"*2\r\n$4\r\nECHO\r\n$3\r\nab"); // the rest of the third command is still to come
//! ```

mod command;
mod error;
mod inline;
mod parse;
mod reply;

pub use command::{Command, Parsed};
pub use error::{ProtocolError, WriteFull};
#[cfg(feature = "alloc")]
pub use parse::parse_spilling;
pub use parse::{parse, Limits, UNAUTHENTICATED_MAX_ARGS, UNAUTHENTICATED_MAX_BULK_LEN};
pub use reply::{
    array_header_len, bulk_reply_len, integer_reply_len, simple_reply_len, Protocol, ReplyWriter,
};
