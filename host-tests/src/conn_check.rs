//! Whole connections through the server on the simulated network ([`sim`]), shared by the
//! `connection` fuzz target, the seeded property test `tests/conn_model.rs` and the corpus
//! replay test.
//!
//! A [`ConnInput`] opens clients and drives them: well-formed commands from a small set (PING,
//! ECHO, SET, GET, DEL, INCR, INFO, FLUSHALL, QUIT; multibulk or inline) queued and sent in
//! arbitrary chunks, raw bytes and long runs of one byte, client closes and aborts, time that
//! runs (stopping at every deadline) or jumps. Up to [`MAX_CLIENTS`] clients share
//! [`CONNS`]` - 1` client slots, so some are refused and some find no listening socket at all.
//!
//! The checker follows each client's byte stream as the server must read it: the server's own
//! parser over the stream, with Redis' limits (the server's input buffer grows while a request
//! needs it), a command at a time, until a protocol error, a request past the query buffer
//! limit, or `QUIT`. Each command is run against a small model of the
//! key space (any key: a plain `SET`, `GET`, `DEL`, `INCR` and `FLUSHALL` are modelled exactly;
//! keys touched by other writes become unknown until a plain `SET` or `DEL` settles them). It
//! asserts:
//!
//! - no panic; every byte the server sends is canonical RESP2 (it re-encodes to the same bytes;
//!   no CR or LF inside a status line), decoded with [`Reply::decode`];
//! - every client gets exactly one reply per command it sent, in order, and nothing else: the
//!   modelled reply exactly, `-ERR unknown command` for a name the server does not have,
//!   `-ERR wrong number of arguments` for a modelled command's bad arity, one `-ERR Protocol
//!   error` line and then the close for a bad request, `-ERR max number of clients reached` for a
//!   refused client; `INFO`'s counters match what the checker saw;
//! - a client is accepted exactly when a slot is free, refused when all are busy and a socket
//!   listens, and finds no listener only when every socket is taken;
//! - the server closes a connection only for a reason (protocol error, `QUIT`, the client's own
//!   close, refusal, or the idle or read timeout, at its deadline and not before), and does close
//!   it by that deadline;
//! - `INFO` and [`Stats`] stay consistent: `total_connections_received` and
//!   `rejected_connections` count exactly the accepted and refused clients, `connected_clients`
//!   is exactly the number of clients the server still serves (accepted, and neither side has
//!   begun to close), so never negative or wrapped; the connections the server holds lie
//!   between those served and the clients not yet closed; `protocol_error_closes` and the
//!   timeout closes count exactly, and no counter goes backwards;
//! - after the storm, with every client closed and the close timeout run out, no connection is
//!   left, and a fresh client is accepted, answered, sees `connected_clients:1`, and reads every
//!   key the model knows.
//!
//! A `CONFIG SET` (which can change the timeouts) turns the timeout checks off for the rest of
//! the run.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;

use net_shell::resp::{parse_spilling, Limits, Parsed};
use net_shell::{ServerBuffers, Stats, Timeouts, MAX_ARGS};
use smoltcp::socket::tcp::State;

use crate::sim::{self, info_field, Client, Reply, Sim};

/// Sockets of the server under test: one fewer clients are served at once.
pub const CONNS: usize = 4;

/// Keys the store holds.
pub const STORE_KEYS: usize = 256;

/// The store's pool: at most `MAX_BYTES_MOVED`, where a write is refused only when it does not
/// fit by count, so the model knows which writes succeed (a larger pool may refuse a write for
/// free bytes too scattered to gather).
pub const STORE_BYTES: usize = 32 << 10;

const _: () = assert!(STORE_BYTES <= net_shell::store::MAX_BYTES_MOVED);

/// The simulation the checker drives.
pub type ConnSim<'m> = Sim<'m, CONNS, STORE_KEYS, STORE_BYTES>;

/// Ops of one input beyond this are ignored (keeps each run fast).
pub const MAX_OPS: usize = 64;

/// Clients opened in one run at most (`Connect` beyond is ignored).
pub const MAX_CLIENTS: usize = 8;

/// Raw bytes of one `Send` beyond this are dropped.
pub const MAX_SEND: usize = 2_100;

/// The longest `Fill`: twice the server's input buffer (which grows to take it).
pub const MAX_FILL: usize = 4_200;

/// Redis' `proto-max-bulk-len` and longest inline request, the server's defaults.
const MAX_BULK_LEN: usize = 512 << 20;
const MAX_INLINE_LEN: usize = 64 << 10;
/// The server's `client-query-buffer-limit` here (Redis' least is 1 MiB; `ServerConfig` takes
/// any): within reach of a `Fill`. Past it, a client is closed without a reply, as by Redis.
const QUERY_BUFFER_LIMIT: usize = 4096;

/// Keys of the well-formed commands: `key:0` .. `key:5`.
pub const KEYS: u8 = 6;

const PROTOCOL_ERROR: &str = "ERR Protocol error";
const UNKNOWN_COMMAND: &str = "ERR unknown command";
const WRONG_ARITY: &str = "ERR wrong number of arguments";
const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
const OVERFLOW: &str = "ERR increment or decrement would overflow";
const SYNTAX: &str = "ERR syntax error";
const REFUSAL: &str = "ERR max number of clients reached";

/// Every command the server knows. A name missing here that the server answers with anything
/// but `ERR unknown command` fails the check with a message saying to add it.
const KNOWN: &[&str] = &[
    "auth",
    "client",
    "command",
    "config",
    "dbsize",
    "decr",
    "decrby",
    "del",
    "echo",
    "exists",
    "expire",
    "expireat",
    "expiretime",
    "flushall",
    "flushdb",
    "get",
    "getdel",
    "getex",
    "hello",
    "incr",
    "incrby",
    "info",
    "persist",
    "pexpire",
    "pexpireat",
    "pexpiretime",
    "ping",
    "psetex",
    "pttl",
    "quit",
    "select",
    "set",
    "setex",
    "ttl",
    "unlink",
];

/// Known commands that change no key (their replies are not modelled). (`AUTH` changes only
/// its own connection, and the simulation sets no password.)
const READ_ONLY: &[&str] = &[
    "auth",
    "client",
    "command",
    "dbsize",
    "exists",
    "expiretime",
    "hello",
    "pexpiretime",
    "pttl",
    "select",
    "ttl",
];

/// Server timeouts for a run (the close timeout stays at its default).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum TimeoutChoice {
    /// [`Timeouts::DEFAULT`]: 300 s idle, 10 s read and write.
    Default,
    /// 3 s idle, 1 s read and write.
    Short,
    /// No idle, read or write timeout.
    Off,
    /// These idle and read timeouts in ms (0: off), 1 s write.
    Custom {
        /// Idle timeout.
        idle_ms: u16,
        /// Read timeout.
        read_ms: u16,
    },
}

impl TimeoutChoice {
    /// The timeouts.
    pub fn timeouts(self) -> Timeouts {
        let (idle_ms, read_ms, write_ms) = match self {
            Self::Default => return Timeouts::DEFAULT,
            Self::Short => (3_000, 1_000, 1_000),
            Self::Off => (0, 0, 0),
            Self::Custom { idle_ms, read_ms } => (u64::from(idle_ms), u64::from(read_ms), 1_000),
        };
        Timeouts::new(idle_ms, read_ms, write_ms)
    }
}

/// A value a well-formed `SET` writes.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Value {
    /// An integer, as `INCR` reads it.
    Int(i64),
    /// `i64::MAX`, so the next `INCR` overflows.
    Max,
    /// Any bytes (at most 64).
    Text(Vec<u8>),
    /// `n % 1100` bytes of `v`: up to past the store's longest value.
    Big(u16),
}

impl Value {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Int(n) => n.to_string().into_bytes(),
            Self::Max => i64::MAX.to_string().into_bytes(),
            Self::Text(bytes) => bytes[..bytes.len().min(64)].to_vec(),
            Self::Big(n) => vec![b'v'; usize::from(*n) % 1_100],
        }
    }
}

/// A well-formed command.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Command {
    /// `PING`.
    Ping,
    /// `PING message` (at most 64 bytes).
    PingWith(Vec<u8>),
    /// `ECHO message` (at most 64 bytes).
    Echo(Vec<u8>),
    /// `SET key value`.
    Set {
        /// Key number, modulo [`KEYS`].
        key: u8,
        /// The value.
        value: Value,
    },
    /// `GET key`.
    Get {
        /// Key number, modulo [`KEYS`].
        key: u8,
    },
    /// `DEL key ...` (one to four keys).
    Del {
        /// Key numbers, modulo [`KEYS`].
        keys: Vec<u8>,
    },
    /// `INCR key`.
    Incr {
        /// Key number, modulo [`KEYS`].
        key: u8,
    },
    /// `INFO`.
    Info,
    /// `FLUSHALL`.
    FlushAll,
    /// `QUIT`.
    Quit,
}

fn key_name(key: u8) -> Vec<u8> {
    format!("key:{}", key % KEYS).into_bytes()
}

fn message(bytes: &[u8]) -> Vec<u8> {
    bytes[..bytes.len().min(64)].to_vec()
}

impl Command {
    /// The arguments, name first.
    pub fn args(&self) -> Vec<Vec<u8>> {
        let name = |name: &str| name.as_bytes().to_vec();
        match self {
            Self::Ping => vec![name("PING")],
            Self::PingWith(text) => vec![name("PING"), message(text)],
            Self::Echo(text) => vec![name("ECHO"), message(text)],
            Self::Set { key, value } => vec![name("SET"), key_name(*key), value.bytes()],
            Self::Get { key } => vec![name("GET"), key_name(*key)],
            Self::Del { keys } => {
                let mut args = vec![name("DEL")];
                args.extend(keys.iter().take(4).map(|&key| key_name(key)));
                if args.len() == 1 {
                    args.push(key_name(0));
                }
                args
            }
            Self::Incr { key } => vec![name("INCR"), key_name(*key)],
            Self::Info => vec![name("INFO")],
            Self::FlushAll => vec![name("FLUSHALL")],
            Self::Quit => vec![name("QUIT")],
        }
    }

    /// The request: inline when asked and every argument is a plain word, else multibulk.
    pub fn encode(&self, inline: bool) -> Vec<u8> {
        let args = self.args();
        let plain = |arg: &Vec<u8>| {
            !arg.is_empty()
                && arg
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b":_.-".contains(&b))
        };
        if inline && args.iter().all(plain) {
            let mut line = args.join(&b' ');
            line.extend_from_slice(b"\r\n");
            line
        } else {
            let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            sim::encode(&args)
        }
    }
}

/// One step of a run. Clients are picked modulo the clients opened so far.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum ConnOp {
    /// Open another client (up to [`MAX_CLIENTS`] in all).
    Connect,
    /// Queue a well-formed command on a client, to be sent by `Flush`.
    Command {
        /// Which client.
        client: u8,
        /// The command.
        command: Command,
        /// Inline rather than multibulk, where the arguments allow.
        inline: bool,
    },
    /// Send the first `len` queued bytes of a client (0: all of them).
    Flush {
        /// Which client.
        client: u8,
        /// How many bytes.
        len: u16,
    },
    /// Send raw bytes (at most [`MAX_SEND`]).
    Send {
        /// Which client.
        client: u8,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// Send `len % MAX_FILL` copies of one byte.
    Fill {
        /// Which client.
        client: u8,
        /// The byte.
        byte: u8,
        /// How many.
        len: u16,
    },
    /// The client closes its side (FIN).
    Close {
        /// Which client.
        client: u8,
    },
    /// The client resets the connection (RST).
    Abort {
        /// Which client.
        client: u8,
    },
    /// Let `ms` milliseconds pass, stopping at every deadline of either side.
    Advance {
        /// How long.
        ms: u16,
    },
    /// Jump `ms` milliseconds with no poll in between.
    Jump {
        /// How long.
        ms: u16,
    },
}

/// One fuzz input: the server's timeouts, then the ops. Client 0 is open from the start.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ConnInput {
    /// The server's timeouts.
    pub timeouts: TimeoutChoice,
    /// The ops; those past [`MAX_OPS`] are ignored.
    pub ops: Vec<ConnOp>,
}

/// What the runs went through, for a driver to see that its inputs reach every path.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnSeen {
    /// Replies compared exactly (or by their error prefix).
    pub exact_replies: usize,
    /// Replies only checked to be well-formed (commands the model does not follow).
    pub other_replies: usize,
    /// `GET`s answered with a value.
    pub get_hits: usize,
    /// `INCR`s refused (not an integer, or overflow).
    pub incr_errors: usize,
    /// `INFO` replies whose counters were checked.
    pub infos: usize,
    /// Unknown commands answered.
    pub unknown_commands: usize,
    /// Connections closed for a protocol error.
    pub protocol_errors: usize,
    /// ... of which for a request larger than the input buffer.
    pub too_big: usize,
    /// Clients that sent `QUIT`.
    pub quits: usize,
    /// Clients refused for want of a slot.
    pub refusals: usize,
    /// Clients that found no listening socket.
    pub no_listener: usize,
    /// New clients given the socket of a finished close (every socket was taken).
    pub reclaimed: usize,
    /// Connections closed by the idle timeout.
    pub idle_timeouts: usize,
    /// Connections closed by the read timeout.
    pub read_timeouts: usize,
    /// Clients that closed their side.
    pub client_closes: usize,
    /// Clients that reset their connection.
    pub client_aborts: usize,
    /// `FLUSHALL`s modelled.
    pub flushes: usize,
    /// Runs in which a key became unknown to the model.
    pub runs_with_unknown_keys: usize,
    /// Runs in which a `CONFIG SET` turned the timeout checks off.
    pub runs_with_config_set: usize,
}

impl ConnSeen {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Self) {
        self.exact_replies += other.exact_replies;
        self.other_replies += other.other_replies;
        self.get_hits += other.get_hits;
        self.incr_errors += other.incr_errors;
        self.infos += other.infos;
        self.unknown_commands += other.unknown_commands;
        self.protocol_errors += other.protocol_errors;
        self.too_big += other.too_big;
        self.quits += other.quits;
        self.refusals += other.refusals;
        self.no_listener += other.no_listener;
        self.reclaimed += other.reclaimed;
        self.idle_timeouts += other.idle_timeouts;
        self.read_timeouts += other.read_timeouts;
        self.client_closes += other.client_closes;
        self.client_aborts += other.client_aborts;
        self.flushes += other.flushes;
        self.runs_with_unknown_keys += other.runs_with_unknown_keys;
        self.runs_with_config_set += other.runs_with_config_set;
    }
}

/// Runs `input` through a fresh server and checks every reply and counter.
///
/// # Panics
///
/// When the server breaks a property (see the module docs).
pub fn check_input(input: &ConnInput) -> ConnSeen {
    check_labelled(input, String::new())
}

/// [`check_input`], with `label` (where the input came from) in every failure message.
///
/// # Panics
///
/// When the server breaks a property (see the module docs).
pub fn check_labelled(input: &ConnInput, label: String) -> ConnSeen {
    let mut buffers = ServerBuffers::default();
    let mut run = ConnRun::new(&mut buffers, input.timeouts.timeouts(), label);
    for op in input.ops.iter().take(MAX_OPS) {
        run.apply(op);
    }
    run.finish()
}

/// What a reply must be.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// Exactly this.
    Exact(Reply),
    /// An error whose text starts with this.
    ErrorStarting(&'static str),
    /// `INFO`'s text, with these counters as of the command.
    Info {
        connected_clients: u32,
        total_connections_received: u64,
        rejected_connections: u64,
    },
    /// Any well-formed reply (a command the model does not follow).
    Any,
}

/// How a client's connection stands, as the checker follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Admission {
    /// Accepted into a client slot.
    Accepted,
    /// Answered `max number of clients reached` and closed.
    Refused,
    /// No socket listened: the handshake was reset.
    NoListener,
}

/// Why the server stopped reading a client's stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    ProtocolError,
    TooBig,
    Quit,
}

/// One client and what the checker expects of it.
#[derive(Debug)]
struct Conn {
    client: Client,
    admission: Admission,
    /// Bytes the server has received and not yet taken as requests.
    unparsed: Vec<u8>,
    stop: Option<Stop>,
    /// Replies still owed, oldest first.
    expects: VecDeque<Expect>,
    /// Bytes received and not yet decoded (part of a reply).
    inbox: Vec<u8>,
    /// Well-formed requests queued and not yet sent.
    outbox: Vec<u8>,
    /// The client closed (FIN) or reset its side.
    closed_by_client: bool,
    /// The server closed the connection (FIN or RST seen).
    closed_by_server: bool,
    /// When the connection was accepted or last ran a command: the idle timeout runs from here.
    idle_since: u64,
    /// When the request now partly received started to arrive: the read timeout runs from here.
    read_since: Option<u64>,
}

impl Conn {
    /// When the server must close this connection for a timeout, if it is open and waiting.
    fn timeout_deadline(&self, timeouts: &Timeouts) -> Option<(u64, Timeout)> {
        if self.admission != Admission::Accepted
            || self.stop.is_some()
            || self.closed_by_client
            || self.closed_by_server
        {
            return None;
        }
        match self.read_since {
            Some(since) if timeouts.read_ms > 0 => {
                Some((since.saturating_add(timeouts.read_ms), Timeout::Read))
            }
            _ if timeouts.idle_ms > 0 => Some((
                self.idle_since.saturating_add(timeouts.idle_ms),
                Timeout::Idle,
            )),
            _ => None,
        }
    }

    /// Whether the server serves it (counts it in a slot).
    fn served(&self) -> bool {
        self.admission == Admission::Accepted && !self.closed_by_client && !self.closed_by_server
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timeout {
    Idle,
    Read,
}

/// The key space as far as the checker knows it.
#[derive(Debug, Default)]
struct Keyspace {
    values: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Keys some command the model does not follow may have changed.
    unknown: BTreeSet<Vec<u8>>,
}

/// One run: the simulation, the clients, the model.
pub struct ConnRun<'m> {
    sim: ConnSim<'m>,
    timeouts: Timeouts,
    conns: Vec<Conn>,
    keys: Keyspace,
    /// Writes the model may still count as certain to fit the store, for the current send.
    room_keys: usize,
    room_bytes: usize,
    accepted: u64,
    refused: u64,
    protocol_error_closes: u64,
    timeout_closes: u64,
    /// A `CONFIG SET` ran (the timeouts may have changed), or the simulation moved time on its
    /// own: the timeout checks are off.
    timing_unknown: bool,
    config_set: bool,
    last_stats: Stats,
    last_commands_processed: u64,
    label: String,
    step: usize,
    history: VecDeque<String>,
    seen: ConnSeen,
}

impl<'m> ConnRun<'m> {
    /// A server with `timeouts` and one client connected; `label` goes into failure messages.
    pub fn new(buffers: &'m mut ServerBuffers, timeouts: Timeouts, label: String) -> Self {
        let mut config = sim::config(timeouts);
        config.capacity.query_buffer_limit = QUERY_BUFFER_LIMIT;
        let sim = ConnSim::with(buffers, config, sim::store());
        let last_stats = sim.stats();
        let mut run = Self {
            sim,
            timeouts,
            conns: Vec::new(),
            keys: Keyspace::default(),
            room_keys: 0,
            room_bytes: 0,
            accepted: 0,
            refused: 0,
            protocol_error_closes: 0,
            timeout_closes: 0,
            timing_unknown: false,
            config_set: false,
            last_stats,
            last_commands_processed: 0,
            label,
            step: 0,
            history: VecDeque::new(),
            seen: ConnSeen::default(),
        };
        run.connect();
        run
    }

    /// Clients opened so far.
    pub fn clients(&self) -> usize {
        self.conns.len()
    }

    fn ctx(&self) -> String {
        let mut text = format!(
            "\n  step {}, t={} ms, {} clients, timeouts {:?}\n  last ops (oldest first):",
            self.step,
            self.sim.now,
            self.conns.len(),
            self.timeouts
        );
        for op in &self.history {
            let _ = write!(text, "\n    {op}");
        }
        let _ = write!(text, "\n  {}", self.label);
        text
    }

    fn record(&mut self, what: String) {
        if self.history.len() == 12 {
            self.history.pop_front();
        }
        self.history.push_back(what);
    }

    /// Applies one op, then checks everything observable.
    ///
    /// # Panics
    ///
    /// When the server breaks a property.
    pub fn apply(&mut self, op: &ConnOp) {
        self.step += 1;
        let mut shown = format!("{op:?}");
        shown.truncate(160);
        self.record(shown);
        let pick = |client: u8, conns: usize| usize::from(client) % conns;
        match op {
            ConnOp::Connect => {
                if self.conns.len() < MAX_CLIENTS {
                    self.connect();
                }
            }
            ConnOp::Command {
                client,
                command,
                inline,
            } => {
                let at = pick(*client, self.conns.len());
                self.conns[at].outbox.extend(command.encode(*inline));
            }
            ConnOp::Flush { client, len } => {
                let at = pick(*client, self.conns.len());
                let outbox = &mut self.conns[at].outbox;
                let len = match usize::from(*len) {
                    0 => outbox.len(),
                    len => len.min(outbox.len()),
                };
                let bytes: Vec<u8> = outbox.drain(..len).collect();
                self.send(at, &bytes);
            }
            ConnOp::Send { client, bytes } => {
                let at = pick(*client, self.conns.len());
                self.send(at, &bytes[..bytes.len().min(MAX_SEND)]);
            }
            ConnOp::Fill { client, byte, len } => {
                let at = pick(*client, self.conns.len());
                self.send(at, &vec![*byte; usize::from(*len) % MAX_FILL]);
            }
            ConnOp::Close { client } => {
                let at = pick(*client, self.conns.len());
                self.close(at, false);
            }
            ConnOp::Abort { client } => {
                let at = pick(*client, self.conns.len());
                self.close(at, true);
            }
            ConnOp::Advance { ms } => self.advance(u64::from(*ms)),
            ConnOp::Jump { ms } => {
                self.sim.jump(u64::from(*ms));
                self.check();
            }
        }
    }

    /// Opens a client and checks that the server admits it exactly when it should.
    fn connect(&mut self) {
        let before = self.sim.stats();
        let served = self.conns.iter().filter(|c| c.served()).count();
        let sockets_taken = self.sim.server.open_connections();
        let client = self.sim.connect();
        let after = self.sim.stats();
        let accepted = after.total_connections_received - before.total_connections_received;
        let refused = after.rejected_connections - before.rejected_connections;
        let admission = match (accepted, refused) {
            (1, 0) => Admission::Accepted,
            (0, 1) => Admission::Refused,
            (0, 0) => Admission::NoListener,
            _ => panic!(
                "one connect was counted {accepted} times accepted and {refused} times refused{}",
                self.ctx()
            ),
        };
        // With every socket taken, the server gives a new client the socket of a connection it
        // is closing whose peer has acknowledged every byte (counted as an aborted close), and
        // only without one does the client meet no listener.
        let reclaimed = after.aborted_closes > before.aborted_closes;
        if reclaimed {
            self.seen.reclaimed += 1;
        }
        let expected = if sockets_taken >= CONNS && !reclaimed {
            Admission::NoListener
        } else if served < CONNS - 1 {
            Admission::Accepted
        } else {
            Admission::Refused
        };
        assert_eq!(
            admission,
            expected,
            "a new client with {served} clients served and {sockets_taken} of {CONNS} sockets \
             taken{}",
            self.ctx()
        );
        let mut expects = VecDeque::new();
        match admission {
            Admission::Accepted => self.accepted += 1,
            Admission::Refused => {
                self.refused += 1;
                self.seen.refusals += 1;
                expects.push_back(Expect::Exact(Reply::Error(REFUSAL.into())));
            }
            Admission::NoListener => {
                self.seen.no_listener += 1;
                assert_eq!(
                    self.sim.state(client),
                    State::Closed,
                    "a client no socket accepted is not reset{}",
                    self.ctx()
                );
            }
        }
        self.conns.push(Conn {
            client,
            admission,
            unparsed: Vec::new(),
            stop: None,
            expects,
            inbox: Vec::new(),
            outbox: Vec::new(),
            closed_by_client: false,
            closed_by_server: false,
            idle_since: self.sim.now,
            read_since: None,
        });
        self.check();
    }

    fn close(&mut self, at: usize, abort: bool) {
        let conn = &mut self.conns[at];
        if conn.closed_by_client {
            return;
        }
        conn.closed_by_client = true;
        let client = conn.client;
        if abort {
            self.seen.client_aborts += 1;
            self.sim.abort(client);
        } else {
            self.seen.client_closes += 1;
            self.sim.close(client);
        }
        self.check();
    }

    fn advance(&mut self, ms: u64) {
        let until = self.sim.now + ms;
        loop {
            self.sim.step(until);
            self.check();
            if self.sim.now >= until {
                return;
            }
        }
    }

    /// Sends bytes on a client that can send, following what the server makes of them.
    fn send(&mut self, at: usize, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let client = self.conns[at].client;
        if !matches!(
            self.sim.state(client),
            State::Established | State::CloseWait
        ) {
            return;
        }
        let now = self.sim.now;
        let conn = &self.conns[at];
        // The server reads an accepted client until it stops or starts closing.
        if conn.admission == Admission::Accepted && conn.stop.is_none() && !conn.closed_by_server {
            let store = self.sim.server.store();
            self.room_keys = (store.key_capacity() / 2).saturating_sub(store.len());
            self.room_bytes = (store.bytes_capacity() / 2).saturating_sub(store.bytes_used());
            self.receive(at, bytes);
        }
        self.sim.send(client, bytes);
        if self.sim.now != now {
            // The client's send buffer was full and the simulation ran time to drain it.
            self.timing_unknown = true;
        }
        self.check();
    }

    /// Takes requests from a client's stream as the server does (its input buffer is a window
    /// on the stream) and queues the replies they call for.
    fn receive(&mut self, at: usize, bytes: &[u8]) {
        let now = self.sim.now;
        // Input buffers grow (the `alloc` feature) up to the query buffer limit; Redis' limits
        // apply to bulks and inline requests.
        let limits = Limits::new(MAX_BULK_LEN, MAX_INLINE_LEN);
        let had_partial = !self.conns[at].unparsed.is_empty();
        self.conns[at].unparsed.extend_from_slice(bytes);
        let mut executed = false;
        loop {
            let conn = &mut self.conns[at];
            if conn.stop.is_some() || conn.unparsed.is_empty() {
                break;
            }
            let window = conn.unparsed.len().min(QUERY_BUFFER_LIMIT);
            let mut buf = conn.unparsed[..window].to_vec();
            let consumed = match parse_spilling::<MAX_ARGS>(&mut buf, &limits) {
                Ok(Parsed::Incomplete) => {
                    if window == QUERY_BUFFER_LIMIT {
                        // Closed without a reply, as by Redis.
                        conn.stop = Some(Stop::TooBig);
                    }
                    break;
                }
                Ok(Parsed::Empty { consumed }) => consumed,
                Ok(Parsed::Command { command, consumed }) => {
                    let args: Vec<Vec<u8>> = command.args().map(<[u8]>::to_vec).collect();
                    executed = true;
                    let (expect, quit) = self.run_command(&args);
                    let conn = &mut self.conns[at];
                    conn.expects.push_back(expect);
                    if quit {
                        conn.stop = Some(Stop::Quit);
                    }
                    consumed
                }
                Err(_) => {
                    conn.stop = Some(Stop::ProtocolError);
                    conn.expects
                        .push_back(Expect::ErrorStarting(PROTOCOL_ERROR));
                    break;
                }
            };
            self.conns[at].unparsed.drain(..consumed);
        }
        let conn = &mut self.conns[at];
        match conn.stop {
            Some(Stop::Quit) => self.seen.quits += 1,
            Some(Stop::ProtocolError | Stop::TooBig) => {
                self.protocol_error_closes += 1;
                self.seen.protocol_errors += 1;
                if conn.stop == Some(Stop::TooBig) {
                    self.seen.too_big += 1;
                }
            }
            None => {}
        }
        if conn.stop.is_some() {
            conn.unparsed.clear();
            conn.read_since = None;
            return;
        }
        if executed {
            conn.idle_since = now;
        }
        if conn.unparsed.is_empty() {
            conn.read_since = None;
        } else if executed || !had_partial {
            conn.read_since = Some(now);
        }
    }

    /// Whether a write of `key` and `value` certainly fits the store; takes its room.
    fn fits(&mut self, key: &[u8], value_len: usize) -> bool {
        let bytes = key.len() + value_len + 64;
        if key.is_empty()
            || key.len() > sim::MAX_KEY
            || value_len > sim::MAX_VALUE
            || self.room_keys == 0
            || self.room_bytes < bytes
        {
            return false;
        }
        self.room_keys -= 1;
        self.room_bytes -= bytes;
        true
    }

    /// The reply `args` call for, and whether the connection ends after it; updates the model.
    fn run_command(&mut self, args: &[Vec<u8>]) -> (Expect, bool) {
        let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
        let rest = &args[1..];
        let n = rest.len();
        let arity = |ok: bool, expect: Expect| {
            if ok {
                expect
            } else {
                Expect::ErrorStarting(WRONG_ARITY)
            }
        };
        let exact = Expect::Exact;
        let expect = match name.as_str() {
            "ping" if n == 0 => exact(Reply::simple("PONG")),
            "ping" => arity(n == 1, exact(Reply::Bulk(rest[0].clone()))),
            "echo" if n == 1 => exact(Reply::Bulk(rest[0].clone())),
            "echo" => arity(false, Expect::Any),
            "quit" => return (exact(Reply::ok()), true),
            "info" if n == 0 => {
                let stats = self.last_stats;
                Expect::Info {
                    connected_clients: stats.connected_clients,
                    total_connections_received: self.accepted,
                    rejected_connections: self.refused,
                }
            }
            "info" => Expect::Any,
            "get" if n == 1 => self.get(&rest[0]),
            "get" => arity(false, Expect::Any),
            "set" if n == 2 => self.set(&rest[0], &rest[1]),
            "set" if n > 2 => {
                self.keys.unknown.insert(rest[0].clone());
                Expect::Any
            }
            "set" => arity(false, Expect::Any),
            "del" | "unlink" if n >= 1 => self.del(rest),
            "del" | "unlink" => arity(false, Expect::Any),
            "incr" if n == 1 => self.incr(&rest[0]),
            "incr" => arity(false, Expect::Any),
            // As in Redis: any number of arguments; one may be SYNC or ASYNC.
            "flushall" | "flushdb" => {
                let mode_ok = match rest {
                    [] => true,
                    [mode] => {
                        mode.eq_ignore_ascii_case(b"sync") || mode.eq_ignore_ascii_case(b"async")
                    }
                    _ => false,
                };
                if mode_ok {
                    self.seen.flushes += 1;
                    self.keys = Keyspace::default();
                    exact(Reply::ok())
                } else {
                    exact(Reply::error(SYNTAX))
                }
            }
            "config" => {
                if rest
                    .first()
                    .is_some_and(|sub| sub.eq_ignore_ascii_case(b"set"))
                {
                    self.config_set = true;
                    self.timing_unknown = true;
                }
                Expect::Any
            }
            known if READ_ONLY.contains(&known) => Expect::Any,
            known if KNOWN.contains(&known) => {
                // A write the model does not follow: every argument may be a key it changed.
                self.keys.unknown.extend(rest.iter().cloned());
                Expect::Any
            }
            _ => Expect::ErrorStarting(UNKNOWN_COMMAND),
        };
        (expect, false)
    }

    fn get(&mut self, key: &[u8]) -> Expect {
        if self.keys.unknown.contains(key) {
            return Expect::Any;
        }
        match self.keys.values.get(key) {
            Some(value) => {
                self.seen.get_hits += 1;
                Expect::Exact(Reply::Bulk(value.clone()))
            }
            None => Expect::Exact(Reply::Nil),
        }
    }

    fn set(&mut self, key: &[u8], value: &[u8]) -> Expect {
        if self.fits(key, value.len()) {
            self.keys.unknown.remove(key);
            self.keys.values.insert(key.to_vec(), value.to_vec());
            Expect::Exact(Reply::ok())
        } else {
            self.keys.unknown.insert(key.to_vec());
            Expect::Any
        }
    }

    fn del(&mut self, keys: &[Vec<u8>]) -> Expect {
        let known = keys.iter().all(|key| !self.keys.unknown.contains(key));
        let mut removed = 0;
        for key in keys {
            self.keys.unknown.remove(key);
            if self.keys.values.remove(key).is_some() {
                removed += 1;
            }
        }
        if known {
            Expect::Exact(Reply::Int(removed))
        } else {
            Expect::Any
        }
    }

    fn incr(&mut self, key: &[u8]) -> Expect {
        if self.keys.unknown.contains(key) {
            return Expect::Any;
        }
        let current = match self.keys.values.get(key) {
            None => 0,
            Some(value) => {
                let text = String::from_utf8_lossy(value);
                match text.parse::<i64>() {
                    Ok(n) if n.to_string() == text => n,
                    _ => {
                        self.seen.incr_errors += 1;
                        return Expect::Exact(Reply::error(NOT_INTEGER));
                    }
                }
            }
        };
        let Some(next) = current.checked_add(1) else {
            self.seen.incr_errors += 1;
            return Expect::Exact(Reply::error(OVERFLOW));
        };
        let text = next.to_string().into_bytes();
        if self.fits(key, text.len()) {
            self.keys.values.insert(key.to_vec(), text);
            Expect::Exact(Reply::Int(next))
        } else {
            self.keys.unknown.insert(key.to_vec());
            Expect::Any
        }
    }

    /// After every op: replies, closes, timeouts and counters.
    fn check(&mut self) {
        for at in 0..self.conns.len() {
            self.take_replies(at);
            self.check_close(at);
        }
        self.check_timeouts();
        self.check_stats();
    }

    /// Decodes what a client received and matches it against the replies it is owed.
    fn take_replies(&mut self, at: usize) {
        let client = self.conns[at].client;
        let bytes = self.sim.take(client);
        self.conns[at].inbox.extend_from_slice(&bytes);
        loop {
            let inbox = &self.conns[at].inbox;
            if inbox.is_empty() {
                break;
            }
            assert!(
                b"+-:$*".contains(&inbox[0]),
                "client {at} received bytes that are not RESP2: {}{}",
                inbox.escape_ascii(),
                self.ctx()
            );
            let Some((reply, used)) = Reply::decode(inbox) else {
                break;
            };
            let raw = inbox[..used].to_vec();
            self.conns[at].inbox.drain(..used);
            let canonical = encode_reply(&reply);
            // A status or error line may carry a raw request byte (as from Redis), which the
            // decoded text shows as U+FFFD: compare as text, so that it does on both sides.
            assert_eq!(
                String::from_utf8_lossy(&raw).escape_debug().to_string(),
                String::from_utf8_lossy(&canonical)
                    .escape_debug()
                    .to_string(),
                "client {at}: a reply not in canonical RESP2 (left: sent; right: re-encoded){}",
                self.ctx()
            );
            let Some(expect) = self.conns[at].expects.pop_front() else {
                panic!(
                    "client {at} received {reply:?} but owes no reply{}",
                    self.ctx()
                );
            };
            self.check_reply(at, &reply, expect);
        }
    }

    fn check_reply(&mut self, at: usize, reply: &Reply, expect: Expect) {
        match expect {
            Expect::Exact(expected) => {
                assert_eq!(
                    reply,
                    &expected,
                    "client {at}: the reply (left) is not the model's (right){}",
                    self.ctx()
                );
                self.seen.exact_replies += 1;
            }
            Expect::ErrorStarting(prefix) => {
                let text = reply.error_text().unwrap_or_default();
                if prefix == UNKNOWN_COMMAND && !text.starts_with(prefix) {
                    panic!(
                        "client {at}: a command the checker does not know got {reply:?}: if the \
                         server has a new command, add it to conn_check's KNOWN (and READ_ONLY \
                         if it changes no key){}",
                        self.ctx()
                    );
                }
                assert!(
                    text.starts_with(prefix),
                    "client {at}: {reply:?} is not an error starting {prefix:?}{}",
                    self.ctx()
                );
                if prefix == UNKNOWN_COMMAND {
                    self.seen.unknown_commands += 1;
                }
                self.seen.exact_replies += 1;
            }
            Expect::Info {
                connected_clients,
                total_connections_received,
                rejected_connections,
            } => {
                let Reply::Bulk(text) = reply else {
                    panic!("client {at}: INFO answered {reply:?}{}", self.ctx());
                };
                let text = String::from_utf8_lossy(text);
                let field = |name| info_field(&text, name);
                assert_eq!(
                    (
                        field("connected_clients"),
                        field("total_connections_received"),
                        field("rejected_connections"),
                        field("maxclients"),
                    ),
                    (
                        u64::from(connected_clients),
                        total_connections_received,
                        rejected_connections,
                        CONNS as u64 - 1,
                    ),
                    "client {at}: INFO (connected, accepted, refused, maxclients) (left) against \
                     what the checker saw (right){}",
                    self.ctx()
                );
                let processed = field("total_commands_processed");
                assert!(
                    processed > self.last_commands_processed,
                    "INFO total_commands_processed went from {} to {processed}{}",
                    self.last_commands_processed,
                    self.ctx()
                );
                self.last_commands_processed = processed;
                self.seen.infos += 1;
            }
            Expect::Any => self.seen.other_replies += 1,
        }
    }

    /// Notices the server closing a connection, and checks it had a reason to.
    fn check_close(&mut self, at: usize) {
        let client = self.conns[at].client;
        if self.conns[at].closed_by_server || !self.sim.closed_by_server(client) {
            return;
        }
        let now = self.sim.now;
        let deadline = self.conns[at].timeout_deadline(&self.timeouts);
        let conn = &mut self.conns[at];
        conn.closed_by_server = true;
        if conn.stop.is_some()
            || conn.closed_by_client
            || conn.admission != Admission::Accepted
            || self.timing_unknown
        {
            return;
        }
        match deadline {
            Some((at_ms, timeout)) if at_ms <= now => {
                self.timeout_closes += 1;
                match timeout {
                    Timeout::Idle => self.seen.idle_timeouts += 1,
                    Timeout::Read => self.seen.read_timeouts += 1,
                }
            }
            _ => {
                let conn = format!(
                    "{:?}, idle since {} ms, read since {:?}, {} bytes unparsed",
                    conn.admission,
                    conn.idle_since,
                    conn.read_since,
                    conn.unparsed.len()
                );
                panic!(
                    "the server closed client {at} at {now} ms without a reason (next timeout \
                     {deadline:?}, client {conn}){}",
                    self.ctx()
                )
            }
        }
    }

    /// No connection outlives its timeout.
    fn check_timeouts(&self) {
        if self.timing_unknown {
            return;
        }
        let now = self.sim.now;
        for (at, conn) in self.conns.iter().enumerate() {
            if let Some((deadline, timeout)) = conn.timeout_deadline(&self.timeouts) {
                assert!(
                    deadline > now,
                    "client {at} is still open at {now} ms, past its {timeout:?} timeout at \
                     {deadline} ms{}",
                    self.ctx()
                );
            }
        }
    }

    /// The counters against what the checker saw.
    fn check_stats(&mut self) {
        let stats = self.sim.stats();
        let open = self.sim.server.open_connections();
        // Served: accepted, and neither side has begun closing. Not gone: the client side is not
        // yet closed, so the server still holds a socket for it.
        let served = self.conns.iter().filter(|c| c.served()).count();
        let not_gone = self
            .conns
            .iter()
            .filter(|c| c.admission != Admission::NoListener)
            .filter(|c| !matches!(self.sim.state(c.client), State::Closed | State::TimeWait))
            .count();
        assert_eq!(
            stats.connected_clients as usize,
            served,
            "connected_clients (left) against the clients the server still serves (right){}",
            self.ctx()
        );
        assert!(
            served <= open && open <= not_gone.min(CONNS),
            "{served} clients served, {open} connections open, {not_gone} clients not closed, \
             {CONNS} sockets{}",
            self.ctx()
        );
        assert_eq!(
            (
                stats.total_connections_received,
                stats.rejected_connections,
                stats.protocol_error_closes
            ),
            (self.accepted, self.refused, self.protocol_error_closes),
            "(accepted, refused, protocol error closes): server (left), checker (right){}",
            self.ctx()
        );
        if !self.timing_unknown {
            assert_eq!(
                stats.idle_timeout_closes + stats.read_timeout_closes,
                self.timeout_closes,
                "idle and read timeout closes: server (left), checker (right){}",
                self.ctx()
            );
        }
        let last = self.last_stats;
        for (name, old, new) in [
            (
                "total_commands_processed",
                last.total_commands_processed,
                stats.total_commands_processed,
            ),
            (
                "write_timeout_closes",
                last.write_timeout_closes,
                stats.write_timeout_closes,
            ),
            ("aborted_closes", last.aborted_closes, stats.aborted_closes),
            ("oom_refusals", last.oom_refusals, stats.oom_refusals),
        ] {
            assert!(new >= old, "{name} went from {old} to {new}{}", self.ctx());
        }
        for (at, conn) in self.conns.iter().enumerate() {
            assert!(
                conn.expects.is_empty() || conn.closed_by_client,
                "client {at} still waits for {:?}{}",
                conn.expects,
                self.ctx()
            );
        }
        self.last_stats = stats;
    }

    /// Closes every client, lets the close timeout run out, then checks that nothing is left
    /// and that a fresh client is served. Returns what the run went through.
    ///
    /// # Panics
    ///
    /// When the server breaks a property.
    pub fn finish(mut self) -> ConnSeen {
        self.record("finish: close every client".into());
        for at in 0..self.conns.len() {
            if !self.conns[at].closed_by_client {
                self.conns[at].closed_by_client = true;
                let client = self.conns[at].client;
                self.sim.close(client);
                self.check();
            }
        }
        // Aborted clients leave nothing behind; closed ones finish within the close timeout.
        let close_ms = Timeouts::DEFAULT.close_ms;
        self.advance(close_ms + 1_000);
        let stats = self.sim.stats();
        assert_eq!(
            (stats.connected_clients, self.sim.server.open_connections()),
            (0, 0),
            "(connected_clients, open connections) with every client gone{}",
            self.ctx()
        );

        self.record("finish: a fresh client".into());
        let served_before = self.sim.stats().total_connections_received;
        let fresh = self.sim.connect();
        self.accepted += 1;
        assert_eq!(
            self.sim.stats().total_connections_received,
            served_before + 1,
            "a fresh client after the storm is not accepted{}",
            self.ctx()
        );
        assert_eq!(self.sim.request(fresh, &["PING"]), Reply::simple("PONG"));
        let info = self.sim.request(fresh, &["INFO"]);
        let Reply::Bulk(text) = info else {
            panic!("INFO answered {info:?}{}", self.ctx());
        };
        let text = String::from_utf8_lossy(&text);
        assert_eq!(
            (
                info_field(&text, "connected_clients"),
                info_field(&text, "total_connections_received"),
                info_field(&text, "rejected_connections"),
            ),
            (1, self.accepted, self.refused),
            "INFO of the fresh client: (connected, accepted, refused){}",
            self.ctx()
        );
        let values: Vec<(Vec<u8>, Vec<u8>)> = self
            .keys
            .values
            .iter()
            .filter(|(key, _)| !self.keys.unknown.contains(*key))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        for (key, value) in values {
            assert_eq!(
                self.sim.request_bytes(fresh, &[b"GET", &key]),
                Reply::Bulk(value),
                "GET {} after the storm{}",
                key.escape_ascii(),
                self.ctx()
            );
        }
        if self.keys.unknown.is_empty() {
            assert_eq!(
                self.sim.server.store().len(),
                self.keys.values.len(),
                "keys in the store against the model{}",
                self.ctx()
            );
        } else {
            self.seen.runs_with_unknown_keys += 1;
        }
        if self.config_set {
            self.seen.runs_with_config_set += 1;
        }
        self.seen
    }
}

/// `reply` as the server must write it.
fn encode_reply(reply: &Reply) -> Vec<u8> {
    match reply {
        Reply::Simple(text) | Reply::Error(text) => {
            assert!(
                !text.contains(['\r', '\n']),
                "a status or error line holds CR or LF: {text:?}"
            );
            let mark = if matches!(reply, Reply::Simple(_)) {
                '+'
            } else {
                '-'
            };
            format!("{mark}{text}\r\n").into_bytes()
        }
        Reply::Int(n) => format!(":{n}\r\n").into_bytes(),
        Reply::Bulk(bytes) => {
            let mut out = format!("${}\r\n", bytes.len()).into_bytes();
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
            out
        }
        Reply::Nil => b"$-1\r\n".to_vec(),
        Reply::Array(items) => {
            let mut out = format!("*{}\r\n", items.len()).into_bytes();
            for item in items {
                out.extend(encode_reply(item));
            }
            out
        }
        Reply::NilArray => b"*-1\r\n".to_vec(),
    }
}
