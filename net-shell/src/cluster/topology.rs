//! A cluster's topology as a controller pushes it: Kvrocks' `CLUSTERX SETNODES` text, one line
//! per node, `<id> <host> <port> master - <slot or range>...` or `<id> <host> <port> slave
//! <master id>`.
//!
//! Held in fixed capacity ([`MAX_NODES`] nodes, [`MAX_RANGES`] slot ranges), so a board can
//! hold it too: a slot's owner is found by binary search over the ranges.

use super::key_slot::SLOTS;

/// The most nodes a topology may list.
pub const MAX_NODES: usize = 16;
/// The most slot ranges a topology may list (a range is a run of slots one node owns).
pub const MAX_RANGES: usize = 256;
/// The longest host name or address a node may have.
pub const MAX_HOST: usize = 64;

/// A node's id: 40 characters (Redis' and Kvrocks' length).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId([u8; NodeId::LEN]);

impl NodeId {
    /// The length of an id.
    pub const LEN: usize = 40;

    /// `text` as an id, if it is 40 printable characters without spaces.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let id: [u8; Self::LEN] = text.try_into().ok()?;
        id.iter().all(u8::is_ascii_graphic).then_some(Self(id))
    }

    /// The id's text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Serves slots.
    Master,
    /// A replica of the node at this index in [`Topology::nodes`].
    Replica(u8),
}

/// One node of the topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Its id.
    pub id: NodeId,
    /// Where clients reach it: an address or a host name.
    pub host: heapless::String<MAX_HOST>,
    /// Its port.
    pub port: u16,
    /// Master or replica.
    pub role: Role,
}

/// A run of slots owned by one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotRange {
    /// The first slot.
    pub start: u16,
    /// The last slot (inclusive).
    pub end: u16,
    /// The owner's index in [`Topology::nodes`].
    pub node: u8,
}

/// Why a pushed topology was refused; [`message`](Self::message) is the error reply's text
/// (Kvrocks' words, where Kvrocks has them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopologyError {
    /// No node line, or a line with too few or too many fields.
    InvalidNodes,
    /// A node id that is not 40 characters, or a master id that names no node.
    InvalidNodeId,
    /// A port that is no number from 0 to 65535.
    InvalidPort,
    /// A role other than `master`, `slave` or `replica`.
    InvalidRole,
    /// A slot past 16383, or a range whose end is not after its start.
    SlotOutOfRange,
    /// Two masters claim one slot, or one node is listed twice.
    Overlapped,
    /// A host longer than [`MAX_HOST`] bytes.
    HostTooLong,
    /// More than [`MAX_NODES`] nodes or [`MAX_RANGES`] slot ranges.
    TooLarge,
}

impl TopologyError {
    /// The error reply for it.
    pub const fn message(self) -> &'static str {
        match self {
            Self::InvalidNodes => "ERR Invalid cluster nodes info",
            Self::InvalidNodeId => "ERR Invalid cluster node id",
            Self::InvalidPort => "ERR Invalid cluster node port",
            Self::InvalidRole => "ERR Invalid cluster node role",
            Self::SlotOutOfRange => "ERR Slot is out of range",
            Self::Overlapped => "ERR Slot distribution is overlapped",
            Self::HostTooLong => "ERR Invalid cluster node host (at most 64 bytes)",
            Self::TooLarge => "ERR Topology too large (at most 16 nodes and 256 slot ranges)",
        }
    }
}

impl core::fmt::Display for TopologyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for TopologyError {}

/// Nodes and who owns which slot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    nodes: heapless::Vec<Node, MAX_NODES>,
    /// Sorted by `start`, never overlapping; slots in no range are not served.
    ranges: heapless::Vec<SlotRange, MAX_RANGES>,
}

impl Topology {
    /// No nodes, no slots.
    pub const fn new() -> Self {
        Self {
            nodes: heapless::Vec::new(),
            ranges: heapless::Vec::new(),
        }
    }

    /// Parses Kvrocks' `CLUSTERX SETNODES` text: lines separated by `\n`, fields by spaces.
    ///
    /// # Errors
    ///
    /// [`TopologyError`] for the first thing wrong; nothing is kept then.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::cluster::Topology;
    ///
    /// let a = "a".repeat(40);
    /// let b = "b".repeat(40);
    /// let text = format!("{a} 10.0.0.2 6379 master - 0-8191\n{b} 10.0.0.3 6379 master - 8192-16383");
    /// let topology = Topology::parse(text.as_bytes()).unwrap();
    /// assert_eq!(topology.owner(9000).unwrap().host.as_str(), "10.0.0.3");
    /// ```
    pub fn parse(text: &[u8]) -> Result<Self, TopologyError> {
        let mut topology = Self::new();
        // Replicas name their master by id: resolve them once every node is known.
        let mut masters_of: heapless::Vec<(u8, NodeId), MAX_NODES> = heapless::Vec::new();
        for line in text.split(|&b| b == b'\n') {
            let mut fields = line
                .split(|&b| b == b' ' || b == b'\r' || b == b'\t')
                .filter(|f| !f.is_empty());
            let Some(id) = fields.next() else { continue };
            let (Some(host), Some(port), Some(role), Some(master)) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                return Err(TopologyError::InvalidNodes);
            };
            let id = NodeId::parse(id).ok_or(TopologyError::InvalidNodeId)?;
            if topology.index_of(&id).is_some() {
                return Err(TopologyError::Overlapped);
            }
            let host = core::str::from_utf8(host)
                .ok()
                .filter(|h| h.bytes().all(|b| b.is_ascii_graphic()))
                .ok_or(TopologyError::InvalidNodes)?;
            let host = heapless::String::try_from(host).map_err(|_| TopologyError::HostTooLong)?;
            let port = core::str::from_utf8(port)
                .ok()
                .and_then(|p| p.parse::<u16>().ok())
                .ok_or(TopologyError::InvalidPort)?;
            let index = topology.nodes.len() as u8;
            let role = if role.eq_ignore_ascii_case(b"master") {
                if master != b"-" {
                    return Err(TopologyError::InvalidNodeId);
                }
                Role::Master
            } else if role.eq_ignore_ascii_case(b"slave") || role.eq_ignore_ascii_case(b"replica") {
                let master = NodeId::parse(master).ok_or(TopologyError::InvalidNodeId)?;
                if fields.next().is_some() {
                    return Err(TopologyError::InvalidNodes);
                }
                masters_of
                    .push((index, master))
                    .map_err(|_| TopologyError::TooLarge)?;
                Role::Replica(index)
            } else {
                return Err(TopologyError::InvalidRole);
            };
            for slots in fields {
                let (start, end) = parse_slots(slots)?;
                topology
                    .ranges
                    .push(SlotRange {
                        start,
                        end,
                        node: index,
                    })
                    .map_err(|_| TopologyError::TooLarge)?;
            }
            topology
                .nodes
                .push(Node {
                    id,
                    host,
                    port,
                    role,
                })
                .map_err(|_| TopologyError::TooLarge)?;
        }
        if topology.nodes.is_empty() {
            return Err(TopologyError::InvalidNodes);
        }
        for (replica, master) in masters_of {
            let master = topology
                .index_of(&master)
                .filter(|&m| topology.nodes[m].role == Role::Master)
                .ok_or(TopologyError::InvalidNodeId)?;
            topology.nodes[usize::from(replica)].role = Role::Replica(master as u8);
        }
        topology.ranges.sort_unstable_by_key(|r| r.start);
        if topology
            .ranges
            .windows(2)
            .any(|pair| pair[0].end >= pair[1].start)
        {
            return Err(TopologyError::Overlapped);
        }
        topology.merge_adjacent();
        Ok(topology)
    }

    /// Joins neighbouring ranges of one node (`0-99 100-199` is `0-199`).
    fn merge_adjacent(&mut self) {
        let mut merged: heapless::Vec<SlotRange, MAX_RANGES> = heapless::Vec::new();
        for range in &self.ranges {
            match merged.last_mut() {
                Some(last) if last.node == range.node && last.end + 1 == range.start => {
                    last.end = range.end;
                }
                // No more ranges than before: it fits.
                _ => {
                    let _ = merged.push(*range);
                }
            }
        }
        self.ranges = merged;
    }

    /// The nodes, in the order they were pushed.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The slot ranges, in slot order.
    pub fn ranges(&self) -> &[SlotRange] {
        &self.ranges
    }

    /// The index of the node with this id.
    pub fn index_of(&self, id: &NodeId) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == *id)
    }

    /// The index of the node owning `slot`, if one does.
    pub fn owner_index(&self, slot: u16) -> Option<usize> {
        let after = self.ranges.partition_point(|r| r.start <= slot);
        let range = self.ranges.get(after.checked_sub(1)?)?;
        (slot <= range.end).then_some(usize::from(range.node))
    }

    /// The node owning `slot`, if one does.
    pub fn owner(&self, slot: u16) -> Option<&Node> {
        self.owner_index(slot).map(|i| &self.nodes[i])
    }

    /// How many slots have an owner.
    pub fn slots_assigned(&self) -> usize {
        self.ranges
            .iter()
            .map(|r| usize::from(r.end - r.start) + 1)
            .sum()
    }

    /// Masters that own at least one slot (Redis' `cluster_size`).
    pub fn size(&self) -> usize {
        (0..self.nodes.len())
            .filter(|&i| self.ranges.iter().any(|r| usize::from(r.node) == i))
            .count()
    }

    /// The ranges node `index` owns, in slot order.
    pub fn ranges_of(&self, index: usize) -> impl Iterator<Item = &SlotRange> {
        self.ranges
            .iter()
            .filter(move |r| usize::from(r.node) == index)
    }

    /// The replicas of node `index`.
    pub fn replicas_of(&self, index: usize) -> impl Iterator<Item = &Node> {
        self.nodes
            .iter()
            .filter(move |n| n.role == Role::Replica(index as u8))
    }
}

/// `N` or `A-B` with `A < B`, both below 16,384 (Kvrocks' rule).
fn parse_slots(text: &[u8]) -> Result<(u16, u16), TopologyError> {
    let slot = |t: &[u8]| {
        core::str::from_utf8(t)
            .ok()
            .and_then(|t| t.parse::<u16>().ok())
            .filter(|&s| s < SLOTS)
            .ok_or(TopologyError::SlotOutOfRange)
    };
    match text.iter().position(|&b| b == b'-') {
        None => {
            let s = slot(text)?;
            Ok((s, s))
        }
        Some(dash) => {
            let (start, end) = (slot(&text[..dash])?, slot(&text[dash + 1..])?);
            if start >= end {
                return Err(TopologyError::SlotOutOfRange);
            }
            Ok((start, end))
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::format;
    use std::string::String;

    use super::{Role, Topology, TopologyError};

    fn id(c: char) -> String {
        core::iter::repeat_n(c, 40).collect()
    }

    #[test]
    fn three_masters_own_their_ranges_and_a_replica_follows_its_master() {
        let (a, b, c, r) = (id('a'), id('b'), id('c'), id('r'));
        let text = format!(
            "{a} 10.0.0.2 6379 master - 0-5460\n{b} 10.0.0.3 6379 master - 5461-10922 \
             \n{c} 10.0.0.4 7000 master - 10923-16383\n{r} 10.0.0.5 6379 slave {a}\n"
        );
        let t = Topology::parse(text.as_bytes()).unwrap();
        assert_eq!(t.nodes().len(), 4);
        assert_eq!(t.owner(0).unwrap().host.as_str(), "10.0.0.2");
        assert_eq!(t.owner(5460).unwrap().host.as_str(), "10.0.0.2");
        assert_eq!(t.owner(5461).unwrap().host.as_str(), "10.0.0.3");
        assert_eq!(t.owner(16383).unwrap().port, 7000);
        assert_eq!(t.slots_assigned(), 16384);
        assert_eq!(t.size(), 3);
        assert_eq!(t.nodes()[3].role, Role::Replica(0));
        assert_eq!(t.replicas_of(0).count(), 1);
    }

    #[test]
    fn single_slots_and_gaps() {
        let a = id('a');
        let t = Topology::parse(format!("{a} h 1 master - 5 7-9 100").as_bytes()).unwrap();
        assert_eq!(t.owner_index(5), Some(0));
        assert_eq!(t.owner_index(6), None);
        assert_eq!(t.owner_index(8), Some(0));
        assert_eq!(t.owner_index(100), Some(0));
        assert_eq!(t.owner_index(101), None);
        assert_eq!(t.slots_assigned(), 5);
    }

    #[test]
    fn adjacent_ranges_of_one_node_merge() {
        let a = id('a');
        let t = Topology::parse(format!("{a} h 1 master - 100-199 0-99 200").as_bytes()).unwrap();
        assert_eq!(t.ranges().len(), 1);
        assert_eq!((t.ranges()[0].start, t.ranges()[0].end), (0, 200));
    }

    #[test]
    fn malformed_topologies_are_refused_with_kvrocks_words() {
        let (a, b) = (id('a'), id('b'));
        let cases = [
            (String::new(), TopologyError::InvalidNodes),
            (format!("{a} h 1 master"), TopologyError::InvalidNodes),
            (
                String::from("abc h 1 master - 0"),
                TopologyError::InvalidNodeId,
            ),
            (
                format!("{a} h 70000 master - 0"),
                TopologyError::InvalidPort,
            ),
            (format!("{a} h 1 leader - 0"), TopologyError::InvalidRole),
            (
                format!("{a} h 1 master - 16384"),
                TopologyError::SlotOutOfRange,
            ),
            (
                format!("{a} h 1 master - 5-5"),
                TopologyError::SlotOutOfRange,
            ),
            (
                format!("{a} h 1 master - 9-2"),
                TopologyError::SlotOutOfRange,
            ),
            (format!("{a} h 1 master - x"), TopologyError::SlotOutOfRange),
            (
                format!("{a} h 1 master - 0-10\n{b} h 2 master - 10-20"),
                TopologyError::Overlapped,
            ),
            (
                format!("{a} h 1 master - 0\n{a} h 2 master - 1"),
                TopologyError::Overlapped,
            ),
            (format!("{a} h 1 slave {b}"), TopologyError::InvalidNodeId),
            (
                format!("{a} h 1 master {b} 0"),
                TopologyError::InvalidNodeId,
            ),
            (
                format!("{a} {} 1 master - 0", "h".repeat(65)),
                TopologyError::HostTooLong,
            ),
        ];
        for (text, error) in cases {
            assert_eq!(Topology::parse(text.as_bytes()), Err(error), "{text}");
        }
    }

    #[test]
    fn more_ranges_than_fit_are_refused() {
        let a = id('a');
        let slots: String = (0..600).map(|s| format!(" {}", s * 2)).collect();
        assert_eq!(
            Topology::parse(format!("{a} h 1 master -{slots}").as_bytes()),
            Err(TopologyError::TooLarge)
        );
    }
}
