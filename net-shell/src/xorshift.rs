//! Marsaglia's xorshift64: cheap seeded draws where any spread will do, as `HRANDFIELD`'s picks
//! (Redis uses its own `random()` there, no stronger) and SNTP's port and nonces (seeded per
//! board, against off-path forgery only), and for seeded tests.

/// A xorshift64 generator.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Xorshift(u64);

impl Xorshift {
    /// Seeded with `seed` (0, which would stay 0, stands for a fixed odd seed).
    pub(crate) const fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A draw in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_below_their_bound_and_vary() {
        let mut rng = Xorshift::new(0);
        let draws: std::vec::Vec<u64> = (0..1_000).map(|_| rng.below(10)).collect();
        assert!(draws.iter().all(|&d| d < 10));
        assert!((0..10).all(|d| draws.contains(&d)), "every value comes up");
        assert_eq!(rng.below(0), 0);
    }
}
