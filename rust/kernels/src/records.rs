//! Record-list matching of the case benchmark (`scorekit.cases`): the item score matrix of two
//! lists of records, and greedy pairing on it.
//!
//! A record is a row of value ids, one per leaf path (`n_paths` columns). In an expected row, a
//! negative id marks a path the record does not score; in an actual row, a negative id is a
//! value that equals nothing. Ids are assigned by the caller so that two leaves are equal exactly
//! when their ids are (docs/cases.md, "Equality").

use std::fmt;

/// A malformed argument (shapes that do not fit, a matrix value outside [0, 1]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordsError(pub String);

impl fmt::Display for RecordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RecordsError {}

/// Scores of every expected record (row) against every actual record (column), row-major
/// `n_expected x n_actual`: the fraction of the expected record's scored paths whose actual id is
/// equal. An expected record with no scored path scores 0.0 everywhere.
pub fn match_matrix(
    expected: &[i64],
    actual: &[i64],
    n_paths: usize,
) -> Result<Vec<f64>, RecordsError> {
    if n_paths == 0 {
        if !expected.is_empty() || !actual.is_empty() {
            return Err(RecordsError(
                "records have no paths but the id arrays are not empty".into(),
            ));
        }
        return Ok(Vec::new());
    }
    if !expected.len().is_multiple_of(n_paths) || !actual.len().is_multiple_of(n_paths) {
        return Err(RecordsError(format!(
            "id arrays of {} and {} values do not hold whole records of {} paths",
            expected.len(),
            actual.len(),
            n_paths
        )));
    }
    let n_actual = actual.len() / n_paths;
    let mut out = Vec::with_capacity(expected.len() / n_paths * n_actual);
    for row in expected.chunks_exact(n_paths) {
        let scored = scored(row);
        if scored == 0 {
            out.extend(std::iter::repeat_n(0.0, n_actual));
            continue;
        }
        for column in actual.chunks_exact(n_paths) {
            let equal = row
                .iter()
                .zip(column)
                .filter(|&(&e, &a)| e >= 0 && e == a)
                .count();
            // exactly the mean of the record's 0/1 leaf scores, as the general scorer computes it
            out.push(equal as f64 / scored as f64);
        }
    }
    Ok(out)
}

/// [`match_matrix`] of `n_expected` and `n_actual` records that may have no paths at all (then
/// every score is 0.0).
pub fn match_matrix_of(
    expected: &[i64],
    actual: &[i64],
    n_paths: usize,
    (n_expected, n_actual): (usize, usize),
) -> Result<Vec<f64>, RecordsError> {
    if n_paths == 0 {
        match_matrix(expected, actual, 0)?;
        return Ok(vec![0.0; n_expected * n_actual]);
    }
    match_matrix(expected, actual, n_paths)
}

/// The number of scored paths of each of the `n_expected` expected records (0 for every record
/// when they have no paths); a record with none is a wildcard for the caller.
pub fn scored_paths(expected: &[i64], n_paths: usize, n_expected: usize) -> Vec<i64> {
    if n_paths == 0 {
        return vec![0; n_expected];
    }
    expected
        .chunks_exact(n_paths)
        .map(|row| scored(row) as i64)
        .collect()
}

/// How many paths an expected record scores (its non-negative ids).
fn scored(row: &[i64]) -> usize {
    row.iter().filter(|&&id| id >= 0).count()
}

/// Greedy pairing on a row-major `rows x cols` score matrix: rows in order, each takes the
/// unpaired column with the highest score (the lowest index among ties) if that score is above
/// 0. Returns the column of every row, or -1.
pub fn greedy_pairs(matrix: &[f64], rows: usize, cols: usize) -> Result<Vec<i64>, RecordsError> {
    if matrix.len() != rows.saturating_mul(cols) {
        return Err(RecordsError(format!(
            "matrix has {} values, not {rows} x {cols}",
            matrix.len()
        )));
    }
    if let Some(bad) = matrix.iter().find(|v| !(0.0..=1.0).contains(*v)) {
        return Err(RecordsError(format!(
            "matrix values must lie in [0, 1], got {bad}"
        )));
    }
    let mut taken = vec![false; cols];
    let mut chosen = Vec::with_capacity(rows);
    for row in matrix.chunks_exact(cols.max(1)).take(rows) {
        let mut best = -1i64;
        let mut best_score = 0.0;
        for (c, &score) in row.iter().enumerate() {
            if !taken[c] && score > best_score {
                best = c as i64;
                best_score = score;
            }
        }
        if best >= 0 {
            taken[best as usize] = true;
        }
        chosen.push(best);
    }
    chosen.resize(rows, -1);
    Ok(chosen)
}

/// The sum of `values` correctly rounded, as Python's `math.fsum` gives it for finite values
/// (Shewchuk's exact partial sums, then the round-half-even correction of the last partials), so
/// that a score summed here is bit-identical to the one the Python scorer computes.
pub fn fsum(values: &[f64]) -> f64 {
    // the usual case, leaves scored 0 or 1: a count, exact
    if values.iter().all(|&v| v == 1.0 || v == 0.0) {
        return values.iter().filter(|&&v| v == 1.0).count() as f64;
    }
    let mut partials: Vec<f64> = Vec::new();
    for &value in values {
        let mut x = value;
        let mut kept = 0;
        for k in 0..partials.len() {
            let mut y = partials[k];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let high = x + y;
            let low = y - (high - x);
            if low != 0.0 {
                partials[kept] = low;
                kept += 1;
            }
            x = high;
        }
        partials.truncate(kept);
        if x != 0.0 {
            partials.push(x); // zeros are not kept: a sum of zeros is +0.0, as in Python
        }
    }
    let Some(mut high) = partials.pop() else {
        return 0.0;
    };
    let mut low = 0.0;
    while let Some(y) = partials.pop() {
        let x = high;
        high = x + y;
        low = y - (high - x);
        if low != 0.0 {
            break;
        }
    }
    // the rest of the partials only decides a tie of `high + low`: round half to even
    if let Some(&next) = partials.last() {
        if (low < 0.0 && next < 0.0) || (low > 0.0 && next > 0.0) {
            let y = low * 2.0;
            let x = high + y;
            if y == x - high {
                high = x;
            }
        }
    }
    high
}

/// Greedy pairing of scalar list items by value id: every expected item (in order) takes the
/// first unpaired actual item with its id. A negative expected id is not scored ($ignore), a
/// negative actual id equals nothing. Returns `(expected index, actual index)` pairs in expected
/// order: what greedy pairing on the 0/1 item score matrix gives. Ids are small (an interner's),
/// the work is linear in the lists and the largest id.
pub fn multiset_pairs(expected: &[i64], actual: &[i64]) -> Vec<(usize, usize)> {
    const NONE: usize = usize::MAX;
    let ids = expected.iter().chain(actual).copied().max().unwrap_or(-1);
    // per id, the free actual items with it as a linked list in index order: `first[id]`, then
    // `after[i]` of each item
    let mut first = vec![NONE; usize::try_from(ids + 1).unwrap_or(0)];
    let mut after = vec![NONE; actual.len()];
    for (i, &id) in actual.iter().enumerate().rev() {
        if let Ok(id) = usize::try_from(id) {
            after[i] = first[id];
            first[id] = i;
        }
    }
    let mut pairs = Vec::new();
    for (j, &id) in expected.iter().enumerate() {
        let Ok(id) = usize::try_from(id) else {
            continue;
        };
        let i = first[id];
        if i != NONE {
            first[id] = after[i];
            pairs.push((j, i));
        }
    }
    pairs
}

/// A list's `(precision, recall, f1)` from its paired item scores and filled wildcards:
/// hits = correctly rounded sum of the scores + wildcards; recall = hits / expected length,
/// precision = hits / actual length (0.0 for an empty actual list). `n_expected` is not 0.
pub fn list_scores(
    scores: &[f64],
    wildcards: usize,
    n_expected: usize,
    n_actual: usize,
) -> (f64, f64, f64) {
    let hits = fsum(scores) + wildcards as f64;
    let recall = hits / n_expected as f64;
    let precision = if n_actual > 0 {
        hits / n_actual as f64
    } else {
        0.0
    };
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    (precision, recall, f1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsum_is_correctly_rounded() {
        assert_eq!(fsum(&[]), 0.0);
        assert_eq!(fsum(&[1.0, 0.0, 1.0]), 2.0);
        assert!(fsum(&[-0.0]).is_sign_positive() && fsum(&[-0.5, 0.5, -0.0]).is_sign_positive());
        assert_eq!(fsum(&[0.1; 10]), 1.0); // a naive sum gives 0.9999999999999999
        assert_eq!(fsum(&[1e100, 1.0, -1e100, 1e-100]), 1.0);
        // ties of the last partials round half to even: 1 + 2**-53 + 2**-80 rounds up
        let (ulp, tiny) = (2f64.powi(-53), 2f64.powi(-80));
        assert_eq!(fsum(&[1.0, ulp, tiny]), 1.0 + 2.0 * ulp);
        assert_eq!(fsum(&[1.0, ulp]), 1.0);
        assert_eq!(fsum(&[1.0 / 3.0, 2.0 / 3.0, 0.5]), 1.5);
        // every sum of k/n fractions is the exactly rounded rational sum
        for n in 1..12u32 {
            let parts: Vec<f64> = (0..=n).map(|k| k as f64 / n as f64).collect();
            assert_eq!(fsum(&parts), (n + 1) as f64 / 2.0);
        }
    }

    #[test]
    fn multiset_pairs_take_the_first_equal_free_item() {
        // expected [a, b, a, $ignore, c]; actual [b, a, x(never), a]
        let e = [3, 4, 3, -1, 5];
        let a = [4, 3, -2, 3];
        assert_eq!(multiset_pairs(&e, &a), vec![(0, 1), (1, 0), (2, 3)]);
        assert!(multiset_pairs(&[-1, -1], &[-2, -2]).is_empty());
        assert!(multiset_pairs(&[], &[1]).is_empty());
    }

    #[test]
    fn list_scores_count_wildcards_and_extra_items() {
        let (p, r, f) = list_scores(&[1.0, 0.5], 1, 4, 5);
        assert_eq!((p, r), (2.5 / 5.0, 2.5 / 4.0));
        assert_eq!(f, 2.0 * p * r / (p + r));
        assert_eq!(list_scores(&[], 0, 2, 0), (0.0, 0.0, 0.0));
        assert_eq!(list_scores(&[], 2, 2, 3), (2.0 / 3.0, 1.0, 0.8));
    }

    #[test]
    fn matrix_counts_equal_scored_paths() {
        // expected: [a=1, b=2], [a=1, b=(not scored)]; actual: [1, 2], [1, 3], [-2, 2]
        let e = [1, 2, 1, -1];
        let a = [1, 2, 1, 3, -2, 2];
        let m = match_matrix(&e, &a, 2).unwrap();
        assert_eq!(m, vec![1.0, 0.5, 0.5, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn matrix_shape_errors() {
        assert!(match_matrix(&[1, 2, 3], &[1, 2], 2).is_err());
        assert!(match_matrix(&[], &[], 0).unwrap().is_empty());
        assert!(match_matrix(&[1], &[], 0).is_err());
    }

    #[test]
    fn records_without_paths_score_zero() {
        assert_eq!(match_matrix_of(&[], &[], 0, (2, 3)).unwrap(), vec![0.0; 6]);
        assert!(match_matrix_of(&[1], &[], 0, (1, 0)).is_err());
        assert_eq!(
            match_matrix_of(&[1, 2, 1, -1], &[1, 2], 2, (2, 1)).unwrap(),
            vec![1.0, 1.0]
        );
        assert_eq!(scored_paths(&[], 0, 3), vec![0, 0, 0]);
        assert_eq!(scored_paths(&[1, 2, 1, -1, -1, -1], 2, 3), vec![2, 1, 0]);
    }

    #[test]
    fn greedy_takes_first_strict_maximum_and_skips_zero() {
        // row 0 ties columns 0 and 1 -> 0; row 1 only scores on column 0 (taken) -> nothing;
        // row 2 scores 0 everywhere -> nothing (column 1 stays free)
        let m = [0.5, 0.5, 1.0, 0.0, 0.0, 0.0];
        assert_eq!(greedy_pairs(&m, 3, 2).unwrap(), vec![0, -1, -1]);
        assert_eq!(greedy_pairs(&[], 2, 0).unwrap(), vec![-1, -1]);
        assert!(greedy_pairs(&[f64::NAN], 1, 1).is_err());
        assert!(greedy_pairs(&[0.5], 2, 1).is_err());
    }

    #[test]
    fn greedy_matches_brute_force_rule() {
        // a deterministic pseudo-random sweep against a plain re-statement of the rule
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        for _ in 0..2000 {
            let rows = next() % 6;
            let cols = next() % 6;
            let m: Vec<f64> = (0..rows * cols)
                .map(|_| (next() % 5) as f64 / 4.0)
                .collect();
            let got = greedy_pairs(&m, rows, cols).unwrap();
            let mut free: Vec<usize> = (0..cols).collect();
            for (r, &g) in got.iter().enumerate() {
                let best = free
                    .iter()
                    .copied()
                    .fold(None, |acc: Option<usize>, c| match acc {
                        Some(b) if m[r * cols + b] >= m[r * cols + c] => Some(b),
                        _ => Some(c),
                    });
                match best {
                    Some(b) if m[r * cols + b] > 0.0 => {
                        assert_eq!(g, b as i64);
                        free.retain(|&c| c != b);
                    }
                    _ => assert_eq!(g, -1),
                }
            }
        }
    }
}
