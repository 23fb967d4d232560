//! Counters reported by `INFO`.

/// Server-wide counters. All monotonic except `connected_clients`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Stats {
    /// Clients connected now.
    pub connected_clients: u32,
    /// Connections accepted since start.
    pub total_connections_received: u64,
    /// Commands executed since start.
    pub total_commands_processed: u64,
    /// Connections refused because every client slot was busy.
    pub rejected_connections: u64,
    /// Connections closed by the idle timeout.
    pub idle_timeout_closes: u64,
    /// Connections closed by the read timeout (a command arrived too slowly).
    pub read_timeout_closes: u64,
    /// Connections closed by the write timeout (the client did not read its replies).
    pub write_timeout_closes: u64,
    /// Connections closed for a protocol error.
    pub protocol_error_closes: u64,
    /// Connections aborted because the peer did not finish a graceful close in time, or, with
    /// every byte acknowledged, to give their socket to a new client.
    pub aborted_closes: u64,
    /// Handshakes aborted because the client's final ACK did not arrive in time.
    pub handshake_timeouts: u64,
    /// Half-open handshakes aborted early to keep a socket listening (a SYN flood).
    pub half_open_evictions: u64,
    /// Clients refused by protected mode (no password set, not from the trusted network).
    pub protected_mode_refusals: u64,
    /// Writes refused because the store was full.
    pub oom_refusals: u64,
}
