//! Isotonic regression of binary outcomes on real scores: the fit behind the isotonic calibrator.
//!
//! Rows are `(score, correct)`. The fit groups the rows by distinct score (ascending), then pools
//! adjacent violators: neighbouring groups whose accuracy does not increase (`>=`, so equal
//! levels pool too) merge into one block, until the block accuracies strictly increase. The
//! result is every distinct score with its block's accuracy, `hits / rows` divided once in
//! `f64` from exact integer sums.
//!
//! Scores with few distinct values (at most [`FEW_DISTINCT`], as calibrators on rounded or
//! discrete confidences see) are grouped by hashing an order-preserving integer image of each
//! float into a small table, each half of the rows apart; only the distinct values are then
//! sorted. Otherwise grouping splits the rows by outcome and sorts each part's keys with a
//! least-significant-digit radix sort (8-bit digits; a digit every score shares is skipped), so
//! no label travels through the passes, and a merge of the two sorted parts counts each distinct
//! score's rows and hits. Pooling runs a stack of blocks and compares accuracies exactly by
//! cross-multiplying their integer sums. Time O(n); memory two buffers of the keys, which become
//! the two outputs (a table of 8,192 slots on the grouping path).

use std::fmt;

use crate::{one_thread, Join};

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

/// An integer whose unsigned order is the numeric order of floats other than NaN (`-0.0` maps
/// as `0.0`); shared with the conformal selection.
pub(crate) fn order_key(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits();
    if bits & SIGN != 0 {
        !bits
    } else {
        bits | SIGN
    }
}

/// The float of an [`order_key`].
pub(crate) fn from_order_key(key: u64) -> f64 {
    if key & SIGN != 0 {
        f64::from_bits(key & !SIGN)
    } else {
        f64::from_bits(!key)
    }
}

/// Radix digit width in bits (eight passes at most; wider digits measured slower).
const DIGIT_BITS: u32 = 8;
const BUCKETS: usize = 1 << DIGIT_BITS;
const DIGITS: usize = 64_usize.div_ceil(DIGIT_BITS as usize);

fn digit_of(key: u64, digit: usize) -> usize {
    ((key >> (DIGIT_BITS as usize * digit)) & (BUCKETS as u64 - 1)) as usize
}

/// Write the order keys of the rows whose outcome is `label` to `keys` (exactly as many as there
/// are such rows) and sort them ascending (LSD radix, a digit they all share skipped; `buf` is
/// scratch of the same length). `Err(row)`: the first of those rows with a score that is not
/// finite.
fn sorted_part(
    scores: &[f64],
    correct: &[bool],
    label: bool,
    keys: &mut [u64],
    buf: &mut [u64],
) -> Result<(), usize> {
    let mut counts = [[0usize; BUCKETS]; DIGITS];
    let mut at = 0;
    for (row, (&x, &c)) in scores.iter().zip(correct).enumerate() {
        if c != label {
            continue;
        }
        if !x.is_finite() {
            return Err(row);
        }
        let key = order_key(x);
        keys[at] = key;
        at += 1;
        for (digit, count) in counts.iter_mut().enumerate() {
            count[digit_of(key, digit)] += 1;
        }
    }
    let n = keys.len();
    let (mut from, mut to) = (keys, buf);
    let mut in_keys = true;
    for (digit, count) in counts.iter().enumerate() {
        if count.contains(&n) {
            continue;
        }
        let mut next = [0usize; BUCKETS];
        let mut start = 0;
        for (slot, &c) in next.iter_mut().zip(count.iter()) {
            *slot = start;
            start += c;
        }
        for &k in from.iter() {
            let bucket = digit_of(k, digit);
            to[next[bucket]] = k;
            next[bucket] += 1;
        }
        std::mem::swap(&mut from, &mut to);
        in_keys = !in_keys;
    }
    if !in_keys {
        to.copy_from_slice(from);
    }
    Ok(())
}

/// A pooled run of distinct scores: correct rows, rows, and how many distinct scores it covers.
#[derive(Clone, Copy)]
struct Block {
    hits: u64,
    rows: u64,
    scores: usize,
}

impl Block {
    /// The block's accuracy, divided once.
    fn level(&self) -> f64 {
        self.hits as f64 / self.rows as f64
    }

    /// Whether this block's accuracy is at least `next`'s (exact: cross-multiplied).
    fn not_below(&self, next: &Block) -> bool {
        (self.hits as u128) * (next.rows as u128) >= (next.hits as u128) * (self.rows as u128)
    }
}

/// Push `block` onto the stack of pooled blocks, first merging into it every block on top whose
/// accuracy is not below its own.
fn push_pooled(stack: &mut Vec<Block>, mut block: Block) {
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

/// Most distinct scores the grouping by hash takes (beyond, the rows are sorted instead).
const FEW_DISTINCT: usize = 4096;

/// One distinct score's order key, correct rows and rows.
type Group = (u64, u64, u64);

/// The groups of `scores` (with their rows' outcomes), in no order, when there are at most
/// [`FEW_DISTINCT`] distinct scores; `Ok(None)` as soon as there are more. An open-addressing
/// table keyed by the order key (never 0 for a finite score, so 0 marks an empty slot).
/// `Err(row)`: the first score that is not finite (`first_row` is the index of `scores[0]`).
fn group_by_hash(
    scores: &[f64],
    correct: &[bool],
    first_row: usize,
) -> Result<Option<Vec<Group>>, usize> {
    // Slots: a power of two, at most half full; sized to the rows, so a short fit does not clear
    // and scan a table made for FEW_DISTINCT scores.
    let slots = (2 * scores.len().min(FEW_DISTINCT))
        .next_power_of_two()
        .max(2);
    let mut table = vec![(0u64, 0u32, 0u32); slots];
    let mut used = 0usize;
    for (row, (&x, &c)) in scores.iter().zip(correct).enumerate() {
        if !x.is_finite() {
            return Err(first_row + row);
        }
        let key = order_key(x);
        let mut slot =
            (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - slots.trailing_zeros())) as usize;
        loop {
            let entry = &mut table[slot];
            if entry.0 == key {
                entry.1 += u32::from(c);
                entry.2 += 1;
                break;
            }
            if entry.0 == 0 {
                if used == FEW_DISTINCT {
                    return Ok(None);
                }
                *entry = (key, u32::from(c), 1);
                used += 1;
                break;
            }
            slot = (slot + 1) & (slots - 1);
        }
    }
    Ok(Some(
        table
            .into_iter()
            .filter(|entry| entry.0 != 0)
            .map(|(key, hits, rows)| (key, u64::from(hits), u64::from(rows)))
            .collect(),
    ))
}

/// The groups of every distinct score, ascending, when there are few (the two halves of the rows
/// grouped through `join`, each with at most [`FEW_DISTINCT`] distinct scores, then merged);
/// `Ok(None)` when there are more, or too many rows for the table's 32-bit counts.
fn few_distinct_groups(
    scores: &[f64],
    correct: &[bool],
    join: &impl Join,
) -> Result<Option<Vec<Group>>, IsotonicError> {
    if scores.len() > u32::MAX as usize {
        return Ok(None);
    }
    let half = scores.len() / 2;
    let (mut first, mut second) = (Ok(None), Ok(None));
    join(
        &mut || first = group_by_hash(&scores[..half], &correct[..half], 0),
        &mut || second = group_by_hash(&scores[half..], &correct[half..], half),
    );
    let (first, second) = match (first, second) {
        (Err(row), _) | (Ok(_), Err(row)) => return Err(IsotonicError::NotFinite { row }),
        (Ok(Some(a)), Ok(Some(b))) => (a, b),
        _ => return Ok(None),
    };
    let mut groups = first;
    groups.extend(second);
    groups.sort_unstable_by_key(|group| group.0);
    let mut merged: Vec<Group> = Vec::with_capacity(groups.len());
    for (key, hits, rows) in groups {
        match merged.last_mut() {
            Some(last) if last.0 == key => {
                last.1 += hits;
                last.2 += rows;
            }
            _ => merged.push((key, hits, rows)),
        }
    }
    Ok(Some(merged))
}

/// The fit of distinct scores' groups given in ascending order.
fn fit_of_groups(groups: Vec<Group>) -> IsotonicFit {
    let mut stack: Vec<Block> = Vec::new();
    for &(_, hits, rows) in &groups {
        push_pooled(
            &mut stack,
            Block {
                hits,
                rows,
                scores: 1,
            },
        );
    }
    IsotonicFit {
        values: groups.iter().map(|group| from_order_key(group.0)).collect(),
        levels: stack
            .iter()
            .flat_map(|block| std::iter::repeat_n(block.level(), block.scores))
            .collect(),
    }
}

/// Fit the non-decreasing step function of `correct` on `scores` (see the module docs).
pub fn isotonic_fit(scores: &[f64], correct: &[bool]) -> Result<IsotonicFit, IsotonicError> {
    isotonic_fit_by(scores, correct, one_thread)
}

/// [`isotonic_fit`], with the two halves of the work (grouping the two halves of the rows, or
/// sorting the two outcomes' scores) run by `join`, which must call both closures once (one after
/// the other, or side by side on two threads).
pub fn isotonic_fit_by(
    scores: &[f64],
    correct: &[bool],
    join: impl Join,
) -> Result<IsotonicFit, IsotonicError> {
    if scores.len() != correct.len() {
        return Err(IsotonicError::LengthMismatch {
            scores: scores.len(),
            correct: correct.len(),
        });
    }
    match few_distinct_groups(scores, correct, &join)? {
        Some(groups) => Ok(fit_of_groups(groups)),
        None => fit_by_sorting(scores, correct, join),
    }
}

/// The fit by sorting the two outcomes' scores (through `join`) and merging them.
fn fit_by_sorting(
    scores: &[f64],
    correct: &[bool],
    join: impl Join,
) -> Result<IsotonicFit, IsotonicError> {
    let n = scores.len();
    let hits = correct.iter().filter(|&&c| c).count();
    // The correct rows' keys first, then the others': sorting the parts apart carries no labels
    // through the passes.
    let mut keys = vec![0u64; n];
    let mut buf = vec![0u64; n];
    {
        let (hit_keys, miss_keys) = keys.split_at_mut(hits);
        let (hit_buf, miss_buf) = buf.split_at_mut(hits);
        let (mut hit_result, mut miss_result) = (Ok(()), Ok(()));
        join(
            &mut || hit_result = sorted_part(scores, correct, true, hit_keys, hit_buf),
            &mut || miss_result = sorted_part(scores, correct, false, miss_keys, miss_buf),
        );
        match (hit_result, miss_result) {
            (Err(a), Err(b)) => return Err(IsotonicError::NotFinite { row: a.min(b) }),
            (Err(row), _) | (_, Err(row)) => return Err(IsotonicError::NotFinite { row }),
            _ => {}
        }
    }

    // Merge the two sorted parts (a side that has run out reads as `u64::MAX`, above every
    // finite score's key), one group per distinct key (its key goes to `buf`), and pool each
    // group as it completes.
    let (hit_keys, miss_keys) = keys.split_at(hits);
    let head = |part: &[u64], at: usize| part.get(at).copied().unwrap_or(u64::MAX);
    let (mut i, mut j, mut distinct) = (0, 0, 0);
    let mut stack: Vec<Block> = Vec::new();
    let mut group = Block {
        hits: 0,
        rows: 0,
        scores: 1,
    };
    for _ in 0..n {
        let (a, b) = (head(hit_keys, i), head(miss_keys, j));
        let is_hit = a <= b;
        let key = if is_hit { a } else { b };
        i += usize::from(is_hit);
        j += usize::from(!is_hit);
        if distinct > 0 && buf[distinct - 1] == key {
            group.hits += u64::from(is_hit);
            group.rows += 1;
            continue;
        }
        if distinct > 0 {
            push_pooled(&mut stack, group);
        }
        buf[distinct] = key;
        distinct += 1;
        group = Block {
            hits: u64::from(is_hit),
            rows: 1,
            scores: 1,
        };
    }
    if distinct > 0 {
        push_pooled(&mut stack, group);
    }
    // The outputs reuse the two key buffers (same size as `f64`).
    buf.truncate(distinct);
    keys.clear();
    for block in &stack {
        keys.extend(std::iter::repeat_n(block.level().to_bits(), block.scores));
    }
    let mut values: Vec<f64> = buf.into_iter().map(from_order_key).collect();
    let mut levels: Vec<f64> = keys.into_iter().map(f64::from_bits).collect();
    if distinct < n / 2 {
        values.shrink_to_fit();
        levels.shrink_to_fit();
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
    fn sorting_the_parts_on_two_threads_gives_the_same_fit() {
        let mut state = 5u64;
        for (n, distinct) in [(0u64, 1u64), (1, 1), (5_000, 40), (20_000, 1 << 40)] {
            let scores: Vec<f64> = (0..n)
                .map(|_| (splitmix(&mut state) % distinct) as f64 / distinct as f64 - 0.25)
                .collect();
            let correct: Vec<bool> = scores
                .iter()
                .map(|&x| (splitmix(&mut state) % 1000) as f64 / 1000.0 < x)
                .collect();
            let threaded = isotonic_fit_by(&scores, &correct, |hits, misses| {
                std::thread::scope(|s| {
                    s.spawn(hits);
                    misses();
                })
            });
            assert_eq!(threaded, isotonic_fit(&scores, &correct), "{n} rows");
            assert_eq!(threaded.unwrap(), naive(&scores, &correct));
        }
    }

    #[test]
    fn grouping_by_hash_and_sorting_give_the_same_fit() {
        let mut state = 13u64;
        let sequential = one_thread;
        for case in 0..300 {
            // Up to and just past the table's limit of distinct scores, with zeros of both signs;
            // every length below 60 first (the table is sized to the rows).
            let n = if case < 60 {
                case
            } else {
                (splitmix(&mut state) % 20_000) as usize
            };
            let distinct = [1, 2, 50, FEW_DISTINCT as u64 / 2, FEW_DISTINCT as u64][case % 5];
            let scores: Vec<f64> = (0..n)
                .map(|_| match splitmix(&mut state) % distinct {
                    0 => -0.0,
                    v => (v as f64 - distinct as f64 / 3.0) / 7.0,
                })
                .collect();
            let correct: Vec<bool> = scores
                .iter()
                .map(|&x| (splitmix(&mut state) % 100) < 40 + (x.signum() * 20.0) as u64)
                .collect();
            let groups = few_distinct_groups(&scores, &correct, &sequential)
                .unwrap()
                .expect("few distinct scores");
            let sorted = fit_by_sorting(&scores, &correct, sequential).unwrap();
            assert_eq!(fit_of_groups(groups), sorted, "case {case}");
        }
        // One distinct score more in each half than the table takes: the sorting path.
        let scores: Vec<f64> = (0..2 * (FEW_DISTINCT + 1)).map(|i| i as f64).collect();
        let correct = vec![true; scores.len()];
        assert!(few_distinct_groups(&scores, &correct, &sequential) == Ok(None));
        assert_eq!(
            isotonic_fit(&scores, &correct).unwrap(),
            naive(&scores, &correct)
        );
        // The first bad row, whichever half holds it.
        let mut bad = vec![0.5; 10_000];
        bad[7_000] = f64::NAN;
        bad[9_000] = f64::INFINITY;
        assert_eq!(
            few_distinct_groups(&bad, &vec![true; 10_000], &sequential),
            Err(IsotonicError::NotFinite { row: 7_000 })
        );
        bad[3_000] = f64::NEG_INFINITY;
        assert_eq!(
            isotonic_fit(&bad, &vec![false; 10_000]),
            Err(IsotonicError::NotFinite { row: 3_000 })
        );
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
