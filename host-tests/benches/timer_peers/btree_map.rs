//! Peer: `std::collections::BTreeMap` keyed by (deadline, insertion number), the ordered map a
//! program on `std` would reach for first; the key is the handle.

use std::collections::BTreeMap;

use crate::contender::Contender;

/// `BTreeMap<(deadline, seq), value>`; the key is the handle, so a stale one simply misses.
pub struct BTreePeer {
    map: BTreeMap<(u64, u64), u32>,
    next_seq: u64,
}

impl BTreePeer {
    pub fn new() -> Self {
        Self {
            map: BTreeMap::new(),
            next_seq: 0,
        }
    }
}

impl Contender for BTreePeer {
    type Handle = (u64, u64);

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> (u64, u64) {
        let key = (deadline, self.next_seq);
        self.next_seq += 1;
        self.map.insert(key, value);
        key
    }

    #[inline]
    fn cancel(&mut self, key: (u64, u64)) {
        self.map.remove(&key).expect("handle is live");
    }

    #[inline]
    fn reschedule(&mut self, key: (u64, u64), deadline: u64) -> (u64, u64) {
        let value = self.map.remove(&key).expect("handle is live");
        self.insert(deadline, value)
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        while let Some(entry) = self.map.first_entry() {
            if entry.key().0 > now {
                break;
            }
            fired(entry.remove());
        }
    }
}
