//! Cluster mode: the shell as one node of a Redis Cluster whose topology a controller pushes.
//!
//! A shell has no cluster bus (no gossip, no failover). As in Kvrocks, a controller tells each
//! node its id (`CLUSTERX SETNODEID`) and the whole topology with a version
//! (`CLUSTERX SETNODES "<nodes>" <version> [force]`); an older version is refused. Clients see a
//! Redis Cluster: `CLUSTER SHARDS`/`SLOTS`/`NODES` show the topology, and a request for a key
//! of another node's slot gets `-MOVED <slot> <host>:<port>`, so redis-cli `-c`, redis-py's
//! `RedisCluster` and the other cluster clients route by themselves.
//!
//! Slots move as in Kvrocks: `CLUSTERX MIGRATE <slots> <node id>` makes this node send the
//! slots' keys to their new owner, each with its absolute deadline (with `alloc`); clients get
//! `-ASK` for keys already there; the controller then pushes the topology that says so.
//!
//! | file | what |
//! | --- | --- |
//! | `key_slot.rs` | CRC-16 hash slots with hash tags |
//! | `topology.rs` | the pushed topology: nodes, slot ranges, Kvrocks' text format |
//! | `migration.rs` | moving a slot range's keys to another node (with `alloc`) |
//! | `mod.rs` | this node's state: enabled, its id, the version, where a request goes |
//!
//! The commands themselves are in `command/cluster.rs`.

mod key_slot;
#[cfg(feature = "alloc")]
mod migration;
mod topology;

pub use key_slot::{key_slot, SLOTS};
#[cfg(feature = "alloc")]
pub use migration::{Migration, MigrationState};
pub use topology::{
    Node, NodeId, Role, SlotRange, Topology, TopologyError, MAX_HOST, MAX_NODES, MAX_RANGES,
};

/// This node's view of the cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    enabled: bool,
    my_id: Option<NodeId>,
    /// The topology's version; -1 before the first push (Kvrocks' convention).
    version: i64,
    topology: Topology,
    /// The slot range on its way to another node (`CLUSTERX MIGRATE`), until the next push.
    #[cfg(feature = "alloc")]
    migration: Option<Migration>,
    /// The slot range another node is moving here (`CLUSTER IMPORT`), until the next push:
    /// a request after `ASKING` is served for these slots only, as in Redis' importing state.
    importing: Option<(u16, u16)>,
    /// The move of `importing` is over (`CLUSTER IMPORT <slots> 1`): every request for those
    /// slots is served here, as Kvrocks serves its imported slots until the controller's push.
    imported: bool,
    /// Counts the pushes and imports taken: where requests go may have changed.
    changes: u32,
}

/// Where a request with keys goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// This node serves it.
    Here,
    /// Another node owns the slot: `-MOVED`.
    Moved {
        /// The keys' slot.
        slot: u16,
        /// The owner's index in [`Topology::nodes`].
        node: usize,
    },
    /// The keys hash to different slots: `-CROSSSLOT`.
    CrossSlot,
    /// No node owns the slot: `-CLUSTERDOWN Hash slot not served`.
    Unbound,
    /// Not every slot has an owner, so the cluster is down: `-CLUSTERDOWN The cluster is down`.
    Down,
}

/// Why `CLUSTERX SETNODES` refused a push.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PushError {
    /// The version is negative, or older than the one in force without `force`.
    StaleVersion,
    /// The topology text is wrong.
    Topology(TopologyError),
}

impl PushError {
    /// The error reply for it (Kvrocks' words).
    pub const fn message(self) -> &'static str {
        match self {
            Self::StaleVersion => "ERR Invalid cluster version",
            Self::Topology(e) => e.message(),
        }
    }
}

impl core::fmt::Display for PushError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for PushError {}

impl Cluster {
    /// Cluster mode off: the shell is a standalone server and `CLUSTER` commands say so.
    pub const DISABLED: Self = Self {
        enabled: false,
        my_id: None,
        version: -1,
        topology: Topology::new(),
        #[cfg(feature = "alloc")]
        migration: None,
        importing: None,
        imported: false,
        changes: 0,
    };

    /// Cluster mode on (Redis' `cluster-enabled yes`), with no id and no topology yet: every
    /// request with keys gets `-CLUSTERDOWN` until a controller pushes one.
    pub const fn enabled() -> Self {
        Self {
            enabled: true,
            my_id: None,
            version: -1,
            topology: Topology::new(),
            #[cfg(feature = "alloc")]
            migration: None,
            importing: None,
            imported: false,
            changes: 0,
        }
    }

    /// Whether cluster mode is on.
    pub const fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// This node's id, once set.
    pub fn my_id(&self) -> Option<&NodeId> {
        self.my_id.as_ref()
    }

    /// The topology's version (-1 before the first push).
    pub const fn version(&self) -> i64 {
        self.version
    }

    /// The topology in force.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// This node's index in the topology, if the topology lists its id.
    pub fn myself(&self) -> Option<usize> {
        self.topology.index_of(self.my_id.as_ref()?)
    }

    /// Sets this node's id (`CLUSTERX SETNODEID`).
    pub fn set_my_id(&mut self, id: NodeId) {
        self.my_id = Some(id);
    }

    /// Takes a pushed topology (`CLUSTERX SETNODES`): a newer version replaces the one in force,
    /// the same version changes nothing, an older one is refused unless `force`.
    ///
    /// # Errors
    ///
    /// [`PushError`]; the topology in force stays.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::cluster::{Cluster, NodeId, PushError};
    ///
    /// let me = "a".repeat(40);
    /// let mut cluster = Cluster::enabled();
    /// cluster.set_my_id(NodeId::parse(me.as_bytes()).unwrap());
    /// let nodes = format!("{me} 10.0.0.2 6379 master - 0-16383");
    /// cluster.push(nodes.as_bytes(), 2, false).unwrap();
    /// assert_eq!(cluster.push(nodes.as_bytes(), 1, false), Err(PushError::StaleVersion));
    /// assert_eq!(cluster.version(), 2);
    /// ```
    pub fn push(&mut self, nodes: &[u8], version: i64, force: bool) -> Result<(), PushError> {
        if version < 0 || (!force && version < self.version) {
            return Err(PushError::StaleVersion);
        }
        if !force && version == self.version {
            return Ok(());
        }
        self.topology = Topology::parse(nodes).map_err(PushError::Topology)?;
        self.version = version;
        // The push says who owns the slots now: a migration's work is over (Kvrocks clears
        // its migrated slots on a push too).
        #[cfg(feature = "alloc")]
        {
            self.migration = None;
        }
        self.importing = None;
        self.imported = false;
        self.changes = self.changes.wrapping_add(1);
        Ok(())
    }

    /// Slots `start..=end` are on their way here (`CLUSTER IMPORT <slots> 0`), or, with
    /// `None`, no longer (`CLUSTER IMPORT <slots> 2`, the move failed).
    pub fn set_importing(&mut self, slots: Option<(u16, u16)>) {
        self.importing = slots;
        self.imported = false;
        self.changes = self.changes.wrapping_add(1);
    }

    /// Slots `start..=end` came (`CLUSTER IMPORT <slots> 1`): every request for them is served
    /// here until the controller's push says who owns them.
    pub fn set_imported(&mut self, start: u16, end: u16) {
        self.importing = Some((start, end));
        self.imported = true;
        self.changes = self.changes.wrapping_add(1);
    }

    /// A count that moves whenever a push or an import may have changed where requests go
    /// (a migration's end is seen in its state).
    pub const fn changes(&self) -> u32 {
        self.changes
    }

    /// Whether `slot` came here by a move the controller has not pushed yet.
    pub fn imported(&self, slot: u16) -> bool {
        self.imported && self.importing(slot)
    }

    /// The slots on their way here, or that came and are not pushed yet (`CLUSTER IMPORT`).
    pub const fn importing_range(&self) -> Option<(u16, u16)> {
        self.importing
    }

    /// Whether `slot` is on its way here: a request for it after `ASKING` is served.
    pub fn importing(&self, slot: u16) -> bool {
        self.importing
            .is_some_and(|(start, end)| start <= slot && slot <= end)
    }

    /// The migration started by `CLUSTERX MIGRATE`, until the next push.
    #[cfg(feature = "alloc")]
    pub fn migration(&self) -> Option<&Migration> {
        self.migration.as_ref()
    }

    /// [`migration`](Self::migration), to drive it.
    #[cfg(feature = "alloc")]
    pub fn migration_mut(&mut self) -> Option<&mut Migration> {
        self.migration.as_mut()
    }

    /// Starts moving slots `start..=end`, which must all be this node's, to the master `to`
    /// (`CLUSTERX MIGRATE`).
    ///
    /// # Errors
    ///
    /// The error reply's text (Kvrocks' words where it has them).
    #[cfg(feature = "alloc")]
    pub fn start_migration(
        &mut self,
        start: u16,
        end: u16,
        to: &NodeId,
        now: timer_core::Tick,
    ) -> Result<(), &'static str> {
        if start > end || end >= SLOTS {
            return Err("ERR Slot is out of range");
        }
        let node = self
            .topology
            .index_of(to)
            .ok_or("ERR Can't find the destination node id")?;
        let me = self.myself();
        if (start..=end).any(|slot| self.topology.owner_index(slot) != me || me.is_none()) {
            return Err("ERR Can't migrate slot which doesn't belong to me");
        }
        if Some(node) == me {
            return Err("ERR Can't migrate slot to myself");
        }
        if self.topology.nodes()[node].role != Role::Master {
            return Err("ERR Can't migrate slot to a slave");
        }
        if self
            .migration
            .as_ref()
            .is_some_and(|m| m.state() == MigrationState::Running)
        {
            return Err("ERR There is already a migrating job");
        }
        self.migration = Some(Migration::new(start, end, node, now));
        Ok(())
    }

    /// Whether every slot has an owner (Redis' `cluster_state:ok`, with full coverage
    /// required, its default).
    pub fn state_ok(&self) -> bool {
        self.topology.slots_assigned() == usize::from(SLOTS)
    }

    /// Where a request with these keys goes, in the order Redis checks (`getNodeByQuery`):
    /// the first key's slot must have an owner, every key the same slot, the cluster must be
    /// up, and the owner must be this node. A request without keys is served here.
    pub fn route<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> Route {
        let mut first = None;
        for key in keys {
            let slot = key_slot(key);
            match first {
                None => {
                    if self.topology.owner_index(slot).is_none() {
                        return Route::Unbound;
                    }
                    first = Some(slot);
                }
                Some(first) if first != slot => return Route::CrossSlot,
                Some(_) => {}
            }
        }
        let Some(slot) = first else {
            return Route::Here;
        };
        if !self.state_ok() {
            return Route::Down;
        }
        match self.topology.owner_index(slot) {
            Some(node) if Some(node) == self.myself() => Route::Here,
            Some(_) if self.imported(slot) => Route::Here,
            Some(node) => Route::Moved { slot, node },
            None => Route::Unbound,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::format;
    use std::string::String;

    use super::{key_slot, Cluster, NodeId, PushError, Route};

    fn id(c: char) -> String {
        core::iter::repeat_n(c, 40).collect()
    }

    fn three_nodes(me: char) -> Cluster {
        let mut cluster = Cluster::enabled();
        cluster.set_my_id(NodeId::parse(id(me).as_bytes()).unwrap());
        let text = format!(
            "{} 10.0.0.2 6379 master - 0-5460\n{} 10.0.0.3 6379 master - 5461-10922\n{} 10.0.0.4 6379 master - 10923-16383",
            id('a'),
            id('b'),
            id('c')
        );
        cluster.push(text.as_bytes(), 1, false).unwrap();
        cluster
    }

    #[test]
    fn keys_of_my_slots_are_served_here_others_moved() {
        let cluster = three_nodes('a');
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(cluster.route([&b"bar"[..]]), Route::Here);
        assert_eq!(
            cluster.route([&b"foo"[..]]),
            Route::Moved {
                slot: 12182,
                node: 2
            }
        );
        assert_eq!(cluster.route([]), Route::Here);
    }

    #[test]
    fn keys_of_two_slots_are_cross_slot_even_when_the_first_is_moved() {
        let cluster = three_nodes('a');
        assert_eq!(cluster.route([&b"foo"[..], b"bar"]), Route::CrossSlot);
        assert_eq!(
            cluster.route([&b"{x}a"[..], b"{x}b"]),
            cluster.route([&b"x"[..]])
        );
    }

    #[test]
    fn before_a_push_every_key_is_unbound_and_with_gaps_the_cluster_is_down() {
        let mut cluster = Cluster::enabled();
        assert_eq!(cluster.route([&b"foo"[..]]), Route::Unbound);
        let me = id('a');
        cluster.set_my_id(NodeId::parse(me.as_bytes()).unwrap());
        cluster
            .push(format!("{me} h 1 master - 0-12000").as_bytes(), 0, false)
            .unwrap();
        assert_eq!(cluster.route([&b"bar"[..]]), Route::Down);
        assert_eq!(cluster.route([&b"foo"[..]]), Route::Unbound);
    }

    #[test]
    fn stale_versions_are_refused_unless_forced_and_the_same_version_changes_nothing() {
        let mut cluster = three_nodes('a');
        let me = id('a');
        let all = format!("{me} h 1 master - 0-16383");
        assert_eq!(
            cluster.push(all.as_bytes(), 0, false),
            Err(PushError::StaleVersion)
        );
        assert_eq!(
            cluster.push(all.as_bytes(), -1, true),
            Err(PushError::StaleVersion)
        );
        cluster.push(all.as_bytes(), 1, false).unwrap();
        assert_eq!(cluster.topology().nodes().len(), 3, "same version: kept");
        cluster.push(all.as_bytes(), 0, true).unwrap();
        assert_eq!(cluster.topology().nodes().len(), 1);
        assert_eq!(cluster.version(), 0);
        assert!(cluster.push(b"bad", 5, false).is_err());
        assert_eq!(cluster.version(), 0, "a refused push keeps the version");
    }
}
