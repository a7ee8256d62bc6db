//! Sums of the rows of a count table per group (the per-slice totals of `scorekit.arrow`).

use std::fmt;

/// A row whose group code is neither -1 nor below the number of groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupError {
    pub row: usize,
    pub code: i64,
    pub groups: usize,
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "codes[{}] is {}: codes must be -1 or below {}",
            self.row, self.code, self.groups
        )
    }
}

impl std::error::Error for GroupError {}

/// Column sums of the `n x w` row-major `rows` per group: `(groups + 1) x (w + 2)` row-major.
/// Row `g` sums the rows whose code is `g`, the last row sums every row; column `w` counts the
/// rows and column `w + 1` holds the first of them (-1 when there is none). A code of -1 (or no
/// `codes`) puts a row in no group. Sums wrap around as NumPy's `int64` does.
///
/// # Panics
/// When `rows` does not hold `n * w` values or `codes` not `n`.
pub fn group_sums(
    rows: &[i64],
    (n, w): (usize, usize),
    codes: Option<&[i64]>,
    groups: usize,
) -> Result<Vec<i64>, GroupError> {
    assert_eq!(rows.len(), n * w, "rows hold n x w values");
    assert!(codes.is_none_or(|c| c.len() == n), "one code per row");
    // Each row goes to one bucket (its group, or the last bucket for none); the buckets' sums
    // then make the row of every row. Row of a bucket: w sums, the count, the first row.
    let width = w + 2;
    let mut buckets = vec![0i64; (groups + 1) * width];
    for bucket in buckets.chunks_exact_mut(width) {
        bucket[w + 1] = -1;
    }
    for k in 0..n {
        let code = codes.map_or(-1, |c| c[k]);
        let bucket = match usize::try_from(code) {
            Ok(g) if g < groups => g,
            _ if code == -1 => groups,
            _ => {
                return Err(GroupError {
                    row: k,
                    code,
                    groups,
                })
            }
        };
        let acc = &mut buckets[bucket * width..(bucket + 1) * width];
        for (a, &v) in acc.iter_mut().zip(&rows[k * w..(k + 1) * w]) {
            *a = a.wrapping_add(v);
        }
        if acc[w] == 0 {
            acc[w + 1] = k as i64;
        }
        acc[w] += 1;
    }
    let mut total = vec![0i64; width];
    for bucket in buckets.chunks_exact(width) {
        for (a, &v) in total.iter_mut().zip(&bucket[..=w]) {
            *a = a.wrapping_add(v);
        }
    }
    total[w + 1] = if n > 0 { 0 } else { -1 };
    buckets.truncate(groups * width);
    buckets.extend(total);
    Ok(buckets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_counts_and_first_rows_per_group() {
        let rows = [1, 2, 3, 4, 5, 6, 7, 8];
        let out = group_sums(&rows, (4, 2), Some(&[1, -1, 1, 0]), 3).unwrap();
        assert_eq!(
            out,
            [
                7, 8, 1, 3, // group 0: row 3
                6, 8, 2, 0, // group 1: rows 0 and 2
                0, 0, 0, -1, // group 2: none
                16, 20, 4, 0, // every row
            ]
        );
        let out = group_sums(&rows, (4, 2), None, 1).unwrap();
        assert_eq!(out, [0, 0, 0, -1, 16, 20, 4, 0]);
        assert_eq!(group_sums(&[], (0, 2), None, 0).unwrap(), [0, 0, 0, -1]);
        // rows without columns are still counted
        assert_eq!(
            group_sums(&[], (2, 0), Some(&[0, 0]), 1).unwrap(),
            [2, 0, 2, 0]
        );
    }

    #[test]
    fn sums_wrap_and_bad_codes_are_errors() {
        let out = group_sums(&[i64::MAX, 1], (2, 1), None, 0).unwrap();
        assert_eq!(out, [i64::MIN, 2, 0]);
        let err = group_sums(&[1, 2], (2, 1), Some(&[0, 2]), 2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "codes[1] is 2: codes must be -1 or below 2"
        );
        assert!(group_sums(&[1], (1, 1), Some(&[-2]), 2).is_err());
    }
}
