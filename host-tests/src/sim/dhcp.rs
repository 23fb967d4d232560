//! A DHCP server on the client interface that leases one address, and can add options to make
//! its replies longer or point the server at an NTP server.

use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::udp;
use smoltcp::wire::{DhcpMessageType, DhcpOption, DhcpPacket, DhcpRepr, IpAddress, Ipv4Address};

use super::CLIENT_IP;

/// A DHCP server on the client interface that leases one address.
pub struct DhcpServer {
    socket: SocketHandle,
    /// Answers DISCOVER and REQUEST while true.
    pub enabled: bool,
    /// The address leased.
    pub lease: Ipv4Address,
    /// Lease duration in seconds.
    pub lease_secs: u32,
    /// ACKs sent.
    pub acks: u32,
    /// The NTP server offered in option 42, if any.
    pub ntp_server: Option<Ipv4Address>,
    /// The parameter request list of the last request received.
    pub asked_for: Vec<u8>,
    /// Bytes of private-use options (224) added to each reply, before option 42, to make it
    /// longer.
    pub padding: usize,
}

impl DhcpServer {
    /// The reply to a client's message, if it gets one.
    fn answer(&mut self, request: &DhcpRepr<'_>) -> Option<Vec<u8>> {
        let message_type = match request.message_type {
            DhcpMessageType::Discover => DhcpMessageType::Offer,
            DhcpMessageType::Request => DhcpMessageType::Ack,
            _ => return None,
        };
        if message_type == DhcpMessageType::Ack {
            self.acks += 1;
        }
        self.asked_for = request.parameter_request_list.unwrap_or_default().to_vec();
        let ntp_octets = self.ntp_server.map(|address| address.octets());
        let padding = vec![0xaa; self.padding];
        let mut options: Vec<DhcpOption<'_>> = padding
            .chunks(255)
            .map(|data| DhcpOption { kind: 224, data })
            .collect();
        options.extend(ntp_octets.as_ref().map(|octets| DhcpOption {
            kind: 42,
            data: &octets[..],
        }));
        let reply = DhcpRepr {
            message_type,
            transaction_id: request.transaction_id,
            secs: 0,
            client_hardware_address: request.client_hardware_address,
            client_ip: Ipv4Address::UNSPECIFIED,
            your_ip: self.lease,
            server_ip: CLIENT_IP,
            router: None,
            subnet_mask: Some(Ipv4Address::new(255, 255, 255, 0)),
            relay_agent_ip: Ipv4Address::UNSPECIFIED,
            broadcast: false,
            requested_ip: None,
            client_identifier: None,
            server_identifier: Some(CLIENT_IP),
            parameter_request_list: None,
            dns_servers: None,
            max_size: None,
            lease_duration: Some(self.lease_secs),
            renew_duration: None,
            rebind_duration: None,
            additional_options: &options,
        };
        let mut bytes = vec![0; reply.buffer_len()];
        reply
            .emit(&mut DhcpPacket::new_unchecked(&mut bytes[..]))
            .expect("emit DHCP reply");
        Some(bytes)
    }
}

impl DhcpServer {
    /// A DHCP server on port 67 of the client interface, leasing `lease` for `lease_secs`.
    pub(super) fn start(
        sockets: &mut SocketSet<'static>,
        lease: Ipv4Address,
        lease_secs: u32,
    ) -> Self {
        let buffer = || udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; 8], vec![0; 8192]);
        let mut socket = udp::Socket::new(buffer(), buffer());
        socket.bind(67).expect("bind DHCP server");
        Self {
            socket: sockets.add(socket),
            enabled: true,
            lease,
            lease_secs,
            acks: 0,
            ntp_server: None,
            asked_for: Vec::new(),
            padding: 0,
        }
    }

    /// Answers what reached the server; whether it sent anything.
    pub(super) fn serve(&mut self, sockets: &mut SocketSet<'static>) -> bool {
        let mut replies = Vec::new();
        let socket = sockets.get_mut::<udp::Socket>(self.socket);
        while let Ok((payload, _)) = socket.recv() {
            if !self.enabled {
                continue;
            }
            let Ok(packet) = DhcpPacket::new_checked(payload) else {
                continue;
            };
            let Ok(request) = DhcpRepr::parse(&packet) else {
                continue;
            };
            replies.extend(self.answer(&request));
        }
        for reply in &replies {
            socket
                .send_slice(reply, (IpAddress::Ipv4(Ipv4Address::BROADCAST), 68))
                .expect("send DHCP reply");
        }
        !replies.is_empty()
    }
}
