//! The server: a smoltcp interface, a pool of client sockets, the key store and all timers,
//! driven by [`Server::poll`] with the time passed in.
//!
//! One concern per file, as smoltcp splits its interface:
//!
//! | file | what |
//! | --- | --- |
//! | `setup.rs` | [`ServerConfig`], buffer sizes, [`SetupError`] |
//! | `slots.rs` | [`ServerMemory`]: the client slots the server runs over, lent or allocated |
//! | `shards.rs` | the client sockets in shards, so no step walks them all |
//! | `arrivals.rs` | looking at each frame before smoltcp takes it in |
//! | `endpoints.rs` | finding a client's slot by its address and port |
//! | `connection.rs` | one client slot: its socket, partial command, timers' state ([`ClientSlot`]) |
//! | `client_requests.rs` | `CLIENT LIST` and `CLIENT KILL` over the connection table |
//! | `dhcp.rs` | DHCP with a static fallback |
//! | `listeners.rs` | listening sockets, handshake timeouts, SYN floods |
//! | `lifecycle.rs` | accept or refuse, close, recycle a client slot |
//! | `blocking.rs` | clients waiting in a blocking pop: their keys, commands and timeouts |
//! | `field_expiry.rs` | hash fields whose deadline passed: removed, `hexpired` published |
//! | `messages.rs` | pub/sub messages to their subscribers' connections |
//! | `serve.rs` | read, parse, execute, reply |
//! | `timer_policy.rs` | which timeout applies when (pure functions) |
//! | `timers.rs` | arming connection timers and acting when they fire |
//! | `wall_clock.rs` | setting the wall clock by SNTP (the `sntp` feature) |

mod arrivals;
#[cfg(feature = "blocking-lists")]
mod blocking;
#[cfg(feature = "client-list")]
mod client_requests;
mod connection;
mod dhcp;
mod endpoints;
#[cfg(feature = "hashes")]
mod field_expiry;
mod lifecycle;
mod listeners;
#[cfg(feature = "pubsub")]
mod messages;
#[cfg(all(feature = "cluster", feature = "alloc"))]
mod migration;
mod serve;
mod setup;
mod shards;
mod slots;
mod timer_policy;
mod timers;
#[cfg(feature = "sntp")]
pub(crate) mod wall_clock;

use smoltcp::iface::{Config as IfaceConfig, Interface, PollIngressSingleResult};
use smoltcp::phy::Device;
use smoltcp::socket::{dhcpv4, tcp};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpCidr, Ipv4Cidr};
use timer_core::{Tick, TimeoutListsOn, TimeoutSlot, TimerQueue};

use crate::auth::Security;
use crate::memory::{Bytes, Memory};
#[cfg(not(feature = "alloc"))]
use crate::resp::Limits;
use crate::settings::{Capacity, Settings, Timeouts};
use crate::stats::Stats;
use crate::store::Store;
use arrivals::Watched;
use connection::{Connection, Phase};
use dhcp::{apply_address, DhcpState};
use setup::longest_set_request;
pub use setup::{BufferSizes, IpSetup, ServerConfig, SetupError};
use shards::{Shards, SHARD};
#[cfg(feature = "alloc")]
pub use slots::ServerBuffers;
use slots::SlotQueue;
pub use slots::{ClientSlot, ServerMemory};
use timer_policy::Timeout;
#[cfg(feature = "sntp")]
pub use wall_clock::{ClockSync, SntpMemory};

/// Most frames taken in per poll, so a flood cannot keep one poll from serving and expiring.
const INGRESS_BUDGET: usize = 256;

/// A RESP2/RESP3 key-value server on smoltcp. Sans-IO and sans-clock: [`poll`](Self::poll) is given
/// the time and a device and says when it next needs to run.
///
/// It runs over [`ServerMemory`] and a [`Store`], lent by the caller (a board's `static`s) or
/// allocated for sizes chosen at run time (a host's flags): one code path for both. Every open
/// client slot without a client listens on the port (on a board every slot is open; a host
/// opens them in shards as clients arrive); at most `maxclients` (at most one less than the
/// slots) are served at once, and a further client gets `-ERR max number of clients reached`
/// (as from Redis) on a spare socket, since smoltcp has no listen backlog to tell us otherwise.
pub struct Server<'a> {
    iface: Interface,
    sockets: Shards<'a>,
    /// The connection table: the open slots (see [`open_slots`]).
    conns: Memory<'a, Connection<'a>>,
    /// Client slots open: each has its socket and buffers. All of them on a board; on a host,
    /// as many as clients have needed so far.
    opened: usize,
    /// Client slots in all, open or not.
    slots: usize,
    /// The buffers of the slots not open yet, and their sizes.
    #[cfg(feature = "alloc")]
    bytes: Bytes<'a>,
    #[cfg(feature = "alloc")]
    sizes: BufferSizes,
    reply: Memory<'a, u8>,
    /// With the `alloc` feature, the reply buffer commands write to: it grows for a reply
    /// larger than `reply` (a large value), and shrinks back after.
    #[cfg(feature = "alloc")]
    reply_vec: alloc::vec::Vec<u8>,
    store: Store<'a>,
    /// Subscriptions and messages waiting to go out.
    #[cfg(feature = "pubsub")]
    pubsub: crate::pubsub::PubSub,
    /// The timers of hash fields with a deadline.
    #[cfg(feature = "hashes")]
    field_timers: crate::command::FieldTimers<'a>,
    /// The keys clients wait on in a blocking pop.
    #[cfg(feature = "blocking-lists")]
    blocked_keys: crate::command::BlockedKeys,
    /// The waiting clients' timeouts: one per client slot at most.
    #[cfg(feature = "blocking-lists")]
    block_timers: timer_core::TimerHeapOn<u16, alloc::boxed::Box<[timer_core::HeapSlot<u16>]>>,
    settings: Settings,
    /// This node's view of the cluster (off unless enabled).
    #[cfg(feature = "cluster")]
    cluster: crate::cluster::Cluster,
    /// The cluster's routing when waiting clients were last checked against it (see
    /// `redirect_blocked`).
    #[cfg(all(feature = "cluster", feature = "blocking-lists"))]
    routing_seen: (u32, bool),
    /// The connection that carries a slot migration's keys to their new owner.
    #[cfg(all(feature = "cluster", feature = "alloc"))]
    migration_link: Option<migration::MigrationLink>,
    /// Migration connections opened, for their local ports.
    #[cfg(all(feature = "cluster", feature = "alloc"))]
    migration_port: u16,
    /// A migration has more to send: the next poll comes within a millisecond.
    #[cfg(all(feature = "cluster", feature = "alloc"))]
    migrating: bool,
    conn_timers: TimeoutListsOn<u16, Memory<'a, TimeoutSlot<u16>>, { Timeout::COUNT }>,
    write_timers: TimeoutListsOn<u16, Memory<'a, TimeoutSlot<u16>>, 1>,
    stats: Stats,
    /// The input buffer's size, as parser limits (where it cannot grow: no `alloc`).
    #[cfg(not(feature = "alloc"))]
    limits: Limits,
    port: u16,
    dhcp: Option<DhcpState>,
    expire_budget: usize,
    unix_offset_ms: Option<u64>,
    /// The SNTP client, when its memory was lent.
    #[cfg(feature = "sntp")]
    sntp: Option<wall_clock::Sntp>,
    last_now: Tick,
    /// The tick `new` was given, for `INFO` uptime.
    started: Tick,
    more_keys_due: bool,
    /// The last poll left frames in the device (its ingress budget ran out).
    more_frames: bool,
    shutting_down: bool,
    /// A `CONFIG SET` changed the timeouts: re-arm every connection's timers.
    timeouts_changed: bool,
    /// Slots that frames arrived for in this poll: the only ones serviced.
    dirty: SlotQueue,
    /// Slots recycled in this poll, to listen again once their RST is out.
    recycled: SlotQueue,
    /// Slots serviced since start.
    slot_visits: u64,
    /// Where to look first for a shard with a socket listening.
    listen_cursor: usize,
}

/// The latest time handed to smoltcp: its `Instant` counts microseconds in an `i64` and adds
/// timer durations (up to DHCP lease times) to it, so stay well inside that range (about
/// 146,000 years). Later ticks stop the network clock there; our own timers keep the tick.
const MAX_INSTANT_MS: Tick = (i64::MAX / 1000 / 2) as Tick;

fn instant(now: Tick) -> Instant {
    Instant::from_millis(now.min(MAX_INSTANT_MS) as i64)
}

impl<'a> Server<'a> {
    /// Builds the interface over `memory` and `store`, and starts listening.
    ///
    /// # Errors
    ///
    /// [`SetupError`] when the memory does not fit the configuration.
    pub fn new<D: Device + ?Sized>(
        config: ServerConfig,
        store: Store<'a>,
        memory: ServerMemory<'a>,
        device: &mut D,
        now: Tick,
    ) -> Result<Self, SetupError> {
        let sizes = config.buffers;
        memory.check(&sizes)?;
        if sizes.tx < sizes.reply() {
            return Err(SetupError::SendBufferTooSmall {
                needed: sizes.reply(),
            });
        }
        // Where input buffers cannot grow, the longest SET must fit one.
        let longest = longest_set_request(store.max_key_len(), store.max_value_len());
        if sizes.input < longest && !cfg!(feature = "alloc") {
            return Err(SetupError::InputBufferTooSmall { needed: longest });
        }
        let connection_table_bytes = memory.fixed_table_bytes();
        let ServerMemory {
            slots,
            sockets,
            clients: mut conns,
            timers,
            write_timers,
            mut bytes,
            #[cfg(feature = "sntp")]
            sntp,
            #[cfg(feature = "hashes")]
            field_timers,
        } = memory;
        // Lent field timers hold keys up to the store's longest.
        #[cfg(feature = "hashes")]
        if let Some(memory) = &field_timers {
            if memory.key_len() < store.max_key_len() {
                return Err(SetupError::FieldTimerKeysTooShort {
                    needed: store.max_key_len(),
                });
            }
        }

        let mut iface_config =
            IfaceConfig::new(HardwareAddress::Ethernet(EthernetAddress(config.mac)));
        iface_config.random_seed = config.random_seed;
        let mut iface = Interface::new(iface_config, device, instant(now));
        let mut sockets = Shards::new(sockets, slots);

        // `check` made sure the bytes suffice.
        let reply = bytes.take(sizes.reply()).unwrap_or_else(Memory::empty);
        // Lent memory is there to be used: every slot listens. Owned memory opens one shard
        // now, and more as clients need them.
        let opened = if conns.grows() {
            slots.min(SHARD)
        } else {
            slots
        };
        open_slots(
            &mut sockets,
            &mut conns,
            &mut bytes,
            sizes,
            config.port,
            0..opened,
        );

        let dhcp = match config.ip {
            IpSetup::Static { address, gateway } => {
                apply_address(&mut iface, Some((address, gateway)));
                None
            }
            IpSetup::Dhcp {
                fallback,
                fallback_after_ms,
            } => Some(DhcpState {
                handle: sockets.control.add(dhcpv4::Socket::new()),
                fallback,
                fallback_at: now.saturating_add(fallback_after_ms),
                leased: false,
                on_fallback: false,
            }),
        };
        #[cfg(feature = "sntp")]
        let sntp = match sntp {
            Some(memory) => Some(wall_clock::Sntp::start(
                memory,
                &mut sockets.control,
                dhcp.map(|d| d.handle),
                config.ntp_server,
                config.random_seed,
                now,
            )),
            None if config.ntp_server.is_some() => return Err(SetupError::NoSntpMemory),
            None => None,
        };

        #[cfg(not(feature = "alloc"))]
        let input = sizes.input;
        #[cfg(feature = "blocking-lists")]
        let client_slots = slots;
        let mut settings = Settings::new(config.timeouts, config.security);
        settings.capacity = config.capacity;
        settings.capacity.max_clients = config.capacity.max_clients.min(slots - 1);
        let mut store = store;
        store.set_bytes_limit(settings.capacity.bytes_limit());
        let mut stats = Stats::for_connections(
            connection_table_bytes + opened * slots::SLOT_BYTES,
            sizes.rx + sizes.tx + sizes.input,
        );
        stats.connection_slots_open = opened;
        Ok(Self {
            iface,
            sockets,
            conns,
            opened,
            slots,
            #[cfg(feature = "alloc")]
            bytes,
            #[cfg(feature = "alloc")]
            sizes,
            #[cfg(feature = "alloc")]
            reply_vec: alloc::vec![0; reply.len()],
            #[cfg(feature = "pubsub")]
            pubsub: crate::pubsub::PubSub::new(),
            #[cfg(feature = "hashes")]
            field_timers: match field_timers {
                Some(memory) => crate::command::FieldTimers::lent(memory),
                #[cfg(feature = "alloc")]
                None => crate::command::FieldTimers::growing(),
                #[cfg(not(feature = "alloc"))]
                None => crate::command::FieldTimers::none(),
            },
            #[cfg(feature = "blocking-lists")]
            blocked_keys: crate::command::BlockedKeys::new(),
            #[cfg(feature = "blocking-lists")]
            block_timers: timer_core::TimerHeapOn::with_capacity(client_slots),
            reply,
            store,
            settings,
            #[cfg(feature = "cluster")]
            cluster: if config.cluster_enabled {
                crate::cluster::Cluster::enabled()
            } else {
                crate::cluster::Cluster::DISABLED
            },
            #[cfg(all(feature = "cluster", feature = "blocking-lists"))]
            routing_seen: (0, false),
            #[cfg(all(feature = "cluster", feature = "alloc"))]
            migration_link: None,
            #[cfg(all(feature = "cluster", feature = "alloc"))]
            migration_port: 0,
            #[cfg(all(feature = "cluster", feature = "alloc"))]
            migrating: false,
            conn_timers: TimeoutListsOn::with_storage(timers),
            write_timers: TimeoutListsOn::with_storage(write_timers),
            stats,
            #[cfg(not(feature = "alloc"))]
            limits: Limits::new(input, input),
            port: config.port,
            dhcp,
            expire_budget: config.expire_budget.max(1),
            unix_offset_ms: None,
            #[cfg(feature = "sntp")]
            sntp,
            last_now: now,
            started: now,
            more_keys_due: false,
            more_frames: false,
            shutting_down: false,
            timeouts_changed: false,
            dirty: SlotQueue::EMPTY,
            recycled: SlotQueue::EMPTY,
            slot_visits: 0,
            listen_cursor: 0,
        })
    }

    /// Opens the next [`SHARD`] client slots (fewer at the end), as clients need them: see
    /// [`open_slots`]. False when every slot is open already.
    #[cfg(feature = "alloc")]
    fn open_shard(&mut self) -> bool {
        let first = self.opened;
        let end = self.slots.min(first + SHARD);
        if first >= end {
            return false;
        }
        let buckets = endpoints::buckets(first);
        let slots = first..end;
        open_slots(
            &mut self.sockets,
            &mut self.conns,
            &mut self.bytes,
            self.sizes,
            self.port,
            slots,
        );
        self.opened = end;
        self.stats.connection_table_bytes += (end - first) * slots::SLOT_BYTES;
        self.stats.connection_slots_open = end;
        if endpoints::buckets(end) != buckets {
            self.reindex_endpoints();
        }
        true
    }

    /// Opens another shard of client slots (`alloc`: a host's) for a SYN that finds no
    /// socket listening. Not while shutting down. A burst of SYNs (real clients connecting at
    /// once, or a flood) opens as many as it needs, up to every slot, as every slot listened
    /// before slots opened as needed; past that the oldest handshake gives way.
    #[cfg(feature = "alloc")]
    fn open_spare_shard(&mut self) -> bool {
        !self.shutting_down && self.open_shard()
    }

    /// Tells the server the wall-clock time, so `EXAT`, `PXAT`, `EXPIREAT` and `EXPIRETIME`
    /// work: `unix_ms` is the Unix time in milliseconds at monotonic tick `now`. (A board with
    /// a real-time clock calls this at boot; with the `sntp` feature, each SNTP sync sets it
    /// again.)
    pub fn set_unix_time(&mut self, now: Tick, unix_ms: u64) {
        self.unix_offset_ms = Some(unix_ms.wrapping_sub(now));
    }

    /// The Unix time in milliseconds at monotonic tick `now`, once the wall clock is known
    /// (from [`set_unix_time`](Self::set_unix_time) or SNTP).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn board(server: &mut net_shell::Server<'_>) {
    /// server.set_unix_time(1_000, 1_700_000_000_000);
    /// assert_eq!(server.unix_time_ms(1_500), Some(1_700_000_000_500));
    /// # }
    /// ```
    pub fn unix_time_ms(&self, now: Tick) -> Option<u64> {
        self.unix_offset_ms.map(|offset| offset.wrapping_add(now))
    }

    /// Runs everything due at `now` (milliseconds, monotonic): network I/O, commands, key
    /// expiry, connection timeouts. Returns when to call again at the latest (`None`: only when
    /// the device has a frame).
    pub fn poll<D: Device + ?Sized>(&mut self, now: Tick, device: &mut D) -> Option<Tick> {
        // Time never goes backwards here, whatever the caller's clock does.
        let now = now.max(self.last_now);
        self.last_now = now;

        // Timeouts and keys already due first: a poll that then takes in a burst of frames
        // must not make them later still (and a command finds a due key already gone, its
        // `expired` event on its way).
        self.expire_connections(now);
        #[cfg(feature = "blocking-lists")]
        self.expire_blocked(now);
        #[cfg(feature = "hashes")]
        self.expire_fields(now);
        let mut expire_budget = self.expire_budget;
        expire_budget -= self.expire_keys(now, expire_budget);
        self.receive(now, device);
        self.poll_dhcp(now);
        #[cfg(feature = "sntp")]
        self.poll_wall_clock(now);
        // Only the slots frames arrived for: the work of a poll does not grow with the number
        // of idle connections. (Timers reach their slots through the timer queues.)
        while let Some(index) = self.dirty.pop(&mut self.conns, Connection::dirty_link) {
            self.conns[index].dirty = false;
            self.slot_visits += 1;
            self.service(index, now);
        }
        if core::mem::take(&mut self.timeouts_changed) {
            // New timeouts apply to connections already waiting, as in Redis.
            for index in 0..self.conns.len() {
                if self.conns[index].phase == Phase::Open {
                    self.arm_timers(index);
                }
            }
        }
        #[cfg(all(feature = "cluster", feature = "alloc"))]
        {
            self.migrating = self.poll_migration(now);
        }
        #[cfg(all(feature = "cluster", feature = "blocking-lists"))]
        self.redirect_blocked(now);
        self.expire_keys(now, expire_budget);
        self.expire_connections(now);
        #[cfg(feature = "blocking-lists")]
        self.expire_blocked(now);
        #[cfg(feature = "hashes")]
        self.expire_fields(now);
        // Replies, and the FINs and RSTs of connections closed above, go out now rather than
        // at the next poll. Egress only: a frame taken in here would not be served until the
        // next poll, and nothing would ask for that poll before smoltcp's delayed-ACK deadline
        // (the device has no frame left to wake the caller).
        // (Through the same wrapper as `receive`: one instance of smoltcp's egress, not two.)
        let mut watched = Watched::new(device, self.port);
        self.sockets
            .egress(&mut self.iface, now, instant(now), &mut watched);
        self.listen_again();
        self.next_poll(now)
    }

    /// Removes keys whose time ran out, at most `budget` of them (a poll's two sweeps share
    /// the expiry budget); keyspace notifications go out in the same poll. How many went.
    fn expire_keys(&mut self, now: Tick, budget: usize) -> usize {
        #[cfg(not(feature = "pubsub"))]
        let sweep = self.store.expire(now, budget);
        #[cfg(feature = "pubsub")]
        let sweep = {
            let events = self.settings.keyspace_events;
            let pubsub = &mut self.pubsub;
            let sweep = self.store.expire_each(now, budget, |key| {
                pubsub.notify(
                    events,
                    crate::pubsub::KeyspaceEvents::EXPIRED,
                    "expired",
                    key,
                )
            });
            self.deliver_messages(now);
            sweep
        };
        self.more_keys_due = sweep.more_due;
        sweep.fired
    }

    /// Takes in at most [`INGRESS_BUDGET`] frames, then sends what smoltcp has queued. Each
    /// frame is looked at first and handed to the socket set that can take it (see
    /// [`shards`]); after each SYN, keeps a socket listening (see
    /// [`guard_listeners`](Self::guard_listeners)).
    fn receive<D: Device + ?Sized>(&mut self, now: Tick, device: &mut D) {
        let mut watched = Watched::new(device, self.port);
        let mut taken_in = 0;
        while taken_in < INGRESS_BUDGET {
            let Some(arrival) = watched.peek(instant(now)) else {
                break;
            };
            // The slot the frame is for, looked up once: taking the frame in changes no index.
            let (slot, opens) = match arrival {
                Some(arrival) => (self.slot_of(arrival.from), arrival.opens),
                None => (None, false),
            };
            let target = match slot {
                Some(index) => Some(index / SHARD),
                // A new handshake needs a listening socket; a SYN that finds none gets a
                // reset, so make one listen first if none does.
                #[cfg(feature = "alloc")]
                None if opens => self
                    .listening_shard()
                    .or_else(|| self.open_spare_shard().then(|| self.listening_shard())?)
                    .or_else(|| {
                        self.make_room_for_syn();
                        self.listening_shard()
                    }),
                #[cfg(not(feature = "alloc"))]
                None if opens => self.listening_shard().or_else(|| {
                    self.make_room_for_syn();
                    self.listening_shard()
                }),
                None => None,
            };
            let taken = self
                .sockets
                .ingress(&mut self.iface, instant(now), &mut watched, target);
            if taken == PollIngressSingleResult::None {
                break;
            }
            taken_in += 1;
            if let Some(index) = slot {
                self.mark(index);
            }
            if let (true, Some(shard)) = (opens, target) {
                if self.guard_listeners(shard, now) {
                    // Send the new handshake's SYN-ACK now, not after the rest of the batch:
                    // in a flood, later SYNs in the same batch could otherwise evict a real
                    // client's handshake before its SYN-ACK ever left.
                    self.sockets
                        .egress_shard(&mut self.iface, instant(now), &mut watched, shard);
                }
            }
        }
        // The budget ran out: more frames may wait. Serve what came in, then come back at once.
        self.more_frames = taken_in >= INGRESS_BUDGET;
        self.sockets
            .egress(&mut self.iface, now, instant(now), &mut watched);
    }

    /// A shard with a socket listening (as last counted), if any; the search starts where
    /// the last one succeeded, so SYNs spread over the shards that listen.
    fn listening_shard(&mut self) -> Option<usize> {
        let shard = self.sockets.listening_from(self.listen_cursor)?;
        self.listen_cursor = shard;
        Some(shard)
    }

    /// Queues slot `index` for service in this poll.
    fn mark(&mut self, index: usize) {
        if !core::mem::replace(&mut self.conns[index].dirty, true) {
            self.dirty
                .push(&mut self.conns, index, Connection::dirty_link);
        }
    }

    /// Slots serviced since start: a poll services only the slots that frames arrived for, so
    /// this grows with traffic, not with the number of connections (for tests and benchmarks).
    pub fn slot_visits(&self) -> u64 {
        self.slot_visits
    }

    /// Sockets handed to smoltcp so far, counted once per socket set handed to it (each walks
    /// its set): with the client sockets in shards of 64, this grows with traffic, not with
    /// the number of idle connections (for tests and benchmarks).
    pub fn socket_visits(&self) -> u64 {
        self.sockets.visits()
    }

    /// When the server next needs [`poll`](Self::poll), without polling.
    pub fn next_poll(&mut self, now: Tick) -> Option<Tick> {
        if self.more_keys_due || self.more_frames {
            return Some(now);
        }
        #[cfg(all(feature = "cluster", feature = "alloc"))]
        let migrating = self.migrating.then(|| now.saturating_add(1));
        #[cfg(not(all(feature = "cluster", feature = "alloc")))]
        let migrating = None;
        let iface = self.sockets.poll_at(&mut self.iface, instant(now));
        [
            iface,
            self.store.next_deadline(),
            self.conn_timers.next_deadline(),
            self.write_timers.next_deadline(),
            #[cfg(feature = "blocking-lists")]
            self.next_block_deadline(),
            #[cfg(feature = "hashes")]
            self.next_field_deadline(),
            self.dhcp
                .filter(|d| !d.leased && !d.on_fallback && d.fallback.is_some())
                .map(|d| d.fallback_at),
            #[cfg(feature = "sntp")]
            self.wall_clock_deadline(),
            migrating,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Server counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The key store.
    pub fn store(&self) -> &Store<'a> {
        &self.store
    }

    /// The current IPv4 address, once there is one.
    pub fn ipv4_address(&self) -> Option<Ipv4Cidr> {
        self.iface
            .ip_addrs()
            .iter()
            .map(|cidr| match cidr {
                IpCidr::Ipv4(v4) => *v4,
            })
            .next()
    }

    /// The TCP port served.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether client sockets are listening (true from the first poll with an address).
    pub fn is_listening(&self) -> bool {
        self.ipv4_address().is_some() && self.sockets.listening() > 0
    }

    /// The timeouts in force (they may have been changed by `CONFIG SET`).
    pub fn timeouts(&self) -> Timeouts {
        self.settings.timeouts
    }

    /// `maxclients` and `maxmemory` in force (they may have been changed by `CONFIG SET`).
    pub fn capacity(&self) -> Capacity {
        self.settings.capacity
    }

    /// The password and protected-mode settings in force.
    pub fn security(&self) -> &Security {
        &self.settings.security
    }

    /// Starts a graceful shutdown: stop accepting, close every connection after the replies
    /// already queued. Keep polling until [`open_connections`](Self::open_connections) is 0 (or a
    /// deadline of your choice).
    pub fn shutdown(&mut self, now: Tick) {
        self.shutting_down = true;
        self.sockets.clear_listening();
        for index in 0..self.conns.len() {
            match self.conns[index].phase {
                Phase::Open => self.begin_close(index, now),
                Phase::Listening => {
                    let handle = self.conns[index].socket;
                    self.sockets.tcp_mut(index, handle).abort();
                }
                Phase::Closing => {}
            }
        }
    }

    /// Connections not yet fully closed.
    pub fn open_connections(&self) -> usize {
        self.conns
            .iter()
            .filter(|c| c.phase != Phase::Listening)
            .count()
    }
}

/// Opens client slots `slots`: each gets a socket that listens, its buffers (carved from
/// `bytes`, in slot order) and its entry in the connection table.
fn open_slots<'a>(
    sockets: &mut Shards<'a>,
    conns: &mut Memory<'a, Connection<'a>>,
    bytes: &mut Bytes<'a>,
    sizes: BufferSizes,
    port: u16,
    slots: core::ops::Range<usize>,
) {
    // `ServerMemory::check` made sure the bytes suffice.
    let mut take = |len| bytes.take(len).unwrap_or_else(Memory::empty);
    for index in slots {
        let (rx, tx, input) = (take(sizes.rx), take(sizes.tx), take(sizes.input));
        let mut socket = tcp::Socket::new(
            tcp::SocketBuffer::new(rx.into_managed()),
            tcp::SocketBuffer::new(tx.into_managed()),
        );
        socket.set_nagle_enabled(false);
        let _ = socket.listen(port);
        let shard = sockets.of(index);
        let handle = shard.sockets.add(socket);
        shard.listening += 1;
        // The table has room: `check` made sure of it (lent), or it grows (owned).
        let _ = conns.put(index, Connection::on(handle, input));
    }
}
