//! LEB128 lengths, as the list, packed and indexed-hash encodings write them before each element
//! (a list also after it): 7 bits a byte, low bits first, the top bit set on every byte but the
//! last. At most 5 bytes are read, enough for any length a `u32` offset can reach.

/// The bytes `len` takes.
pub(crate) const fn len_of(len: usize) -> usize {
    let mut bytes = 1;
    let mut rest = len >> 7;
    while rest > 0 {
        bytes += 1;
        rest >>= 7;
    }
    bytes
}

/// Writes `len` at the start of `room`, which has at least [`len_of`]`(len)` bytes; returns
/// the bytes written.
pub(crate) fn write(room: &mut [u8], mut len: usize) -> usize {
    let mut at = 0;
    loop {
        let byte = (len & 0x7f) as u8;
        len >>= 7;
        room[at] = if len == 0 { byte } else { byte | 0x80 };
        at += 1;
        if len == 0 {
            return at;
        }
    }
}

/// The length at the start of `bytes`, with the bytes it took; `None` when `bytes` ends, or 5
/// bytes pass, before its last byte.
pub(crate) fn read(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut len = 0usize;
    for (i, &byte) in bytes.iter().enumerate().take(5) {
        len |= usize::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((len, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_round_trip_across_each_byte_boundary() {
        for len in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            2_097_151,
            2_097_152,
            u32::MAX as usize,
        ] {
            let mut room = [0u8; 5];
            let used = write(&mut room, len);
            assert_eq!(used, len_of(len), "{len}");
            assert_eq!(read(&room[..used]), Some((len, used)), "{len}");
            assert_eq!(read(&room[..used - 1]), None, "{len} cut short");
        }
        assert_eq!(read(&[0x80; 6]), None, "more than 5 bytes");
    }
}
