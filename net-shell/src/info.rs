//! The `INFO` reply: server, clients, stats, memory and keyspace sections.

use core::fmt::Write as _;

use crate::command::{After, Context};
use crate::resp::{ReplyWriter, WriteFull};

/// Enough for every section at once.
const INFO_CAPACITY: usize = 1536;

/// Writes the `INFO [section …]` reply as one bulk string: the sections asked for (any of
/// them, in the server's order; `all`, `default` or `everything` for every one, as no
/// arguments), unknown names ignored, as Redis 7 does.
pub(crate) fn write_info(
    sections: &[&[u8]],
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
) -> Result<After, WriteFull> {
    let wants = |name: &str| {
        sections.is_empty()
            || sections.iter().any(|s| {
                ["all", "default", "everything", name]
                    .iter()
                    .any(|n| s.eq_ignore_ascii_case(n.as_bytes()))
            })
    };
    let mut text: heapless::String<INFO_CAPACITY> = heapless::String::new();
    let stats = &*ctx.stats;
    let store = &ctx.store;
    let uptime_s = ctx.clock.now.saturating_sub(ctx.started) / 1000;
    // A full buffer only truncates the text; it is sized for every section.
    let _ = (|| -> core::fmt::Result {
        if wants("server") {
            write!(
                text,
                "# Server\r\nredis_version:7.0.0\r\nnet_shell_version:{}\r\nredis_mode:standalone\r\nmultiplexing_api:smoltcp\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\n\r\n",
                env!("CARGO_PKG_VERSION"),
                uptime_s,
                uptime_s / 86_400
            )?;
        }
        if wants("clients") {
            write!(
                text,
                "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nidle_timeout_ms:{}\r\nread_timeout_ms:{}\r\nwrite_timeout_ms:{}\r\nhandshake_timeout_ms:{}\r\n\r\n",
                stats.connected_clients,
                ctx.settings.capacity.max_clients,
                ctx.settings.timeouts.idle_ms,
                ctx.settings.timeouts.read_ms,
                ctx.settings.timeouts.write_ms,
                ctx.settings.timeouts.handshake_ms
            )?;
        }
        if wants("memory") {
            write!(
                text,
                "# Memory\r\nused_memory:{}\r\nmaxmemory:{}\r\nmaxmemory_in_force:{}\r\nused_memory_pct:{}\r\nkeys_used:{}\r\nkeys_capacity:{}\r\n\r\n",
                store.bytes_used(),
                ctx.settings.capacity.max_memory,
                store.bytes_capacity(),
                store.bytes_used() * 100 / store.bytes_capacity().max(1),
                store.len(),
                store.key_capacity()
            )?;
        }
        if wants("stats") {
            write!(
                text,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nrejected_connections:{}\r\nexpired_keys:{}\r\nidle_timeout_closes:{}\r\nidle_close_max_late_ms:{}\r\nread_timeout_closes:{}\r\nwrite_timeout_closes:{}\r\nprotocol_error_closes:{}\r\naborted_closes:{}\r\nhandshake_timeouts:{}\r\nhalf_open_evictions:{}\r\nprotected_mode_refusals:{}\r\noom_refusals:{}\r\n",
                stats.total_connections_received,
                stats.total_commands_processed,
                stats.rejected_connections,
                store.expired_keys(),
                stats.idle_timeout_closes,
                stats.idle_close_max_late_ms,
                stats.read_timeout_closes,
                stats.write_timeout_closes,
                stats.protocol_error_closes,
                stats.aborted_closes,
                stats.handshake_timeouts,
                stats.half_open_evictions,
                stats.protected_mode_refusals,
                stats.oom_refusals
            )?;
            #[cfg(feature = "alloc")]
            write!(
                text,
                "pubsub_channels:{}\r\npubsub_patterns:{}\r\n",
                ctx.pubsub.channel_count(),
                ctx.pubsub.pattern_count()
            )?;
            #[cfg(feature = "extended-commands")]
            write!(
                text,
                "total_error_replies:{}\r\n",
                stats.total_error_replies
            )?;
            text.push_str("\r\n").map_err(|_| core::fmt::Error)?;
        }
        // By code: with `extended-commands` (the host), to keep the boards' flash in budget.
        #[cfg(feature = "extended-commands")]
        if wants("errorstats") {
            text.push_str("# Errorstats\r\n")
                .map_err(|_| core::fmt::Error)?;
            for (code, count) in stats.errorstats.iter() {
                text.push_str("errorstat_").map_err(|_| core::fmt::Error)?;
                for &b in code {
                    text.push(char::from(b)).map_err(|_| core::fmt::Error)?;
                }
                write!(text, ":count={count}\r\n")?;
            }
            text.push_str("\r\n").map_err(|_| core::fmt::Error)?;
        }
        if wants("keyspace") {
            text.push_str("# Keyspace\r\n")
                .map_err(|_| core::fmt::Error)?;
            if !store.is_empty() {
                write!(
                    text,
                    "db0:keys={},expires={},avg_ttl=0\r\n",
                    store.len(),
                    store.volatile_len()
                )?;
            }
        }
        Ok(())
    })();
    out.verbatim(text.as_bytes())?;
    Ok(After::Continue)
}
