//! Unit-cost Levenshtein distance: common affix stripped, then Hyyrö's bit-parallel algorithm in
//! one machine word when the shorter side fits in 64 symbols, Myers' blocked variant otherwise.
//!
//! The bit vectors follow one convention throughout this family: the *pattern* is laid along the
//! bits (bit `i` ↔ pattern position `i`), the *text* is consumed one symbol per row, and after
//! row `j` bit `i` of `vp`/`vn` says whether `D[i+1][j+1] − D[i][j+1]` is `+1`/`−1`.

use super::common_affix;
use super::pattern::PatternMasks;

/// Reusable buffers for distance computations (one per thread in batch use).
#[derive(Default)]
pub struct DistanceWorkspace {
    pub(crate) masks: PatternMasks,
    vp: Vec<u64>,
    vn: Vec<u64>,
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
        let (hp, hn) = hyyro_step(masks.mask(c, 0), &mut vp, &mut vn);
        if hp & last != 0 {
            score += 1;
        } else if hn & last != 0 {
            score -= 1;
        }
    }
    score
}

/// Run the blocked algorithm of `pattern` (masks built, `m` symbols) over `text`, leaving the final
/// vertical vectors in `vp`/`vn`; returns the distance.
pub(crate) fn myers_blocks(
    masks: &PatternMasks,
    m: usize,
    text: &[u32],
    vp: &mut Vec<u64>,
    vn: &mut Vec<u64>,
) -> usize {
    let words = m.div_ceil(64);
    vp.clear();
    vp.resize(words, !0);
    vn.clear();
    vn.resize(words, 0);
    let last_bit_final = 1u64 << ((m - 1) % 64);
    let mut score = m;
    for &c in text {
        let eqs = masks.masks(c);
        let mut h = 1i32;
        for w in 0..words {
            let eq = eqs.map_or(0, |e| e[w]);
            let last_bit = if w + 1 == words { last_bit_final } else { 1u64 << 63 };
            h = block_step(eq, &mut vp[w], &mut vn[w], h, last_bit);
        }
        score = (score as isize + h as isize) as usize;
    }
    score
}

/// Unit-cost Levenshtein distance between `a` and `b`.
pub fn distance(ws: &mut DistanceWorkspace, a: &[u32], b: &[u32]) -> usize {
    let (prefix, suffix) = common_affix(a, b);
    let a = &a[prefix..a.len() - suffix];
    let b = &b[prefix..b.len() - suffix];
    // The shorter side becomes the bit-parallel pattern.
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if pattern.is_empty() {
        return text.len();
    }
    ws.masks.build(pattern);
    if pattern.len() <= 64 {
        hyyro_single(&ws.masks, pattern.len(), text)
    } else {
        myers_blocks(&ws.masks, pattern.len(), text, &mut ws.vp, &mut ws.vn)
    }
}

#[cfg(test)]
mod tests {
    use super::super::reference::{self, Rng};
    use super::*;

    fn check(alphabet: &[u32], max_len: usize, cases: usize, seed: u64) {
        let mut rng = Rng(seed);
        let mut ws = DistanceWorkspace::new();
        for _ in 0..cases {
            let a = rng.seq(max_len, alphabet);
            let b = rng.seq(max_len, alphabet);
            assert_eq!(distance(&mut ws, &a, &b), reference::distance(&a, &b), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn known_values() {
        let mut ws = DistanceWorkspace::new();
        let s = |t: &str| t.chars().map(|c| c as u32).collect::<Vec<_>>();
        assert_eq!(distance(&mut ws, &s("kitten"), &s("sitting")), 3);
        assert_eq!(distance(&mut ws, &s(""), &s("abc")), 3);
        assert_eq!(distance(&mut ws, &s("hello world"), &s("hello wrld")), 1);
        assert_eq!(distance(&mut ws, &s("բարև"), &s("բարեւ")), 2);
        assert_eq!(distance(&mut ws, &s(""), &s("")), 0);
    }

    #[test]
    fn short_random_pairs_match_the_plain_dp() {
        check(&[1, 2, 3], 20, 3000, 7);
        check(&[97, 0x0568, 0x4E00, 0x1F600, 300], 70, 2000, 11);
    }

    #[test]
    fn long_random_pairs_match_the_plain_dp() {
        check(&[1, 2, 3, 4], 300, 300, 13);
        check(&(0..40).collect::<Vec<_>>(), 200, 300, 17);
    }
}
