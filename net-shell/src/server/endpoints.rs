//! Which slot a frame is for: an index from a client's address and port to its slot, so a poll
//! services only the slots that frames arrived for, however many connections sit idle.
//!
//! The index is a hash table chained through the slots themselves (each slot holds the head of
//! one bucket and its link in another), so it needs no storage beside them and never fills.
//! Its buckets are the largest power of two of open slots: as slots open (a host's, as clients
//! arrive), the count doubles now and then and the index is built again, a walk of the open
//! slots each time, so over all of them a few walks of the table in all.

use smoltcp::wire::{IpAddress, IpEndpoint, Ipv4Address};

use super::Server;

/// "No slot" in a bucket chain.
pub(crate) const NO_SLOT: u16 = u16::MAX;

/// A client's IPv4 address and port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Endpoint {
    pub(crate) addr: Ipv4Address,
    pub(crate) port: u16,
}

impl Endpoint {
    /// The IPv4 endpoint of a smoltcp endpoint (this build speaks IPv4 only).
    pub(crate) fn of(endpoint: IpEndpoint) -> Option<Self> {
        #[allow(irrefutable_let_patterns, unreachable_patterns)]
        match endpoint.addr {
            IpAddress::Ipv4(addr) => Some(Self {
                addr,
                port: endpoint.port,
            }),
            _ => None,
        }
    }

    /// The bucket of this endpoint among `buckets`, a power of two (FNV-1a over address and
    /// port).
    fn bucket(self, buckets: usize) -> usize {
        let mut hash: u32 = 0x811c_9dc5;
        for byte in self
            .addr
            .octets()
            .into_iter()
            .chain(self.port.to_be_bytes())
        {
            hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
        }
        hash as usize & (buckets.max(1) - 1)
    }
}

/// Buckets of the index over `open` slots: the largest power of two not above it (at least 1).
pub(super) fn buckets(open: usize) -> usize {
    1 << (usize::BITS - 1 - open.max(1).leading_zeros())
}

impl Server<'_> {
    /// The slot whose client is `endpoint`, if any.
    pub(super) fn slot_of(&self, endpoint: Endpoint) -> Option<usize> {
        let mut at = self
            .conns
            .get(endpoint.bucket(buckets(self.opened)))?
            .bucket_head;
        while at != NO_SLOT {
            let conn = self.conns.get(usize::from(at))?;
            if conn.remote == Some(endpoint) {
                return Some(usize::from(at));
            }
            at = conn.bucket_next;
        }
        None
    }

    /// Records that slot `index` talks to the socket's remote endpoint (replacing what it had).
    pub(super) fn index_endpoint(&mut self, index: usize) {
        self.unindex_endpoint(index);
        let socket = self.sockets.tcp(index, self.conns[index].socket);
        let Some(endpoint) = socket.remote_endpoint().and_then(Endpoint::of) else {
            return;
        };
        self.link_endpoint(index, endpoint);
    }

    /// Puts slot `index` at the head of `endpoint`'s bucket.
    fn link_endpoint(&mut self, index: usize, endpoint: Endpoint) {
        let bucket = endpoint.bucket(buckets(self.opened));
        let head = self.conns[bucket].bucket_head;
        let conn = &mut self.conns[index];
        conn.remote = Some(endpoint);
        conn.bucket_next = head;
        self.conns[bucket].bucket_head = index as u16;
    }

    /// Forgets slot `index`'s endpoint, if it has one.
    pub(super) fn unindex_endpoint(&mut self, index: usize) {
        let Some(endpoint) = self.conns[index].remote.take() else {
            return;
        };
        let next = core::mem::replace(&mut self.conns[index].bucket_next, NO_SLOT);
        let bucket = endpoint.bucket(buckets(self.opened));
        if usize::from(self.conns[bucket].bucket_head) == index {
            self.conns[bucket].bucket_head = next;
            return;
        }
        let mut at = self.conns[bucket].bucket_head;
        while at != NO_SLOT {
            let conn = &mut self.conns[usize::from(at)];
            if usize::from(conn.bucket_next) == index {
                conn.bucket_next = next;
                return;
            }
            at = conn.bucket_next;
        }
    }

    /// Builds the index again over the open slots (after the bucket count changed).
    #[cfg(feature = "alloc")]
    pub(super) fn reindex_endpoints(&mut self) {
        for conn in self.conns.iter_mut().take(self.opened) {
            conn.bucket_head = NO_SLOT;
            conn.bucket_next = NO_SLOT;
        }
        for index in 0..self.opened {
            if let Some(endpoint) = self.conns[index].remote {
                self.link_endpoint(index, endpoint);
            }
        }
    }
}
