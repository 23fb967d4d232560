//! Getting an address by DHCP, with a static fallback while no lease is held.

use smoltcp::iface::{Interface, SocketHandle};
use smoltcp::socket::dhcpv4;
use smoltcp::wire::{IpCidr, Ipv4Address, Ipv4Cidr};
use timer_core::Tick;

use super::Server;

#[derive(Clone, Copy)]
pub(super) struct DhcpState {
    pub(super) handle: SocketHandle,
    pub(super) fallback: Option<(Ipv4Cidr, Option<Ipv4Address>)>,
    pub(super) fallback_at: Tick,
    pub(super) leased: bool,
    /// The fallback address is in use (kept for the next lost lease, not used up).
    pub(super) on_fallback: bool,
}

impl Server<'_> {
    pub(super) fn poll_dhcp(&mut self, now: Tick) {
        let Some(mut dhcp) = self.dhcp else {
            return;
        };
        // The lease's NTP server (`Some(None)`: none, or the lease was lost), for SNTP.
        #[cfg(feature = "sntp")]
        let mut ntp_server = None;
        match self
            .sockets
            .control
            .get_mut::<dhcpv4::Socket>(dhcp.handle)
            .poll()
        {
            Some(dhcpv4::Event::Configured(lease)) => {
                info!("DHCP lease: {}", lease.address);
                apply_address(&mut self.iface, Some((lease.address, lease.router)));
                #[cfg(feature = "sntp")]
                {
                    ntp_server = Some(super::wall_clock::ntp_server_of(&lease));
                }
                dhcp.leased = true;
                dhcp.on_fallback = false;
            }
            // smoltcp also reports Deconfigured once at start; only a lost lease (not the wait
            // for the first one) falls back at once.
            Some(dhcpv4::Event::Deconfigured) if dhcp.leased => {
                warn!("DHCP lease lost");
                apply_address(&mut self.iface, None);
                #[cfg(feature = "sntp")]
                {
                    ntp_server = Some(None);
                }
                dhcp.leased = false;
                dhcp.fallback_at = now;
            }
            Some(dhcpv4::Event::Deconfigured) | None => {}
        }
        if !dhcp.leased && !dhcp.on_fallback && now >= dhcp.fallback_at {
            if let Some(fallback) = dhcp.fallback {
                warn!("no DHCP lease: using the fallback address {}", fallback.0);
                apply_address(&mut self.iface, Some(fallback));
                dhcp.on_fallback = true;
            }
        }
        self.dhcp = Some(dhcp);
        #[cfg(feature = "sntp")]
        if let Some(server) = ntp_server {
            self.ntp_server_from_dhcp(server, now);
        }
    }
}

pub(super) fn apply_address(
    iface: &mut Interface,
    address: Option<(Ipv4Cidr, Option<Ipv4Address>)>,
) {
    iface.update_ip_addrs(|addrs| {
        addrs.clear();
        if let Some((cidr, _)) = address {
            let _ = addrs.push(IpCidr::Ipv4(cidr));
        }
    });
    iface.routes_mut().remove_default_ipv4_route();
    if let Some((_, Some(gateway))) = address {
        let _ = iface.routes_mut().add_default_ipv4_route(gateway);
    }
}
