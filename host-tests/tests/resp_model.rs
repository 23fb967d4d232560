//! Property tests of the RESP request parser through the shared checker
//! [`host_tests::resp_check`] (the `resp_parse` fuzz target drives the same one).
//!
//! Seeded inputs of four kinds, each under random limits, argument counts, split points and
//! quoting styles: random bytes drawn mostly from RESP's own characters; well-formed multibulk
//! pipelines, whole or damaged (cut, a byte changed, inserted or removed, a count replaced by an
//! edge value); inline lines in every quoting style, with unbalanced quotes and bad escapes; and
//! count lines with edge numbers (`-1`, `0`, leading zeros, `i64::MIN`, 20 digits and more).
//!
//! The runner is [`host_tests::property`] (proptest): [`CASES`] inputs per kind, scaled by
//! `PROPERTY_SCALE`, chosen by `PROPERTY_SEED`; a failure is shrunk to its smallest input.

use host_tests::property::{self, Cases, Draw};
use host_tests::sim;

use host_tests::resp_check::{check, check_input, Seen, HEADER};
use net_shell::resp::Limits;
use rand::Rng;

/// Inputs per kind.
const CASES: usize = 10_000;

/// Runs [`CASES`] inputs that `make` builds (after a random header) through the checker;
/// returns what they parsed to.
fn run(test: &str, make: fn(&mut Draw<'_>) -> Vec<u8>) -> Seen {
    let generate = |rng: &mut Draw<'_>| {
        let mut input = header(rng);
        input.extend(make(rng));
        Bytes(input)
    };
    let cases = Cases {
        count: CASES,
        words: 1_024,
    };
    let mut seen = Seen::default();
    for one in property::check(test, cases, generate, |input| check_input(&input.0)) {
        seen.add(one);
    }
    eprintln!("{test}: {seen:?}");
    seen
}

/// Request bytes, shown escaped in a failure message.
struct Bytes(Vec<u8>);

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

/// Fails unless the inputs reached commands, empty requests, incomplete ones, round trips, and
/// the protocol errors named.
fn require(test: &str, seen: &Seen, errors: &[&str]) {
    let mut missing: Vec<&str> = errors
        .iter()
        .copied()
        .filter(|&error| !seen.errors.contains(error))
        .collect();
    for (count, what) in [
        (seen.commands, "commands"),
        (seen.empty, "empty requests"),
        (seen.incomplete, "incomplete requests"),
        (seen.round_trips, "round trips"),
    ] {
        if count == 0 {
            missing.push(what);
        }
    }
    assert!(
        missing.is_empty(),
        "{test}: the inputs never produced {missing:?}: {seen:?}"
    );
}

/// Every protocol error the parser has.
const ALL_ERRORS: &[&str] = &[
    "InvalidMultibulkLength",
    "InvalidBulkLength",
    "ExpectedDollar",
    "TooBigInlineRequest",
    "UnbalancedQuotes",
    "TooBigMbulkCountString",
    "TooBigBulkCountString",
];

/// A limit selector: mostly small, sometimes a power of two or an extreme.
fn limit_selector(rng: &mut Draw<'_>) -> u8 {
    match rng.random_range(0..10) {
        0..=5 => rng.random_range(0..40),
        6 | 7 => rng.random_range(0..0xf0),
        _ => rng.random_range(0xf0..=0xff),
    }
}

/// The header: `MAX_ARGS`, both limits, the split point and the quoting style.
fn header(rng: &mut Draw<'_>) -> Vec<u8> {
    let split: u16 = match rng.random_range(0..3) {
        0 => rng.random_range(0..16),
        1 => rng.random_range(0..128),
        _ => rng.random(),
    };
    let [lo, hi] = split.to_le_bytes();
    let header = vec![
        rng.random(),
        limit_selector(rng),
        limit_selector(rng),
        lo,
        hi,
        rng.random(),
    ];
    assert_eq!(header.len(), HEADER);
    header
}

/// A byte, mostly one RESP gives meaning to.
fn resp_byte(rng: &mut Draw<'_>) -> u8 {
    const SPECIAL: &[u8] = b"*$\r\n\r\n0123456789-+: \t\"'\\xX";
    match rng.random_range(0..10) {
        0..=5 => SPECIAL[rng.random_range(0..SPECIAL.len())],
        6..=8 => rng.random_range(b'a'..=b'z'),
        _ => rng.random(),
    }
}

/// An argument: short text, binary bytes with CR, LF and quotes, or empty.
fn argument(rng: &mut Draw<'_>) -> Vec<u8> {
    let len = match rng.random_range(0..10) {
        0 => 0,
        1..=7 => rng.random_range(1..8),
        _ => rng.random_range(8..80),
    };
    (0..len)
        .map(|_| {
            if rng.random_ratio(1, 3) {
                resp_byte(rng)
            } else {
                rng.random_range(b'a'..=b'z')
            }
        })
        .collect()
}

fn command(rng: &mut Draw<'_>) -> Vec<Vec<u8>> {
    let count = match rng.random_range(0..10) {
        0..=6 => rng.random_range(1..4),
        7 | 8 => rng.random_range(4..10),
        _ => rng.random_range(10..70),
    };
    (0..count).map(|_| argument(rng)).collect()
}

/// A count as a client (or an attacker) might write it.
fn edge_number(rng: &mut Draw<'_>) -> String {
    match rng.random_range(0..12) {
        0 => "-1".into(),
        1 => "0".into(),
        2 => "-0".into(),
        3 => format!("0{}", rng.random_range(0..100)),
        4 => format!("+{}", rng.random_range(0..100)),
        5 => i64::MIN.to_string(),
        6 => i64::MAX.to_string(),
        7 => "99999999999999999999".into(),
        8 => format!("-{}", rng.random::<u32>()),
        9 => String::new(),
        10 => format!("{} ", rng.random_range(0..10)),
        _ => rng.random_range(0..200).to_string(),
    }
}

/// Damages a request the way a faulty or hostile client might.
fn damage(rng: &mut Draw<'_>, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    let at = rng.random_range(0..bytes.len());
    match rng.random_range(0..6) {
        0 => bytes.truncate(at),
        1 => bytes[at] = resp_byte(rng),
        2 => bytes.insert(at, resp_byte(rng)),
        3 => {
            bytes.remove(at);
        }
        4 => {
            // Replace the number after a `*` or `$` with an edge value.
            if let Some(mark) = bytes[at..].iter().position(|&b| b == b'*' || b == b'$') {
                let start = at + mark + 1;
                let end = bytes[start..]
                    .iter()
                    .position(|&b| b == b'\r')
                    .map_or(bytes.len(), |e| start + e);
                bytes.splice(start..end, edge_number(rng).into_bytes());
            }
        }
        _ => {
            let extra: Vec<u8> = (0..rng.random_range(1..6))
                .map(|_| resp_byte(rng))
                .collect();
            bytes.splice(at..at, extra);
        }
    }
}

fn random_bytes(rng: &mut Draw<'_>) -> Vec<u8> {
    let len = rng.random_range(0..64);
    let mut bytes: Vec<u8> = match rng.random_range(0..4) {
        0 => b"*".to_vec(),
        1 => format!("*{}\r\n$", rng.random_range(1..4)).into_bytes(),
        _ => Vec::new(),
    };
    bytes.extend((0..len).map(|_| resp_byte(rng)));
    bytes
}

fn multibulk_pipeline(rng: &mut Draw<'_>) -> Vec<u8> {
    let mut bytes = Vec::new();
    for _ in 0..rng.random_range(1..=4) {
        let args = command(rng);
        bytes.extend(sim::encode(
            &args.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        ));
    }
    for _ in 0..rng.random_range(0..3) {
        damage(rng, &mut bytes);
    }
    bytes
}

fn inline_line(rng: &mut Draw<'_>) -> Vec<u8> {
    let mut bytes = Vec::new();
    for _ in 0..rng.random_range(1..=3) {
        for i in 0..rng.random_range(1..6) {
            if i > 0 {
                bytes.extend(std::iter::repeat_n(b' ', rng.random_range(1..3)));
            }
            let arg = argument(rng);
            match rng.random_range(0..5) {
                0 => {
                    bytes.push(b'"');
                    for b in arg {
                        match rng.random_range(0..8) {
                            0 => bytes.extend(format!("\\x{b:02x}").into_bytes()),
                            1 => bytes.extend_from_slice(b"\\n"),
                            _ if b == b'"' || b == b'\\' => bytes.extend([b'\\', b]),
                            _ => bytes.push(b),
                        }
                    }
                    if rng.random_ratio(9, 10) {
                        bytes.push(b'"');
                    }
                }
                1 => {
                    bytes.push(b'\'');
                    bytes.extend(arg.iter().filter(|&&b| b != b'\'' && b != b'\n'));
                    if rng.random_ratio(9, 10) {
                        bytes.push(b'\'');
                    }
                }
                _ => bytes.extend(arg.iter().filter(|b| !b" \t\r\n\"'".contains(b))),
            }
        }
        bytes.extend_from_slice(if rng.random() { b"\r\n" } else { b"\n" });
    }
    if rng.random_ratio(1, 4) {
        damage(rng, &mut bytes);
    }
    bytes
}

fn edge_counts(rng: &mut Draw<'_>) -> Vec<u8> {
    let mut bytes = format!("*{}\r\n", edge_number(rng)).into_bytes();
    for _ in 0..rng.random_range(0..3) {
        bytes.extend(format!("${}\r\n", edge_number(rng)).into_bytes());
        bytes.extend(argument(rng));
        bytes.extend_from_slice(b"\r\n");
    }
    bytes
}

#[test]
fn random_bytes_keep_every_parser_property() {
    const TEST: &str = "random_bytes_keep_every_parser_property";
    require(TEST, &run(TEST, random_bytes), ALL_ERRORS);
}

#[test]
fn multibulk_pipelines_whole_or_damaged_keep_every_parser_property() {
    const TEST: &str = "multibulk_pipelines_whole_or_damaged_keep_every_parser_property";
    let seen = run(TEST, multibulk_pipeline);
    require(
        TEST,
        &seen,
        &[
            "InvalidMultibulkLength",
            "InvalidBulkLength",
            "ExpectedDollar",
            "TooBigMbulkCountString",
            "TooBigBulkCountString",
        ],
    );
}

#[test]
fn inline_lines_in_every_quoting_keep_every_parser_property() {
    const TEST: &str = "inline_lines_in_every_quoting_keep_every_parser_property";
    let seen = run(TEST, inline_line);
    require(TEST, &seen, &["TooBigInlineRequest", "UnbalancedQuotes"]);
}

#[test]
fn edge_counts_keep_every_parser_property() {
    const TEST: &str = "edge_counts_keep_every_parser_property";
    let seen = run(TEST, edge_counts);
    require(
        TEST,
        &seen,
        &[
            "InvalidMultibulkLength",
            "InvalidBulkLength",
            "TooBigMbulkCountString",
        ],
    );
}

/// The server parses with 32 arguments and its input buffer as both limits.
#[test]
fn server_limits_keep_every_parser_property() {
    let limits = Limits::new(2048, 2048);
    let generate = |rng: &mut Draw<'_>| {
        let bytes = match rng.random_range(0..3) {
            0 => multibulk_pipeline(rng),
            1 => inline_line(rng),
            _ => edge_counts(rng),
        };
        let split = rng.random_range(0..=bytes.len());
        (Bytes(bytes), split, rng.random::<u8>())
    };
    let cases = Cases {
        count: 500,
        words: 1_024,
    };
    property::check(
        "server_limits_keep_every_parser_property",
        cases,
        generate,
        |(bytes, split, style)| {
            check::<{ net_shell::MAX_ARGS }>(&bytes.0, &limits, *split, *style);
        },
    );
}

/// The inputs of the fuzz findings (fuzz/README.md): an empty multibulk whose count line is
/// longer than `max_request_len` counted.
#[test]
fn empty_multibulk_with_a_long_count_fits_max_request_len() {
    let one = check_input(b"\x00\x00\x09\x00\x00\x00*-1234567\r\n");
    let two = check_input(b"\x00\x0b\x15\x00\x00\x00*-9223372036854775808\r\n");
    assert_eq!((one.empty, two.empty), (1, 1));
}
