//! Split-conformal calibration: the nonconformity scores of the correct calibration rows, and the
//! k-th smallest of a set of scores found by selection.
//!
//! A conformal gate's threshold is one order statistic of its calibration scores, so a fit needs
//! no sort. [`nonconformity_rows`] maps every row to its score `1 - p` (NaN for a row that does
//! not calibrate) in one vectorisable pass, checking the probabilities; [`kth_smallest`] then
//! finds the threshold in O(n): an evenly spaced sample of the scores brackets rank `k` between
//! two pivots, one pass counts the scores below the lower pivot and gathers those between them,
//! and the gathered few are selected among (a bracket that misses rank `k`, as ties or an
//! unlucky sample can make it, falls back to selecting among every score). Sorting the scores,
//! which p-values need, is left to whoever needs it.

use std::fmt;
use std::mem::MaybeUninit;

use crate::isotonic::{from_order_key, order_key};
pub use crate::{one_thread, Join};

/// Why the calibration rows cannot be read.
#[derive(Debug, Clone, PartialEq)]
pub enum ConformalError {
    /// `probs` and `correct` differ in length.
    LengthMismatch { probs: usize, correct: usize },
    /// A finite probability outside `[0, 1]` (the first such row, and its value).
    OutOfRange { row: usize, value: f64 },
}

impl fmt::Display for ConformalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConformalError::LengthMismatch { probs, correct } => {
                write!(f, "{probs} probabilities but {correct} correct flags")
            }
            ConformalError::OutOfRange { row, value } => {
                write!(f, "probs[{row}] = {value} is not a probability in [0, 1]")
            }
        }
    }
}

impl std::error::Error for ConformalError {}

/// The nonconformity `1 - p` of every row, NaN for a row that does not calibrate (its outcome is
/// wrong or its probability not finite), and how many rows do. A finite probability outside
/// `[0, 1]` is an error, whatever its row's outcome.
pub fn nonconformity_rows(
    probs: &[f64],
    correct: &[bool],
) -> Result<(Vec<f64>, usize), ConformalError> {
    nonconformity_rows_by(probs, correct, one_thread)
}

/// [`nonconformity_rows`], the two halves of the rows read through `join`.
pub fn nonconformity_rows_by(
    probs: &[f64],
    correct: &[bool],
    join: impl Join,
) -> Result<(Vec<f64>, usize), ConformalError> {
    if probs.len() != correct.len() {
        return Err(ConformalError::LengthMismatch {
            probs: probs.len(),
            correct: correct.len(),
        });
    }
    let n = probs.len();
    let mut scores = Vec::with_capacity(n);
    let half = n / 2;
    let (first, second) = scores.spare_capacity_mut()[..n].split_at_mut(half);
    let (mut a, mut b) = ((0, false), (0, false));
    join(
        &mut || a = with_avx2(|| score_rows(&probs[..half], &correct[..half], first)),
        &mut || b = with_avx2(|| score_rows(&probs[half..], &correct[half..], second)),
    );
    // SAFETY: the two halves together wrote all `n` slots (score_rows writes one per row).
    unsafe { scores.set_len(n) };
    let (kept, bad) = (a.0 + b.0, a.1 | b.1);
    if bad {
        let row = probs.iter().position(|&p| out_of_range(p)).unwrap_or(0);
        return Err(ConformalError::OutOfRange {
            row,
            value: probs[row],
        });
    }
    Ok((scores, kept))
}

fn out_of_range(p: f64) -> bool {
    p.is_finite() && !(0.0..=1.0).contains(&p)
}

/// Write every slot of `scores` (as long as `probs`) for [`nonconformity_rows`]: rows kept, and
/// whether a probability is out of range.
#[inline(always)]
fn score_rows(probs: &[f64], correct: &[bool], scores: &mut [MaybeUninit<f64>]) -> (usize, bool) {
    assert!(scores.len() == probs.len() && correct.len() == probs.len());
    let (mut kept, mut bad) = (0usize, false);
    for ((s, &p), &c) in scores.iter_mut().zip(probs).zip(correct) {
        let keep = c & p.is_finite();
        s.write(if keep { 1.0 - p } else { f64::NAN });
        kept += keep as usize;
        bad |= out_of_range(p);
    }
    (kept, bad)
}

/// How many `values` lie below `lo`, and the order keys of those in `[lo, hi]` (NaN in
/// neither). The values are read eight at a time: a bit mask of those inside, then one
/// mostly-predictable branch per eight (the bracket holds a few percent of the values).
fn split_at_bracket(values: &[f64], lo: f64, hi: f64) -> (usize, Vec<u64>) {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::simd::avx2() {
            // SAFETY: the processor supports AVX2 (simd::avx2 checked it just above).
            return unsafe { split_at_bracket_avx2(values, lo, hi) };
        }
    }
    split_at_bracket_portable(values, lo, hi)
}

fn inside(x: f64, lo: f64, hi: f64) -> bool {
    lo <= x && x <= hi
}

/// Push the keys of the values of `chunk` whose bit is set in `mask`.
#[inline(always)]
fn push_masked(keys: &mut Vec<u64>, chunk: &[f64], mut mask: u32) {
    while mask != 0 {
        keys.push(order_key(chunk[mask.trailing_zeros() as usize]));
        mask &= mask - 1;
    }
}

/// [`split_at_bracket`] in plain Rust (the reference the vector version is tested against).
fn split_at_bracket_portable(values: &[f64], lo: f64, hi: f64) -> (usize, Vec<u64>) {
    let mut below = 0usize;
    let mut keys = Vec::new();
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        let mut mask = 0u32;
        for (i, &x) in chunk.iter().enumerate() {
            below += (x < lo) as usize;
            mask |= (inside(x, lo, hi) as u32) << i;
        }
        push_masked(&mut keys, chunk, mask);
    }
    let rest = chunks.remainder();
    below += rest.iter().filter(|&&x| x < lo).count();
    keys.extend(
        rest.iter()
            .filter(|&&x| inside(x, lo, hi))
            .map(|&x| order_key(x)),
    );
    (below, keys)
}

/// [`split_at_bracket`] with AVX2: two four-lane comparisons per four values, the masks packed
/// by `movemask`, the count kept in four 64-bit lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn split_at_bracket_avx2(values: &[f64], lo: f64, hi: f64) -> (usize, Vec<u64>) {
    use std::arch::x86_64::*;
    let (lo_v, hi_v) = (_mm256_set1_pd(lo), _mm256_set1_pd(hi));
    let mut below_v = _mm256_setzero_si256();
    let mut keys = Vec::new();
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        let mut mask = 0u32;
        for half in 0..2 {
            // SAFETY: `chunk` holds eight values, so both four-value loads are in bounds.
            let x = _mm256_loadu_pd(chunk.as_ptr().add(4 * half));
            // An all-ones lane is -1: subtracting it counts the lane.
            below_v = _mm256_sub_epi64(
                below_v,
                _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_LT_OQ>(x, lo_v)),
            );
            let within = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(x, lo_v),
                _mm256_cmp_pd::<_CMP_LE_OQ>(x, hi_v),
            );
            mask |= (_mm256_movemask_pd(within) as u32) << (4 * half);
        }
        push_masked(&mut keys, chunk, mask);
    }
    let mut lanes = [0u64; 4];
    _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, below_v);
    let rest = chunks.remainder();
    let below = lanes.iter().sum::<u64>() as usize + rest.iter().filter(|&&x| x < lo).count();
    keys.extend(
        rest.iter()
            .filter(|&&x| inside(x, lo, hi))
            .map(|&x| order_key(x)),
    );
    (below, keys)
}

/// Run `work` compiled for AVX2 when the processor has it (same results, wider vectors).
#[inline(always)]
fn with_avx2<R>(work: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        fn wide<R>(work: impl FnOnce() -> R) -> R {
            work()
        }
        if crate::simd::avx2() {
            // SAFETY: the processor supports AVX2 (simd::avx2 checked it just above).
            return unsafe { wide(work) };
        }
    }
    work()
}

/// Below this many values the selection gathers and selects among all of them directly.
const DIRECT_BELOW: usize = 1 << 14;
/// The split-conformal fit at miscoverage `alpha` (in `[0, 1]`): `(q, scores, n)`, the
/// [`nonconformity_rows_by`] scores and their count, and `q` the score of rank
/// `ceil((n + 1)(1 - alpha))` among them (1-based; `inf` above `n` or without scores, `-inf`
/// below 1), found by selection. The rank is computed with the same two roundings as Python's
/// `math.ceil((n + 1) * (1 - alpha))`.
pub fn fit_by(
    probs: &[f64],
    correct: &[bool],
    alpha: f64,
    join: impl Join,
) -> Result<(f64, Vec<f64>, usize), ConformalError> {
    let (scores, n) = nonconformity_rows_by(probs, correct, &join)?;
    let q = quantile(&scores, n, alpha, join);
    Ok((q, scores, n))
}

/// The score of rank `ceil((n + 1)(1 - alpha))` (1-based, the rank of [`fit_by`]) among the `n`
/// values of `scores` other than NaN; `inf` above `n` or without scores, `-inf` below 1.
pub fn quantile(scores: &[f64], n: usize, alpha: f64, join: impl Join) -> f64 {
    let rank = ((n + 1) as f64 * (1.0 - alpha)).ceil();
    if n == 0 || rank > n as f64 {
        f64::INFINITY
    } else if rank < 1.0 {
        f64::NEG_INFINITY
    } else {
        kth_smallest_counted(scores, n, rank as usize - 1, join)
    }
}

/// Scores in the pivot sample (at most; evenly spaced, NaN ones skipped).
const SAMPLE: usize = 1 << 14;
/// Half-width of the pivot bracket in sample positions, as a multiple of the sample's square
/// root: the rank is missed with a probability of about 10^-3.
const BRACKET_SIGMAS: f64 = 3.5;

/// The `k`-th smallest (0-based) of the values of `values` that are not NaN (NaN ones are
/// skipped). `-0.0` and `0.0` count as equal, and a zero is returned as `0.0`.
///
/// # Panics
/// When `k` is not below the number of values other than NaN.
pub fn kth_smallest(values: &[f64], k: usize) -> f64 {
    let counted = values.iter().filter(|x| !x.is_nan()).count();
    kth_smallest_counted(values, counted, k, one_thread)
}

/// [`kth_smallest`] when the number of values other than NaN, `counted`, is known; the bracket
/// pass runs on the two halves of `values` through `join`.
///
/// # Panics
/// When `k >= counted`, or (by the direct path) when `counted` is wrong.
pub fn kth_smallest_counted(values: &[f64], counted: usize, k: usize, join: impl Join) -> f64 {
    assert!(k < counted, "rank {k} out of {counted} values");
    if values.len() >= DIRECT_BELOW {
        if let Some(kth) = bracketed(values, counted, k, join) {
            return kth;
        }
    }
    let mut keys: Vec<u64> = values
        .iter()
        .filter(|x| !x.is_nan())
        .map(|&x| order_key(x))
        .collect();
    assert_eq!(keys.len(), counted, "values other than NaN miscounted");
    let (_, kth, _) = keys.select_nth_unstable(k);
    from_order_key(*kth)
}

/// [`kth_smallest_counted`] through a sampled bracket, or `None` when the bracket misses rank
/// `k`.
fn bracketed(values: &[f64], counted: usize, k: usize, join: impl Join) -> Option<f64> {
    let step = (values.len() / SAMPLE).max(1);
    let mut sample: Vec<u64> = values
        .iter()
        .step_by(step)
        .filter(|x| !x.is_nan())
        .map(|&x| order_key(x))
        .collect();
    let m = sample.len();
    if m < 64 {
        return None;
    }
    let centre = k as f64 / counted as f64 * m as f64;
    let half = BRACKET_SIGMAS * (m as f64).sqrt();
    let lo_at = (centre - half).floor().max(0.0) as usize;
    let hi_at = ((centre + half).ceil() as usize).min(m - 1);
    let lo = from_order_key(*sample.select_nth_unstable(lo_at).1);
    let hi = from_order_key(*sample[lo_at..].select_nth_unstable(hi_at - lo_at).1);
    // A bracket reaching either end of the sample is open on that side.
    let lo = if lo_at == 0 { f64::NEG_INFINITY } else { lo };
    let hi = if hi_at == m - 1 { f64::INFINITY } else { hi };
    let (first, second) = values.split_at(values.len() / 2);
    let (mut a, mut b) = ((0, Vec::new()), (0, Vec::new()));
    join(&mut || a = split_at_bracket(first, lo, hi), &mut || {
        b = split_at_bracket(second, lo, hi)
    });
    let (below, mut keys) = (a.0 + b.0, a.1);
    keys.extend_from_slice(&b.1);
    if k < below || k - below >= keys.len() {
        return None;
    }
    let (_, kth, _) = keys.select_nth_unstable(k - below);
    Some(from_order_key(*kth))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (SplitMix64) for the property tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn bits(values: &[f64]) -> Vec<u64> {
        values.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn one_score_per_row_and_nan_where_a_row_does_not_calibrate() {
        let probs = [0.9, f64::NAN, 0.25, 1.0, f64::INFINITY, 0.0, 0.5];
        let correct = [true, true, false, true, true, true, true];
        let (scores, kept) = nonconformity_rows(&probs, &correct).unwrap();
        let nan = f64::NAN;
        assert_eq!(
            bits(&scores),
            bits(&[1.0 - 0.9, nan, nan, 0.0, nan, 1.0, 0.5])
        );
        assert_eq!(kept, 4);
        assert_eq!(nonconformity_rows(&[], &[]).unwrap(), (vec![], 0));
    }

    #[test]
    fn a_probability_outside_the_unit_interval_is_an_error_even_on_a_wrong_row() {
        let err = nonconformity_rows(&[0.5, f64::NAN, -0.25, 2.0], &[true, true, false, true])
            .unwrap_err();
        assert_eq!(
            err,
            ConformalError::OutOfRange {
                row: 2,
                value: -0.25
            }
        );
        assert_eq!(
            err.to_string(),
            "probs[2] = -0.25 is not a probability in [0, 1]"
        );
        assert_eq!(
            nonconformity_rows(&[0.5], &[true, false]).unwrap_err(),
            ConformalError::LengthMismatch {
                probs: 1,
                correct: 2
            }
        );
    }

    /// The k-th smallest by sorting the values other than NaN.
    fn by_sorting(values: &[f64], k: usize) -> f64 {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        sorted.sort_by(f64::total_cmp);
        sorted[k] + 0.0
    }

    #[test]
    fn kth_smallest_equals_the_sorted_order_on_random_sets() {
        let mut rng = Rng(7);
        for round in 0..300 {
            // Both sides of DIRECT_BELOW; few distinct values in some rounds (ties, which defeat
            // the bracket), wide ranges with infinities, negative zeros and NaN in others, and
            // sorted or reversed orders (the sample is evenly spaced).
            let n = 1 + (rng.next() % if round % 3 == 0 { 60_000 } else { 300 }) as usize;
            let mut values: Vec<f64> = (0..n)
                .map(|_| match round % 4 {
                    0 => (rng.next() % 5) as f64 / 4.0,
                    1 => rng.unit(),
                    _ => match rng.next() % 12 {
                        0 => f64::INFINITY,
                        1 => f64::NEG_INFINITY,
                        2 => -0.0,
                        3 => f64::NAN,
                        _ => (rng.unit() - 0.5) * 1e6,
                    },
                })
                .collect();
            match round % 5 {
                0 => values.sort_by(f64::total_cmp),
                1 => values.sort_by(|a, b| b.total_cmp(a)),
                _ => {}
            }
            let counted = values.iter().filter(|x| !x.is_nan()).count();
            if counted == 0 {
                continue;
            }
            let last = counted as u64 - 1;
            for k in [
                0,
                last,
                rng.next() % counted as u64,
                rng.next() % counted as u64,
            ] {
                let k = k as usize;
                assert_eq!(
                    kth_smallest(&values, k).to_bits(),
                    by_sorting(&values, k).to_bits(),
                    "round {round}, k {k}"
                );
            }
        }
    }

    #[test]
    fn the_vector_bracket_pass_equals_the_portable_one() {
        let mut rng = Rng(3);
        for round in 0..200 {
            let n = (rng.next() % 300) as usize;
            let values: Vec<f64> = (0..n)
                .map(|_| match rng.next() % 8 {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => f64::NEG_INFINITY,
                    3 => -0.0,
                    _ => rng.unit(),
                })
                .collect();
            let (lo, hi) = match round % 3 {
                0 => (rng.unit() * 0.5, 0.5 + rng.unit() * 0.5),
                1 => (f64::NEG_INFINITY, rng.unit()),
                _ => (0.0, f64::INFINITY),
            };
            let portable = split_at_bracket_portable(&values, lo, hi);
            assert_eq!(split_at_bracket(&values, lo, hi), portable);
            let below = values.iter().filter(|&&x| x < lo).count();
            let keys: Vec<u64> = values
                .iter()
                .filter(|&&x| lo <= x && x <= hi)
                .map(|&x| order_key(x))
                .collect();
            assert_eq!(portable, (below, keys));
        }
    }

    #[test]
    fn the_fit_takes_the_conformal_rank() {
        // scores of the correct rows: 0.25, 0.5, 0.75 (the 0.6 row is wrong, the NaN row skipped)
        let probs = [0.75, 0.5, 0.4, 0.25, f64::NAN];
        let correct = [true, true, false, true, true];
        let fit = |alpha| fit_by(&probs, &correct, alpha, one_thread).unwrap();
        let (q, scores, n) = fit(0.5);
        assert_eq!(n, 3);
        assert_eq!(bits(&scores), bits(&[0.25, 0.5, f64::NAN, 0.75, f64::NAN]));
        assert_eq!(q, 0.5); // rank ceil(4 * 0.5) = 2
        assert_eq!(fit(0.3).0, 0.75); // ceil(4 * 0.7) = ceil(2.8) = 3
        assert_eq!(fit(0.2).0, f64::INFINITY); // ceil(3.2) = 4 > 3
        assert_eq!(fit(1.0).0, f64::NEG_INFINITY); // rank 0
        assert_eq!(fit(0.0).0, f64::INFINITY);
        // Python: math.ceil((2 + 1) * (1 - 0.9)) == 1 (0.1 is 0.09999999999999998 here)
        let (q, _, n) = fit_by(&[0.5, 0.25], &[true, true], 0.9, one_thread).unwrap();
        assert_eq!((q, n), (0.5, 2));
        assert_eq!(fit_by(&[], &[], 0.1, one_thread).unwrap().0, f64::INFINITY);
        assert_eq!(
            fit_by(&[1.5], &[false], 0.1, one_thread),
            Err(ConformalError::OutOfRange { row: 0, value: 1.5 })
        );
    }

    #[test]
    fn the_quantile_takes_the_fit_rank_of_scores_given_directly() {
        // what split_conformal_quantile asks of a list of scores (NaN in a row left out)
        let scores = [0.75, -0.0, f64::NAN, 0.25, f64::NEG_INFINITY];
        let q = |alpha| quantile(&scores, 4, alpha, one_thread);
        // ascending: -inf, -0.0, 0.25, 0.75
        assert_eq!(q(0.7), 0.0); // rank ceil(5 * 0.30000000000000004) = 2: the zero, as 0.0
        assert!(q(0.7).is_sign_positive());
        assert_eq!(q(0.5), 0.25); // ceil(2.5) = 3
        assert_eq!(q(0.3), 0.75); // ceil(3.5) = 4
        assert_eq!(q(0.1), f64::INFINITY); // ceil(4.5) = 5 > 4
        assert_eq!(q(0.9), f64::NEG_INFINITY); // ceil(0.5) = 1
        assert_eq!(q(1.0), f64::NEG_INFINITY); // rank 0
        assert_eq!(quantile(&[], 0, 0.5, one_thread), f64::INFINITY);
    }

    #[test]
    fn kth_smallest_of_one_repeated_value_and_of_zeros() {
        let values: Vec<f64> = (0..50_000).map(|i| 0.5 + (i % 3) as f64 * 1e-12).collect();
        for k in [0, 1, 16_666, 16_667, 49_999] {
            assert_eq!(kth_smallest(&values, k), by_sorting(&values, k));
        }
        assert_eq!(kth_smallest(&[-0.0, -0.0], 1).to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn kth_smallest_counted_agrees_when_given_the_count() {
        let values: Vec<f64> = (0..40_000)
            .map(|i| {
                if i % 3 == 0 {
                    f64::NAN
                } else {
                    ((i * 7919) % 1000) as f64
                }
            })
            .collect();
        let counted = values.iter().filter(|x| !x.is_nan()).count();
        for k in [0, 1, counted / 2, counted - 1] {
            assert_eq!(
                kth_smallest_counted(&values, counted, k, one_thread),
                by_sorting(&values, k)
            );
        }
    }

    #[test]
    #[should_panic(expected = "rank 2 out of 2 values")]
    fn kth_smallest_rejects_a_rank_past_the_values_other_than_nan() {
        kth_smallest(&[1.0, f64::NAN, 3.0], 2);
    }

    #[test]
    #[should_panic(expected = "rank 20000 out of 20000 values")]
    fn kth_smallest_rejects_a_rank_past_the_end_of_a_long_set() {
        kth_smallest(&vec![1.0; 20_000], 20_000);
    }
}
