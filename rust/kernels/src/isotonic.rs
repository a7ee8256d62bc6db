//! Isotonic regression of binary outcomes on real scores: the fit behind the isotonic calibrator.
//!
//! Rows are `(score, correct)`. The fit groups the rows by distinct score (ascending), then pools
//! adjacent violators: neighbouring groups whose accuracy does not increase (`>=`, so equal
//! levels pool too) merge into one block, until the block accuracies strictly increase. The
//! result is every distinct score with its block's accuracy, `hits / rows` divided once in
//! `f64` from exact integer sums.
//!
//! Grouping sorts the scores of correct and of incorrect rows apart, each with a
//! least-significant-digit radix sort on an order-preserving integer image of each float (8-bit
//! digits; a digit every score shares is skipped), then walks the two sorted runs together. Pooling runs a stack of blocks in one pass and compares
//! accuracies exactly by cross-multiplying their integer sums. Time O(n), memory two copies of
//! the keys.

use std::fmt;

/// Why a fit cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IsotonicError {
    /// `scores` and `correct` differ in length.
    LengthMismatch { scores: usize, correct: usize },
    /// A score is NaN or infinite (at this row).
    NotFinite { row: usize },
}

impl fmt::Display for IsotonicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IsotonicError::LengthMismatch { scores, correct } => {
                write!(f, "{scores} scores but {correct} correct flags")
            }
            IsotonicError::NotFinite { row } => write!(f, "scores[{row}] is not a finite number"),
        }
    }
}

impl std::error::Error for IsotonicError {}

/// The fitted step function: the distinct scores, ascending, and the level at each.
#[derive(Debug, Clone, PartialEq)]
pub struct IsotonicFit {
    pub values: Vec<f64>,
    pub levels: Vec<f64>,
}

const SIGN: u64 = 1 << 63;

/// An integer whose unsigned order is the numeric order of finite floats (`-0.0` maps as `0.0`).
fn order_key(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits();
    if bits & SIGN != 0 {
        !bits
    } else {
        bits | SIGN
    }
}

fn from_order_key(key: u64) -> f64 {
    if key & SIGN != 0 {
        f64::from_bits(key & !SIGN)
    } else {
        f64::from_bits(!key)
    }
}

/// Bits per radix digit: six passes cover a key, each scattering into 2,048 buckets.
const DIGIT_BITS: usize = 11;
const BUCKETS: usize = 1 << DIGIT_BITS;
const DIGITS: usize = 64usize.div_ceil(DIGIT_BITS);

/// Sort `keys` ascending (LSD radix of [`DIGIT_BITS`]-bit digits; a digit every key shares is
/// skipped); `buffer` is working space as long as `keys`.
fn radix_sort(keys: &mut Vec<u64>, buffer: &mut Vec<u64>) {
    let n = keys.len();
    let mut counts = vec![[0u32; BUCKETS]; DIGITS];
    let mask = (BUCKETS - 1) as u64;
    for &k in keys.iter() {
        for (digit, count) in counts.iter_mut().enumerate() {
            count[((k >> (DIGIT_BITS * digit)) & mask) as usize] += 1;
        }
    }
    debug_assert_eq!(buffer.len(), n);
    let mut next = vec![0usize; BUCKETS];
    for (digit, count) in counts.iter().enumerate() {
        if count.iter().any(|&c| c as usize == n) {
            continue;
        }
        let mut start = 0;
        for (slot, &c) in next.iter_mut().zip(count.iter()) {
            *slot = start;
            start += c as usize;
        }
        let shift = DIGIT_BITS * digit;
        for &k in keys.iter() {
            let bucket = ((k >> shift) & mask) as usize;
            buffer[next[bucket]] = k;
            next[bucket] += 1;
        }
        std::mem::swap(keys, buffer);
    }
}

/// A pooled run of distinct scores: correct rows, rows, and how many distinct scores it covers.
#[derive(Clone, Copy)]
struct Block {
    hits: u64,
    rows: u64,
    scores: usize,
}

impl Block {
    /// Whether this block's accuracy is at least `next`'s (exact: cross-multiplied).
    fn not_below(&self, next: &Block) -> bool {
        (self.hits as u128) * (next.rows as u128) >= (next.hits as u128) * (self.rows as u128)
    }
}

/// Fit the non-decreasing step function of `correct` on `scores` (see the module docs).
pub fn isotonic_fit(scores: &[f64], correct: &[bool]) -> Result<IsotonicFit, IsotonicError> {
    if scores.len() != correct.len() {
        return Err(IsotonicError::LengthMismatch { scores: scores.len(), correct: correct.len() });
    }
    if let Some(row) = scores.iter().position(|x| !x.is_finite()) {
        return Err(IsotonicError::NotFinite { row });
    }
    // the keys of correct and of incorrect rows, each sorted on its own (no labels to carry)
    let hits = correct.iter().filter(|&&c| c).count();
    let mut right = Vec::with_capacity(hits);
    let mut wrong = Vec::with_capacity(scores.len() - hits);
    for (&x, &c) in scores.iter().zip(correct) {
        if c { right.push(order_key(x)) } else { wrong.push(order_key(x)) }
    }
    let mut buffer = vec![0u64; right.len()];
    radix_sort(&mut right, &mut buffer);
    buffer.resize(wrong.len(), 0);
    radix_sort(&mut wrong, &mut buffer);
    drop(buffer);

    // at most one value and one block per row: sized once, never regrown
    let mut values = Vec::with_capacity(scores.len());
    let mut stack: Vec<Block> = Vec::with_capacity(scores.len());
    let (mut i, mut j) = (0, 0);
    while i < right.len() || j < wrong.len() {
        let key = match (right.get(i), wrong.get(j)) {
            (Some(&a), Some(&b)) => a.min(b),
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => unreachable!(),
        };
        let (first_right, first_wrong) = (i, j);
        while i < right.len() && right[i] == key {
            i += 1;
        }
        while j < wrong.len() && wrong[j] == key {
            j += 1;
        }
        let hit_rows = (i - first_right) as u64;
        let mut block = Block { hits: hit_rows, rows: hit_rows + (j - first_wrong) as u64, scores: 1 };
        values.push(from_order_key(key));
        while let Some(top) = stack.last() {
            if !top.not_below(&block) {
                break;
            }
            block = Block {
                hits: top.hits + block.hits,
                rows: top.rows + block.rows,
                scores: top.scores + block.scores,
            };
            stack.pop();
        }
        stack.push(block);
    }
    let mut levels = Vec::with_capacity(values.len());
    for block in &stack {
        let level = block.hits as f64 / block.rows as f64;
        levels.extend(std::iter::repeat(level).take(block.scores));
    }
    Ok(IsotonicFit { values, levels })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quadratic reference: sort, group, then pool the first violating pair until none is left.
    fn naive(scores: &[f64], correct: &[bool]) -> IsotonicFit {
        let mut rows: Vec<(f64, bool)> =
            scores.iter().map(|&x| x + 0.0).zip(correct.iter().copied()).collect();
        rows.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        let mut groups: Vec<(Vec<f64>, u64, u64)> = Vec::new();
        for (x, c) in rows {
            match groups.last_mut() {
                Some(g) if *g.0.last().unwrap() == x => {
                    g.1 += c as u64;
                    g.2 += 1;
                }
                _ => groups.push((vec![x], c as u64, 1)),
            }
        }
        loop {
            let violation = (1..groups.len()).find(|&j| {
                (groups[j - 1].1 as u128) * (groups[j].2 as u128)
                    >= (groups[j].1 as u128) * (groups[j - 1].2 as u128)
            });
            let Some(j) = violation else { break };
            let (xs, h, r) = groups.remove(j);
            groups[j - 1].0.extend(xs);
            groups[j - 1].1 += h;
            groups[j - 1].2 += r;
        }
        let mut fit = IsotonicFit { values: vec![], levels: vec![] };
        for (xs, h, r) in groups {
            for x in xs {
                fit.values.push(x);
                fit.levels.push(h as f64 / r as f64);
            }
        }
        fit
    }

    /// A small deterministic generator (SplitMix64) for the random cases.
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[test]
    fn hand_computed_levels() {
        let fit = isotonic_fit(&[1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0],
                               &[true, false, false, true, true, false, true, true, true]).unwrap();
        assert_eq!(fit.values, vec![1.0, 2.0, 3.0]);
        assert_eq!(fit.levels, vec![1.0 / 3.0, 2.0 / 3.0, 1.0]);
        // a violation: 0.9 correct, 0.8 wrong -> both pool; equal levels pool too
        let fit = isotonic_fit(&[0.9, 0.8, 0.1, 0.2], &[false, true, false, false]).unwrap();
        assert_eq!(fit.values, vec![0.1, 0.2, 0.8, 0.9]);
        assert_eq!(fit.levels, vec![0.0, 0.0, 0.5, 0.5]);
    }

    #[test]
    fn signs_zeros_and_extremes_sort_numerically() {
        let scores = [3.5, -0.0, 0.0, -2.0, f64::MAX, -f64::MAX, 1e-300, -1e-300, f64::MIN_POSITIVE];
        let fit = isotonic_fit(&scores, &[true; 9]).unwrap();
        assert_eq!(fit.values, vec![-f64::MAX, -2.0, -1e-300, 0.0, f64::MIN_POSITIVE, 1e-300, 3.5, f64::MAX]);
        assert!(fit.values[3].is_sign_positive());
        assert_eq!(fit.levels, vec![1.0; 8]);
    }

    #[test]
    fn empty_and_bad_input() {
        assert_eq!(isotonic_fit(&[], &[]).unwrap(), IsotonicFit { values: vec![], levels: vec![] });
        assert_eq!(isotonic_fit(&[1.0], &[]).unwrap_err(),
                   IsotonicError::LengthMismatch { scores: 1, correct: 0 });
        assert_eq!(isotonic_fit(&[1.0, f64::NAN], &[true, true]).unwrap_err(),
                   IsotonicError::NotFinite { row: 1 });
        assert_eq!(isotonic_fit(&[f64::NEG_INFINITY], &[true]).unwrap_err().to_string(),
                   "scores[0] is not a finite number");
    }

    #[test]
    fn agrees_with_the_quadratic_reference_on_random_rows() {
        let mut state = 7u64;
        for case in 0..3000 {
            let n = (splitmix(&mut state) % 60) as usize;
            let distinct = 1 + splitmix(&mut state) % 12;
            let scale = [1e-3, 1.0, 1e6][case % 3];
            let scores: Vec<f64> = (0..n)
                .map(|_| {
                    let v = (splitmix(&mut state) % distinct) as f64 - (distinct / 3) as f64;
                    v * scale
                })
                .collect();
            let correct: Vec<bool> = scores
                .iter()
                .map(|&x| (splitmix(&mut state) % 100) as f64 / 100.0 < 0.3 + 0.05 * x.signum())
                .collect();
            assert_eq!(isotonic_fit(&scores, &correct).unwrap(), naive(&scores, &correct), "case {case}");
        }
    }

    #[test]
    fn levels_never_decrease_and_cover_every_score() {
        let mut state = 11u64;
        let scores: Vec<f64> = (0..100_000).map(|_| (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64).collect();
        let correct: Vec<bool> = scores.iter().map(|&x| ((splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64) < x).collect();
        let fit = isotonic_fit(&scores, &correct).unwrap();
        assert_eq!(fit.values.len(), fit.levels.len());
        assert!(fit.values.windows(2).all(|w| w[0] < w[1]));
        assert!(fit.levels.windows(2).all(|w| w[0] <= w[1]));
    }
}
