//! A deterministic network for net-shell: the server and a smoltcp client interface joined by an
//! in-memory Ethernet link, with simulated time in milliseconds.
//!
//! Nothing here reads a clock or sleeps. Frames cross the link at once; time moves only when a
//! test asks, and then to the earlier of the server's reported next deadline and the client's
//! `poll_at` (never past the target). So a timeout that the server forgets to report is only
//! noticed late, which the tests see.
//!
//! The client side has any number of TCP clients (std buffers, ACKs sent at once) and, when a
//! test starts them, a DHCP server that leases one address and an SNTP server.

mod dhcp;
mod link;
mod ntp;
mod resp;

use net_shell::store::{Store, StoreMemory};
use net_shell::{
    BufferSizes, IpSetup, Security, Server, ServerBuffers, ServerConfig, ServerMemory, Timeouts,
};
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::socket::tcp;
use smoltcp::time::{Duration, Instant};
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, HardwareAddress, IpAddress,
    IpCidr, IpProtocol, Ipv4Address, Ipv4Cidr, Ipv4Packet, Ipv4Repr, TcpControl, TcpPacket,
    TcpRepr, TcpSeqNumber,
};

pub use crate::reply::Reply;
pub use dhcp::DhcpServer;
pub use link::{link, FaultCounts, Faults, LinkEnd, RxToken, TxToken};
pub use net_shell::Stats;
pub use ntp::{ntp_timestamp, NtpAnswer, NtpServer};
pub use resp::{encode, encode_str};

/// The server's address and port.
pub const SERVER_IP: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
/// The server's MAC address.
pub const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
/// The client interface's address.
pub const CLIENT_IP: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);
/// The port served.
pub const PORT: u16 = 6379;
/// Longest key of [`store`].
pub const MAX_KEY: usize = 64;
/// Longest value of [`store`]; the default input buffer (2048) holds the longest SET of it.
pub const MAX_VALUE: usize = 1024;

/// The numeric `name` field of an `INFO` reply's text.
pub fn info_field(info: &str, name: &str) -> u64 {
    let prefix = format!("{name}:");
    info.split("\r\n")
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("INFO has no {name}: {info}"))
        .parse()
        .unwrap()
}

/// A store of `K` keys over a `B`-byte pool, as a board's `StoreArrays<K, B>` would give it,
/// with [`MAX_KEY`] and [`MAX_VALUE`] (allocated: the server owns it).
pub fn store<const K: usize, const B: usize>() -> SizedStore<K, B> {
    SizedStore(Store::new(StoreMemory::allocate(K, B), MAX_KEY, MAX_VALUE))
}

/// A store whose sizes a [`Sim`] of the same `K` and `B` takes (so tests name them once).
pub struct SizedStore<const K: usize, const B: usize>(pub Store<'static>);

impl<const K: usize, const B: usize> std::ops::Deref for SizedStore<K, B> {
    type Target = Store<'static>;

    fn deref(&self) -> &Store<'static> {
        &self.0
    }
}

impl<const K: usize, const B: usize> std::ops::DerefMut for SizedStore<K, B> {
    fn deref_mut(&mut self) -> &mut Store<'static> {
        &mut self.0
    }
}

/// The server's configuration: 10.0.0.1/24 on port 6379, the given timeouts, default buffers,
/// no password, and protected mode trusting the clients' subnet.
pub fn config(timeouts: Timeouts) -> ServerConfig {
    let mut config = ServerConfig::new(
        SERVER_MAC,
        IpSetup::Static {
            address: Ipv4Cidr::new(SERVER_IP, 24),
            gateway: None,
        },
    );
    config.timeouts = timeouts;
    // The client interface's subnet is the trusted network, as loopback is for Redis.
    config.security = Security::DEFAULT.trusting(Some(Ipv4Cidr::new(CLIENT_IP, 24)));
    config
}

/// A client connection of the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Client(usize);

struct ClientState {
    socket: SocketHandle,
    /// Received and not yet taken by the test.
    inbox: Vec<u8>,
    /// Whether the test stopped reading (bytes stay in the socket).
    reading: bool,
}

/// The server and the client side, and the time. The server's buffers are the test's
/// ([`ServerBuffers`], lent for `'m`), as a host binary's are its own.
pub struct Sim<'m, const C: usize, const K: usize, const B: usize> {
    /// Simulated milliseconds.
    pub now: u64,
    pub server: Server<'m>,
    server_link: LinkEnd,
    client_link: LinkEnd,
    client_iface: Interface,
    client_sockets: SocketSet<'static>,
    clients: Vec<ClientState>,
    next_port: u16,
    server_next: Option<u64>,
    /// How many times the server was polled.
    pub server_polls: u64,
    /// The address clients connect to.
    pub server_ip: Ipv4Address,
    dhcp: Option<DhcpServer>,
    ntp: Option<NtpServer>,
}

fn ms(at: Instant) -> u64 {
    at.total_millis().max(0) as u64
}

impl<'m, const C: usize, const K: usize, const B: usize> Sim<'m, C, K, B> {
    /// A server with these timeouts and a fresh store, at time 0.
    pub fn new(buffers: &'m mut ServerBuffers, timeouts: Timeouts) -> Self {
        Self::with(buffers, config(timeouts), store())
    }

    /// A server built from `config` over `store`, at time 0, polled once.
    pub fn with(
        buffers: &'m mut ServerBuffers,
        config: ServerConfig,
        store: SizedStore<K, B>,
    ) -> Self {
        let sim = Self::try_with(buffers, config, store).expect("server setup");
        assert!(sim.server.is_listening());
        sim
    }

    /// Like [`with`](Self::with), handing back the setup error, and not requiring the server
    /// to listen yet (DHCP).
    pub fn try_with(
        buffers: &'m mut ServerBuffers,
        config: ServerConfig,
        store: SizedStore<K, B>,
    ) -> Result<Self, net_shell::SetupError> {
        let mut sim = Self::build(buffers, config, store)?;
        sim.settle();
        Ok(sim)
    }

    /// Builds the server and the client side at time 0, polling neither.
    pub fn build(
        buffers: &'m mut ServerBuffers,
        config: ServerConfig,
        store: SizedStore<K, B>,
    ) -> Result<Self, net_shell::SetupError> {
        Self::build_at(buffers, config, store, 0)
    }

    /// Builds the server and the client side at time `start`, polling neither.
    pub fn build_at(
        buffers: &'m mut ServerBuffers,
        config: ServerConfig,
        store: SizedStore<K, B>,
        start: u64,
    ) -> Result<Self, net_shell::SetupError> {
        let (mut server_link, mut client_link) = link(0x11e7 ^ start);
        let memory = ServerMemory::allocate(C, config.buffers, buffers);
        let server = Server::new(config, store.0, memory, &mut server_link, start)?;

        let mut client_config = Config::new(HardwareAddress::Ethernet(EthernetAddress([
            0x02, 0, 0, 0, 0, 2,
        ])));
        client_config.random_seed = 0xc11e;
        let mut client_iface = Interface::new(
            client_config,
            &mut client_link,
            Instant::from_millis(start as i64),
        );
        client_iface.update_ip_addrs(|addrs| {
            addrs
                .push(IpCidr::new(IpAddress::Ipv4(CLIENT_IP), 24))
                .unwrap();
        });
        let sim = Self {
            now: start,
            server,
            server_link,
            client_link,
            client_iface,
            client_sockets: SocketSet::new(Vec::new()),
            clients: Vec::new(),
            next_port: 49152,
            server_next: None,
            server_polls: 0,
            server_ip: SERVER_IP,
            dhcp: None,
            ntp: None,
        };
        Ok(sim)
    }

    /// Polls the server once at `now`; returns its next deadline.
    pub fn poll_server(&mut self) -> Option<u64> {
        self.server_next = self.server.poll(self.now, &mut self.server_link);
        self.server_polls += 1;
        self.server_next
    }

    /// Polls the server at an arbitrary time (say, one in the past), not moving `now`.
    pub fn poll_server_at(&mut self, at: u64) -> Option<u64> {
        self.server_next = self.server.poll(at, &mut self.server_link);
        self.server_polls += 1;
        self.server_next
    }

    /// Starts a DHCP server on the client interface, leasing `lease` for `lease_secs`.
    pub fn start_dhcp_server(&mut self, lease: Ipv4Address, lease_secs: u32) {
        self.dhcp = Some(DhcpServer::start(
            &mut self.client_sockets,
            lease,
            lease_secs,
        ));
    }

    /// Starts an SNTP server on port 123 of the client interface ([`CLIENT_IP`]), whose clock
    /// reads `unix_at_zero` (Unix milliseconds) at simulated time 0.
    pub fn start_ntp_server(&mut self, unix_at_zero: u64) {
        let socket = self.client_sockets.add(NtpServer::socket());
        self.ntp = Some(NtpServer {
            socket,
            unix_at_zero,
            answer: NtpAnswer::Correct,
            requests: Vec::new(),
        });
    }

    /// The SNTP server, once started.
    pub fn ntp_server(&mut self) -> &mut NtpServer {
        self.ntp.as_mut().expect("no NTP server")
    }

    /// The DHCP server, once started.
    pub fn dhcp_server(&mut self) -> &mut DhcpServer {
        self.dhcp.as_mut().expect("no DHCP server")
    }

    /// Answers what reached the DHCP server; whether it sent anything.
    fn serve_dhcp(&mut self) -> bool {
        match self.dhcp.as_mut() {
            Some(dhcp) => dhcp.serve(&mut self.client_sockets),
            None => false,
        }
    }

    /// Polls the client interface once and moves received bytes into the inboxes.
    pub fn poll_client(&mut self) {
        self.client_iface.poll(
            Instant::from_millis(self.now as i64),
            &mut self.client_link,
            &mut self.client_sockets,
        );
        let ntp_sent = match self.ntp.as_mut() {
            Some(ntp) => ntp.serve(&mut self.client_sockets, self.now),
            None => false,
        };
        if self.serve_dhcp() | ntp_sent {
            self.client_iface.poll(
                Instant::from_millis(self.now as i64),
                &mut self.client_link,
                &mut self.client_sockets,
            );
        }
        for client in &mut self.clients {
            if !client.reading {
                continue;
            }
            let socket = self.client_sockets.get_mut::<tcp::Socket>(client.socket);
            while socket.can_recv() {
                let taken = socket
                    .recv(|data| (data.len(), data.to_vec()))
                    .unwrap_or_default();
                if taken.is_empty() {
                    break;
                }
                client.inbox.extend_from_slice(&taken);
            }
        }
    }

    /// Polls both sides at `now` until no frame is in flight and the server has nothing due.
    pub fn settle(&mut self) {
        for _ in 0..1_000_000 {
            self.poll_client();
            self.poll_server();
            // Bytes taken from the client inbox may have opened its window: poll once more.
            self.poll_client();
            let due = self.server_next.is_some_and(|at| at <= self.now);
            let in_flight = self.server_link.rx.borrow().has_frames()
                || self.server_link.tx.borrow().has_frames();
            if !in_flight && !due {
                // Frames held back for reordering go out once nothing else will pass them.
                let released = self.server_link.rx.borrow_mut().release_held()
                    | self.server_link.tx.borrow_mut().release_held();
                if !released {
                    return;
                }
            }
        }
        panic!("the network never settled at t={}", self.now);
    }

    /// The client interface's next deadline.
    pub fn client_next(&mut self) -> Option<u64> {
        self.client_iface
            .poll_at(Instant::from_millis(self.now as i64), &self.client_sockets)
            .map(ms)
    }

    /// Settles, then moves time to the next deadline of either side, at most to `limit` and at
    /// least one millisecond on.
    pub fn step(&mut self, limit: u64) {
        self.settle();
        if self.now >= limit {
            return;
        }
        let next = [self.server_next, self.client_next()]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(limit);
        self.now = next.clamp(self.now + 1, limit);
        self.settle();
    }

    /// Runs until time `at`, stepping from deadline to deadline.
    pub fn run_until(&mut self, at: u64) {
        while self.now < at {
            self.step(at);
        }
        self.settle();
    }

    /// Runs for `ms` milliseconds.
    pub fn advance(&mut self, ms: u64) {
        self.run_until(self.now + ms);
    }

    /// Jumps `ms` forward with no poll in between (a sleeping device, a clock step).
    pub fn jump(&mut self, ms: u64) {
        self.now += ms;
        self.settle();
    }

    /// Opens a connection (64 KiB buffers each way) and completes the handshake at `now`.
    pub fn connect(&mut self) -> Client {
        self.connect_with(65536, 65536)
    }

    /// Opens a connection with these client buffer sizes.
    pub fn connect_with(&mut self, rx: usize, tx: usize) -> Client {
        let mut socket = tcp::Socket::new(
            tcp::SocketBuffer::new(vec![0; rx]),
            tcp::SocketBuffer::new(vec![0; tx]),
        );
        socket.set_ack_delay(None);
        socket.set_nagle_enabled(false);
        let port = self.next_port;
        self.next_port += 1;
        socket
            .connect(
                self.client_iface.context(),
                (IpAddress::Ipv4(self.server_ip), PORT),
                port,
            )
            .expect("connect");
        let handle = self.client_sockets.add(socket);
        self.clients.push(ClientState {
            socket: handle,
            inbox: Vec::new(),
            reading: true,
        });
        self.settle();
        Client(self.clients.len() - 1)
    }

    /// Listens on `port` of the client interface ([`CLIENT_IP`]), as a peer the server
    /// connects to would (a slot's new owner): the connection the server opens there is
    /// returned as a [`Client`], whose bytes the test reads and answers.
    pub fn listen(&mut self, port: u16) -> Client {
        let mut socket = tcp::Socket::new(
            tcp::SocketBuffer::new(vec![0; 1 << 20]),
            tcp::SocketBuffer::new(vec![0; 65536]),
        );
        socket.set_ack_delay(None);
        socket.set_nagle_enabled(false);
        socket.listen(port).expect("listen");
        let handle = self.client_sockets.add(socket);
        self.clients.push(ClientState {
            socket: handle,
            inbox: Vec::new(),
            reading: true,
        });
        Client(self.clients.len() - 1)
    }

    /// A connection that has PINGed successfully.
    pub fn connect_ready(&mut self) -> Client {
        let client = self.connect();
        assert_eq!(self.request(client, &["PING"]), Reply::simple("PONG"));
        client
    }

    fn socket(&self, client: Client) -> &tcp::Socket<'static> {
        self.client_sockets
            .get::<tcp::Socket>(self.clients[client.0].socket)
    }

    fn socket_mut(&mut self, client: Client) -> &mut tcp::Socket<'static> {
        self.client_sockets
            .get_mut::<tcp::Socket>(self.clients[client.0].socket)
    }

    /// The client socket's TCP state.
    pub fn state(&self, client: Client) -> tcp::State {
        self.socket(client).state()
    }

    /// Queues bytes on the client socket without polling; panics if they do not fit.
    pub fn queue(&mut self, client: Client, bytes: &[u8]) {
        let sent = self.socket_mut(client).send_slice(bytes).expect("send");
        assert_eq!(sent, bytes.len(), "client send buffer too small");
    }

    /// Sends bytes and settles (advancing time only if the bytes need more than the send
    /// buffer, which never happens with the default buffers).
    pub fn send(&mut self, client: Client, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let sent = self.socket_mut(client).send_slice(rest).expect("send");
            rest = &rest[sent..];
            self.settle();
            if !rest.is_empty() && sent == 0 {
                self.step(self.now + 1000);
            }
        }
    }

    /// Sends a command as a RESP multibulk request.
    pub fn send_command(&mut self, client: Client, args: &[&str]) {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send(client, &encode(&args));
    }

    /// Takes every byte received so far.
    pub fn take(&mut self, client: Client) -> Vec<u8> {
        self.poll_client();
        std::mem::take(&mut self.clients[client.0].inbox)
    }

    /// Takes the replies received so far; panics on a partial reply.
    pub fn replies(&mut self, client: Client) -> Vec<Reply> {
        let bytes = self.take(client);
        let mut rest = &bytes[..];
        let mut replies = Vec::new();
        while !rest.is_empty() {
            let (reply, used) = Reply::decode(rest)
                .unwrap_or_else(|| panic!("partial reply {:?}", String::from_utf8_lossy(rest)));
            replies.push(reply);
            rest = &rest[used..];
        }
        replies
    }

    /// Takes one complete reply if there is one, leaving the rest.
    pub fn next_reply(&mut self, client: Client) -> Option<Reply> {
        self.poll_client();
        let inbox = &mut self.clients[client.0].inbox;
        let (reply, used) = Reply::decode(inbox)?;
        inbox.drain(..used);
        Some(reply)
    }

    /// Collects replies until there are `n`, stepping time if they need it, at most until
    /// `limit`.
    pub fn wait_replies(&mut self, client: Client, n: usize, limit: u64) -> Vec<Reply> {
        let mut replies = Vec::new();
        loop {
            // Whatever can be answered at `now` is, before time moves.
            self.settle();
            while let Some(reply) = self.next_reply(client) {
                replies.push(reply);
            }
            if replies.len() >= n || self.now >= limit {
                return replies;
            }
            self.step(limit);
        }
    }

    /// Sends one command and returns its reply, all at the current time.
    pub fn request(&mut self, client: Client, args: &[&str]) -> Reply {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.request_bytes(client, &args)
    }

    /// [`request`](Self::request) with binary arguments.
    pub fn request_bytes(&mut self, client: Client, args: &[&[u8]]) -> Reply {
        self.send(client, &encode(args));
        self.settle();
        self.next_reply(client).unwrap_or_else(|| {
            panic!(
                "no reply to {:?} at t={} (client {:?}, inbox {:?})",
                args.iter()
                    .map(|a| String::from_utf8_lossy(a))
                    .collect::<Vec<_>>(),
                self.now,
                self.state(client),
                String::from_utf8_lossy(&self.clients[client.0].inbox)
            )
        })
    }

    /// Stops or resumes taking bytes out of the client socket (a client that does not read).
    pub fn set_reading(&mut self, client: Client, reading: bool) {
        self.clients[client.0].reading = reading;
    }

    /// Bytes waiting in the client socket (not read by the test).
    pub fn unread(&self, client: Client) -> usize {
        self.socket(client).recv_queue()
    }

    /// Whether the server ended the connection: FIN received (EOF) or reset.
    pub fn closed_by_server(&mut self, client: Client) -> bool {
        self.poll_client();
        matches!(
            self.state(client),
            tcp::State::CloseWait
                | tcp::State::LastAck
                | tcp::State::Closed
                | tcp::State::TimeWait
                | tcp::State::Closing
        )
    }

    /// Whether the connection is established (neither side closed).
    pub fn is_open(&mut self, client: Client) -> bool {
        self.poll_client();
        self.state(client) == tcp::State::Established
    }

    /// Closes the client side (FIN) and settles.
    pub fn close(&mut self, client: Client) {
        self.socket_mut(client).close();
        self.settle();
    }

    /// Resets the client side (RST) and settles.
    pub fn abort(&mut self, client: Client) {
        self.socket_mut(client).abort();
        self.settle();
    }

    /// Runs until `condition` holds, at most until `limit`; returns the time it was first seen
    /// to hold. Time only stops where either side reported a deadline (or at `limit`), so an
    /// action at a deadline the server did not report shows up late.
    pub fn run_until_true(
        &mut self,
        limit: u64,
        mut condition: impl FnMut(&mut Self) -> bool,
    ) -> Option<u64> {
        loop {
            if condition(self) {
                return Some(self.now);
            }
            if self.now >= limit {
                return None;
            }
            self.step(limit);
        }
    }

    /// Runs until the server closes `client` (see [`run_until_true`](Self::run_until_true)).
    pub fn run_until_closed(&mut self, client: Client, limit: u64) -> Option<u64> {
        self.run_until_true(limit, |sim| sim.closed_by_server(client))
    }

    /// Runs until the store holds at most `len` keys (see
    /// [`run_until_true`](Self::run_until_true)).
    pub fn run_until_store_len(&mut self, len: usize, limit: u64) -> Option<u64> {
        self.run_until_true(limit, |sim| sim.server.store().len() <= len)
    }

    /// Server counters.
    pub fn stats(&self) -> Stats {
        *self.server.stats()
    }

    /// Sets the client sockets' ACK delay (None: ACK at once, the default here).
    pub fn set_ack_delay(&mut self, client: Client, delay: Option<Duration>) {
        self.socket_mut(client).set_ack_delay(delay);
    }

    /// Sets the faults of both directions of the link, drawn from `seed` (repeatable).
    pub fn set_faults(&mut self, faults: Faults, seed: u64) {
        self.server_link.set_send_faults(faults, seed);
        self.client_link
            .set_send_faults(faults, seed ^ 0x9e37_79b9_7f4a_7c15);
    }

    /// What the faults did: (server to clients, clients to server).
    pub fn fault_counts(&self) -> (FaultCounts, FaultCounts) {
        (
            self.server_link.send_counts(),
            self.client_link.send_counts(),
        )
    }

    /// Sends `bytes` from `client` so that they reach the server *during* its next poll: just
    /// after its device has reported itself empty once, as a request does that arrives while
    /// the server is busy. Does not settle.
    pub fn send_mid_poll(&mut self, client: Client, bytes: &[u8]) {
        self.queue(client, bytes);
        self.client_iface.poll(
            Instant::from_millis(self.now as i64),
            &mut self.client_link,
            &mut self.client_sockets,
        );
        self.server_link.rx.borrow_mut().delay_to_mid_poll();
    }

    /// Puts a TCP SYN to the server's port on the link, from `source` (an address nobody on
    /// the link answers ARP for, so the handshake is never completed), port `port`, as a
    /// spoofing flood would. Does not poll.
    pub fn inject_syn(&mut self, source: Ipv4Address, port: u16) {
        let tcp = TcpRepr {
            src_port: port,
            dst_port: PORT,
            control: TcpControl::Syn,
            seq_number: TcpSeqNumber(i32::from(port) * 7919),
            ack_number: None,
            window_len: 64240,
            window_scale: None,
            max_seg_size: Some(1460),
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload: &[],
        };
        let ip = Ipv4Repr {
            src_addr: source,
            dst_addr: self.server_ip,
            next_header: IpProtocol::Tcp,
            payload_len: tcp.buffer_len(),
            hop_limit: 64,
        };
        let [_, _, a, b] = source.octets();
        let ethernet = EthernetRepr {
            src_addr: EthernetAddress([0x02, 0x5f, 0, 0, a, b]),
            dst_addr: EthernetAddress(SERVER_MAC),
            ethertype: EthernetProtocol::Ipv4,
        };
        let mut frame = vec![0; ethernet.buffer_len() + ip.buffer_len() + tcp.buffer_len()];
        let caps = ChecksumCapabilities::default();
        let mut eth_frame = EthernetFrame::new_unchecked(&mut frame[..]);
        ethernet.emit(&mut eth_frame);
        let mut ip_packet = Ipv4Packet::new_unchecked(eth_frame.payload_mut());
        ip.emit(&mut ip_packet, &caps);
        let mut tcp_packet = TcpPacket::new_unchecked(ip_packet.payload_mut());
        tcp.emit(
            &mut tcp_packet,
            &IpAddress::Ipv4(source),
            &IpAddress::Ipv4(self.server_ip),
            &caps,
        );
        self.server_link.rx.borrow_mut().inject(frame);
    }
}

/// Default-sized buffers.
pub fn default_buffers() -> BufferSizes {
    config(Timeouts::DEFAULT).buffers
}
