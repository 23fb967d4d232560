//! Run-time settings that `CONFIG GET`/`CONFIG SET` can see and change.

use crate::auth::Security;

/// Everything `CONFIG SET` can change, changed all at once or not at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Settings {
    /// Connection timeouts.
    pub timeouts: Timeouts,
    /// Password and protected mode.
    pub security: Security,
    /// `maxclients` and `maxmemory`.
    pub capacity: Capacity,
    /// Which keyspace events are published (`notify-keyspace-events`; none by default).
    #[cfg(feature = "pubsub")]
    pub keyspace_events: crate::pubsub::KeyspaceEvents,
    /// When a hash is kept packed (Redis' `hash-max-listpack-entries` and `-value`).
    #[cfg(feature = "hashes")]
    pub hash_packing: HashPacking,
    /// Redis' `list-max-listpack-size` and `list-compress-depth`, kept only to be reported.
    #[cfg(feature = "lists")]
    pub list_nodes: ListNodes,
}

impl Settings {
    /// These timeouts and security settings.
    pub const fn new(timeouts: Timeouts, security: Security) -> Self {
        Self {
            timeouts,
            security,
            capacity: Capacity::ALL,
            #[cfg(feature = "pubsub")]
            keyspace_events: crate::pubsub::KeyspaceEvents::NONE,
            #[cfg(feature = "hashes")]
            hash_packing: HashPacking::REDIS,
            #[cfg(feature = "lists")]
            list_nodes: ListNodes::REDIS,
        }
    }
}

/// When a hash is packed (fields and values one after another, found by a scan: Redis'
/// `listpack` encoding) and when it is given an index for good (Redis' `hashtable`), as Redis
/// 7.0 decides: a write that leaves more than `max_fields` fields, or that sets a field or
/// value longer than `max_len` bytes, indexes a packed hash. Deleting fields, or lowering the
/// thresholds, changes no hash already written.
///
/// # Examples
///
/// ```
/// use net_shell::HashPacking;
///
/// let packing = HashPacking::REDIS;
/// assert!(packing.holds_fields(512) && !packing.holds_fields(513));
/// assert!(packing.holds_len(64) && !packing.holds_len(65));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct HashPacking {
    /// The most fields a packed hash has (Redis' `hash-max-listpack-entries`).
    pub max_fields: u64,
    /// The longest field or value a packed hash has (Redis' `hash-max-listpack-value`).
    pub max_len: u64,
}

impl HashPacking {
    /// Redis 7.0's defaults as built: 512 fields, 64 bytes (the `redis.conf` it ships sets 128
    /// fields; a server started without one has 512).
    pub const REDIS: Self = Self {
        max_fields: 512,
        max_len: 64,
    };

    /// Whether a packed hash may have `fields` fields.
    pub const fn holds_fields(&self, fields: usize) -> bool {
        fields as u64 <= self.max_fields
    }

    /// Whether a packed hash may have a field or value of `len` bytes.
    pub const fn holds_len(&self, len: usize) -> bool {
        len as u64 <= self.max_len
    }
}

impl Default for HashPacking {
    fn default() -> Self {
        Self::REDIS
    }
}

/// Redis 7.0's quicklist node settings, which `CONFIG GET` reports as set. A list here is one
/// value of the store, not a chain of nodes, so they change nothing (and Redis 7.0 calls every
/// list a `quicklist`, whatever they say).
///
/// # Examples
///
/// ```
/// let nodes = net_shell::ListNodes::REDIS;
/// assert_eq!((nodes.max_listpack_size, nodes.compress_depth), (-2, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ListNodes {
    /// Redis' `list-max-listpack-size`: entries per node if positive, else -1 to -5 for 4 KiB
    /// to 64 KiB nodes.
    pub max_listpack_size: i32,
    /// Redis' `list-compress-depth`: nodes left uncompressed at each end (0: none compressed).
    pub compress_depth: i32,
}

impl ListNodes {
    /// Redis 7.0's defaults: 8 KiB nodes (-2), no compression (0).
    pub const REDIS: Self = Self {
        max_listpack_size: -2,
        compress_depth: 0,
    };
}

impl Default for ListNodes {
    fn default() -> Self {
        Self::REDIS
    }
}

/// How much of the memory it was given the server uses: `CONFIG SET` can move these within it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Capacity {
    /// Clients served at once (Redis' `maxclients`): at most one less than the server's client
    /// slots (the last slot refuses the next client with `-ERR max number of clients
    /// reached`); more is taken as that.
    pub max_clients: usize,
    /// Bytes keys and values may take (Redis' `maxmemory`), each key and value counted as the
    /// store's pool block it takes ([`Store::bytes_used`](crate::store::Store::bytes_used)).
    /// 0, as in Redis, means no limit: all of the store's memory. More than the store's memory
    /// is taken as all of it.
    pub max_memory: usize,
    /// The longest bulk argument (Redis' `proto-max-bulk-len`, 512 MiB), and so the largest
    /// value. A server whose input buffers cannot grow (no `alloc` feature: a board) takes no
    /// bulk longer than its input buffer, whatever this says.
    pub max_bulk_len: usize,
    /// The most bytes of one client's pending input (Redis' `client-query-buffer-limit`,
    /// 1 GiB): past it the client is disconnected, as by Redis. The input buffer grows (with the
    /// `alloc` feature) only while a request needs it.
    pub query_buffer_limit: usize,
}

impl Capacity {
    /// Every client slot and all of the store's memory; Redis' defaults for the bulk length
    /// (512 MiB) and the query buffer (1 GiB).
    pub const ALL: Self = Self {
        max_clients: usize::MAX,
        max_memory: 0,
        max_bulk_len: 512 << 20,
        query_buffer_limit: 1 << 30,
    };

    /// The store's byte limit for `max_memory`.
    pub(crate) const fn bytes_limit(&self) -> usize {
        if self.max_memory == 0 {
            usize::MAX
        } else {
            self.max_memory
        }
    }
}

impl Default for Capacity {
    fn default() -> Self {
        Self::ALL
    }
}

/// Timeouts, in milliseconds. 0 disables a timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Timeouts {
    /// Close a connection after this long without a complete command (Redis' `timeout`).
    pub idle_ms: u64,
    /// Close a connection whose current command has been arriving for this long.
    pub read_ms: u64,
    /// Close a connection that has not accepted any reply bytes for this long.
    pub write_ms: u64,
    /// After a timeout closes a connection gracefully, abort it if the peer has not finished
    /// the close within this long.
    pub close_ms: u64,
    /// Abort a TCP handshake that has not completed (the client's final ACK has not arrived)
    /// within this long, so the socket listens again: a SYN from an address that never answers
    /// must not hold a listening socket for good.
    pub handshake_ms: u64,
}

impl Timeouts {
    /// 300 s idle, 10 s read, 10 s write, 2 s to finish a close, 2 s to finish a handshake.
    pub const DEFAULT: Self = Self {
        idle_ms: 300_000,
        read_ms: 10_000,
        write_ms: 10_000,
        close_ms: 2_000,
        handshake_ms: 2_000,
    };

    /// Timeouts with the given idle, read and write limits.
    ///
    /// # Examples
    ///
    /// ```
    /// let t = net_shell::Timeouts::new(30_000, 5_000, 5_000);
    /// assert_eq!(t.idle_ms, 30_000);
    /// ```
    pub const fn new(idle_ms: u64, read_ms: u64, write_ms: u64) -> Self {
        Self {
            idle_ms,
            read_ms,
            write_ms,
            close_ms: Self::DEFAULT.close_ms,
            handshake_ms: Self::DEFAULT.handshake_ms,
        }
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Self::DEFAULT
    }
}
