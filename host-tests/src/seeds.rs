//! Seeds for the property tests: numbers from the environment (to replay a case or run more of
//! them) and a mixer that turns a base seed and a case number into independent seeds.

/// The number in environment variable `name`, decimal or `0x` hexadecimal, `_` allowed.
///
/// # Panics
///
/// When the variable is set to something that is not a number.
pub fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim().replace('_', "");
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={text:?} is not a number")))
}

/// SplitMix64's finaliser: a well-spread seed from any `u64` (say, base seed plus case number).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
