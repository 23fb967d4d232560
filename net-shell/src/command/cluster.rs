//! Cluster commands (`cluster` feature) over [`crate::cluster::Cluster`]: Redis 7.0's
//! `CLUSTER` subcommands a client needs (`SHARDS`, `SLOTS`, `NODES`, `MYID`, `INFO`, `KEYSLOT`,
//! `COUNTKEYSINSLOT`, `GETKEYSINSLOT`), `READONLY`, `READWRITE` and `ASKING`, Kvrocks'
//! `CLUSTERX SETNODEID`/`SETNODES`/`VERSION`/`MIGRATE` for the controller, and the redirection
//! of a request whose keys this node does not serve (`-MOVED`, `-ASK`, `-TRYAGAIN`,
//! `-CROSSSLOT`, `-CLUSTERDOWN`).

use core::fmt::Write as _;

use super::{error, integer, ok, After, Context, Reply};
use crate::cluster::{key_slot, Node, NodeId, Role, Route, SLOTS};
use crate::resp::ReplyWriter;

/// Redis' reply to a cluster command with cluster mode off.
const DISABLED: &str = "ERR This instance has cluster support disabled";
/// Kvrocks' reply to `CLUSTERX` with cluster mode off.
const CLUSTERX_DISABLED: &str = "ERR Cluster mode is not enabled";

/// Writes the redirection for a request whose keys this node does not serve, and returns
/// `true`; `false` (nothing written) when it serves them, or cluster mode is off.
///
/// `keys` lists the request's keys (it is asked more than once); `write` says whether the
/// command writes. A request after `ASKING` (`asking`) is served for a slot another node owns
/// and is moving here (`CLUSTER IMPORT`), as in Redis' importing state. While this node moves a
/// slot away, a request whose keys are all still here is served here, one whose keys are all
/// gone gets `-ASK` to the new owner, and a write to a key on its way gets `-TRYAGAIN`; once
/// the new owner has them all (`CLUSTER IMPORT <slots> 1` acknowledged), every request gets
/// `-MOVED` to it, until the controller's push makes it the owner.
pub(crate) fn redirect<'k, I: Iterator<Item = &'k [u8]>>(
    ctx: &mut Context<'_, '_>,
    keys: impl Fn() -> I,
    write: bool,
    asking: bool,
    out: &mut ReplyWriter<'_>,
) -> Result<bool, crate::resp::WriteFull> {
    if !ctx.cluster.is_enabled() {
        return Ok(false);
    }
    let cluster = &*ctx.cluster;
    let mut text: heapless::String<128> = heapless::String::new();
    match cluster.route(keys()) {
        Route::Here => {
            #[cfg(feature = "alloc")]
            if let Some(reply) = migrating(ctx, keys, write, &mut text) {
                out.error(reply)?;
                return Ok(true);
            }
            let _ = write;
            return Ok(false);
        }
        Route::Moved { slot, .. } if asking && cluster.importing(slot) => return Ok(false),
        Route::Moved { slot, node } => {
            let node = &cluster.topology().nodes()[node];
            let _ = write!(text, "MOVED {slot} {}:{}", node.host, node.port);
            out.error(&text)?;
        }
        Route::CrossSlot => out.error("CROSSSLOT Keys in request don't hash to the same slot")?,
        Route::Unbound => out.error("CLUSTERDOWN Hash slot not served")?,
        Route::Down => out.error("CLUSTERDOWN The cluster is down")?,
    }
    Ok(true)
}

/// The error that ends the wait of a client blocked on `key` (a blocking pop) once this node
/// no longer serves the key's slot, as Redis' `clusterRedirectBlockedClientIfNeeded` ends it:
/// `-CLUSTERDOWN` when the cluster is down or the slot has no owner, `-MOVED` to the owner
/// when another node owns it and it is not on its way here; also `-MOVED` to the new owner
/// once this node moved the slot there (Redis' slot is another node's then). `None`: the
/// client waits on.
#[cfg(feature = "blocking-lists")]
pub(crate) fn blocked_redirect<'t>(
    cluster: &crate::cluster::Cluster,
    key: &[u8],
    text: &'t mut heapless::String<128>,
) -> Option<&'t str> {
    if !cluster.is_enabled() {
        return None;
    }
    if !cluster.state_ok() {
        return Some("CLUSTERDOWN The cluster is down");
    }
    let slot = key_slot(key);
    let owner = cluster.topology().owner_index(slot);
    let me = cluster.myself();
    #[cfg(feature = "alloc")]
    let owner = match cluster.migration() {
        Some(m) if m.covers(slot) && m.state() == crate::cluster::MigrationState::Done => {
            Some(m.node)
        }
        _ => owner,
    };
    if (owner.is_some() && owner == me) || cluster.importing(slot) {
        return None;
    }
    let Some(owner) = owner else {
        return Some("CLUSTERDOWN Hash slot not served");
    };
    let node = &cluster.topology().nodes()[owner];
    let _ = write!(text, "MOVED {slot} {}:{}", node.host, node.port);
    Some(text.as_str())
}

/// For a request this node would serve: the error it gets instead because its slot is moving
/// away (Redis' `getNodeByQuery` with a migrating slot; Kvrocks' texts for its phases).
#[cfg(feature = "alloc")]
fn migrating<'k, 't, I: Iterator<Item = &'k [u8]>>(
    ctx: &mut Context<'_, '_>,
    keys: impl Fn() -> I,
    write: bool,
    text: &'t mut heapless::String<128>,
) -> Option<&'t str> {
    use crate::cluster::MigrationState;
    let slot = key_slot(keys().next()?);
    let migration = ctx.cluster.migration().filter(|m| m.covers(slot))?;
    let node = &ctx.cluster.topology().nodes()[migration.node];
    let state = migration.state();
    let (host, port) = (node.host.clone(), node.port);
    match state {
        // Done: every key is there and the new owner serves the slots (it took `CLUSTER
        // IMPORT <slots> 1`): clients go there for good, as Kvrocks sends them from a
        // migrated slot.
        MigrationState::Done => {
            let _ = write!(text, "MOVED {slot} {host}:{port}");
            Some(text.as_str())
        }
        // Failed before any key went: the slots are served here as before.
        MigrationState::Failed if migration.moved() == 0 => None,
        // Running, or failed after some keys went (they are there, and the new owner serves
        // them after `ASKING`).
        MigrationState::Running | MigrationState::Failed => {
            let now = ctx.clock.now;
            let total = keys().count();
            let here = keys().filter(|k| ctx.store.contains(k, now)).count();
            let migration = ctx.cluster.migration()?;
            if here == 0 {
                let _ = write!(text, "ASK {slot} {host}:{port}");
                Some(text.as_str())
            } else if here < total {
                Some("TRYAGAIN Multiple keys request during rehashing of slot")
            } else if write && keys().any(|k| migration.in_flight(k)) {
                Some(
                    "TRYAGAIN Can't write to slot being migrated which is in write forbidden phase",
                )
            } else {
                None
            }
        }
    }
}

/// `READONLY`, `READWRITE`: accepted (a shell has no replicas to read from).
pub(crate) fn read_mode(
    ctx: &mut Context<'_, '_>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, DISABLED);
    }
    ok(out)
}

/// `ASKING`: the next command is served for a slot another node owns (one moving here).
pub(crate) fn asking(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, DISABLED);
    }
    *ctx.asking = true;
    ok(out)
}

/// `CLUSTER KEYSLOT key`.
pub(crate) fn keyslot(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, DISABLED);
    }
    integer(out, i64::from(key_slot(argv[2])))
}

/// `CLUSTER MYID`.
pub(crate) fn myid(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, DISABLED);
    }
    match ctx.cluster.my_id() {
        Some(id) => out.bulk(id.as_bytes())?,
        None => {
            return error(
                out,
                "ERR This node has no id yet: CLUSTERX SETNODEID sets it",
            )
        }
    }
    Ok(After::Continue)
}

/// `CLUSTER INFO`, in Redis' fields; the epochs are the topology's version.
pub(crate) fn info(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let cluster = &*ctx.cluster;
    if !cluster.is_enabled() {
        return error(out, DISABLED);
    }
    let topology = cluster.topology();
    let assigned = topology.slots_assigned();
    let epoch = cluster.version().max(0);
    let mut text: heapless::String<768> = heapless::String::new();
    let _ = write!(
        text,
        "cluster_state:{}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{assigned}\r\n\
         cluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:{}\r\n\
         cluster_size:{}\r\ncluster_current_epoch:{epoch}\r\ncluster_my_epoch:{epoch}\r\n\
         cluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n\
         total_cluster_links_buffer_limit_exceeded:0\r\n",
        if cluster.state_ok() { "ok" } else { "fail" },
        topology.nodes().len(),
        topology.size(),
    );
    // Kvrocks' migration fields, while one is known.
    #[cfg(feature = "alloc")]
    if let Some(migration) = cluster.migration() {
        let _ = write!(text, "migrating_slot: {}", migration.start);
        if migration.end != migration.start {
            let _ = write!(text, "-{}", migration.end);
        }
        let _ = write!(
            text,
            "\r\ndestination_node: {}\r\nmigrating_state: {}\r\nmigrated_keys:{}\r\n",
            Id(&topology.nodes()[migration.node].id),
            migration.state().name(),
            migration.moved()
        );
        if let Some(ms) = migration.took_ms() {
            let _ = write!(text, "migration_ms:{ms}\r\n");
        }
    }
    out.verbatim(text.as_bytes())?;
    Ok(After::Continue)
}

/// `CLUSTER SLOTS`: each slot range with its master's and its replicas' host, port and id.
pub(crate) fn slots(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let cluster = &*ctx.cluster;
    if !cluster.is_enabled() {
        return error(out, DISABLED);
    }
    let topology = cluster.topology();
    out.array_header(topology.ranges().len())?;
    for range in topology.ranges() {
        let index = usize::from(range.node);
        let replicas = topology.replicas_of(index);
        out.array_header(3 + replicas.count())?;
        out.integer(i64::from(range.start))?;
        out.integer(i64::from(range.end))?;
        for node in core::iter::once(&topology.nodes()[index]).chain(topology.replicas_of(index)) {
            out.array_header(4)?;
            out.bulk(node.host.as_bytes())?;
            out.integer(i64::from(node.port))?;
            out.bulk(node.id.as_bytes())?;
            out.map_header(0)?;
        }
    }
    Ok(After::Continue)
}

/// `CLUSTER SHARDS`: one shard per master, its slot ranges and its nodes, in Redis 7.0's
/// fields.
pub(crate) fn shards(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let cluster = &*ctx.cluster;
    if !cluster.is_enabled() {
        return error(out, DISABLED);
    }
    let topology = cluster.topology();
    let masters = || {
        topology
            .nodes()
            .iter()
            .enumerate()
            .filter(|(_, n)| n.role == Role::Master)
    };
    out.array_header(masters().count())?;
    for (index, master) in masters() {
        out.map_header(2)?;
        out.bulk(b"slots")?;
        out.array_header(2 * topology.ranges_of(index).count())?;
        for range in topology.ranges_of(index) {
            out.integer(i64::from(range.start))?;
            out.integer(i64::from(range.end))?;
        }
        out.bulk(b"nodes")?;
        out.array_header(1 + topology.replicas_of(index).count())?;
        for node in core::iter::once(master).chain(topology.replicas_of(index)) {
            write_shard_node(node, out)?;
        }
    }
    Ok(After::Continue)
}

fn write_shard_node(node: &Node, out: &mut ReplyWriter<'_>) -> Result<(), crate::resp::WriteFull> {
    out.map_header(7)?;
    out.bulk(b"id")?;
    out.bulk(node.id.as_bytes())?;
    out.bulk(b"port")?;
    out.integer(i64::from(node.port))?;
    out.bulk(b"ip")?;
    out.bulk(node.host.as_bytes())?;
    out.bulk(b"endpoint")?;
    out.bulk(node.host.as_bytes())?;
    out.bulk(b"role")?;
    out.bulk(match node.role {
        Role::Master => b"master",
        Role::Replica(_) => b"replica",
    })?;
    out.bulk(b"replication-offset")?;
    out.integer(0)?;
    out.bulk(b"health")?;
    out.bulk(b"online")
}

/// `CLUSTER NODES`: one line per node in Redis' format (`<id> <ip:port@cport> <flags>
/// <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...`); the bus port is
/// the port plus 10,000 as in Redis, though a shell has no bus, and the epoch is the version.
pub(crate) fn nodes(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let cluster = &*ctx.cluster;
    if !cluster.is_enabled() {
        return error(out, DISABLED);
    }
    let topology = cluster.topology();
    let myself = cluster.myself();
    // With `alloc`, any size; else what a fixed buffer holds (a board's topology is small).
    #[cfg(feature = "alloc")]
    let mut text = alloc::string::String::with_capacity(256);
    #[cfg(not(feature = "alloc"))]
    let mut text: heapless::String<2048> = heapless::String::new();
    for (index, node) in topology.nodes().iter().enumerate() {
        let me = if myself == Some(index) { "myself," } else { "" };
        let _ = write!(
            text,
            "{} {}:{}@{} ",
            Id(&node.id),
            node.host,
            node.port,
            u32::from(node.port) + 10_000
        );
        let _ = match node.role {
            Role::Master => write!(text, "{me}master -"),
            Role::Replica(master) => write!(
                text,
                "{me}slave {}",
                Id(&topology.nodes()[usize::from(master)].id)
            ),
        };
        let _ = write!(text, " 0 0 {} connected", cluster.version().max(0));
        for range in topology.ranges_of(index) {
            let _ = if range.start == range.end {
                write!(text, " {}", range.start)
            } else {
                write!(text, " {}-{}", range.start, range.end)
            };
        }
        let _ = text.write_char('\n');
    }
    out.verbatim(text.as_bytes())?;
    Ok(After::Continue)
}

/// A node id as text.
struct Id<'a>(&'a NodeId);

impl core::fmt::Display for Id<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Ids are printable ASCII (checked when parsed).
        for &b in self.0.as_bytes() {
            f.write_char(char::from(b))?;
        }
        Ok(())
    }
}

/// A slot argument: Redis' integer error, then `invalid` when out of range.
fn parse_slot(arg: &[u8]) -> Result<Option<u16>, ()> {
    let n = crate::decimal::parse_i64(arg).ok_or(())?;
    Ok(u16::try_from(n).ok().filter(|&s| s < SLOTS))
}

/// `CLUSTER COUNTKEYSINSLOT slot`: counted over the key table (a shell keeps no per-slot
/// index, so this reads every key).
pub(crate) fn countkeysinslot(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, DISABLED);
    }
    let slot = match parse_slot(argv[2]) {
        Err(()) => return error(out, super::NOT_INTEGER),
        Ok(None) => return error(out, "ERR Invalid slot"),
        Ok(Some(slot)) => slot,
    };
    let count = count_keys_in_slot(ctx, slot, usize::MAX);
    integer(out, count as i64)
}

/// `CLUSTER GETKEYSINSLOT slot count`: up to `count` keys of the slot, in table order.
pub(crate) fn getkeysinslot(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, DISABLED);
    }
    let (Some(slot), Some(count)) = (
        crate::decimal::parse_i64(argv[2]),
        crate::decimal::parse_i64(argv[3]),
    ) else {
        return error(out, super::NOT_INTEGER);
    };
    let (Ok(slot), Ok(count)) = (u16::try_from(slot), usize::try_from(count)) else {
        return error(out, "ERR Invalid slot or number of keys");
    };
    if slot >= SLOTS {
        return error(out, "ERR Invalid slot or number of keys");
    }
    let found = count_keys_in_slot(ctx, slot, count);
    out.array_header(found)?;
    let now = ctx.clock.now;
    let mut at = 0;
    let mut written = 0;
    while written < found {
        let Some((index, key)) = ctx.store.key_at_or_after(at, now) else {
            break;
        };
        if key_slot(key) == slot {
            out.bulk(key)?;
            written += 1;
        }
        at = index + 1;
    }
    Ok(After::Continue)
}

/// How many live keys `slot` has, counting up to `limit`.
fn count_keys_in_slot(ctx: &Context<'_, '_>, slot: u16, limit: usize) -> usize {
    let mut count = 0;
    let mut at = 0;
    while count < limit {
        let Some((index, key)) = ctx.store.key_at_or_after(at, ctx.clock.now) else {
            break;
        };
        count += usize::from(key_slot(key) == slot);
        at = index + 1;
    }
    count
}

/// `CLUSTERX SETNODEID id`.
pub(crate) fn setnodeid(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, CLUSTERX_DISABLED);
    }
    match NodeId::parse(argv[2]) {
        Some(id) => {
            ctx.cluster.set_my_id(id);
            ok(out)
        }
        None => error(out, "ERR Invalid cluster node id"),
    }
}

/// `CLUSTERX SETNODES "<nodes>" <version> [force]`.
pub(crate) fn setnodes(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, CLUSTERX_DISABLED);
    }
    let Some(version) = crate::decimal::parse_i64(argv[3]) else {
        return error(out, "ERR Invalid version");
    };
    let force = match argv.get(4..) {
        Some([]) | None => false,
        Some([word]) if super::is(word, "force") => true,
        Some(_) => return error(out, "ERR Invalid setnodes options"),
    };
    match ctx.cluster.push(argv[2], version, force) {
        Ok(()) => ok(out),
        Err(e) => error(out, e.message()),
    }
}

/// `CLUSTER IMPORT <slot|start-end> <state>` (Kvrocks' command, which the node moving slots
/// here sends first on its connection): state 0, the slots are coming, so a request for them
/// after `ASKING` is served; 1, they came, so every request for them is served, until the
/// controller's push; 2, the move failed (nothing of them came). States 1 and 2 must name the
/// range state 0 named, as Kvrocks checks (`mismatch slot`).
pub(crate) fn import(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, DISABLED);
    }
    let Some((start, end)) = parse_slot_range(argv[2]) else {
        return error(out, "ERR Slot is out of range");
    };
    let importing = ctx.cluster.importing_range();
    if matches!(argv[3], b"1" | b"2") && importing != Some((start, end)) {
        let mut text: heapless::String<96> = heapless::String::new();
        let _ = text.push_str("ERR mismatch slot, importing slot(s): ");
        let _ = match importing {
            Some((from, to)) => write!(text, "{from}-{to}"),
            None => write!(text, "none"),
        };
        let _ = write!(text, ", but got: {start}-{end}");
        return error(out, &text);
    }
    match argv[3] {
        b"0" => ctx.cluster.set_importing(Some((start, end))),
        b"1" => ctx.cluster.set_imported(start, end),
        b"2" => ctx.cluster.set_importing(None),
        _ => return error(out, "ERR Invalid import state"),
    }
    ok(out)
}

/// `N` or `A-B` (`A <= B`), slots below 16,384.
fn parse_slot_range(text: &[u8]) -> Option<(u16, u16)> {
    let slot = |t: &[u8]| {
        crate::decimal::parse_i64(t)
            .and_then(|n| u16::try_from(n).ok())
            .filter(|&s| s < SLOTS)
    };
    let (start, end) = match text.iter().position(|&b| b == b'-') {
        Some(dash) => (slot(&text[..dash])?, slot(&text[dash + 1..])?),
        None => (slot(text)?, slot(text)?),
    };
    (start <= end).then_some((start, end))
}

/// `CLUSTERX MIGRATE <slot|start-end> <node id>`: starts moving the slots' keys to that node
/// (Kvrocks' command; a range as in its later versions). `CLUSTER INFO` shows how it goes;
/// the controller then pushes the topology that gives the slots to the new owner.
#[cfg(feature = "alloc")]
pub(crate) fn migrate(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, CLUSTERX_DISABLED);
    }
    let Some((start, end)) = parse_slot_range(argv[2]) else {
        return error(out, "ERR Slot is out of range");
    };
    let Some(to) = NodeId::parse(argv[3]) else {
        return error(out, "ERR Can't find the destination node id");
    };
    if ctx.clock.unix_ms.is_none() {
        return error(
            out,
            "ERR Can't migrate without a wall clock: deadlines go as Unix times",
        );
    }
    match ctx.cluster.start_migration(start, end, &to, ctx.clock.now) {
        Ok(()) => ok(out),
        Err(message) => error(out, message),
    }
}

/// `CLUSTERX VERSION`: the version in force, as a bulk string (Kvrocks' reply), -1 before
/// the first push.
pub(crate) fn version(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if !ctx.cluster.is_enabled() {
        return error(out, CLUSTERX_DISABLED);
    }
    let mut text: heapless::String<24> = heapless::String::new();
    let _ = write!(text, "{}", ctx.cluster.version());
    out.bulk(text.as_bytes())?;
    Ok(After::Continue)
}
