//! Unit-cost Levenshtein distance: common affix stripped, then Hyyrö's bit-parallel algorithm in
//! one machine word when the shorter side fits in 64 symbols, Myers' blocked variant restricted to
//! a diagonal band (doubled until the distance fits in it) otherwise.
//!
//! The bit vectors follow one convention throughout this family: the *pattern* is laid along the
//! bits (bit `i` ↔ pattern position `i`), the *text* is consumed one symbol per row, and after
//! row `j` bit `i` of `vp`/`vn` says whether `D[i+1][j+1] − D[i][j+1]` is `+1`/`−1`.

use std::collections::TryReserveError;

use super::common_affix;
use super::pattern::{fill, PatternMasks, Row};

/// Reusable buffers for distance computations (one per thread in batch use).
#[derive(Default)]
pub struct DistanceWorkspace {
    pub(crate) masks: PatternMasks,
    vp: Vec<u64>,
    vn: Vec<u64>,
    bottom: Vec<usize>,
}

impl DistanceWorkspace {
    pub fn new() -> Self {
        Self::default()
    }
}

/// One step of the single-word Hyyrö recurrence: update `(vp, vn)` with the pattern mask `eq` of
/// the next text symbol and return the horizontal deltas `(hp, hn)` before shifting.
#[inline(always)]
pub(crate) fn hyyro_step(eq: u64, vp: &mut u64, vn: &mut u64) -> (u64, u64) {
    let x = eq | *vn;
    let d0 = ((x & *vp).wrapping_add(*vp) ^ *vp) | x;
    let hp = *vn | !(d0 | *vp);
    let hn = *vp & d0;
    let hp_shift = (hp << 1) | 1;
    let hn_shift = hn << 1;
    *vp = hn_shift | !(d0 | hp_shift);
    *vn = hp_shift & d0;
    (hp, hn)
}

/// One block step of Myers' blocked algorithm. `h_in` is the horizontal delta entering the block
/// from above (−1, 0 or +1); returns the delta leaving it at bit `last_bit`.
#[inline(always)]
pub(crate) fn block_step(mut eq: u64, vp: &mut u64, vn: &mut u64, h_in: i32, last_bit: u64) -> i32 {
    let xv = eq | *vn;
    if h_in < 0 {
        eq |= 1;
    }
    let xh = ((eq & *vp).wrapping_add(*vp) ^ *vp) | eq;
    let mut hp = *vn | !(xh | *vp);
    let mut hn = *vp & xh;
    let h_out = if hp & last_bit != 0 {
        1
    } else if hn & last_bit != 0 {
        -1
    } else {
        0
    };
    hp <<= 1;
    hn <<= 1;
    if h_in < 0 {
        hn |= 1;
    } else if h_in > 0 {
        hp |= 1;
    }
    *vp = hn | !(xv | hp);
    *vn = hp & xv;
    h_out
}

/// Distance between `pattern` (≤ 64 symbols, masks already built) and `text`.
pub(crate) fn hyyro_single(masks: &PatternMasks, m: usize, text: &[u32]) -> usize {
    let mut vp: u64 = if m == 64 { !0 } else { (1u64 << m) - 1 };
    let mut vn: u64 = 0;
    let last = 1u64 << (m - 1);
    let mut score = m;
    for &c in text {
        let (hp, hn) = hyyro_step(masks.single(c), &mut vp, &mut vn);
        if hp & last != 0 {
            score += 1;
        } else if hn & last != 0 {
            score -= 1;
        }
    }
    score
}

/// First and last 64-row block of the pattern (`m` rows) meeting the diagonal band `|i − j| ≤ w`
/// in text column `j` (rows `i` are 1-based).
#[inline]
pub(crate) fn band_blocks(j: usize, w: usize, m: usize) -> (usize, usize) {
    let lo = j.saturating_sub(w).max(1);
    let hi = (j + w).min(m);
    ((lo - 1) / 64, (hi - 1) / 64)
}

/// Myers' blocked algorithm restricted to the blocks meeting the diagonal band `|i − j| ≤ w`.
///
/// A block leaving the band at the top stops being computed (the next block assumes a horizontal
/// delta of +1 above it); a block entering at the bottom starts from vertical deltas of +1. Both
/// describe real paths, so every computed value is an upper bound of the true `D`, exact wherever
/// `D ≤ w` (a path of cost `c` never leaves the band of half-width `c`). `visit(j, first_block,
/// vp, vn)` sees the band's words of every column. Returns the computed `D[m][n]`, exact when the
/// distance is at most `w` and `|m − n| ≤ w`. Memory: three words per pattern block.
#[allow(clippy::too_many_arguments)]
pub(crate) fn myers_banded(
    masks: &PatternMasks,
    m: usize,
    text: &[u32],
    w: usize,
    vp: &mut Vec<u64>,
    vn: &mut Vec<u64>,
    bottom: &mut Vec<usize>,
    mut visit: impl FnMut(usize, usize, &[u64], &[u64]),
) -> Result<usize, TryReserveError> {
    let words = m.div_ceil(64);
    let last_bit_final = 1u64 << ((m - 1) % 64);
    fill(vp, words, !0)?;
    fill(vn, words, 0)?;
    fill(bottom, words, 0)?;
    for (b, v) in bottom.iter_mut().enumerate() {
        *v = (64 * (b + 1)).min(m);
    }
    let mut prev_last = band_blocks(0, w, m).1;
    for (col, &c) in text.iter().enumerate() {
        let (first, last) = band_blocks(col + 1, w, m);
        if last > prev_last {
            bottom[last] = bottom[last - 1] + (64 * (last + 1)).min(m) - 64 * last;
            prev_last = last;
        }
        let mut h = 1i32;
        let mut step = |b: usize, eq: u64| {
            let last_bit = if b + 1 == words {
                last_bit_final
            } else {
                1u64 << 63
            };
            h = block_step(eq, &mut vp[b], &mut vn[b], h, last_bit);
            bottom[b] = (bottom[b] as isize + h as isize) as usize;
        };
        match masks.row(c) {
            Row::Absent => (first..=last).for_each(|b| step(b, 0)),
            Row::Dense(eqs) => (first..=last).for_each(|b| step(b, eqs[b])),
            Row::Sparse(blocks, bits) => {
                // Walk the symbol's blocks alongside the band's.
                let mut k = blocks.partition_point(|&x| (x as usize) < first);
                for b in first..=last {
                    let eq = if blocks.get(k) == Some(&(b as u32)) {
                        k += 1;
                        bits[k - 1]
                    } else {
                        0
                    };
                    step(b, eq);
                }
            }
        }
        visit(col, first, &vp[first..=last], &vn[first..=last]);
    }
    Ok(bottom[words - 1])
}

/// Distance of a pattern longer than 64 symbols: banded passes, doubling the band until the
/// result fits in it.
fn banded_distance(
    ws: &mut DistanceWorkspace,
    m: usize,
    text: &[u32],
) -> Result<usize, TryReserveError> {
    let longest = m.max(text.len());
    let mut w = 64.max(m.abs_diff(text.len()));
    loop {
        let d = myers_banded(
            &ws.masks,
            m,
            text,
            w,
            &mut ws.vp,
            &mut ws.vn,
            &mut ws.bottom,
            |_, _, _, _| {},
        )?;
        if d <= w || w >= longest {
            return Ok(d);
        }
        w *= 2;
    }
}

/// Unit-cost Levenshtein distance between `a` and `b` (an error only when out of memory).
pub fn distance(
    ws: &mut DistanceWorkspace,
    a: &[u32],
    b: &[u32],
) -> Result<usize, TryReserveError> {
    let (prefix, suffix) = common_affix(a, b);
    let a = &a[prefix..a.len() - suffix];
    let b = &b[prefix..b.len() - suffix];
    // The shorter side becomes the bit-parallel pattern.
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if pattern.is_empty() {
        return Ok(text.len());
    }
    ws.masks.build(pattern)?;
    if pattern.len() <= 64 {
        Ok(hyyro_single(&ws.masks, pattern.len(), text))
    } else {
        banded_distance(ws, pattern.len(), text)
    }
}

#[cfg(test)]
mod tests {
    use super::super::reference::{self, Rng};
    use super::*;

    fn check(alphabet: &[u32], max_len: usize, cases: usize, seed: u64) {
        let mut rng = Rng(seed);
        let mut ws = DistanceWorkspace::new();
        // Odd seeds run the sparse mask layout, even ones the dense.
        ws.masks.force_sparse = seed % 2 == 1;
        for _ in 0..cases {
            let a = rng.seq(max_len, alphabet);
            let b = rng.seq(max_len, alphabet);
            assert_eq!(
                distance(&mut ws, &a, &b).unwrap(),
                reference::distance(&a, &b),
                "{a:?} vs {b:?}"
            );
        }
    }

    #[test]
    fn known_values() {
        let mut ws = DistanceWorkspace::new();
        let s = |t: &str| t.chars().map(|c| c as u32).collect::<Vec<_>>();
        assert_eq!(distance(&mut ws, &s("kitten"), &s("sitting")).unwrap(), 3);
        assert_eq!(distance(&mut ws, &s(""), &s("abc")).unwrap(), 3);
        assert_eq!(
            distance(&mut ws, &s("hello world"), &s("hello wrld")).unwrap(),
            1
        );
        assert_eq!(distance(&mut ws, &s("բարև"), &s("բարեւ")).unwrap(), 2);
        assert_eq!(distance(&mut ws, &s(""), &s("")).unwrap(), 0);
    }

    #[test]
    fn short_random_pairs_match_the_plain_dp() {
        check(&[1, 2, 3], 20, 3000, 7);
        check(&[97, 0x0568, 0x4E00, 0x1F600, 300], 70, 2000, 11);
    }

    #[test]
    fn long_random_pairs_match_the_plain_dp() {
        check(&[1, 2, 3, 4], 300, 300, 13);
        check(&[1, 2, 3, 4], 300, 300, 14);
        check(&(0..40).collect::<Vec<_>>(), 200, 300, 17);
        check(&(250..1250).collect::<Vec<_>>(), 400, 200, 18);
        check(&(250..1250).collect::<Vec<_>>(), 400, 200, 19);
    }
}
