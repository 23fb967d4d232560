//! What the next frame is, before smoltcp takes it in: a device wrapper that holds the next
//! frame and reads the sender of a TCP segment to the served port, so the server knows which
//! socket set takes it, which slot to service, and whether a new handshake may take a
//! listening socket.

use smoltcp::phy::{self, Device, DeviceCapabilities};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};

use super::endpoints::Endpoint;

/// A TCP segment to the served port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Arrival {
    /// Who sent it.
    pub(super) from: Endpoint,
    /// A SYN without ACK: a new handshake, which may take a listening socket.
    pub(super) opens: bool,
}

/// Reads one frame's [`Arrival`], if it is a well-formed TCP segment to `port`.
fn arrival_of(frame: &[u8], port: u16) -> Option<Arrival> {
    let ethernet = EthernetFrame::new_checked(frame).ok()?;
    if ethernet.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ip = Ipv4Packet::new_checked(ethernet.payload()).ok()?;
    if ip.next_header() != IpProtocol::Tcp || ip.frag_offset() != 0 {
        return None;
    }
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    if tcp.dst_port() != port {
        return None;
    }
    Some(Arrival {
        from: Endpoint {
            addr: ip.src_addr(),
            port: tcp.src_port(),
        },
        opens: tcp.syn() && !tcp.ack(),
    })
}

/// The largest frame [`Watched::peek`] can hold: an Ethernet frame of a 1500-byte MTU, with
/// room for a VLAN tag and more. A larger frame cannot be for this server's devices.
const HELD_MAX: usize = 1536;

/// A frame taken from the device early, to look at before smoltcp does.
pub(super) struct HeldFrame {
    bytes: [u8; HELD_MAX],
    len: usize,
}

/// The device, able to show the next frame before smoltcp takes it in.
pub(super) struct Watched<'d, D: Device + ?Sized> {
    device: &'d mut D,
    port: u16,
    held: Option<HeldFrame>,
}

impl<'d, D: Device + ?Sized> Watched<'d, D> {
    /// Watches `device` for segments to `port`.
    pub(super) fn new(device: &'d mut D, port: u16) -> Self {
        Self {
            device,
            port,
            held: None,
        }
    }

    /// What the next frame is, without handing it to smoltcp yet: `None` when the device has
    /// no frame, `Some(None)` for a frame that is not a TCP segment to the port. The frame is
    /// copied out of the device and handed to smoltcp by the next `receive`. (A frame longer
    /// than any Ethernet frame is dropped.)
    pub(super) fn peek(&mut self, timestamp: Instant) -> Option<Option<Arrival>> {
        if self.held.is_none() {
            let (rx, _tx) = self.device.receive(timestamp)?;
            let mut held = HeldFrame {
                bytes: [0; HELD_MAX],
                len: 0,
            };
            phy::RxToken::consume(rx, |frame| {
                if let Some(room) = held.bytes.get_mut(..frame.len()) {
                    room.copy_from_slice(frame);
                    held.len = frame.len();
                }
            });
            self.held = Some(held);
        }
        let held = self.held.as_ref()?;
        Some(arrival_of(&held.bytes[..held.len], self.port))
    }
}

/// A received frame: straight from the device, or held by [`Watched::peek`].
pub(super) enum RxToken<'n, T> {
    Direct { token: T },
    Held { held: &'n mut Option<HeldFrame> },
}

impl<T: phy::RxToken> phy::RxToken for RxToken<'_, T> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        match self {
            Self::Direct { token } => token.consume(f),
            Self::Held { held } => {
                let frame = held.take();
                f(frame.as_ref().map_or(&[][..], |h| &h.bytes[..h.len]))
            }
        }
    }

    fn meta(&self) -> phy::PacketMeta {
        match self {
            Self::Direct { token, .. } => token.meta(),
            Self::Held { .. } => phy::PacketMeta::default(),
        }
    }
}

impl<D: Device + ?Sized> Device for Watched<'_, D> {
    type RxToken<'a>
        = RxToken<'a, D::RxToken<'a>>
    where
        Self: 'a;
    type TxToken<'a>
        = D::TxToken<'a>
    where
        Self: 'a;

    fn receive(&mut self, timestamp: Instant) -> Option<(Self::RxToken<'_>, Self::TxToken<'_>)> {
        if self.held.is_some() {
            // No room to answer now: the frame stays held for the next look.
            let tx = self.device.transmit(timestamp)?;
            return Some((
                RxToken::Held {
                    held: &mut self.held,
                },
                tx,
            ));
        }
        let (rx, tx) = self.device.receive(timestamp)?;
        Some((RxToken::Direct { token: rx }, tx))
    }

    fn transmit(&mut self, timestamp: Instant) -> Option<Self::TxToken<'_>> {
        self.device.transmit(timestamp)
    }

    fn capabilities(&self) -> DeviceCapabilities {
        self.device.capabilities()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smoltcp::phy::ChecksumCapabilities;
    use smoltcp::wire::{
        EthernetAddress, EthernetRepr, IpAddress, Ipv4Address, Ipv4Repr, TcpControl, TcpRepr,
        TcpSeqNumber,
    };

    fn segment(control: TcpControl, ack: bool, dst_port: u16) -> std::vec::Vec<u8> {
        let tcp = TcpRepr {
            src_port: 40_000,
            dst_port,
            control,
            seq_number: TcpSeqNumber(1),
            ack_number: ack.then_some(TcpSeqNumber(1)),
            window_len: 1024,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload: &[],
        };
        let src = Ipv4Address::new(10, 0, 0, 2);
        let dst = Ipv4Address::new(10, 0, 0, 1);
        let ip = Ipv4Repr {
            src_addr: src,
            dst_addr: dst,
            next_header: IpProtocol::Tcp,
            payload_len: tcp.buffer_len(),
            hop_limit: 64,
        };
        let eth = EthernetRepr {
            src_addr: EthernetAddress([2, 0, 0, 0, 0, 2]),
            dst_addr: EthernetAddress([2, 0, 0, 0, 0, 1]),
            ethertype: EthernetProtocol::Ipv4,
        };
        let mut frame = std::vec![0; eth.buffer_len() + ip.buffer_len() + tcp.buffer_len()];
        let caps = ChecksumCapabilities::default();
        let mut e = EthernetFrame::new_unchecked(&mut frame[..]);
        eth.emit(&mut e);
        let mut i = Ipv4Packet::new_unchecked(e.payload_mut());
        ip.emit(&mut i, &caps);
        let mut t = TcpPacket::new_unchecked(i.payload_mut());
        tcp.emit(&mut t, &IpAddress::Ipv4(src), &IpAddress::Ipv4(dst), &caps);
        frame
    }

    #[test]
    fn syn_to_port_opens() {
        let arrival = arrival_of(&segment(TcpControl::Syn, false, 6379), 6379).unwrap();
        assert!(arrival.opens);
        assert_eq!(arrival.from.port, 40_000);
        assert_eq!(arrival.from.addr, Ipv4Address::new(10, 0, 0, 2));
    }

    #[test]
    fn ack_to_port_does_not_open() {
        let arrival = arrival_of(&segment(TcpControl::None, true, 6379), 6379).unwrap();
        assert!(!arrival.opens);
    }

    #[test]
    fn other_port_and_garbage_are_not_arrivals() {
        assert_eq!(arrival_of(&segment(TcpControl::Syn, false, 80), 6379), None);
        assert_eq!(arrival_of(&[0u8; 10], 6379), None);
        assert_eq!(arrival_of(&[], 6379), None);
    }
}
