//! Seeded generators for test and benchmark inputs (SplitMix64: tiny, fast, reproducible on
//! every platform). Every generator in simtlab takes a seed and records it.

/// A SplitMix64 stream: the same seed gives the same values on every platform. Not for
/// cryptography.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A stream started from `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next 32 uniformly distributed bits (the high half of [`Rng::next_u64`]).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in [0, 1), with 53 bits of resolution.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, 1), with 24 bits of resolution.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Uniform in [lo, hi] (inclusive); needs `lo <= hi`.
    pub fn range_u32(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next_u64() % ((hi - lo) as u64 + 1)) as u32
    }

    /// `n` values from [`Rng::next_u32`].
    pub fn vec_u32(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.next_u32()).collect()
    }

    /// Shuffles `v` in place (Fisher-Yates), each permutation about equally likely.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, (self.next_u64() % (i as u64 + 1)) as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_values_spread() {
        let a: Vec<u32> = Rng::new(7).vec_u32(1000);
        assert_eq!(a, Rng::new(7).vec_u32(1000));
        assert_ne!(a, Rng::new(8).vec_u32(1000));
        let mean = a.iter().map(|&x| x as f64).sum::<f64>() / 1000.0 / u32::MAX as f64;
        assert!((mean - 0.5).abs() < 0.05, "{mean}");
        let mut r = Rng::new(1);
        assert!((0..1000).map(|_| r.range_u32(3, 5)).all(|x| (3..=5).contains(&x)));
    }
}
