//! Property test of whole connections through the shared checker [`host_tests::conn_check`]
//! (the `connection` fuzz target drives the same one): seeded runs of several clients on the
//! simulated network, some sending well-formed commands in arbitrary chunks, others garbage,
//! commands with random arguments, protocol errors and requests too big for the input buffer,
//! while clients connect past the slots, close, abort, and time runs or jumps past the timeouts.
//! The checker says what must hold; this driver picks the ops, and fails if its runs together
//! never reached a path (a refusal, each timeout, a protocol error, `QUIT`, ...).
//!
//! The runner is [`host_tests::property`] (proptest): [`CASES`] runs, scaled by
//! `PROPERTY_SCALE`, chosen by `PROPERTY_SEED`; a failure is shrunk to its smallest run.

use host_tests::property::{self, Cases, Draw};

use host_tests::conn_check::{
    check_labelled, Command, ConnInput, ConnOp, ConnSeen, TimeoutChoice, Value, KEYS, MAX_CLIENTS,
    MAX_OPS,
};
use rand::Rng;

/// Runs.
const CASES: usize = 1_000;

/// Draws one run's ops.
struct Generator<R> {
    rng: R,
    clients: usize,
    /// Clients that only ever get well-formed commands (the first one always).
    clean: usize,
}

impl<R: Rng> Generator<R> {
    fn client(&mut self) -> u8 {
        self.rng.random_range(0..self.clients) as u8
    }

    /// A client past the clean ones when there is one.
    fn noisy_client(&mut self) -> u8 {
        if self.clients > self.clean {
            self.rng.random_range(self.clean..self.clients) as u8
        } else {
            self.client()
        }
    }

    fn clean_client(&mut self) -> u8 {
        self.rng.random_range(0..self.clean.min(self.clients)) as u8
    }

    fn timeouts(&mut self) -> TimeoutChoice {
        match self.rng.random_range(0..10) {
            0..=2 => TimeoutChoice::Default,
            3..=6 => TimeoutChoice::Short,
            7 => TimeoutChoice::Off,
            _ => TimeoutChoice::Custom {
                idle_ms: self.rng.random_range(0..5_000),
                read_ms: self.rng.random_range(0..2_000),
            },
        }
    }

    fn key(&mut self) -> u8 {
        self.rng.random_range(0..KEYS)
    }

    fn text(&mut self) -> Vec<u8> {
        let len = self.rng.random_range(0..12);
        (0..len)
            .map(|_| match self.rng.random_range(0..8) {
                0 => b' ',
                1 => b'\r',
                2 => b'\n',
                3 => b'"',
                4 => self.rng.random(),
                _ => self.rng.random_range(b'a'..=b'z'),
            })
            .collect()
    }

    fn value(&mut self) -> Value {
        match self.rng.random_range(0..10) {
            0..=3 => Value::Int(match self.rng.random_range(0..4) {
                0 => self.rng.random_range(-5..5),
                1 => i64::MAX - self.rng.random_range(0..3),
                2 => i64::MIN,
                _ => self.rng.random(),
            }),
            4 => Value::Max,
            5 | 6 => Value::Text(self.text()),
            7 => Value::Text(match self.rng.random_range(0..4) {
                0 => b"01".to_vec(),
                1 => b"+1".to_vec(),
                2 => b" 1".to_vec(),
                _ => b"-0".to_vec(),
            }),
            _ => Value::Big(self.rng.random()),
        }
    }

    fn command(&mut self) -> Command {
        match self.rng.random_range(0..40) {
            0..=3 => Command::Ping,
            4 | 5 => Command::PingWith(self.text()),
            6..=8 => Command::Echo(self.text()),
            9..=16 => Command::Set {
                key: self.key(),
                value: self.value(),
            },
            17..=24 => Command::Get { key: self.key() },
            25..=27 => Command::Del {
                keys: (0..self.rng.random_range(1..4))
                    .map(|_| self.key())
                    .collect(),
            },
            28..=34 => Command::Incr { key: self.key() },
            35 | 36 => Command::Info,
            37 => Command::FlushAll,
            38 if self.rng.random_ratio(1, 3) => Command::Quit,
            _ => Command::Ping,
        }
    }

    /// Bytes that are not a clean stream of commands.
    fn garbage(&mut self) -> Vec<u8> {
        const SPECIAL: &[u8] = b"*$\r\n\r\n0123456789-: \"'\\";
        let byte = |rng: &mut R| match rng.random_range(0..3) {
            0 => SPECIAL[rng.random_range(0..SPECIAL.len())],
            1 => rng.random_range(b'a'..=b'z'),
            _ => rng.random(),
        };
        match self.rng.random_range(0..8) {
            // Random bytes.
            0 | 1 => (0..self.rng.random_range(1..40))
                .map(|_| byte(&mut self.rng))
                .collect(),
            // A command with random arguments, known name or not, maybe left unfinished.
            2..=4 => {
                const NAMES: &[&str] = &[
                    "get", "SET", "del", "incr", "exists", "ttl", "expire", "getdel", "decrby",
                    "flushall", "config", "client", "hello", "command", "dbsize", "nosuch", "PING",
                    "echo", "quit", "setex", "persist",
                ];
                let mut args = vec![NAMES[self.rng.random_range(0..NAMES.len())]
                    .as_bytes()
                    .to_vec()];
                for _ in 0..self.rng.random_range(0..4) {
                    args.push(match self.rng.random_range(0..3) {
                        0 => format!("key:{}", self.key()).into_bytes(),
                        1 => self.rng.random_range(-2..100).to_string().into_bytes(),
                        _ => self.text(),
                    });
                }
                // CONFIG SET would turn the timeout checks off: keep it rare.
                if args[0] == b"config" && self.rng.random_ratio(9, 10) {
                    args.insert(1, b"get".to_vec());
                }
                let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                let mut bytes = host_tests::sim::encode(&refs);
                if self.rng.random_ratio(1, 4) {
                    bytes.truncate(self.rng.random_range(0..bytes.len()));
                }
                bytes
            }
            // A protocol error.
            5 => match self.rng.random_range(0..5) {
                0 => b"*2\r\n+x\r\n".to_vec(),
                1 => b"*-5x\r\n".to_vec(),
                2 => b"*1\r\n$-3\r\n".to_vec(),
                3 => b"ECHO \"unbalanced\r\n".to_vec(),
                _ => b"*99999\r\n".to_vec(),
            },
            // Blank lines and empty multibulks.
            6 => b"\r\n*0\r\n\n*-1\r\n".to_vec(),
            // An inline command.
            _ => {
                let mut line = format!("GET key:{}", self.key()).into_bytes();
                line.extend_from_slice(if self.rng.random() { b"\n" } else { b"\r\n" });
                line
            }
        }
    }

    fn op(&mut self) -> ConnOp {
        match self.rng.random_range(0..100) {
            0..=9 => {
                if self.clients < MAX_CLIENTS {
                    self.clients += 1;
                }
                ConnOp::Connect
            }
            10..=39 => ConnOp::Command {
                client: self.clean_client(),
                command: self.command(),
                inline: self.rng.random_ratio(1, 4),
            },
            40..=59 => ConnOp::Flush {
                client: self.clean_client(),
                len: match self.rng.random_range(0..4) {
                    0 | 1 => 0,
                    2 => self.rng.random_range(1..8),
                    _ => self.rng.random_range(1..200),
                },
            },
            60..=64 => ConnOp::Command {
                client: self.noisy_client(),
                command: self.command(),
                inline: self.rng.random(),
            },
            65..=67 => ConnOp::Flush {
                client: self.noisy_client(),
                len: 0,
            },
            68..=77 => ConnOp::Send {
                client: self.noisy_client(),
                bytes: self.garbage(),
            },
            78 | 79 => ConnOp::Fill {
                client: self.noisy_client(),
                byte: if self.rng.random() { b'a' } else { b'*' },
                len: self.rng.random_range(1_000..4_200),
            },
            80..=82 => ConnOp::Close {
                client: self.noisy_client(),
            },
            83 | 84 => ConnOp::Abort {
                client: self.noisy_client(),
            },
            85..=96 => ConnOp::Advance {
                ms: match self.rng.random_range(0..8) {
                    0..=3 => self.rng.random_range(0..50),
                    4 | 5 => self.rng.random_range(100..1_500),
                    6 => self.rng.random_range(1_000..4_000),
                    _ => self.rng.random(),
                },
            },
            _ => ConnOp::Jump {
                ms: self.rng.random_range(0..5_000),
            },
        }
    }
}

fn input(rng: &mut Draw<'_>) -> ConnInput {
    let mut generator = Generator {
        rng,
        clients: 1,
        clean: 1,
    };
    generator.clean = generator.rng.random_range(1..=2);
    let timeouts = generator.timeouts();
    let count = generator.rng.random_range(10..=MAX_OPS);
    let ops = (0..count).map(|_| generator.op()).collect();
    ConnInput { timeouts, ops }
}

#[test]
fn clients_mixing_commands_garbage_closes_and_time_keep_every_server_property() {
    const TEST: &str = "clients_mixing_commands_garbage_closes_and_time_keep_every_server_property";
    let cases = Cases {
        count: CASES,
        words: MAX_OPS * 12,
    };
    let mut seen = ConnSeen::default();
    for one in property::check(TEST, cases, input, |input| {
        check_labelled(input, TEST.to_string())
    }) {
        seen.add(&one);
    }
    eprintln!("{TEST}: {seen:?}");
    let mut missing = Vec::new();
    for (count, what) in [
        (seen.exact_replies, "exact_replies"),
        (seen.get_hits, "get_hits"),
        (seen.incr_errors, "incr_errors"),
        (seen.infos, "infos"),
        (seen.unknown_commands, "unknown_commands"),
        (seen.protocol_errors, "protocol_errors"),
        (seen.too_big, "too_big"),
        (seen.quits, "quits"),
        (seen.refusals, "refusals"),
        // With every socket taken, a closing connection whose peer has every byte gives its
        // socket to the new client; in the simulation every close has finished sending, so a
        // client no longer meets no listener (`no_listener` stays possible, and checked, when
        // a closing peer has not acknowledged everything).
        (seen.reclaimed, "reclaimed"),
        (seen.idle_timeouts, "idle_timeouts"),
        (seen.read_timeouts, "read_timeouts"),
        (seen.client_closes, "client_closes"),
        (seen.client_aborts, "client_aborts"),
        (seen.flushes, "flushes"),
    ] {
        if count == 0 {
            missing.push(what);
        }
    }
    assert!(
        missing.is_empty(),
        "{TEST}: the runs never produced {missing:?}: {seen:?}"
    );
}
