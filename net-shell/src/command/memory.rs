//! `MEMORY USAGE` and `MEMORY PURGE` (Redis 7.0's `object.c` `memoryCommand`).
//!
//! `MEMORY USAGE` answers the bytes a key takes here ([`Store::key_memory`]), counted as
//! `INFO memory` counts the store: not Redis' figure, which counts its own allocations. Every
//! key's bytes are known exactly (a hash's or a list's elements are in its one block), so
//! `SAMPLES` is parsed as Redis parses it and changes nothing. `MEMORY STATS`, `DOCTOR` and
//! `MALLOC-STATS` do not exist here: their reports are of Redis' allocator and process.
//!
//! [`Store::key_memory`]: crate::store::Store::key_memory

use super::{error, integer, is, ok, Context, Reply, ReplyWriter, NOT_INTEGER, SYNTAX};
use crate::decimal::parse_i64;

/// `MEMORY USAGE key [SAMPLES count]`: the options are checked before the key is looked up,
/// as Redis does (a syntax error for a missing key too); nil for no such key.
pub(crate) fn usage(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let mut options = argv[3..].iter();
    while let Some(option) = options.next() {
        let Some(count) = options.next().filter(|_| is(option, "samples")) else {
            return error(out, SYNTAX);
        };
        match parse_i64(count) {
            None => return error(out, NOT_INTEGER),
            Some(count) if count < 0 => return error(out, SYNTAX),
            Some(_) => {}
        }
    }
    match ctx.store.key_memory(argv[2], ctx.clock.now) {
        Some(bytes) => integer(out, i64::try_from(bytes).unwrap_or(i64::MAX)),
        None => super::bulk_or_nil(out, None),
    }
}

/// `MEMORY PURGE`: `OK`, as Redis built without jemalloc answers. The store gives its table's
/// chunks back as keys leave, and the pool is one block of memory: there is nothing to purge.
pub(crate) fn purge(_: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ok(out)
}
