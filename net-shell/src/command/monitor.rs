//! `MONITOR`: a client that sees every command the server runs (Redis' `monitorCommand` and
//! `replicationFeedMonitors`). Commands are fed after they ran, those with the `admin` flag
//! left out and passwords redacted; the server writes the lines to the monitors with the time
//! and the client's address (`server/messages.rs`).

use alloc::vec::Vec;

use super::table::{Command, Flags};
use super::{error, ok, After, Context, Reply, ReplyWriter};
use crate::pubsub::MonitorLine;

/// `MONITOR`: from now on the client is sent every command run.
pub(crate) fn monitor(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if !ctx.stream_values {
        // Inside `EXEC` every command answers once: Redis' words for a client that may not
        // block.
        return error(out, "ERR MONITOR isn't allowed for DENY BLOCKING client");
    }
    if ctx.pubsub.add_monitor(ctx.slot) {
        ok(out)
    } else {
        // Already a monitor: Redis ignores the command, without a reply.
        Ok(After::Continue)
    }
}

/// Whether a monitor may run `command`: Redis treats a monitor as a replica, which may not
/// read or write keys.
pub(crate) fn monitor_may_run(ctx: &Context<'_, '_>, command: &Command) -> bool {
    !(command
        .flags
        .intersects(Flags::READONLY.union(Flags::WRITE))
        && ctx.pubsub.is_monitor(ctx.slot))
}

/// Redis' refusal of a keyspace command from a monitor.
pub(crate) const MONITOR_KEYSPACE: &str = "ERR Replica can't interact with the keyspace";

/// Feeds `argv`, which ran, to the monitors (if there are any and the command is not an
/// `admin` one).
pub(crate) fn feed(ctx: &mut Context<'_, '_>, command: &Command, argv: &[&[u8]]) {
    if !ctx.pubsub.has_monitors() || command.flags.contains(Flags::ADMIN) {
        return;
    }
    let mut words = Vec::new();
    for (at, word) in argv.iter().enumerate() {
        if at > 0 {
            words.push(b' ');
        }
        if redacted(argv, at) {
            words.extend_from_slice(b"\"(redacted)\"");
        } else {
            quote(word, &mut words);
        }
    }
    ctx.pubsub.feed_monitors(MonitorLine {
        from: ctx.slot,
        unix_ms: ctx.clock.unix_ms.unwrap_or(ctx.clock.now),
        words,
    });
}

/// Whether word `at` of `argv` is a secret: every argument of `AUTH`, the user name and
/// password after `HELLO … AUTH`, found as Redis' `helloCommand` reads its options (its
/// `redactClientCommandArgument` calls).
fn redacted(argv: &[&[u8]], at: usize) -> bool {
    if super::is(argv[0], "auth") {
        return at > 0;
    }
    if !super::is(argv[0], "hello") {
        return false;
    }
    let mut j = 2;
    while j < argv.len() {
        let more = argv.len() - 1 - j;
        if super::is(argv[j], "auth") && more >= 2 {
            if at == j + 1 || at == j + 2 {
                return true;
            }
            j += 3;
        } else if super::is(argv[j], "setname") && more >= 1 {
            j += 2;
        } else {
            break;
        }
    }
    false
}

/// `word` in double quotes as Redis' `sdscatrepr` writes it: `\\`, `\"`, `\n`, `\r`, `\t`,
/// `\a`, `\b`, printable ASCII as is, any other byte as `\xHH`.
fn quote(word: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &byte in word {
        match byte {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', byte]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(byte),
            _ => out.extend_from_slice(&[
                b'\\',
                b'x',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 15)],
            ]),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_as_sdscatrepr_does() {
        let mut out = Vec::new();
        quote(b"a\x01\xc3\xbf\"\\ b\n\t\x07\x08", &mut out);
        assert_eq!(out, br#""a\x01\xc3\xbf\"\\ b\n\t\a\b""#);
    }

    #[test]
    fn passwords_are_redacted() {
        let auth: [&[u8]; 3] = [b"AUTH", b"user", b"pw"];
        assert!(!redacted(&auth, 0) && redacted(&auth, 1) && redacted(&auth, 2));
        let hello: [&[u8]; 7] = [b"hello", b"3", b"auth", b"u", b"p", b"setname", b"n"];
        let shown: Vec<bool> = (0..hello.len()).map(|at| redacted(&hello, at)).collect();
        assert_eq!(shown, [false, false, false, true, true, false, false]);
    }
}
