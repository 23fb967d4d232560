//! The `INFO` reply: server, clients, memory, persistence, stats, replication, modules,
//! commandstats, errorstats, cluster and keyspace sections.

use core::fmt::Write as _;

use crate::command::{After, Context};
use crate::resp::{ReplyWriter, WriteFull};

/// Redis' `mem_allocator`: what the build allocates with. The host (`std`) uses the C
/// library's `malloc`, through Rust's system allocator; a board allocates nothing.
const MEM_ALLOCATOR: &str = if cfg!(feature = "std") {
    "libc"
} else {
    "none"
};

/// Enough for every section at once (without `commandstats`).
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
    // Where memory can grow, any number of `commandstats` lines; else a fixed buffer.
    #[cfg(feature = "alloc")]
    let mut text = alloc::string::String::with_capacity(INFO_CAPACITY);
    #[cfg(not(feature = "alloc"))]
    let mut text: heapless::String<INFO_CAPACITY> = heapless::String::new();
    let stats = &*ctx.stats;
    let store = &ctx.store;
    let uptime_s = ctx.clock.now.saturating_sub(ctx.started) / 1000;
    // A full buffer only truncates the text; it is sized for every section.
    let _ = (|| -> core::fmt::Result {
        if wants("server") {
            // The mode is an argument only where it can change (cluster mode): elsewhere the
            // argument would cost flash for a constant.
            #[cfg(feature = "cluster")]
            write!(
                text,
                "# Server\r\nredis_version:7.0.0\r\nnet_shell_version:{}\r\nredis_mode:{}\r\nmultiplexing_api:smoltcp\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\n\r\n",
                env!("CARGO_PKG_VERSION"),
                crate::command::mode(ctx),
                uptime_s,
                uptime_s / 86_400
            )?;
            #[cfg(not(feature = "cluster"))]
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
                "# Clients\r\nconnected_clients:{}\r\nblocked_clients:{}\r\nmaxclients:{}\r\nidle_timeout_ms:{}\r\nread_timeout_ms:{}\r\nwrite_timeout_ms:{}\r\nhandshake_timeout_ms:{}\r\n\r\n",
                stats.connected_clients,
                stats.blocked_clients,
                ctx.settings.capacity.max_clients,
                ctx.settings.timeouts.idle_ms,
                ctx.settings.timeouts.read_ms,
                ctx.settings.timeouts.write_ms,
                ctx.settings.timeouts.handshake_ms
            )?;
        }
        if wants("memory") {
            // Redis' used_memory counts every allocation; ours counts what the store and the
            // connections hold. Keys and values are the pool blocks they take (with their
            // 8-byte headers and rounding: `dataset`), of which the keys' and values' own
            // bytes are given; the table is the key table's entries and buckets. The
            // connections are the connection table (the open slots' sockets and connections,
            // every slot's timer slots) and the buffers of the clients connected.
            let memory = store.memory();
            let connections = stats.connection_table_bytes
                + stats.connected_clients as usize * stats.buffer_bytes_per_client;
            write!(
                text,
                "# Memory\r\nused_memory:{}\r\n",
                memory.total() + connections
            )?;
            // The parts: with `extended-commands` (the host), for flash.
            #[cfg(feature = "extended-commands")]
            write!(
                text,
                "used_memory_dataset:{}\r\nused_memory_keys:{}\r\nused_memory_values:{}\r\nused_memory_table:{}\r\nused_memory_timers:{}\r\nused_memory_connections:{}\r\nused_memory_connection_table:{}\r\nconnection_slots_open:{}\r\n",
                memory.keys_and_values,
                memory.keys,
                memory.values,
                memory.entries + memory.buckets,
                memory.timers,
                connections,
                stats.connection_table_bytes,
                stats.connection_slots_open,
            )?;
            write!(
                text,
                "maxmemory:{}\r\nmaxmemory_in_force:{}\r\nused_memory_pct:{}\r\nkeys_used:{}\r\nkeys_capacity:{}\r\nmem_allocator:{}\r\n\r\n",
                ctx.settings.capacity.max_memory,
                store.bytes_capacity(),
                store.bytes_used() * 100 / store.bytes_capacity().max(1),
                store.len(),
                store.key_capacity(),
                MEM_ALLOCATOR
            )?;
        }
        // Facts of this server in Redis' words, for clients that look (no disk, no replicas,
        // no modules, no cluster): with `extended-commands` (the host), for flash.
        #[cfg(feature = "extended-commands")]
        if wants("persistence") {
            text.write_str("# Persistence\r\nloading:0\r\nasync_loading:0\r\nrdb_bgsave_in_progress:0\r\nrdb_saves:0\r\naof_enabled:0\r\naof_rewrite_in_progress:0\r\n\r\n")?;
        }
        if wants("stats") {
            write!(
                text,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nrejected_connections:{}\r\nexpired_keys:{}\r\nidle_timeout_closes:{}\r\nidle_close_max_late_ms:{}\r\nread_timeout_closes:{}\r\nwrite_timeout_closes:{}\r\nprotocol_error_closes:{}\r\naborted_closes:{}\r\nhandshake_timeouts:{}\r\nhalf_open_evictions:{}\r\nprotected_mode_refusals:{}\r\noom_refusals:{}\r\n",
                stats.total_connections_received,
                stats.total_commands_processed,
                stats.rejected_connections,
                stats.expired_keys(store.expired_keys()),
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
            #[cfg(feature = "pubsub")]
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
            text.write_str("\r\n")?;
        }
        #[cfg(feature = "extended-commands")]
        {
            if wants("replication") {
                text.write_str("# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\nrepl_backlog_active:0\r\n\r\n")?;
            }
            if wants("modules") {
                text.write_str("# Modules\r\n\r\n")?;
            }
        }
        // Not in the default set, as in Redis: only by name, `all` or `everything`. Redis also
        // times each command (`usec`, `usec_per_call`); this server reads no clock of its
        // own, so those two fields are left out.
        #[cfg(feature = "extended-commands")]
        if sections.iter().any(|s| {
            ["all", "everything", "commandstats"]
                .iter()
                .any(|n| s.eq_ignore_ascii_case(n.as_bytes()))
        }) {
            text.write_str("# Commandstats\r\n")?;
            for (row, command) in crate::command::all_rows().enumerate() {
                let [calls, rejected, failed] = stats.commandstats.of(row);
                if calls + rejected > 0 {
                    write!(
                        text,
                        "cmdstat_{}:calls={calls},rejected_calls={rejected},failed_calls={failed}\r\n",
                        command.name
                    )?;
                }
            }
            text.write_str("\r\n")?;
        }
        // By code: with `extended-commands` (the host), to keep the boards' flash in budget.
        #[cfg(feature = "extended-commands")]
        if wants("errorstats") {
            text.write_str("# Errorstats\r\n")?;
            for (code, count) in stats.errorstats.iter() {
                text.write_str("errorstat_")?;
                for &b in code {
                    text.write_char(char::from(b))?;
                }
                write!(text, ":count={count}\r\n")?;
            }
            text.write_str("\r\n")?;
        }
        #[cfg(feature = "extended-commands")]
        if wants("cluster") {
            #[cfg(feature = "cluster")]
            let enabled = u8::from(ctx.cluster.is_enabled());
            #[cfg(not(feature = "cluster"))]
            let enabled = 0;
            write!(text, "# Cluster\r\ncluster_enabled:{enabled}\r\n\r\n")?;
        }
        if wants("keyspace") {
            text.write_str("# Keyspace\r\n")?;
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
