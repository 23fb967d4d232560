//! Differential testing against a real `redis-server`: the same command scripts run against
//! Redis (over a `TcpStream` to 127.0.0.1) and against net-shell in the simulated network, and
//! every reply is compared byte for byte, as raw RESP.
//!
//! Where the two must differ, the step says so with a [`Difference`]: one list, each entry with
//! its reason and the weaker check that still applies (same error class, same keys in any
//! order, within so many milliseconds, …).
//!
//! Time: the simulation's clock follows the wall clock during a run (before each step it runs
//! up to the milliseconds elapsed since the start), and its Unix time is set from the wall
//! clock once, so `EXPIREAT`, `EXPIRETIME`, `TTL` and expiry after a [`Step::Sleep`] line up
//! with Redis'. Only replies that depend on the very millisecond a command ran (`PTTL`,
//! `PEXPIRETIME`) are compared within a tolerance ([`Difference::Timing`]).

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use net_shell::{ServerBuffers, Timeouts};

use crate::e2e::{free_local_port, KillOnDrop};
use crate::reply::{split_replies, Value};
use crate::sim::{Client, Sim};

/// Raw RESP shown readably: printable ASCII as is, the rest escaped.
pub fn show(bytes: &[u8]) -> String {
    let mut text = String::new();
    for &b in bytes.iter().take(600) {
        match b {
            b'\r' => text.push_str("\\r"),
            b'\n' => text.push_str("\\n"),
            0x20..=0x7e => text.push(char::from(b)),
            _ => {
                let _ = write!(text, "\\x{b:02x}");
            }
        }
    }
    if bytes.len() > 600 {
        let _ = write!(text, "… ({} bytes)", bytes.len());
    }
    text
}

/// Every intended difference between net-shell and Redis 7.0, with its reason. A step marked
/// with one is compared by [`Difference::check`] instead of byte for byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Difference {
    /// `INFO`: the text is net-shell's own (its fields, its counters); only the sections asked
    /// for are compared.
    InfoText,
    /// `HELLO`: the `version` (net-shell says `7.0.0`) and the `id` (each server numbers its own
    /// connections) differ; every other field is compared.
    Handshake,
    /// `CLIENT ID`: each server numbers its own connections; both answer an integer.
    ClientId,
    /// `MEMORY USAGE` of a key: each server counts its own memory (net-shell: the key's pool
    /// block, table entry and timer slot, as `INFO memory` counts them); both answer a
    /// positive integer. A missing key (nil) and the errors are compared byte for byte.
    KeyBytes,
    /// Replies that depend on the millisecond a command ran (`PTTL`, `PEXPIRETIME`): the two
    /// servers run each step a few ms apart; integers within this many ms, else exact.
    Timing(i64),
    /// `INCRBYFLOAT`: Redis adds in C `long double` and prints its binary noise
    /// (`1008.01000000000000001`); net-shell adds exactly (see `command/float.rs`). Both are
    /// numbers within 1e-15 of each other (the exact ones are equal, byte for byte).
    LongDouble,
    /// `TIME`: two clocks; both answer seconds and microseconds, within a second.
    Clock,
    /// Redis promises no order (`KEYS`, `COMMAND LIST`): the same elements in any order.
    Unordered,
    /// `CONFIG GET` of several parameters: Redis answers in its hash table's order; the same
    /// name-value pairs in any order.
    UnorderedPairs,
    /// `COMMAND`, `COMMAND COUNT`, `COMMAND INFO` of a command with subcommands: net-shell
    /// has fewer commands and subcommands; each entry it has must equal Redis' entry.
    CommandSubset,
    /// `COMMAND DOCS`: summaries, complexity, history and arguments are not kept (flash);
    /// the `group` must equal Redis'.
    Docs,
    /// `HELP` subcommands: net-shell lists the subcommands from its table, without Redis'
    /// prose; both answer an array of simple strings.
    HelpText,
    /// `SELECT n` for n in 1..16: net-shell has one database; it refuses with Redis' text for
    /// an index out of range.
    OneDatabase,
    /// `CONFIG SET save|appendonly` to a schedule or `yes`: net-shell keeps nothing on disk;
    /// it refuses with Redis' text for an immutable parameter (`save ""` and `appendonly no`,
    /// what it does, it takes).
    NoPersistence,
    /// Values and keys are limited by the store's configured sizes and the buffers: net-shell
    /// answers an error where Redis grows the value.
    ValueLimit,
    /// `HELLO … SETNAME n` names the connection only if the whole command succeeds (the
    /// client authenticated, every option right), as Redis 7.2 does; Redis 7.0 sets the name
    /// while reading the options, so a later syntax error or a wrong password leaves it set.
    /// Seen in the `CLIENT GETNAME` after such a `HELLO`: nil here, the name in Redis 7.0.
    HelloNameOnSuccess,
    /// `CLIENT SETINFO` is Redis 7.2's; net-shell accepts it (clients send it on connecting)
    /// where Redis 7.0 says it does not know it.
    ClientSetinfo,
    /// A `MONITOR` line: `+<seconds>.<microseconds> [0 <ip>:<port>] "word" …`. The time and
    /// the client's address are each server's own (net-shell's clock has milliseconds);
    /// both must have that shape, and the words must be equal byte for byte.
    Monitor,
}

impl Difference {
    /// Checks what must still agree; `Err` says what does not.
    ///
    /// # Errors
    ///
    /// A description of the disagreement.
    pub fn check(self, redis: &[u8], shell: &[u8]) -> Result<(), String> {
        if redis == shell {
            return Ok(());
        }
        let decode = |bytes: &[u8]| Value::decode(bytes).map(|(v, _)| v);
        let (Some(r), Some(s)) = (decode(redis), decode(shell)) else {
            return Err("not RESP".into());
        };
        let fail = |why: &str| Err(format!("{self:?}: {why}"));
        match self {
            Self::InfoText => {
                let headers = |v: &Value| -> Option<Vec<String>> {
                    let bytes = match v {
                        Value::Blob(b'=', text) => text.strip_prefix(b"txt:")?,
                        other => other.bytes()?,
                    };
                    let text = String::from_utf8_lossy(bytes).into_owned();
                    Some(
                        text.lines()
                            .filter(|l| l.starts_with("# "))
                            .map(|l| l.to_ascii_lowercase())
                            .collect(),
                    )
                };
                match (headers(&r), headers(&s)) {
                    (Some(rh), Some(sh)) if sh.iter().all(|h| rh.contains(h)) && !sh.is_empty() => {
                        Ok(())
                    }
                    _ => fail("sections differ"),
                }
            }
            Self::Handshake => {
                let fields = |v: &Value| v.items();
                let (Some(rf), Some(sf)) = (fields(&r), fields(&s)) else {
                    return fail("not a map or array");
                };
                if rf.len() != sf.len() {
                    return fail("field count");
                }
                for pair in rf.chunks(2).zip(sf.chunks(2)) {
                    let (rp, sp) = pair;
                    if rp[0] != sp[0] {
                        return fail("field names");
                    }
                    let name = rp[0].bytes().unwrap_or_default();
                    if name != b"version" && name != b"id" && rp[1] != sp[1] {
                        return fail("field values");
                    }
                }
                Ok(())
            }
            Self::ClientId => match (r, s) {
                (Value::Int(_), Value::Int(_)) => Ok(()),
                _ => fail("not integers"),
            },
            Self::KeyBytes => match (r, s) {
                (Value::Int(a), Value::Int(b)) if a > 0 && b > 0 => Ok(()),
                _ => fail("not positive integers"),
            },
            Self::LongDouble => {
                let number = |v: &Value| -> Option<f64> {
                    std::str::from_utf8(v.bytes()?).ok()?.parse().ok()
                };
                match (number(&r), number(&s)) {
                    (Some(a), Some(b)) if (a - b).abs() <= 1e-15 * a.abs().max(1.0) => Ok(()),
                    (None, None) if r == s => Ok(()),
                    _ => fail("numbers apart"),
                }
            }
            Self::Clock => {
                let seconds = |v: &Value| -> Option<i64> {
                    let items = v.items()?;
                    let text = std::str::from_utf8(items.first()?.bytes()?).ok()?;
                    (items.len() == 2).then(|| text.parse().ok()).flatten()
                };
                match (seconds(&r), seconds(&s)) {
                    (Some(a), Some(b)) if (a - b).abs() <= 1 => Ok(()),
                    _ => fail("clocks apart"),
                }
            }
            Self::Timing(ms) => match (r, s) {
                (Value::Int(a), Value::Int(b)) if (a - b).abs() <= ms => Ok(()),
                _ => fail("beyond the tolerance"),
            },
            Self::Unordered => {
                let (Some(mut ri), Some(mut si)) = (r.items(), s.items()) else {
                    return fail("not arrays");
                };
                let key = |v: &Value| format!("{v:?}");
                ri.sort_by_key(key);
                si.sort_by_key(key);
                if ri == si {
                    Ok(())
                } else {
                    fail("different elements")
                }
            }
            Self::UnorderedPairs => {
                let pairs = |v: &Value| -> Option<Vec<String>> {
                    let mut p: Vec<String> =
                        v.items()?.chunks(2).map(|c| format!("{c:?}")).collect();
                    p.sort();
                    Some(p)
                };
                if pairs(&r).is_some() && pairs(&r) == pairs(&s) {
                    Ok(())
                } else {
                    fail("different pairs")
                }
            }
            Self::CommandSubset => check_command_subset(&r, &s).or_else(|why| fail(&why)),
            Self::Docs => check_docs(&r, &s).or_else(|why| fail(&why)),
            Self::HelpText => match (r.items(), s.items()) {
                (Some(_), Some(si)) if si.iter().all(|v| matches!(v, Value::Simple(_))) => Ok(()),
                _ => fail("not arrays of simple strings"),
            },
            Self::OneDatabase | Self::NoPersistence | Self::ValueLimit => match s {
                Value::Error(_) => Ok(()),
                _ => fail("net-shell should refuse"),
            },
            Self::HelloNameOnSuccess => match (r, s) {
                (Value::Bulk(Some(_)), Value::Bulk(None) | Value::Line(b'_', _)) => Ok(()),
                _ => fail("expected a name from Redis 7.0 and none here"),
            },
            Self::ClientSetinfo => match (r, s) {
                (Value::Error(_), Value::Simple(ok)) if ok == b"OK" => Ok(()),
                _ => fail("expected Redis 7.0 to refuse and net-shell to accept"),
            },
            Self::Monitor => {
                // The words after `+<time> [0 <ip>:<port>] `, if the line has that shape.
                let words = |line: &[u8]| -> Option<Vec<u8>> {
                    let text = std::str::from_utf8(line.strip_prefix(b"+")?).ok()?;
                    let (time, rest) = text.split_once(' ')?;
                    let (secs, micros) = time.split_once('.')?;
                    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
                    let (client, words) = rest.strip_prefix("[0 ")?.split_once("] ")?;
                    let (ip, port) = client.rsplit_once(':')?;
                    let shaped = digits(secs)
                        && micros.len() == 6
                        && digits(micros)
                        && ip.parse::<std::net::Ipv4Addr>().is_ok()
                        && port.parse::<u16>().is_ok();
                    shaped.then(|| words.as_bytes().to_vec())
                };
                match (words(redis), words(shell)) {
                    (Some(a), Some(b)) if a == b => Ok(()),
                    (Some(_), Some(_)) => fail("different words"),
                    _ => fail("not a monitor line"),
                }
            }
        }
    }
}

/// Commands and subcommands net-shell has that Redis 7.0 cannot list: from later Redis versions
/// (see [`Difference::ClientSetinfo`]), and Kvrocks' `CLUSTERX`, with which a controller pushes
/// the cluster topology (a shell has no cluster bus), and `CLUSTER IMPORT`.
const NEWER_THAN_7_0: &[&[u8]] = &[
    b"client|setinfo",
    b"clusterx",
    b"clusterx|setnodeid",
    b"clusterx|setnodes",
    b"clusterx|version",
    b"clusterx|migrate",
    b"cluster|import",
    // Redis 7.4's per-field time to live.
    b"hexpire",
    b"hpexpire",
    b"hexpireat",
    b"hpexpireat",
    b"httl",
    b"hpttl",
    b"hexpiretime",
    b"hpexpiretime",
    b"hpersist",
    // Redis 8.0's.
    b"hgetdel",
    b"hgetex",
    b"hsetex",
];

/// Whether `name` (a `Value`) is one of [`NEWER_THAN_7_0`].
fn newer_than_7_0(name: &Value) -> bool {
    NEWER_THAN_7_0.iter().any(|x| name.bytes() == Some(x))
}

/// Each `COMMAND INFO` entry net-shell gives equals Redis' entry of that name (subcommands
/// compared one by one); `COMMAND COUNT`: at most Redis'.
fn check_command_subset(redis: &Value, shell: &Value) -> Result<(), String> {
    if let (Value::Int(r), Value::Int(s)) = (redis, shell) {
        return if s <= r {
            Ok(())
        } else {
            Err("more commands than Redis".into())
        };
    }
    let (Some(ri), Some(si)) = (redis.items(), shell.items()) else {
        return Err("not arrays".into());
    };
    // A list of names (`COMMAND LIST`): each of net-shell's is one of Redis'.
    if si.iter().all(|v| matches!(v, Value::Bulk(Some(_)))) {
        return match si.iter().find(|n| !ri.contains(n) && !newer_than_7_0(n)) {
            Some(n) => Err(format!("{n:?} unknown to Redis")),
            None => Ok(()),
        };
    }
    let name = |v: &Value| {
        v.items()
            .and_then(|f| f.first().and_then(|n| n.bytes().map(<[u8]>::to_vec)))
    };
    // An array of entries, or one entry (its first field a name, its second the arity).
    let is_entry = matches!(si.get(1), Some(Value::Int(_)));
    if is_entry {
        return check_entry(&ri, &si);
    }
    for entry in &si {
        if *entry == Value::Array(None) {
            continue;
        }
        let n = name(entry).ok_or("entry without a name")?;
        if NEWER_THAN_7_0.contains(&&n[..]) {
            continue;
        }
        let theirs = ri
            .iter()
            .find(|e| name(e).as_deref() == Some(&n[..]))
            .ok_or_else(|| format!("{} unknown to Redis", String::from_utf8_lossy(&n)))?;
        check_entry(
            &theirs.items().unwrap_or_default(),
            &entry.items().unwrap_or_default(),
        )?;
    }
    Ok(())
}

/// One `COMMAND INFO` entry: fields equal but the subcommands, of which each of net-shell's
/// equals Redis' of the same name.
fn check_entry(redis: &[Value], shell: &[Value]) -> Result<(), String> {
    let shown = |f: &[Value]| format!("{:?}", f.first());
    if redis.len() != shell.len() || redis.len() < 10 {
        return Err(format!("entry shape {}", shown(shell)));
    }
    if redis[..9] != shell[..9] {
        return Err(format!("entry fields of {}", shown(shell)));
    }
    let subs = |v: &Value| v.items().unwrap_or_default();
    for sub in subs(&shell[9]) {
        let sub_fields = sub.items().unwrap_or_default();
        let name = sub_fields
            .first()
            .and_then(Value::bytes)
            .unwrap_or_default();
        if NEWER_THAN_7_0.contains(&name) {
            continue;
        }
        let theirs = subs(&redis[9])
            .into_iter()
            .find(|r| r.items().and_then(|f| f.first().cloned()) == sub_fields.first().cloned())
            .ok_or_else(|| format!("subcommand {:?} unknown to Redis", sub_fields.first()))?;
        if theirs.items().unwrap_or_default() != sub_fields {
            return Err(format!("subcommand {:?}", sub_fields.first()));
        }
    }
    Ok(())
}

/// `COMMAND DOCS`: for each command net-shell documents, Redis documents it, in the same
/// group.
fn check_docs(redis: &Value, shell: &Value) -> Result<(), String> {
    let (Some(ri), Some(si)) = (redis.items(), shell.items()) else {
        return Err("not maps".into());
    };
    let group = |doc: &Value| {
        doc.items()?
            .chunks(2)
            .find(|kv| kv[0].bytes() == Some(b"group"))
            .map(|kv| kv[1].clone())
    };
    for pair in si.chunks(2) {
        if newer_than_7_0(&pair[0]) {
            continue;
        }
        let theirs = ri
            .chunks(2)
            .find(|r| r[0] == pair[0])
            .ok_or_else(|| format!("{:?} not documented by Redis", pair[0]))?;
        if group(&theirs[1]) != group(&pair[1]) || group(&pair[1]).is_none() {
            return Err(format!("group of {:?}", pair[0]));
        }
    }
    Ok(())
}

/// One command and how its reply is compared.
#[derive(Clone, Debug)]
pub struct Request {
    /// The words.
    pub args: Vec<Vec<u8>>,
    /// `None`: byte for byte.
    pub differs: Option<Difference>,
}

/// A step of a script.
#[derive(Clone, Debug)]
pub enum Step {
    /// Requests sent together, in one write (one is a plain request).
    Pipeline(Vec<Request>),
    /// Wait this many milliseconds (both servers' clocks move on).
    Sleep(u64),
    /// `SCAN cursor <these words>` from cursor 0 until the cursor is 0 again, on each server:
    /// the cursors are each server's own, so the keys met are compared, as a set (each key
    /// at most once here). Words `HSCAN key …` scan that hash's fields instead (`HSCAN key
    /// cursor …`), compared as field-value pairs.
    ScanAll(Vec<Vec<u8>>),
    /// Requests sent together on a connection of the script (0 is the one the other steps
    /// use; others are opened when first named), then `pushed` more replies read after
    /// theirs (pub/sub messages), all compared byte for byte.
    On {
        /// Which connection.
        conn: usize,
        /// What is sent (may be nothing, to read pushed messages only).
        requests: Vec<Request>,
        /// Replies expected beyond one per request.
        pushed: usize,
    },
    /// Requests sent together on a connection, answered with only this many replies (the
    /// rest silenced by `CLIENT REPLY`); a reply is compared with the request at its place.
    Quiet {
        /// Which connection.
        conn: usize,
        /// What is sent.
        requests: Vec<Request>,
        /// Replies that come.
        replies: usize,
    },
    /// Reads this many lines on a connection in `MONITOR` mode, each compared as
    /// [`Difference::Monitor`].
    Monitored {
        /// Which connection.
        conn: usize,
        /// How many lines.
        lines: usize,
    },
    /// `PING` on a subscribed connection, and every message that came before its reply: the
    /// messages each server published since the last look, compared byte for byte and in
    /// order, however many each sent.
    Messages(usize),
}

/// A named list of steps, run on a fresh connection to each server after `FLUSHALL`.
#[derive(Clone, Debug)]
pub struct Script {
    /// What it covers.
    pub name: String,
    /// The steps.
    pub steps: Vec<Step>,
}

/// `lines` as requests whose replies are compared byte for byte.
fn compared(lines: &[&str]) -> Vec<Request> {
    lines
        .iter()
        .map(|line| Request {
            args: words(line),
            differs: None,
        })
        .collect()
}

/// Splits a command line into words as redis-cli does: blanks separate words, `"…"` quotes
/// one (with `\"`, `\\`, `\n`, `\r`, `\t` and `\xHH`), `''` is an empty word.
///
/// # Panics
///
/// On an unclosed quote: scripts are test code.
pub fn words(line: &str) -> Vec<Vec<u8>> {
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' {
            i += 1;
            continue;
        }
        let mut word = Vec::new();
        if bytes[i] == b'"' {
            i += 1;
            while bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                    match bytes[i] {
                        b'n' => word.push(b'\n'),
                        b'r' => word.push(b'\r'),
                        b't' => word.push(b'\t'),
                        b'x' => {
                            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                            word.push(u8::from_str_radix(hex, 16).unwrap());
                            i += 2;
                        }
                        other => word.push(other),
                    }
                } else {
                    word.push(bytes[i]);
                }
                i += 1;
            }
            i += 1;
        } else if bytes[i..].starts_with(b"''") {
            i += 2;
        } else {
            while i < bytes.len() && bytes[i] != b' ' {
                word.push(bytes[i]);
                i += 1;
            }
        }
        words.push(word);
    }
    words
}

impl Script {
    /// An empty script.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            steps: Vec::new(),
        }
    }

    /// Commands compared byte for byte, one step each.
    pub fn run(mut self, lines: &[&str]) -> Self {
        for line in lines {
            self.steps.push(Step::Pipeline(compared(&[*line])));
        }
        self
    }

    /// Commands whose replies differ as `difference` says, one step each.
    pub fn differs(mut self, difference: Difference, lines: &[&str]) -> Self {
        for line in lines {
            self.steps.push(Step::Pipeline(vec![Request {
                args: words(line),
                differs: Some(difference),
            }]));
        }
        self
    }

    /// Commands sent in one write, compared byte for byte.
    pub fn pipeline(mut self, lines: &[&str]) -> Self {
        let requests = compared(lines);
        self.steps.push(Step::Pipeline(requests));
        self
    }

    /// Requests with binary words, one step each.
    pub fn binary(mut self, requests: Vec<Request>) -> Self {
        self.steps
            .extend(requests.into_iter().map(|r| Step::Pipeline(vec![r])));
        self
    }

    /// A whole `SCAN` with these options (see [`Step::ScanAll`]).
    pub fn scan_all(mut self, options: &str) -> Self {
        self.steps.push(Step::ScanAll(words(options)));
        self
    }

    /// Sends `lines` together on connection `conn` (0: the script's first), and reads
    /// `pushed` more replies than one per line (pub/sub messages), all compared byte for byte.
    #[must_use]
    pub fn on(mut self, conn: usize, lines: &[&str], pushed: usize) -> Self {
        let requests = compared(lines);
        self.steps.push(Step::On {
            conn,
            requests,
            pushed,
        });
        self
    }

    /// Commands sent in one write on connection 0, of which only `replies` replies come
    /// (`CLIENT REPLY OFF|SKIP`), compared byte for byte.
    #[must_use]
    pub fn quiet(mut self, lines: &[&str], replies: usize) -> Self {
        let requests = compared(lines);
        self.steps.push(Step::Quiet {
            conn: 0,
            requests,
            replies,
        });
        self
    }

    /// Sends `lines` on connection `conn` and reads only `replies` replies (a blocking pop
    /// answers later: read it with [`on`](Self::on) and no lines).
    #[must_use]
    pub fn send_on(mut self, conn: usize, lines: &[&str], replies: usize) -> Self {
        let requests = compared(lines);
        self.steps.push(Step::Quiet {
            conn,
            requests,
            replies,
        });
        self
    }

    /// Reads `lines` lines on connection `conn`, in `MONITOR` mode: see [`Step::Monitored`].
    #[must_use]
    pub fn monitored(mut self, conn: usize, lines: usize) -> Self {
        self.steps.push(Step::Monitored { conn, lines });
        self
    }

    /// Reads what connection `conn` (subscribed) was sent since the last look: see
    /// [`Step::Messages`].
    #[must_use]
    pub fn messages(mut self, conn: usize) -> Self {
        self.steps.push(Step::Messages(conn));
        self
    }

    /// Waits `ms` milliseconds.
    pub fn sleep(mut self, ms: u64) -> Self {
        self.steps.push(Step::Sleep(ms));
        self
    }
}

/// A `redis-server` on a free port of 127.0.0.1, persistence off, killed on drop.
pub struct RedisServer {
    _child: KillOnDrop,
    port: u16,
}

impl RedisServer {
    /// Starts `redis-server` and waits until it answers.
    ///
    /// # Errors
    ///
    /// When it cannot be started or does not answer within 10 s.
    pub fn start() -> Result<Self, String> {
        let port = free_local_port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--loglevel", "warning"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start redis-server: {e}"))?;
        let server = Self {
            _child: KillOnDrop::new(child),
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut conn) = server.connect() {
                if conn.exchange(&[crate::sim::encode(&[b"PING"])], 1).is_ok() {
                    return Ok(server);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err("redis-server did not answer within 10 s".into())
    }

    /// The port it listens on, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A new connection.
    ///
    /// # Errors
    ///
    /// When the connection fails.
    pub fn connect(&self) -> Result<RedisConnection, String> {
        RedisConnection::open(self.port)
    }
}

impl RedisConnection {
    /// A connection to the server on 127.0.0.1 at `port`, with a 10 s read timeout.
    ///
    /// # Errors
    ///
    /// When the connection fails.
    pub fn open(port: u16) -> Result<Self, String> {
        let stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
            .map_err(|e| format!("connect to redis-server: {e}"))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        Ok(Self {
            stream,
            pending: Vec::new(),
        })
    }
}

/// A connection to the real server.
pub struct RedisConnection {
    stream: TcpStream,
    pending: Vec<u8>,
}

impl RedisConnection {
    /// Sends the requests in one write and reads `n` replies, raw.
    ///
    /// # Errors
    ///
    /// On I/O errors, or a reply that does not come.
    pub fn exchange(&mut self, requests: &[Vec<u8>], n: usize) -> Result<Vec<Vec<u8>>, String> {
        let bytes: Vec<u8> = requests.concat();
        self.stream.write_all(&bytes).map_err(|e| e.to_string())?;
        let mut replies = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        while replies.len() < n {
            if let Some((_, used)) = Value::decode(&self.pending) {
                replies.push(self.pending.drain(..used).collect());
                continue;
            }
            let got = self.stream.read(&mut buf).map_err(|e| e.to_string())?;
            if got == 0 {
                return Err("redis-server closed the connection".into());
            }
            self.pending.extend_from_slice(&buf[..got]);
        }
        Ok(replies)
    }
}

/// The store the simulated shell runs on in a differential run.
pub type DiffSim<'m> = Sim<'m, 6, 512, 262_144>;

/// net-shell in the simulated network, its clock following the wall clock.
pub struct Shell<'m> {
    /// The simulation.
    pub sim: DiffSim<'m>,
    start: Instant,
    base: u64,
    /// Replies that came beyond those an exchange waited for, by client: the next exchange
    /// on that client gets them first (as a socket to Redis keeps them).
    early: Vec<(Client, Vec<Vec<u8>>)>,
}

impl<'m> Shell<'m> {
    /// A server with Redis' `timeout 0` (no idle timeout), its Unix time from the wall clock.
    pub fn start(buffers: &'m mut ServerBuffers) -> Self {
        Self::start_with(buffers, |_| {})
    }

    /// [`start`](Self::start), its configuration changed by `configure` first (cluster mode,
    /// say).
    pub fn start_with(
        buffers: &'m mut ServerBuffers,
        configure: impl FnOnce(&mut net_shell::ServerConfig),
    ) -> Self {
        let mut config = crate::sim::config(Timeouts::new(0, 10_000, 10_000));
        configure(&mut config);
        let mut sim: DiffSim = Sim::with(buffers, config, crate::sim::store());
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock after 1970")
            .as_millis() as u64;
        let base = sim.now;
        sim.server.set_unix_time(base, unix);
        Self {
            sim,
            start: Instant::now(),
            base,
            early: Vec::new(),
        }
    }

    /// Moves the simulated clock up to the wall clock.
    pub fn catch_up(&mut self) {
        let target = self.base + self.start.elapsed().as_millis() as u64;
        if target > self.sim.now {
            self.sim.run_until(target);
        }
    }

    /// A new connection.
    pub fn connect(&mut self) -> Client {
        self.sim.connect()
    }

    /// Sends the requests in one write and collects `n` replies, raw.
    ///
    /// # Errors
    ///
    /// When the replies do not all come.
    pub fn exchange(
        &mut self,
        client: Client,
        requests: &[Vec<u8>],
        n: usize,
    ) -> Result<Vec<Vec<u8>>, String> {
        self.catch_up();
        let bytes: Vec<u8> = requests.concat();
        self.sim.send(client, &bytes);
        let mut raw: Vec<u8> = match self.early.iter().position(|(c, _)| *c == client) {
            Some(at) => self.early.remove(at).1.concat(),
            None => Vec::new(),
        };
        // As long as a socket to Redis waits (10 s): a reply may come only when the clock
        // reaches a timeout (a blocking pop), so the clock keeps following the wall clock.
        let give_up = Instant::now() + Duration::from_secs(10);
        for round in 0.. {
            if round >= 1000 && Instant::now() > give_up {
                break;
            }
            if round >= 1000 {
                std::thread::sleep(Duration::from_millis(1));
                self.catch_up();
            }
            self.sim.settle();
            raw.extend(self.sim.take(client));
            if let Some(mut replies) = split_replies(&raw) {
                if replies.len() >= n {
                    let later = replies.split_off(n);
                    if !later.is_empty() {
                        self.early.push((client, later));
                    }
                    return Ok(replies);
                }
            }
            if !self.sim.is_open(client) && raw.is_empty() {
                break;
            }
        }
        Err(format!(
            "net-shell gave {} of {n} replies: {}",
            split_replies(&raw).map_or(0, |r| r.len()),
            show(&raw)
        ))
    }
}

/// Whether a reply is a pub/sub message (`message`, `pmessage`), in RESP2 or RESP3.
fn is_message(reply: &[u8]) -> bool {
    let body = reply
        .strip_prefix(b"*")
        .or_else(|| reply.strip_prefix(b">"))
        .unwrap_or_default();
    body.starts_with(b"3\r\n$7\r\nmessage\r\n") || body.starts_with(b"4\r\n$8\r\npmessage\r\n")
}

/// Sends `PING` through `exchange` (given the requests and how many replies to wait for),
/// then takes replies until one is not a message: the messages, then `PING`'s reply.
fn messages_then_pong(
    mut exchange: impl FnMut(&[Vec<u8>]) -> Result<Vec<Vec<u8>>, String>,
) -> Result<Vec<Vec<u8>>, String> {
    let mut got = exchange(&[crate::sim::encode(&[b"PING"])])?;
    for _ in 0..10_000 {
        if got.last().is_some_and(|reply| !is_message(reply)) {
            return Ok(got);
        }
        got.extend(exchange(&[])?);
    }
    Err("no end to the messages".into())
}

/// Runs `SCAN cursor <options>` through `exchange` until the cursor comes back to 0; the keys
/// met, in order.
fn scan_all(
    options: &[Vec<u8>],
    mut exchange: impl FnMut(Vec<u8>) -> Result<Vec<u8>, String>,
) -> Result<Vec<String>, String> {
    // `HSCAN key …`: the cursor goes after the key, and fields come with their values.
    let hash = options
        .first()
        .filter(|w| w.eq_ignore_ascii_case(b"HSCAN"))
        .and(options.get(1));
    let options = if hash.is_some() {
        &options[2..]
    } else {
        options
    };
    let mut cursor = b"0".to_vec();
    let mut keys = Vec::new();
    for _ in 0..10_000 {
        let mut args: Vec<&[u8]> = match hash {
            Some(key) => vec![b"HSCAN", key, &cursor],
            None => vec![b"SCAN", &cursor],
        };
        args.extend(options.iter().map(Vec::as_slice));
        let reply = exchange(crate::sim::encode(&args))?;
        let value = Value::decode(&reply).map(|(v, _)| v);
        let Some(Value::Array(Some(parts))) = value else {
            return Err(format!("SCAN answered {}", show(&reply)));
        };
        let (Some(next), Some(found)) = (parts[0].bytes(), parts[1].items()) else {
            return Err(format!("SCAN answered {}", show(&reply)));
        };
        if hash.is_some() {
            keys.extend(found.chunks(2).map(|pair| {
                let shown: Vec<String> = pair.iter().filter_map(Value::bytes).map(show).collect();
                shown.join(" = ")
            }));
        } else {
            keys.extend(found.iter().filter_map(Value::bytes).map(show));
        }
        if next == b"0" {
            return Ok(keys);
        }
        cursor = next.to_vec();
    }
    Err("SCAN never came back to cursor 0".into())
}

/// A disagreement found by [`run_scripts`].
#[derive(Debug)]
pub struct Mismatch {
    /// Where: script and step.
    pub at: String,
    /// The request.
    pub request: String,
    /// What Redis answered.
    pub redis: String,
    /// What net-shell answered.
    pub shell: String,
    /// The check that failed.
    pub why: String,
}

/// What a run compared.
#[derive(Debug, Default)]
pub struct Tally {
    /// Replies equal byte for byte.
    pub exact: usize,
    /// Replies checked under a [`Difference`].
    pub intended: usize,
    /// Disagreements.
    pub mismatches: Vec<Mismatch>,
}

/// Runs each script against both servers, each on fresh connections after `FLUSHALL`; with
/// `resp3`, every connection first says `HELLO 3` to both (and the handshakes are checked
/// as [`Difference::Handshake`]).
///
/// # Errors
///
/// When either server stops answering (a mismatch is not an error: see [`Tally`]).
pub fn run_scripts(
    redis: &RedisServer,
    shell: &mut Shell<'_>,
    scripts: &[Script],
    resp3: bool,
) -> Result<Tally, String> {
    let mut tally = Tally::default();
    let protocol = if resp3 { "RESP3" } else { "RESP2" };
    for script in scripts {
        let mut conns: Vec<(RedisConnection, Client)> = Vec::new();
        let open = |shell: &mut Shell<'_>,
                    conns: &mut Vec<(RedisConnection, Client)>,
                    tally: &mut Tally,
                    conn: usize|
         -> Result<(), String> {
            while conns.len() <= conn {
                let mut r = redis.connect()?;
                let s = shell.connect();
                if resp3 {
                    let hello = [crate::sim::encode(&[b"HELLO", b"3"])];
                    let theirs = r.exchange(&hello, 1)?;
                    let ours = shell.exchange(s, &hello, 1)?;
                    match Difference::Handshake.check(&theirs[0], &ours[0]) {
                        Ok(()) => tally.intended += 1,
                        Err(why) => tally.mismatches.push(Mismatch {
                            at: format!("{} ({protocol}) connection {}", script.name, conns.len()),
                            request: "HELLO 3".into(),
                            redis: show(&theirs[0]),
                            shell: show(&ours[0]),
                            why,
                        }),
                    }
                }
                conns.push((r, s));
            }
            Ok(())
        };
        open(shell, &mut conns, &mut tally, 0)?;
        let flush = [crate::sim::encode(&[b"FLUSHALL"])];
        conns[0].0.exchange(&flush, 1)?;
        shell.exchange(conns[0].1, &flush, 1)?;
        for (index, step) in script.steps.iter().enumerate() {
            let (conn, requests, expected) = match step {
                Step::Sleep(ms) => {
                    std::thread::sleep(Duration::from_millis(*ms));
                    continue;
                }
                Step::ScanAll(options) => {
                    let (r, s) = &mut conns[0];
                    let s = *s;
                    let theirs = scan_all(options, |req| Ok(r.exchange(&[req], 1)?.remove(0)))?;
                    let ours =
                        scan_all(options, |req| Ok(shell.exchange(s, &[req], 1)?.remove(0)))?;
                    // As sets; a key met twice here is a mismatch.
                    let mut sorted = ours.clone();
                    sorted.sort();
                    sorted.dedup();
                    let mut theirs_sorted = theirs;
                    theirs_sorted.sort();
                    theirs_sorted.dedup();
                    if sorted == theirs_sorted && sorted.len() == ours.len() {
                        tally.intended += 1;
                    } else {
                        tally.mismatches.push(Mismatch {
                            at: format!("{} ({protocol}) step {}", script.name, index),
                            request: format!(
                                "SCAN … {}",
                                options
                                    .iter()
                                    .map(|a| show(a))
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            ),
                            redis: format!("{theirs_sorted:?}"),
                            shell: format!("{ours:?}"),
                            why: "different keys over a whole scan".into(),
                        });
                    }
                    continue;
                }
                Step::Messages(conn) => {
                    let conn = *conn;
                    open(shell, &mut conns, &mut tally, conn)?;
                    let (r, s) = &mut conns[conn];
                    let s = *s;
                    let theirs = messages_then_pong(|req| r.exchange(req, 1))?;
                    let ours = messages_then_pong(|req| shell.exchange(s, req, 1))?;
                    for i in 0..theirs.len().max(ours.len()) {
                        let (rb, sb) = (theirs.get(i), ours.get(i));
                        if rb == sb {
                            tally.exact += 1;
                            continue;
                        }
                        let shown = |b: Option<&Vec<u8>>| b.map_or("(nothing)".into(), |b| show(b));
                        tally.mismatches.push(Mismatch {
                            at: format!("{} ({protocol}) step {} #{}", script.name, index, i),
                            request: format!("(message {} before PING's reply)", i + 1),
                            redis: shown(rb),
                            shell: shown(sb),
                            why: "messages differ".into(),
                        });
                    }
                    continue;
                }
                Step::Monitored { conn, lines } => {
                    let conn = *conn;
                    open(shell, &mut conns, &mut tally, conn)?;
                    let (r, s) = &mut conns[conn];
                    let at = |e: String| format!("{} step {index}: {e}", script.name);
                    let theirs = r.exchange(&[], *lines).map_err(at)?;
                    let ours = shell.exchange(*s, &[], *lines).map_err(at)?;
                    for i in 0..*lines {
                        match Difference::Monitor.check(&theirs[i], &ours[i]) {
                            Ok(()) => tally.intended += 1,
                            Err(why) => tally.mismatches.push(Mismatch {
                                at: format!("{} ({protocol}) step {} #{}", script.name, index, i),
                                request: format!("(monitor line {})", i + 1),
                                redis: show(&theirs[i]),
                                shell: show(&ours[i]),
                                why,
                            }),
                        }
                    }
                    continue;
                }
                Step::Pipeline(requests) => (0, requests, requests.len()),
                Step::Quiet {
                    conn,
                    requests,
                    replies,
                } => (*conn, requests, *replies),
                Step::On {
                    conn,
                    requests,
                    pushed,
                } => (*conn, requests, requests.len() + *pushed),
            };
            open(shell, &mut conns, &mut tally, conn)?;
            let (r, s) = &mut conns[conn];
            let encoded: Vec<Vec<u8>> = requests
                .iter()
                .map(|req| {
                    let args: Vec<&[u8]> = req.args.iter().map(Vec::as_slice).collect();
                    crate::sim::encode(&args)
                })
                .collect();
            let at = |e: String| format!("{} step {index}: {e}", script.name);
            let theirs = r.exchange(&encoded, expected).map_err(at)?;
            let ours = shell.exchange(*s, &encoded, expected).map_err(at)?;
            for i in 0..expected {
                let (rb, sb) = (&theirs[i], &ours[i]);
                let differs = requests.get(i).and_then(|req| req.differs);
                let verdict = match differs {
                    None if rb == sb => Ok(()),
                    None => Err("bytes differ".to_string()),
                    Some(difference) => difference.check(rb, sb),
                };
                let shown = || match requests.get(i) {
                    Some(req) => req
                        .args
                        .iter()
                        .map(|a| show(a))
                        .collect::<Vec<_>>()
                        .join(" "),
                    None => format!("(message {} pushed)", i - requests.len() + 1),
                };
                match (verdict, differs) {
                    (Ok(()), None) => tally.exact += 1,
                    (Ok(()), Some(_)) => tally.intended += 1,
                    (Err(why), _) => tally.mismatches.push(Mismatch {
                        at: format!("{} ({protocol}) step {} #{}", script.name, index, i),
                        request: shown(),
                        redis: show(rb),
                        shell: show(sb),
                        why,
                    }),
                }
            }
        }
        let quit = [crate::sim::encode(&[b"QUIT"])];
        for (mut r, s) in conns {
            let _ = r.exchange(&quit, 1);
            let _ = shell.exchange(s, &quit, 1);
            shell.sim.close(s);
            shell.early.retain(|(c, _)| *c != s);
        }
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_redis_cli() {
        assert_eq!(
            words(r#"SET "a b" '' "\x00\r\n" x"#),
            vec![
                b"SET".to_vec(),
                b"a b".to_vec(),
                vec![],
                vec![0, b'\r', b'\n'],
                b"x".to_vec()
            ]
        );
    }

    #[test]
    fn differences_check_what_must_agree() {
        let t = Difference::Timing(5);
        assert!(t.check(b":1000\r\n", b":998\r\n").is_ok());
        assert!(t.check(b":1000\r\n", b":990\r\n").is_err());
        let u = Difference::Unordered;
        assert!(u
            .check(
                b"*2\r\n$1\r\na\r\n$1\r\nb\r\n",
                b"*2\r\n$1\r\nb\r\n$1\r\na\r\n"
            )
            .is_ok());
        assert!(u
            .check(b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", b"*1\r\n$1\r\na\r\n")
            .is_err());
    }
}
