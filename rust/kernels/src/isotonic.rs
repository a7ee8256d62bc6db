//! Isotonic regression of binary outcomes on real scores: the fit behind the isotonic calibrator.
//!
//! Rows are `(score, correct)`. The fit groups the rows by distinct score (ascending), then pools
//! adjacent violators: neighbouring groups whose accuracy does not increase (`>=`, so equal
//! levels pool too) merge into one block, until the block accuracies strictly increase. The
//! result is every distinct score with its block's accuracy, `hits / rows` divided once in
//! `f64` from exact integer sums.
//!
//! Grouping sorts the scores with a least-significant-digit radix sort on an order-preserving
//! integer image of each float (8-bit digits; a digit every score shares is skipped, so scores in
//! `[0, 1]` need about six passes). Pooling runs a stack of blocks in one pass and compares
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

/// Sort `keys` ascending, carrying `labels` along (LSD radix, 8-bit digits).
fn radix_sort(keys: &mut Vec<u64>, labels: &mut Vec<bool>) {
    let n = keys.len();
    let mut counts = [[0usize; 256]; 8];
    for &k in keys.iter() {
        for (digit, count) in counts.iter_mut().enumerate() {
            count[((k >> (8 * digit)) & 0xff) as usize] += 1;
        }
    }
    let mut key_buf = vec![0u64; n];
    let mut label_buf = vec![false; n];
    for (digit, count) in counts.iter().enumerate() {
        if count.iter().any(|&c| c == n) {
            continue; // every key has the same digit here
        }
        let mut next = [0usize; 256];
        let mut start = 0;
        for (slot, &c) in next.iter_mut().zip(count.iter()) {
            *slot = start;
            start += c;
        }
        let shift = 8 * digit;
        for (&k, &label) in keys.iter().zip(labels.iter()) {
            let bucket = ((k >> shift) & 0xff) as usize;
            key_buf[next[bucket]] = k;
            label_buf[next[bucket]] = label;
            next[bucket] += 1;
        }
        std::mem::swap(keys, &mut key_buf);
        std::mem::swap(labels, &mut label_buf);
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
        return Err(IsotonicError::LengthMismatch {
            scores: scores.len(),
            correct: correct.len(),
        });
    }
    if let Some(row) = scores.iter().position(|x| !x.is_finite()) {
        return Err(IsotonicError::NotFinite { row });
    }
    let mut keys: Vec<u64> = scores.iter().map(|&x| order_key(x)).collect();
    let mut labels = correct.to_vec();
    radix_sort(&mut keys, &mut labels);

    let mut values = Vec::new();
    let mut stack: Vec<Block> = Vec::new();
    let mut i = 0;
    while i < keys.len() {
        let key = keys[i];
        let mut block = Block {
            hits: 0,
            rows: 0,
            scores: 1,
        };
        while i < keys.len() && keys[i] == key {
            block.hits += labels[i] as u64;
            block.rows += 1;
            i += 1;
        }
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
        let mut rows: Vec<(f64, bool)> = scores
            .iter()
            .map(|&x| x + 0.0)
            .zip(correct.iter().copied())
            .collect();
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
        let mut fit = IsotonicFit {
            values: vec![],
            levels: vec![],
        };
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
        let fit = isotonic_fit(
            &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0],
            &[true, false, false, true, true, false, true, true, true],
        )
        .unwrap();
        assert_eq!(fit.values, vec![1.0, 2.0, 3.0]);
        assert_eq!(fit.levels, vec![1.0 / 3.0, 2.0 / 3.0, 1.0]);
        // a violation: 0.9 correct, 0.8 wrong -> both pool; equal levels pool too
        let fit = isotonic_fit(&[0.9, 0.8, 0.1, 0.2], &[false, true, false, false]).unwrap();
        assert_eq!(fit.values, vec![0.1, 0.2, 0.8, 0.9]);
        assert_eq!(fit.levels, vec![0.0, 0.0, 0.5, 0.5]);
    }

    #[test]
    fn signs_zeros_and_extremes_sort_numerically() {
        let scores = [
            3.5,
            -0.0,
            0.0,
            -2.0,
            f64::MAX,
            -f64::MAX,
            1e-300,
            -1e-300,
            f64::MIN_POSITIVE,
        ];
        let fit = isotonic_fit(&scores, &[true; 9]).unwrap();
        assert_eq!(
            fit.values,
            vec![
                -f64::MAX,
                -2.0,
                -1e-300,
                0.0,
                f64::MIN_POSITIVE,
                1e-300,
                3.5,
                f64::MAX
            ]
        );
        assert!(fit.values[3].is_sign_positive());
        assert_eq!(fit.levels, vec![1.0; 8]);
    }

    #[test]
    fn empty_and_bad_input() {
        assert_eq!(
            isotonic_fit(&[], &[]).unwrap(),
            IsotonicFit {
                values: vec![],
                levels: vec![]
            }
        );
        assert_eq!(
            isotonic_fit(&[1.0], &[]).unwrap_err(),
            IsotonicError::LengthMismatch {
                scores: 1,
                correct: 0
            }
        );
        assert_eq!(
            isotonic_fit(&[1.0, f64::NAN], &[true, true]).unwrap_err(),
            IsotonicError::NotFinite { row: 1 }
        );
        assert_eq!(
            isotonic_fit(&[f64::NEG_INFINITY], &[true])
                .unwrap_err()
                .to_string(),
            "scores[0] is not a finite number"
        );
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
            assert_eq!(
                isotonic_fit(&scores, &correct).unwrap(),
                naive(&scores, &correct),
                "case {case}"
            );
        }
    }

    #[test]
    fn levels_never_decrease_and_cover_every_score() {
        let mut state = 11u64;
        let scores: Vec<f64> = (0..100_000)
            .map(|_| (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64)
            .collect();
        let correct: Vec<bool> = scores
            .iter()
            .map(|&x| ((splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64) < x)
            .collect();
        let fit = isotonic_fit(&scores, &correct).unwrap();
        assert_eq!(fit.values.len(), fit.levels.len());
        assert!(fit.values.windows(2).all(|w| w[0] < w[1]));
        assert!(fit.levels.windows(2).all(|w| w[0] <= w[1]));
    }
}
