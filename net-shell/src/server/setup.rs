//! What [`Server::new`](super::Server::new)(super::Server::new) is given, and why it can refuse it.

use core::fmt;

use smoltcp::wire::{Ipv4Address, Ipv4Cidr};

use crate::auth::Security;
use crate::settings::{Capacity, Timeouts};

/// Reply room beyond the largest value: bulk header and CRLF, or an error line.
const REPLY_SLACK: usize = 64;

/// The largest non-value reply (`INFO`).
const REPLY_MIN: usize = 1600;

/// How the interface gets its IPv4 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IpSetup {
    /// A fixed address.
    Static {
        /// Address and prefix, e.g. `10.0.2.15/24`.
        address: Ipv4Cidr,
        /// Default gateway.
        gateway: Option<Ipv4Address>,
    },
    /// DHCPv4, with a static address taken if no lease arrives in time. DHCP keeps trying; a
    /// lease replaces the fallback, and a lease that runs out brings the fallback back at once.
    Dhcp {
        /// Address and gateway to use if DHCP has not answered after `fallback_after_ms`, or
        /// has lost its lease.
        fallback: Option<(Ipv4Cidr, Option<Ipv4Address>)>,
        /// How long to wait for a lease before taking the fallback.
        fallback_after_ms: u64,
    },
}

/// Per-connection buffer sizes, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BufferSizes {
    /// smoltcp receive buffer (the TCP window).
    pub rx: usize,
    /// smoltcp send buffer; must hold at least one largest reply.
    pub tx: usize,
    /// The partial-command buffer: the largest request accepted.
    pub input: usize,
}

impl BufferSizes {
    /// The scratch space for one reply: the largest value plus slack, or `INFO`.
    pub const fn reply(&self) -> usize {
        let value_reply = self.input + REPLY_SLACK;
        if value_reply > REPLY_MIN {
            value_reply
        } else {
            REPLY_MIN
        }
    }

    /// Bytes of buffer [`Server::new`](super::Server::new) needs for `sockets` client sockets.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::BufferSizes;
    ///
    /// let sizes = BufferSizes { rx: 1024, tx: 2048, input: 1024 };
    /// assert_eq!(sizes.bytes_needed(4), 4 * (1024 + 2048 + 1024) + 1600);
    /// ```
    pub const fn bytes_needed(&self, sockets: usize) -> usize {
        sockets * (self.rx + self.tx + self.input) + self.reply()
    }
}

/// Everything [`Server::new`](super::Server::new) needs to know.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ServerConfig {
    /// The interface's MAC address.
    pub mac: [u8; 6],
    /// How the interface gets its address.
    pub ip: IpSetup,
    /// TCP port to serve (6379).
    pub port: u16,
    /// Connection timeouts (changeable at run time with `CONFIG SET`).
    pub timeouts: Timeouts,
    /// Password and protected mode (changeable at run time with `CONFIG SET`).
    pub security: Security,
    /// `maxclients` and `maxmemory` (changeable at run time with `CONFIG SET`, within the
    /// memory the server and store were given).
    pub capacity: Capacity,
    /// Buffer sizes per connection.
    pub buffers: BufferSizes,
    /// Most keys removed by the TTL timer per poll, so a mass expiry never stalls serving.
    pub expire_budget: usize,
    /// Seed for smoltcp (TCP initial sequence numbers, DHCP transaction ids) and for SNTP's
    /// request nonces.
    pub random_seed: u64,
    /// The NTP server to set the wall clock from (`sntp` feature; needs
    /// [`SntpMemory`](super::SntpMemory)). `None`: the DHCP lease's, if any.
    #[cfg(feature = "sntp")]
    pub ntp_server: Option<Ipv4Address>,
    /// Cluster mode (Redis' `cluster-enabled`; `cluster` feature): the topology comes from a
    /// controller (`CLUSTERX SETNODES`), and keys of other nodes' slots are redirected.
    #[cfg(feature = "cluster")]
    pub cluster_enabled: bool,
}

impl ServerConfig {
    /// A configuration with defaults: port 6379, [`Timeouts::DEFAULT`], [`Security::DEFAULT`]
    /// (no password, protected mode on, nobody trusted: set one of them), 2 KiB/4 KiB/2 KiB
    /// buffers, [`Capacity::ALL`], 1,000 expirations per poll.
    pub const fn new(mac: [u8; 6], ip: IpSetup) -> Self {
        Self {
            mac,
            ip,
            port: 6379,
            timeouts: Timeouts::DEFAULT,
            security: Security::DEFAULT,
            capacity: Capacity::ALL,
            buffers: BufferSizes {
                rx: 2048,
                tx: 4096,
                input: 2048,
            },
            expire_budget: 1000,
            random_seed: 0x5eed,
            #[cfg(feature = "sntp")]
            ntp_server: None,
            #[cfg(feature = "cluster")]
            cluster_enabled: false,
        }
    }
}

/// Why [`Server::new`](super::Server::new) refused its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SetupError {
    /// The socket storage must have room for one TCP socket per client slot plus one DHCP
    /// socket (and one SNTP socket, with `SntpMemory` lent).
    TooFewSocketSlots {
        /// Slots needed.
        needed: usize,
    },
    /// The byte buffer is smaller than [`BufferSizes::bytes_needed`].
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
    },
    /// The send buffer cannot hold one largest reply.
    SendBufferTooSmall {
        /// Bytes needed.
        needed: usize,
    },
    /// The input buffer cannot hold the longest `SET` (the store's longest key and value,
    /// with `NX GET PXAT <time>`), so some values could be refused as a protocol error.
    InputBufferTooSmall {
        /// Bytes needed.
        needed: usize,
    },
    /// At least two client sockets are needed (one is kept to refuse overflow politely).
    TooFewConnections,
    /// More client slots than slot numbers.
    TooManyConnections {
        /// The most client slots a server can have.
        most: usize,
    },
    /// Each timer queue needs one slot per client.
    TooFewTimerSlots {
        /// Slots needed per queue.
        needed: usize,
    },
    /// An NTP server is configured, but no [`SntpMemory`](super::SntpMemory) was lent
    /// ([`ServerMemory::with_sntp`](super::ServerMemory::with_sntp)).
    #[cfg(feature = "sntp")]
    NoSntpMemory,
    /// The lent field timers ([`ServerMemory::with_field_timers`](super::ServerMemory::with_field_timers))
    /// have less room per key than the store's longest key.
    #[cfg(feature = "hashes")]
    FieldTimerKeysTooShort {
        /// Bytes of key room needed.
        needed: usize,
    },
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooFewSocketSlots { needed } => write!(f, "socket storage needs {needed} slots"),
            Self::BufferTooSmall { needed } => write!(f, "buffer needs {needed} bytes"),
            Self::SendBufferTooSmall { needed } => {
                write!(f, "send buffer must be at least {needed} bytes")
            }
            Self::InputBufferTooSmall { needed } => {
                write!(f, "input buffer must be at least {needed} bytes")
            }
            Self::TooFewConnections => f.write_str("at least 2 connection slots are needed"),
            Self::TooManyConnections { most } => {
                write!(f, "at most {most} connection slots are possible")
            }
            Self::TooFewTimerSlots { needed } => {
                write!(f, "each timer queue needs {needed} slots")
            }
            #[cfg(feature = "sntp")]
            Self::NoSntpMemory => f.write_str("an NTP server needs SNTP memory"),
            #[cfg(feature = "hashes")]
            Self::FieldTimerKeysTooShort { needed } => {
                write!(f, "field timers need {needed} bytes of room per key")
            }
        }
    }
}

impl core::error::Error for SetupError {}

/// The length of `SET <key> <value> NX GET PXAT -9223372036854775808` as a multibulk request,
/// for the longest key and value: the longest request the input buffer must hold.
pub(super) const fn longest_set_request(max_key: usize, max_value: usize) -> usize {
    // A request's bulk strings are encoded as a reply's are: `$<len>\r\n<bytes>\r\n`.
    use crate::resp::{array_header_len, bulk_reply_len};
    array_header_len(7)
        + bulk_reply_len("SET".len())
        + bulk_reply_len(max_key)
        + bulk_reply_len(max_value)
        + bulk_reply_len("NX".len())
        + bulk_reply_len("GET".len())
        + bulk_reply_len("PXAT".len())
        + bulk_reply_len("-9223372036854775808".len())
}
