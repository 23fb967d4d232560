//! Which of the 16,384 hash slots a key belongs to, as Redis Cluster computes it.

/// The number of hash slots.
pub const SLOTS: u16 = 16_384;

/// CRC-16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster hashes keys
/// with.
const XMODEM: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);

/// The hash slot of `key`: CRC-16/XMODEM of the key modulo 16,384, or of its hash tag, the part
/// between the first `{` and the next `}` when that part is not empty (Redis' `keyHashSlot`),
/// so that `{user1}.name` and `{user1}.mail` share a slot.
///
/// # Examples
///
/// ```
/// use net_shell::cluster::key_slot;
///
/// assert_eq!(key_slot(b"foo"), 12182);
/// assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
/// assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}")); // empty tag: the whole key
/// ```
pub fn key_slot(key: &[u8]) -> u16 {
    XMODEM.checksum(hash_tag(key)) % SLOTS
}

/// The part of `key` that is hashed: its hash tag if it has a non-empty one, else all of it.
fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    match key[open + 1..].iter().position(|&b| b == b'}') {
        Some(0) | None => key,
        Some(len) => &key[open + 1..open + 1 + len],
    }
}

#[cfg(test)]
mod tests {
    use super::{key_slot, SLOTS};

    /// Slots redis-server 7.0.15 answered to `CLUSTER KEYSLOT` for these keys.
    #[test]
    fn slots_match_redis() {
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), 3443);
        assert_eq!(key_slot(b"foo{}{bar}"), 8363);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn hash_tags_pick_the_first_non_empty_braces() {
        assert_eq!(key_slot(b"{a}x"), key_slot(b"a"));
        assert_eq!(key_slot(b"x{a}y{b}"), key_slot(b"a"));
        assert_eq!(key_slot(b"{}a"), key_slot(b"{}a"));
        assert_ne!(key_slot(b"{}a"), key_slot(b"a"));
        assert_eq!(key_slot(b"{a"), key_slot(b"{a"));
        assert_eq!(key_slot(b"a{{b}}"), key_slot(b"{b"));
    }

    #[test]
    fn every_slot_is_in_range() {
        for n in 0..2000u32 {
            assert!(key_slot(&n.to_le_bytes()) < SLOTS);
        }
    }
}
