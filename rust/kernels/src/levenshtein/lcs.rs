//! Length of a longest common subsequence (the similarity of rapidfuzz's `LCSseq`, used for
//! dinglehopper's word accuracy): common affix stripped, then the bit-parallel recurrence of
//! Allison–Dix / Hyyrö over the shorter side's 64-symbol blocks, `V' = (V + (V & M)) | (V & !M)`
//! with the carry of the addition passed from block to block; the LCS is the number of zero
//! bits of `V` among the pattern's positions. Memory: the pattern's masks and one word per block.

use std::collections::TryReserveError;

use super::common_affix;
use super::pattern::{fill, PatternMasks, Row};

/// Reusable buffers of [`lcs_length`] (one per thread in batch use).
#[derive(Default)]
pub struct LcsWorkspace {
    masks: PatternMasks,
    v: Vec<u64>,
}

impl LcsWorkspace {
    pub fn new() -> Self {
        Self::default()
    }
}

/// Length of a longest common subsequence of `a` and `b` (an error only when out of memory).
pub fn lcs_length(ws: &mut LcsWorkspace, a: &[u32], b: &[u32]) -> Result<usize, TryReserveError> {
    let (prefix, suffix) = common_affix(a, b);
    let a = &a[prefix..a.len() - suffix];
    let b = &b[prefix..b.len() - suffix];
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if pattern.is_empty() {
        return Ok(prefix + suffix);
    }
    let m = pattern.len();
    ws.masks.build(pattern)?;
    let words = m.div_ceil(64);
    fill(&mut ws.v, words, !0)?;
    let v = &mut ws.v;
    for &c in text {
        match ws.masks.row(c) {
            Row::Absent => {}
            Row::Dense(eqs) => advance(v, |k| eqs[k]),
            Row::Sparse(blocks, bits) => advance(v, |k| {
                blocks.binary_search(&(k as u32)).map_or(0, |e| bits[e])
            }),
        }
    }
    let tail = m % 64;
    let zeros: usize = v
        .iter()
        .enumerate()
        .map(|(k, &word)| {
            let word = if k + 1 == words && tail != 0 {
                word | !0 << tail
            } else {
                word
            };
            word.count_zeros() as usize
        })
        .sum();
    Ok(prefix + suffix + zeros)
}

/// One text symbol whose mask in block `k` is `eq(k)`: every block, the addition's carry going on.
#[inline(always)]
fn advance(v: &mut [u64], eq: impl Fn(usize) -> u64) {
    let mut carry = false;
    for (k, word) in v.iter_mut().enumerate() {
        let u = *word & eq(k);
        let (sum, c1) = word.overflowing_add(u);
        let (sum, c2) = sum.overflowing_add(u64::from(carry));
        carry = c1 | c2;
        *word = sum | (*word - u);
    }
}

#[cfg(test)]
mod tests {
    use super::super::reference::Rng;
    use super::*;

    /// The plain O(n·m) dynamic program.
    fn plain(a: &[u32], b: &[u32]) -> usize {
        let mut row = vec![0usize; b.len() + 1];
        for &x in a {
            let mut diag = 0;
            for (j, &y) in b.iter().enumerate() {
                let up = row[j + 1];
                row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
                diag = up;
            }
        }
        row[b.len()]
    }

    #[test]
    fn known_values() {
        let s = |t: &str| t.chars().map(|c| c as u32).collect::<Vec<_>>();
        let mut ws = LcsWorkspace::new();
        for (a, b, want) in [
            ("", "", 0),
            ("abc", "", 0),
            ("kitten", "sitting", 4),
            ("abcdef", "acf", 3),
            ("xyz", "abc", 0),
        ] {
            assert_eq!(lcs_length(&mut ws, &s(a), &s(b)).unwrap(), want, "{a} {b}");
        }
    }

    #[test]
    fn random_pairs_match_the_plain_dp() {
        // One block and many, block edges (64, 128), dense and sparse masks, wide symbols.
        let mut rng = Rng(64);
        let mut ws = LcsWorkspace::new();
        let mut sparse = LcsWorkspace::new();
        sparse.masks.force_sparse = true;
        let wide: Vec<u32> = (250..330).chain([1, 2, 3, u32::MAX]).collect();
        for (alphabet, max_len) in [(vec![1u32, 2], 70), (vec![1, 2, 3, 4], 300), (wide, 700)] {
            for case in 0..300 {
                let a = rng.seq(max_len, &alphabet);
                let mut b = rng.seq(max_len, &alphabet);
                if case % 3 == 0 {
                    b = a.iter().copied().filter(|_| rng.below(5) != 0).collect();
                }
                let want = plain(&a, &b);
                assert_eq!(lcs_length(&mut ws, &a, &b).unwrap(), want, "{a:?} {b:?}");
                assert_eq!(lcs_length(&mut sparse, &a, &b).unwrap(), want);
                assert_eq!(lcs_length(&mut ws, &b, &a).unwrap(), want);
            }
        }
        for len in [63, 64, 65, 127, 128, 129] {
            let a: Vec<u32> = (0..len).map(|i| i % 3).collect();
            let b: Vec<u32> = (0..len + 7).map(|i| (i * 7) % 4).collect();
            assert_eq!(
                lcs_length(&mut ws, &a, &b).unwrap(),
                plain(&a, &b),
                "len {len}"
            );
        }
    }
}
