//! A fixed-size latency histogram (log-linear buckets, about 3 % resolution).
//!
//! Values are microseconds. Below 64 every value has its own bucket; above, each
//! power of two is split into 32 buckets, so a reported percentile is at most
//! 1/32 above the true sample. Memory is constant whatever the sample count.

/// Values below this have an exact bucket each.
const LINEAR: u64 = 64;
/// Sub-buckets per power of two above [`LINEAR`].
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Largest power of two tracked (2^40 µs ≈ 12.7 days); larger values land in the last bucket.
const MAX_EXP: u32 = 40;
const BUCKETS: usize = LINEAR as usize + ((MAX_EXP - 6 + 1) as usize) * SUB as usize;

/// A latency histogram in microseconds.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

fn index(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // floor(log2 v), >= 6
    if e > MAX_EXP {
        return BUCKETS - 1;
    }
    let shift = e - SUB_BITS;
    let m = (v >> shift) - SUB; // 0..SUB
    LINEAR as usize + (e - 6) as usize * SUB as usize + m as usize
}

/// Highest value that falls into bucket `i`.
fn bucket_high(i: usize) -> u64 {
    if i < LINEAR as usize {
        return i as u64;
    }
    let k = i - LINEAR as usize;
    let e = 6 + (k / SUB as usize) as u32;
    let m = SUB + (k % SUB as usize) as u64;
    let shift = e - SUB_BITS;
    ((m + 1) << shift) - 1
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Largest sample (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Smallest sample (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// Mean of the samples (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The `p`-th percentile (0-100): the smallest bucket bound at or above which
    /// lies `p` % of the samples, never above the largest sample. 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let p = p.clamp(0.0, 100.0);
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_high(i).clamp(self.min, self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_monotonic() {
        let mut last = None;
        for v in (0..100_000u64).chain([1 << 30, (1 << 40) - 1]) {
            let i = index(v);
            assert!(v <= bucket_high(i), "{v} above its bucket {i}");
            if i > 0 {
                assert!(v > bucket_high(i - 1), "{v} belongs to an earlier bucket");
            }
            if let Some(l) = last {
                assert!(i >= l);
            }
            last = Some(i);
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_of_a_uniform_sample() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        assert_eq!(h.count(), 10_000);
        assert_eq!(h.min(), 1);
        assert_eq!(h.max(), 10_000);
        let close = |got: u64, want: f64| {
            let err = (got as f64 - want) / want;
            assert!((0.0..=1.0 / 32.0).contains(&err), "got {got}, want {want}");
        };
        close(h.percentile(50.0), 5000.0);
        close(h.percentile(99.0), 9900.0);
        close(h.percentile(99.9), 9990.0);
        assert_eq!(h.percentile(100.0), 10_000);
        assert!((h.mean() - 5000.5).abs() < 1e-9);
    }

    #[test]
    fn small_values_are_exact_and_merge_adds() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        for v in [3, 3, 3, 7] {
            a.record(v);
        }
        b.record(50);
        a.merge(&b);
        assert_eq!(a.count(), 5);
        assert_eq!(a.percentile(50.0), 3);
        assert_eq!(a.percentile(80.0), 7);
        assert_eq!(a.percentile(99.0), 50);
        assert_eq!(Histogram::new().percentile(99.0), 0);
    }
}
