//! The checking client of `tests/tap_faults.rs`, which runs it inside its network namespace
//! (`tap_faults_client ADDRESS:PORT SEED`): a seeded mix of SET/GET/INCR/DEL, pipelined a few
//! at a time, each reply compared with a local model, then every key read back. It exits with
//! a panic on a wrong reply or a lost acknowledged write.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Commands sent, before reading every key back.
const COMMANDS: usize = 600;
/// Most commands written before their replies are read.
const MAX_PIPELINE: usize = 4;
/// Keys per kind: few, so commands keep hitting keys written before.
const KEYS: usize = 16;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(server), Some(seed)) = (args.next(), args.next().and_then(|s| s.parse::<u64>().ok()))
    else {
        eprintln!("usage: tap_faults_client ADDRESS:PORT SEED");
        std::process::exit(2);
    };
    let stream = TcpStream::connect(&server).unwrap_or_else(|e| panic!("connect {server}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("read timeout");
    let mut client = Client {
        writer: stream.try_clone().expect("clone the stream"),
        reader: BufReader::new(stream),
    };
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut model = Model::default();
    let mut wrong = Vec::new();
    let mut sent = 0;
    let mut batches = 0;
    while sent < COMMANDS {
        let batch: Vec<Command> = (0..rng.random_range(1..=MAX_PIPELINE))
            .map(|_| Command::random(&mut rng))
            .collect();
        let expected: Vec<Vec<u8>> = batch.iter().map(|c| model.apply(c)).collect();
        let replies = client.call(&batch);
        for ((command, expected), reply) in batch.iter().zip(&expected).zip(&replies) {
            if reply != expected {
                wrong.push(format!(
                    "{command:?}: expected {:?}, got {:?}",
                    String::from_utf8_lossy(expected),
                    String::from_utf8_lossy(reply)
                ));
            }
        }
        sent += batch.len();
        batches += 1;
    }
    // Every acknowledged write must still be there.
    let mut lost = Vec::new();
    for key in model.keys() {
        let read = Command::Get(key.clone());
        let expected = model.apply(&read);
        let reply = client.call(std::slice::from_ref(&read)).remove(0);
        if reply != expected {
            lost.push(format!(
                "{key}: expected {:?}, got {:?}",
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(&reply)
            ));
        }
    }
    println!(
        "checking client: seed {seed}, {sent} commands in {batches} batches, then {} keys read back: {} wrong replies, {} lost writes",
        model.keys().len(),
        wrong.len(),
        lost.len()
    );
    assert!(wrong.is_empty(), "wrong replies: {wrong:#?}");
    assert!(lost.is_empty(), "lost writes: {lost:#?}");
}

/// One command of the checking client's mix.
#[derive(Debug, Clone)]
enum Command {
    Set(String, Vec<u8>),
    Get(String),
    Incr(String),
    Del(String),
}

impl Command {
    /// Strings under `chk:s:`, counters under `chk:n:` (so INCR never meets a non-number), and
    /// names that never clash with redis-benchmark's `key:__rand_int__`.
    fn random(rng: &mut SmallRng) -> Self {
        let string_key = |rng: &mut SmallRng| format!("chk:s:{}", rng.random_range(0..KEYS));
        let counter_key = |rng: &mut SmallRng| format!("chk:n:{}", rng.random_range(0..KEYS));
        let any_key = |rng: &mut SmallRng| {
            if rng.random_bool(0.5) {
                string_key(rng)
            } else {
                counter_key(rng)
            }
        };
        match rng.random_range(0..100) {
            0..35 => {
                // Mostly small values; some span several segments, to exercise reassembly.
                let len = if rng.random_bool(0.1) {
                    rng.random_range(2000..6000)
                } else {
                    rng.random_range(1..200)
                };
                let value = (0..len)
                    .map(|_| rng.random_range(b'!'..=b'~'))
                    .collect::<Vec<u8>>();
                Command::Set(string_key(rng), value)
            }
            35..70 => Command::Get(any_key(rng)),
            70..85 => Command::Incr(counter_key(rng)),
            _ => Command::Del(any_key(rng)),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let parts: Vec<&[u8]> = match self {
            Command::Set(key, value) => vec![b"SET", key.as_bytes(), value],
            Command::Get(key) => vec![b"GET", key.as_bytes()],
            Command::Incr(key) => vec![b"INCR", key.as_bytes()],
            Command::Del(key) => vec![b"DEL", key.as_bytes()],
        };
        out.extend_from_slice(format!("*{}\r\n", parts.len()).as_bytes());
        for part in parts {
            out.extend_from_slice(format!("${}\r\n", part.len()).as_bytes());
            out.extend_from_slice(part);
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// What the server should hold, and so answer.
#[derive(Default)]
struct Model {
    values: HashMap<String, Vec<u8>>,
    /// Every key ever written, to read back at the end (deleted ones must stay deleted).
    touched: Vec<String>,
}

impl Model {
    /// Applies `command` and returns the exact reply the server owes for it.
    fn apply(&mut self, command: &Command) -> Vec<u8> {
        match command {
            Command::Set(key, value) => {
                self.touch(key);
                self.values.insert(key.clone(), value.clone());
                b"+OK\r\n".to_vec()
            }
            Command::Get(key) => match self.values.get(key) {
                Some(value) => bulk(value),
                None => b"$-1\r\n".to_vec(),
            },
            Command::Incr(key) => {
                self.touch(key);
                let value = self.values.entry(key.clone()).or_insert(b"0".to_vec());
                let next = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<i64>().ok())
                    .expect("counters only ever hold numbers")
                    + 1;
                *value = next.to_string().into_bytes();
                format!(":{next}\r\n").into_bytes()
            }
            Command::Del(key) => {
                self.touch(key);
                let removed = self.values.remove(key).is_some();
                format!(":{}\r\n", u8::from(removed)).into_bytes()
            }
        }
    }

    fn touch(&mut self, key: &str) {
        if !self.touched.iter().any(|k| k == key) {
            self.touched.push(key.to_string());
        }
    }

    fn keys(&self) -> Vec<String> {
        self.touched.clone()
    }
}

fn bulk(value: &[u8]) -> Vec<u8> {
    let mut out = format!("${}\r\n", value.len()).into_bytes();
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
    out
}

/// A RESP2 connection that writes a batch at once and reads its replies, whole, as bytes.
struct Client {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Client {
    /// # Panics
    ///
    /// When the connection fails or closes: under faults TCP must still deliver.
    fn call(&mut self, batch: &[Command]) -> Vec<Vec<u8>> {
        let mut request = Vec::new();
        for command in batch {
            command.encode(&mut request);
        }
        self.writer.write_all(&request).expect("send a batch");
        batch.iter().map(|_| self.reply()).collect()
    }

    fn reply(&mut self) -> Vec<u8> {
        let mut reply = Vec::new();
        let read = self
            .reader
            .read_until(b'\n', &mut reply)
            .expect("read a reply");
        assert!(read > 0, "the server closed the connection");
        if reply.first() == Some(&b'$') {
            let len: i64 = std::str::from_utf8(&reply[1..])
                .ok()
                .and_then(|n| n.trim_end().parse().ok())
                .unwrap_or_else(|| panic!("bad bulk header {reply:?}"));
            if let Ok(len) = usize::try_from(len) {
                let start = reply.len();
                reply.resize(start + len + 2, 0);
                self.reader
                    .read_exact(&mut reply[start..])
                    .expect("read a bulk reply");
            }
        }
        reply
    }
}
