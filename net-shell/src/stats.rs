//! Counters reported by `INFO`.

/// Error replies by their code (the first word: `ERR`, `WRONGTYPE`, `NOAUTH`, ...), for
/// `INFO errorstats`. Up to [`ErrorStats::CODES`] codes of up to [`ErrorStats::CODE_LEN`]
/// bytes are told apart; errors with other codes count only in `total_error_replies`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ErrorStats {
    codes: [[u8; ErrorStats::CODE_LEN]; ErrorStats::CODES],
    lens: [u8; ErrorStats::CODES],
    counts: [u64; ErrorStats::CODES],
    used: usize,
}

impl ErrorStats {
    /// Most error codes counted apart.
    pub const CODES: usize = 8;
    /// Longest error code counted apart.
    pub const CODE_LEN: usize = 16;

    /// Counts one error reply whose text (after the `-`) is `text`.
    pub fn count(&mut self, text: &[u8]) {
        let code = text
            .split(|&b| b == b' ' || b == b'\r')
            .next()
            .unwrap_or_default();
        if code.is_empty() || code.len() > Self::CODE_LEN {
            return;
        }
        let known = (0..self.used).find(|&i| &self.codes[i][..usize::from(self.lens[i])] == code);
        let slot = match known {
            Some(i) => i,
            None if self.used < Self::CODES => {
                let i = self.used;
                self.codes[i][..code.len()].copy_from_slice(code);
                self.lens[i] = code.len() as u8;
                self.used += 1;
                i
            }
            None => return,
        };
        self.counts[slot] += 1;
    }

    /// Each code seen, with its count, in byte order of the codes (as Redis lists them).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        let code = |i: usize| &self.codes[i][..usize::from(self.lens[i])];
        let mut order = [0usize; Self::CODES];
        for (slot, i) in order.iter_mut().zip(0..) {
            *slot = i;
        }
        // Insertion sort: at most CODES entries, and far less code than `sort` (flash).
        for i in 1..self.used {
            let mut j = i;
            while j > 0 && code(order[j - 1]) > code(order[j]) {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
        order
            .into_iter()
            .take(self.used)
            .map(move |i| (code(i), self.counts[i]))
    }
}

/// Calls of each command (`INFO commandstats`), by its place in the command table.
#[cfg(feature = "extended-commands")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CommandStats {
    /// `[calls, rejected_calls, failed_calls]` of each row.
    counts: [[u64; 3]; CommandStats::ROWS],
}

#[cfg(feature = "extended-commands")]
impl Default for CommandStats {
    fn default() -> Self {
        Self {
            counts: [[0; 3]; Self::ROWS],
        }
    }
}

#[cfg(feature = "extended-commands")]
impl CommandStats {
    /// Most command table rows (commands and subcommands) counted apart; a unit test checks
    /// the table has no more.
    pub const ROWS: usize = 192;

    /// A command ran (`failed`: it answered an error), as Redis counts `calls` and
    /// `failed_calls`.
    pub(crate) fn called(&mut self, row: usize, failed: bool) {
        if let Some(c) = self.counts.get_mut(row) {
            c[0] += 1;
            c[2] += u64::from(failed);
        }
    }

    /// A command was refused before it ran (wrong arity, not authenticated, pub/sub mode):
    /// Redis' `rejected_calls`.
    pub(crate) fn rejected(&mut self, row: usize) {
        if let Some(c) = self.counts.get_mut(row) {
            c[1] += 1;
        }
    }

    /// `[calls, rejected_calls, failed_calls]` of table row `row`.
    pub(crate) fn of(&self, row: usize) -> [u64; 3] {
        self.counts.get(row).copied().unwrap_or_default()
    }
}

/// Server-wide counters. All monotonic except `connected_clients`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Stats {
    /// Clients connected now.
    pub connected_clients: u32,
    /// Clients waiting in a blocking pop now (`BLPOP`, …).
    pub blocked_clients: u32,
    /// Connections accepted since start.
    pub total_connections_received: u64,
    /// Commands executed since start.
    pub total_commands_processed: u64,
    /// Connections refused because every client slot was busy.
    pub rejected_connections: u64,
    /// Connections closed by the idle timeout.
    pub idle_timeout_closes: u64,
    /// The most ticks (ms) an idle timeout was handled after its deadline: how late the poll
    /// that closed it came (0: every one at its deadline's tick).
    pub idle_close_max_late_ms: u64,
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
    /// Error replies sent (Redis' `total_error_replies`), including unknown commands, wrong
    /// arity and protocol errors: counted with the `extended-commands` feature (0 without).
    pub total_error_replies: u64,
    /// Error replies by code (`INFO errorstats`): with the `extended-commands` feature, which
    /// the host binary has and the boards leave out for flash.
    #[cfg(feature = "extended-commands")]
    pub errorstats: ErrorStats,
    /// Calls by command (`INFO commandstats`): with the `extended-commands` feature.
    #[cfg(feature = "extended-commands")]
    pub commandstats: CommandStats,
    /// Writes refused because the store was full.
    pub oom_refusals: u64,
    /// Bytes of the connection table (smoltcp's sockets and the connections of the client
    /// slots open, every slot's timer slots), for `INFO memory`. It grows as slots open.
    pub connection_table_bytes: usize,
    /// Client slots open: with a socket, listening or serving. Every slot on a board; on a
    /// host, as many as clients have needed at once (slots open in shards of 16).
    pub connection_slots_open: usize,
    /// Buffer bytes a connected client holds (receive, send and input buffers), for `INFO
    /// memory`.
    pub buffer_bytes_per_client: usize,
    /// The store's count of expired keys at the last `CONFIG RESETSTAT` (`INFO` shows the
    /// keys expired since).
    expired_keys_before_reset: u64,
}

impl Stats {
    /// Zero counts, for a server whose connection table takes `table_bytes` at start and whose
    /// connected clients hold `buffer_bytes_per_client` each.
    pub(crate) fn for_connections(table_bytes: usize, buffer_bytes_per_client: usize) -> Self {
        Self {
            connection_table_bytes: table_bytes,
            buffer_bytes_per_client,
            ..Self::default()
        }
    }

    /// Keys expired since start or the last `CONFIG RESETSTAT`, of `store_total` (the
    /// store's count since it was made).
    pub fn expired_keys(&self, store_total: u64) -> u64 {
        store_total.saturating_sub(self.expired_keys_before_reset)
    }

    /// `CONFIG RESETSTAT`: every counter back to zero, as Redis' `resetServerStats`,
    /// `resetCommandTableStats` and `resetErrorTableStats`; `connected_clients` and
    /// `blocked_clients` are levels, not counts, and stay, as do the connection table's sizes. `store_total` is the store's count of expired keys now.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::Stats;
    ///
    /// let mut stats = Stats::default();
    /// stats.connected_clients = 2;
    /// stats.total_commands_processed = 10;
    /// stats.reset(7);
    /// assert_eq!((stats.connected_clients, stats.total_commands_processed), (2, 0));
    /// assert_eq!(stats.expired_keys(9), 2);
    /// ```
    pub fn reset(&mut self, store_total: u64) {
        *self = Self {
            connected_clients: self.connected_clients,
            blocked_clients: self.blocked_clients,
            connection_table_bytes: self.connection_table_bytes,
            connection_slots_open: self.connection_slots_open,
            buffer_bytes_per_client: self.buffer_bytes_per_client,
            expired_keys_before_reset: store_total,
            ..Self::default()
        };
    }
}
