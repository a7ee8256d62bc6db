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

/// A diagonal band of the `m × n` matrix: in text column `j` (1-based) the pattern rows
/// `j − above ..= j + below` (clipped to `1..=m`) are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Band {
    pub above: usize,
    pub below: usize,
}

impl Band {
    /// The cells a path of total cost at most `k` can use, for a pattern of `m` and a text of `n`
    /// symbols. With `t = j − i` (the diagonal of cell `(i, j)`) and `δ = n − m`, any path through
    /// `(i, j)` costs at least `|t|` to reach it and `|δ − t|` to finish, so `|t| + |δ − t| ≤ k`,
    /// i.e. `t ∈ [min(0, δ) − s, max(0, δ) + s]` with `s = ⌊(k − |δ|) / 2⌋`: about `k + 1`
    /// diagonals instead of the `2k + 1` of `|i − j| ≤ k`. The band is the same for the reversed
    /// problem (`t ↦ δ − t`). `k < |δ|` is treated as `k = |δ|`.
    pub fn tight(m: usize, n: usize, k: usize) -> Band {
        let s = k.saturating_sub(m.abs_diff(n)) / 2;
        Band {
            above: n.saturating_sub(m) + s,
            below: m.saturating_sub(n) + s,
        }
    }

    /// First and last 64-row block of an `m`-row pattern meeting the band in text column `j ≥ 1`.
    #[inline]
    pub fn blocks(&self, j: usize, m: usize) -> (usize, usize) {
        let lo = j.saturating_sub(self.above).max(1);
        let hi = (j + self.below).min(m);
        ((lo.min(hi) - 1) / 64, (hi - 1) / 64)
    }

    /// True when the band holds every cell of the `m × n` matrix.
    pub fn is_full(&self, m: usize, n: usize) -> bool {
        self.above + 1 >= n && self.below + 1 >= m
    }
}

/// One step of a 64-row block (Hyyrö's formulation, as in rapidfuzz's blocked kernel): `eq` is
/// the block's match mask for the text symbol; `hp`/`hn` hold the horizontal delta entering from
/// above (`+1`/`−1` as 0/1) on input and the delta leaving at bit `out_bit` on output.
/// Branch-free, so the random deltas of real text cost no mispredictions.
#[inline(always)]
fn block_step(eq: u64, vp: &mut u64, vn: &mut u64, hp: &mut u64, hn: &mut u64, out_bit: u32) {
    let (p, n) = (*vp, *vn);
    let x = eq | *hn;
    let d0 = ((x & p).wrapping_add(p) ^ p) | x | n;
    let h_pos = n | !(d0 | p);
    let h_neg = d0 & p;
    let h_pos_s = (h_pos << 1) | *hp;
    let h_neg_s = (h_neg << 1) | *hn;
    *hp = (h_pos >> out_bit) & 1;
    *hn = (h_neg >> out_bit) & 1;
    *vp = h_neg_s | !(d0 | h_pos_s);
    *vn = h_pos_s & d0;
}

/// Advance the band's blocks (`vp`/`vn`, one entry per block, at least one) by one text symbol
/// whose mask in band block `k` is `eq(k)`; the top block sees a `+1` delta from above. Returns
/// the delta (−1, 0 or +1) leaving the last block at bit `last_bit`.
#[inline(always)]
fn advance_band(vp: &mut [u64], vn: &mut [u64], last_bit: u32, eq: impl Fn(usize) -> u64) -> i64 {
    let (mut hp, mut hn) = (1u64, 0u64);
    let body = vp.len() - 1;
    for (k, (p, n)) in vp[..body].iter_mut().zip(vn[..body].iter_mut()).enumerate() {
        block_step(eq(k), p, n, &mut hp, &mut hn, 63);
    }
    block_step(
        eq(body),
        &mut vp[body],
        &mut vn[body],
        &mut hp,
        &mut hn,
        last_bit,
    );
    hp as i64 - hn as i64
}

/// Myers' blocked algorithm restricted to the blocks meeting `band`.
///
/// A block leaving the band at the top stops being computed (the next block assumes a horizontal
/// delta of +1 above it); a block entering at the bottom starts from vertical deltas of +1. Both
/// describe real paths, so every computed value `D'` is an upper bound of the true `D`, and the
/// deltas between computed neighbours stay in −1..=1. `D'` equals `D` at every cell that has an
/// optimal path from the origin inside the computed blocks (the recurrence takes the minimum over
/// that path's predecessor). `visit(j, first_block, vp, vn)` sees the band's words of every
/// column. Returns `D'` at the last row of the final column's last band block: the computed
/// `D[m][n]` when that column's band reaches row `m`, as every [`Band::tight`] of the same `m × n`
/// problem does (it holds the diagonal `n − m`). Memory: two words per pattern block.
pub(crate) fn myers_banded(
    masks: &PatternMasks,
    m: usize,
    text: &[u32],
    band: Band,
    vp: &mut Vec<u64>,
    vn: &mut Vec<u64>,
    mut visit: impl FnMut(usize, usize, &[u64], &[u64]),
) -> Result<usize, TryReserveError> {
    let words = m.div_ceil(64);
    let final_bit = ((m - 1) % 64) as u32;
    fill(vp, words, !0)?;
    fill(vn, words, 0)?;
    // `score` is D' at the last row of the band's last block.
    let (_, mut last) = band.blocks(1, m);
    let mut score = (64 * (last + 1)).min(m);
    for (col, &c) in text.iter().enumerate() {
        let (first, new_last) = band.blocks(col + 1, m);
        if new_last > last {
            // The entering block starts with vertical deltas of +1 (the buffers' initial state).
            score += (64 * (new_last + 1)).min(m) - 64 * (last + 1);
            last = new_last;
        }
        let last_bit = if last + 1 == words { final_bit } else { 63 };
        let (bvp, bvn) = (&mut vp[first..=last], &mut vn[first..=last]);
        let h = match masks.row(c) {
            Row::Absent => advance_band(bvp, bvn, last_bit, |_| 0),
            Row::Dense(eqs) => {
                let eqs = &eqs[first..=last];
                advance_band(bvp, bvn, last_bit, |k| eqs[k])
            }
            Row::Sparse(blocks, bits) => {
                let lo = blocks.partition_point(|&x| (x as usize) < first);
                let hi = blocks.partition_point(|&x| (x as usize) <= last);
                let (blocks, bits) = (&blocks[lo..hi], &bits[lo..hi]);
                advance_band(bvp, bvn, last_bit, |k| {
                    blocks
                        .binary_search(&((first + k) as u32))
                        .map_or(0, |e| bits[e])
                })
            }
        };
        score = (score as i64 + h) as usize;
        visit(col, first, &vp[first..=last], &vn[first..=last]);
    }
    Ok(score)
}

/// A budget known to be at least the distance of the whole `m × n` problem (`delta = n − m`):
/// lets [`myers_pruned`] drop the blocks no optimal path can reach.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prune {
    pub budget: usize,
    pub delta: isize,
}

impl Prune {
    pub fn new(m: usize, n: usize, budget: usize) -> Prune {
        Prune {
            budget,
            delta: n as isize - m as isize,
        }
    }

    /// Lower bound of `D'(i, j) + |δ − (j − i)|` (the cost of the best path through `(i, j)`
    /// if `D'(i, j)` is exact) over the rows `i` of block `b` (last row `end`), from the block's
    /// bottom value `s`: `D'` changes by at most 1 per row, so `D'(i) ≥ s − (end − i)`.
    #[inline]
    fn block_bound(&self, b: usize, end: usize, s: usize, j: usize) -> isize {
        let c = j as isize - self.delta;
        let start = 64 * b as isize + 1;
        let through = if c >= start { c } else { 2 * start - c };
        s as isize - end as isize + through
    }

    /// The same for the single cell `(i, j)` of value `s`.
    #[inline]
    fn cell_bound(&self, i: usize, s: usize, j: usize) -> isize {
        s as isize + (i as isize - (j as isize - self.delta)).abs()
    }
}

/// Sum of the vertical deltas of block `b`'s rows (`m` pattern rows in all).
#[inline]
fn block_delta(vp: u64, vn: u64, b: usize, m: usize) -> isize {
    let rows = (64 * (b + 1)).min(m) - 64 * b;
    let mask = if rows == 64 { !0 } else { (1u64 << rows) - 1 };
    (vp & mask).count_ones() as isize - (vn & mask).count_ones() as isize
}

/// [`myers_banded`] inside `band`, further restricted, column by column, to the blocks an
/// optimal path can use when the distance is at most `prune.budget` (Ukkonen's cut-off, as in
/// rapidfuzz's blocked kernel, with the remaining length difference as the cost still to come).
///
/// A cell on an optimal path has `D + |δ − t| ≤ d ≤ budget`. By induction over the columns, such
/// cells are computed exactly: their optimal predecessor is (exact, by induction), and their block
/// is computed — a top or bottom block is dropped only when a lower bound of `D' + |δ − t|` over
/// all its rows exceeds the budget (no optimal cell, and none later above a dropped top block),
/// and a block is (re)entered below the last one whenever the last one's bottom cell, in this
/// column or the previous one, could be on an optimal path (the only ways in). A (re)entered block
/// starts from vertical deltas of +1 below the previous column's bottom value, an upper bound as
/// in [`myers_banded`], so every value stays an upper bound and every read the callers make is as
/// in the unpruned band. Returns `D'` at the last row of the final column's last block and that
/// column's first and last computed blocks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn myers_pruned(
    masks: &PatternMasks,
    m: usize,
    text: &[u32],
    band: Band,
    prune: Prune,
    vp: &mut Vec<u64>,
    vn: &mut Vec<u64>,
    mut visit: impl FnMut(usize, usize, &[u64], &[u64]),
) -> Result<(usize, usize, usize), TryReserveError> {
    let pass = Pass::new(m, band, Some(prune));
    let mut st = pass.start(vp, vn)?;
    for (col, &c) in text.iter().enumerate() {
        pass.column(masks, c, &mut st, vp, vn, col + 1);
        visit(
            col,
            st.first,
            &vp[st.first..=st.last],
            &vn[st.first..=st.last],
        );
    }
    Ok((st.score, st.first, st.last))
}

/// Two passes of [`myers_pruned`] with the same pattern length, band and budget (`None`: no
/// pruning, every block of the band) over their own masks and texts, run together: a Hirschberg
/// split's forward and backward passes. One pass alone waits on each block step's carry chain
/// (the next block needs the delta leaving this one); the two passes' steps are independent, and
/// so are those of consecutive columns one block apart ([`Pass::columns_pair`]), so the
/// processor overlaps eight chains (in two AVX2 vectors where available). Each pass computes a
/// superset of the blocks [`myers_pruned`] computes, so its values keep the guarantees the
/// callers read: upper bounds, exact wherever an optimal path runs inside the computed blocks.
/// Returns each pass's `(D', first, last)` as [`myers_pruned`] does.
#[allow(clippy::too_many_arguments)]
pub(crate) fn myers_pruned_pair(
    masks: [&PatternMasks; 2],
    m: usize,
    texts: [&[u32]; 2],
    band: Band,
    prune: Option<Prune>,
    [vp_a, vp_b]: [&mut Vec<u64>; 2],
    [vn_a, vn_b]: [&mut Vec<u64>; 2],
) -> Result<[(usize, usize, usize); 2], TryReserveError> {
    let pass = Pass::new(m, band, prune);
    // The masks of a symbol absent from a pattern: zero in every block.
    let mut zeros = Vec::new();
    fill(&mut zeros, pass.words, 0)?;
    let dense = |row| match row {
        Row::Absent => Some(&zeros[..]),
        Row::Dense(eqs) => Some(eqs),
        Row::Sparse(..) => None,
    };
    let (mut st_a, mut st_b) = (pass.start(vp_a, vn_a)?, pass.start(vp_b, vn_b)?);
    let both = texts[0].len().min(texts[1].len());
    let rows = |col: usize| {
        let (row_a, row_b) = (masks[0].row(texts[0][col]), masks[1].row(texts[1][col]));
        dense(row_a).zip(dense(row_b))
    };
    let mut col = 0;
    while col < both {
        let j = col + 1;
        // The next `COLUMNS` columns together when all their masks are dense.
        let group = (col + COLUMNS <= both)
            .then(|| {
                let mut masks = [(&zeros[..], &zeros[..]); COLUMNS];
                for (k, slot) in masks.iter_mut().enumerate() {
                    *slot = rows(col + k)?;
                }
                Some(masks)
            })
            .flatten();
        if let Some(group) = group {
            pass.columns_pair(
                (&mut st_a, vp_a, vn_a, group.map(|(eq, _)| eq)),
                (&mut st_b, vp_b, vn_b, group.map(|(_, eq)| eq)),
                j,
            );
            col += COLUMNS;
            continue;
        }
        match (rows(col), ()) {
            (Some((eq_a, eq_b)), ()) => {
                pass.column_pair(
                    (&mut st_a, vp_a, vn_a, eq_a),
                    (&mut st_b, vp_b, vn_b, eq_b),
                    j,
                );
                col += 1;
            }
            (None, ()) => {
                pass.column(masks[0], texts[0][col], &mut st_a, vp_a, vn_a, j);
                pass.column(masks[1], texts[1][col], &mut st_b, vp_b, vn_b, j);
                col += 1;
            }
        }
    }
    // The longer text's last column, if any, alone.
    for (col, &c) in texts[0].iter().enumerate().skip(both) {
        pass.column(masks[0], c, &mut st_a, vp_a, vn_a, col + 1);
    }
    for (col, &c) in texts[1].iter().enumerate().skip(both) {
        pass.column(masks[1], c, &mut st_b, vp_b, vn_b, col + 1);
    }
    Ok([
        (st_a.score, st_a.first, st_a.last),
        (st_b.score, st_b.first, st_b.last),
    ])
}

/// Block steps of two passes at once: block `k` of `a` and block `k` of `b` (each the blocks
/// `vp`, `vn` and their masks `eq`, all of one length) with their own horizontal deltas `h_*`
/// (in: entering the first block; out: leaving the last). Leaving bit 63 of every block.
#[inline(always)]
fn block_steps_pair(
    (vp_a, vn_a, eq_a): (&mut [u64], &mut [u64], &[u64]),
    (vp_b, vn_b, eq_b): (&mut [u64], &mut [u64], &[u64]),
    h_a: &mut (u64, u64),
    h_b: &mut (u64, u64),
) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx2() {
        // SAFETY: the processor supports AVX2 (simd::avx2 checked it just above).
        unsafe { block_steps_pair_avx2((vp_a, vn_a, eq_a), (vp_b, vn_b, eq_b), h_a, h_b) };
        return;
    }
    let blocks_a = vp_a.iter_mut().zip(vn_a.iter_mut()).zip(eq_a);
    let blocks_b = vp_b.iter_mut().zip(vn_b.iter_mut()).zip(eq_b);
    for (((p_a, n_a), &e_a), ((p_b, n_b), &e_b)) in blocks_a.zip(blocks_b) {
        block_step(e_a, p_a, n_a, &mut h_a.0, &mut h_a.1, 63);
        block_step(e_b, p_b, n_b, &mut h_b.0, &mut h_b.1, 63);
    }
}

/// [`block_steps_pair`] with the two passes in the two 64-bit lanes of one 128-bit vector: the
/// same operations as [`block_step`] on both lanes (each lane's add carries within the lane), so
/// the pair costs one step's instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn block_steps_pair_avx2(
    (vp_a, vn_a, eq_a): (&mut [u64], &mut [u64], &[u64]),
    (vp_b, vn_b, eq_b): (&mut [u64], &mut [u64], &[u64]),
    h_a: &mut (u64, u64),
    h_b: &mut (u64, u64),
) {
    use std::arch::x86_64::*;
    let pair = |a: u64, b: u64| _mm_set_epi64x(b as i64, a as i64);
    let ones = _mm_set1_epi64x(-1);
    let (mut hp, mut hn) = (pair(h_a.0, h_b.0), pair(h_a.1, h_b.1));
    let blocks_a = vp_a.iter_mut().zip(vn_a.iter_mut()).zip(eq_a);
    let blocks_b = vp_b.iter_mut().zip(vn_b.iter_mut()).zip(eq_b);
    for (((p_a, n_a), &e_a), ((p_b, n_b), &e_b)) in blocks_a.zip(blocks_b) {
        let (p, n, eq) = (pair(*p_a, *p_b), pair(*n_a, *n_b), pair(e_a, e_b));
        let x = _mm_or_si128(eq, hn);
        let sum = _mm_add_epi64(_mm_and_si128(x, p), p);
        let d0 = _mm_or_si128(_mm_or_si128(_mm_xor_si128(sum, p), x), n);
        let h_pos = _mm_or_si128(n, _mm_andnot_si128(_mm_or_si128(d0, p), ones));
        let h_neg = _mm_and_si128(d0, p);
        let h_pos_s = _mm_or_si128(_mm_slli_epi64::<1>(h_pos), hp);
        let h_neg_s = _mm_or_si128(_mm_slli_epi64::<1>(h_neg), hn);
        hp = _mm_srli_epi64::<63>(h_pos);
        hn = _mm_srli_epi64::<63>(h_neg);
        let p = _mm_or_si128(h_neg_s, _mm_andnot_si128(_mm_or_si128(d0, h_pos_s), ones));
        let n = _mm_and_si128(h_pos_s, d0);
        (*p_a, *p_b) = (
            _mm_cvtsi128_si64(p) as u64,
            _mm_extract_epi64::<1>(p) as u64,
        );
        (*n_a, *n_b) = (
            _mm_cvtsi128_si64(n) as u64,
            _mm_extract_epi64::<1>(n) as u64,
        );
    }
    *h_a = (_mm_cvtsi128_si64(hp) as u64, _mm_cvtsi128_si64(hn) as u64);
    *h_b = (
        _mm_extract_epi64::<1>(hp) as u64,
        _mm_extract_epi64::<1>(hn) as u64,
    );
}

/// One pass of a pair: its state, blocks and the masks of its text symbol(s).
type Lane<'a, E> = (&'a mut RowState, &'a mut [u64], &'a mut [u64], E);

/// Columns advanced together by [`Pass::columns_pair`].
const COLUMNS: usize = 4;

/// The first steps of [`Pass::columns_pair`] for one pass whose first block `f` has at least
/// `COLUMNS` blocks below it: at step `t < COLUMNS`, block `f + t − c` of every column `c ≤ t`
/// (the `top` of each column with its block `f`). Returns the delta leaving each column's last
/// block so far.
#[inline(always)]
fn lead_in(
    st: &mut RowState,
    vp: &mut [u64],
    vn: &mut [u64],
    eqs: [&[u64]; COLUMNS],
) -> [(u64, u64); COLUMNS] {
    let f = st.first;
    let mut h = [(1u64, 0u64); COLUMNS];
    for t in 0..COLUMNS {
        for (c, (hp, hn)) in h.iter_mut().enumerate().take(t + 1) {
            let b = f + t - c;
            block_step(eqs[c][b], &mut vp[b], &mut vn[b], hp, hn, 63);
            if b == f {
                st.top = (st.top as isize + *hp as isize - *hn as isize) as usize;
            }
        }
    }
    h
}

/// The lockstep of [`Pass::columns_pair`] over steps `COLUMNS..len` of two passes (their blocks
/// from the first on, `vp`, `vn` and the masks of the columns' text symbols): at step `t`, block
/// `t − c` of every column `c` of each pass. `h` holds each pass's deltas per column, in and out.
/// On return every block holds the last column that advanced it.
#[inline(always)]
fn columns_steps(
    (vp_a, vn_a, eqs_a): (&mut [u64], &mut [u64], [&[u64]; COLUMNS]),
    (vp_b, vn_b, eqs_b): (&mut [u64], &mut [u64], [&[u64]; COLUMNS]),
    h_a: &mut [(u64, u64); COLUMNS],
    h_b: &mut [(u64, u64); COLUMNS],
) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx2() {
        // SAFETY: the processor supports AVX2 (simd::avx2 checked it just above).
        unsafe { columns_steps_avx2((vp_a, vn_a, eqs_a), (vp_b, vn_b, eqs_b), h_a, h_b) };
        return;
    }
    for t in COLUMNS..vp_a.len() {
        for c in 0..COLUMNS {
            let b = t - c;
            let (hp, hn) = &mut h_a[c];
            block_step(eqs_a[c][b], &mut vp_a[b], &mut vn_a[b], hp, hn, 63);
            let (hp, hn) = &mut h_b[c];
            block_step(eqs_b[c][b], &mut vp_b[b], &mut vn_b[b], hp, hn, 63);
        }
    }
}

/// [`columns_steps`] in two 256-bit vectors of four 64-bit lanes: `x` = `[a column 0, a column
/// 1, b column 0, b column 1]`, `y` = the same of columns 2 and 3. A column's output words go to
/// the next column's lane for the next step without leaving the registers (one unpack into `x`,
/// one byte shift from `x` and `y` into `y`, both inside 128-bit halves); only column 3's are
/// stored, and the others' last words at the end.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn columns_steps_avx2(
    (vp_a, vn_a, eqs_a): (&mut [u64], &mut [u64], [&[u64]; COLUMNS]),
    (vp_b, vn_b, eqs_b): (&mut [u64], &mut [u64], [&[u64]; COLUMNS]),
    h_a: &mut [(u64, u64); COLUMNS],
    h_b: &mut [(u64, u64); COLUMNS],
) {
    use std::arch::x86_64::*;
    let len = vp_a.len().min(vp_b.len());
    let lanes = |w: [u64; 4]| _mm256_set_epi64x(w[3] as i64, w[2] as i64, w[1] as i64, w[0] as i64);
    let lane = |v: __m256i, k: usize| -> u64 {
        let half = if k < 2 {
            _mm256_castsi256_si128(v)
        } else {
            _mm256_extracti128_si256::<1>(v)
        };
        (if k.is_multiple_of(2) {
            _mm_cvtsi128_si64(half)
        } else {
            _mm_extract_epi64::<1>(half)
        }) as u64
    };
    let ones = _mm256_set1_epi64x(-1);
    // One Hyyrö block step on four lanes; returns the new `vp`, `vn`.
    let step = |p: __m256i, n: __m256i, eq: __m256i, hp: &mut __m256i, hn: &mut __m256i| {
        let x = _mm256_or_si256(eq, *hn);
        let sum = _mm256_add_epi64(_mm256_and_si256(x, p), p);
        let d0 = _mm256_or_si256(_mm256_or_si256(_mm256_xor_si256(sum, p), x), n);
        let h_pos = _mm256_or_si256(n, _mm256_andnot_si256(_mm256_or_si256(d0, p), ones));
        let h_neg = _mm256_and_si256(d0, p);
        let h_pos_s = _mm256_or_si256(_mm256_slli_epi64::<1>(h_pos), *hp);
        let h_neg_s = _mm256_or_si256(_mm256_slli_epi64::<1>(h_neg), *hn);
        *hp = _mm256_srli_epi64::<63>(h_pos);
        *hn = _mm256_srli_epi64::<63>(h_neg);
        let vp = _mm256_or_si256(
            h_neg_s,
            _mm256_andnot_si256(_mm256_or_si256(d0, h_pos_s), ones),
        );
        (vp, _mm256_and_si256(h_pos_s, d0))
    };
    let h = |k: usize, c: usize| [h_a[c].0, h_a[c + 1].0, h_b[c].0, h_b[c + 1].0][k];
    let g = |k: usize, c: usize| [h_a[c].1, h_a[c + 1].1, h_b[c].1, h_b[c + 1].1][k];
    let (mut hp_x, mut hn_x) = (
        lanes([0, 1, 2, 3].map(|k| h(k, 0))),
        lanes([0, 1, 2, 3].map(|k| g(k, 0))),
    );
    let (mut hp_y, mut hn_y) = (
        lanes([0, 1, 2, 3].map(|k| h(k, 2))),
        lanes([0, 1, 2, 3].map(|k| g(k, 2))),
    );
    // Each column's last words of the lead-in (column `c`: block `COLUMNS − 1 − c`); column 3's
    // lanes are not read.
    let words = |v: &[u64], w: &[u64]| lanes([v[3], v[2], w[3], w[2]]);
    let (mut out_px, mut out_nx) = (words(vp_a, vp_b), words(vn_a, vn_b));
    let (mut out_py, mut out_ny) = (
        lanes([vp_a[1], 0, vp_b[1], 0]),
        lanes([vn_a[1], 0, vn_b[1], 0]),
    );
    for t in COLUMNS..len {
        let fresh_p = lanes([vp_a[t], 0, vp_b[t], 0]);
        let fresh_n = lanes([vn_a[t], 0, vn_b[t], 0]);
        let p_x = _mm256_unpacklo_epi64(fresh_p, out_px);
        let n_x = _mm256_unpacklo_epi64(fresh_n, out_nx);
        let p_y = _mm256_alignr_epi8::<8>(out_py, out_px);
        let n_y = _mm256_alignr_epi8::<8>(out_ny, out_nx);
        let eq_x = lanes([eqs_a[0][t], eqs_a[1][t - 1], eqs_b[0][t], eqs_b[1][t - 1]]);
        let eq_y = lanes([
            eqs_a[2][t - 2],
            eqs_a[3][t - 3],
            eqs_b[2][t - 2],
            eqs_b[3][t - 3],
        ]);
        (out_px, out_nx) = step(p_x, n_x, eq_x, &mut hp_x, &mut hn_x);
        (out_py, out_ny) = step(p_y, n_y, eq_y, &mut hp_y, &mut hn_y);
        (vp_a[t - 3], vp_b[t - 3]) = (lane(out_py, 1), lane(out_py, 3));
        (vn_a[t - 3], vn_b[t - 3]) = (lane(out_ny, 1), lane(out_ny, 3));
    }
    // Columns 0, 1 and 2's last words, kept in the vectors until now.
    for (c, v, k) in [(0, out_px, 0), (1, out_px, 1), (2, out_py, 0)] {
        let b = len - 1 - c;
        vp_a[b] = lane(v, k);
        vp_b[b] = lane(v, k + 2);
    }
    for (c, v, k) in [(0, out_nx, 0), (1, out_nx, 1), (2, out_ny, 0)] {
        let b = len - 1 - c;
        vn_a[b] = lane(v, k);
        vn_b[b] = lane(v, k + 2);
    }
    for (c, hp, hn, k) in [
        (0, hp_x, hn_x, 0),
        (1, hp_x, hn_x, 1),
        (2, hp_y, hn_y, 0),
        (3, hp_y, hn_y, 1),
    ] {
        h_a[c] = (lane(hp, k), lane(hn, k));
        h_b[c] = (lane(hp, k + 2), lane(hn, k + 2));
    }
}

/// Where a pruned pass stands after a column: its first and last computed blocks and the `D'`
/// values at their last rows.
struct RowState {
    first: usize,
    last: usize,
    top: usize,
    score: usize,
}

/// The fixed parameters of a pruned pass: the pattern's length and blocks, the band, and the
/// budget (`None`: every block of the band is computed, none dropped).
#[derive(Clone, Copy)]
struct Pass {
    m: usize,
    words: usize,
    final_bit: u32,
    band: Band,
    prune: Option<Prune>,
}

impl Pass {
    fn new(m: usize, band: Band, prune: Option<Prune>) -> Pass {
        Pass {
            m,
            words: m.div_ceil(64),
            final_bit: ((m - 1) % 64) as u32,
            band,
            prune,
        }
    }

    /// Last pattern row of block `b`.
    #[inline(always)]
    fn end(&self, b: usize) -> usize {
        (64 * (b + 1)).min(self.m)
    }

    /// The bit of block `b` whose horizontal delta goes on to the block below (or is the last
    /// row's).
    #[inline(always)]
    fn out_bit(&self, b: usize) -> u32 {
        if b + 1 == self.words {
            self.final_bit
        } else {
            63
        }
    }

    /// Cell `(i, j)` of value `s` may be on an optimal path.
    #[inline(always)]
    fn reachable(&self, i: usize, s: usize, j: usize) -> bool {
        self.prune
            .is_none_or(|p| p.cell_bound(i, s, j) <= p.budget as isize)
    }

    /// No row of block `b` (last row's value `s`) in column `j` can be on an optimal path.
    #[inline(always)]
    fn unreachable_block(&self, b: usize, s: usize, j: usize) -> bool {
        self.prune
            .is_some_and(|p| p.block_bound(b, self.end(b), s, j) > p.budget as isize)
    }

    /// The state before the first column (`D[i][0] = i`), with the buffers reset.
    fn start(&self, vp: &mut Vec<u64>, vn: &mut Vec<u64>) -> Result<RowState, TryReserveError> {
        fill(vp, self.words, !0)?;
        fill(vn, self.words, 0)?;
        let (first, last) = self.band.blocks(1, self.m);
        Ok(RowState {
            first,
            last,
            top: self.end(first),
            score: self.end(last),
        })
    }

    /// Column `j` (1-based) of text symbol `c`, whatever the layout of its masks.
    #[inline(always)]
    fn column(
        &self,
        masks: &PatternMasks,
        c: u32,
        st: &mut RowState,
        vp: &mut [u64],
        vn: &mut [u64],
        j: usize,
    ) {
        let static_last = self.begin_column(st, vp, vn, j);
        match masks.row(c) {
            Row::Absent => self.column_with(st, vp, vn, j, static_last, |_| 0),
            Row::Dense(eqs) => self.column_with(st, vp, vn, j, static_last, |b| eqs[b]),
            Row::Sparse(blocks, bits) => self.column_with(st, vp, vn, j, static_last, |b| {
                blocks.binary_search(&(b as u32)).map_or(0, |e| bits[e])
            }),
        }
    }

    /// Column `j` whose masks are `eq(block)`.
    #[inline(always)]
    fn column_with(
        &self,
        st: &mut RowState,
        vp: &mut [u64],
        vn: &mut [u64],
        j: usize,
        static_last: usize,
        eq: impl Fn(usize) -> u64,
    ) {
        let mut h = (1u64, 0u64);
        let body = self.advance_first(st, vp, vn, &eq, &mut h);
        for b in body..st.last {
            block_step(eq(b), &mut vp[b], &mut vn[b], &mut h.0, &mut h.1, 63);
        }
        let last = st.last;
        let bit = self.out_bit(last);
        block_step(
            eq(last),
            &mut vp[last],
            &mut vn[last],
            &mut h.0,
            &mut h.1,
            bit,
        );
        self.end_column(st, vp, vn, j, static_last, h, eq);
    }

    /// Leave the blocks above the band of column `j`; returns the band's last block there.
    #[inline(always)]
    fn begin_column(&self, st: &mut RowState, vp: &[u64], vn: &[u64], j: usize) -> usize {
        let (static_first, static_last) = self.band.blocks(j, self.m);
        while st.first < static_first.min(st.last) {
            st.first += 1;
            st.top = (st.top as isize + block_delta(vp[st.first], vn[st.first], st.first, self.m))
                as usize;
        }
        static_last
    }

    /// Advance the first computed block when it is not also the last (updating `top`); returns
    /// the next block to advance. `h` is the horizontal delta entering it and leaving it.
    #[inline(always)]
    fn advance_first(
        &self,
        st: &mut RowState,
        vp: &mut [u64],
        vn: &mut [u64],
        eq: impl Fn(usize) -> u64,
        h: &mut (u64, u64),
    ) -> usize {
        let first = st.first;
        if first == st.last {
            return first;
        }
        block_step(
            eq(first),
            &mut vp[first],
            &mut vn[first],
            &mut h.0,
            &mut h.1,
            63,
        );
        st.top = (st.top as isize + h.0 as isize - h.1 as isize) as usize;
        first + 1
    }

    /// Advance the computed blocks of two passes in one column, block steps interleaved; returns
    /// the horizontal delta leaving each pass's last block.
    #[inline(always)]
    fn advance_pair(
        &self,
        (st_a, vp_a, vn_a, eq_a): (&mut RowState, &mut [u64], &mut [u64], &[u64]),
        (st_b, vp_b, vn_b, eq_b): (&mut RowState, &mut [u64], &mut [u64], &[u64]),
    ) -> [(u64, u64); 2] {
        let (mut h_a, mut h_b) = ((1u64, 0u64), (1u64, 0u64));
        let body_a = self.advance_first(st_a, vp_a, vn_a, |b| eq_a[b], &mut h_a);
        let body_b = self.advance_first(st_b, vp_b, vn_b, |b| eq_b[b], &mut h_b);
        let (last_a, last_b) = (st_a.last, st_b.last);
        let both = (last_a - body_a).min(last_b - body_b);
        let a = (
            &mut vp_a[body_a..body_a + both],
            &mut vn_a[body_a..body_a + both],
            &eq_a[body_a..body_a + both],
        );
        let b = (
            &mut vp_b[body_b..body_b + both],
            &mut vn_b[body_b..body_b + both],
            &eq_b[body_b..body_b + both],
        );
        block_steps_pair(a, b, &mut h_a, &mut h_b);
        for b in body_a + both..last_a {
            block_step(
                eq_a[b],
                &mut vp_a[b],
                &mut vn_a[b],
                &mut h_a.0,
                &mut h_a.1,
                63,
            );
        }
        for b in body_b + both..last_b {
            block_step(
                eq_b[b],
                &mut vp_b[b],
                &mut vn_b[b],
                &mut h_b.0,
                &mut h_b.1,
                63,
            );
        }
        let (bit_a, bit_b) = (self.out_bit(last_a), self.out_bit(last_b));
        block_step(
            eq_a[last_a],
            &mut vp_a[last_a],
            &mut vn_a[last_a],
            &mut h_a.0,
            &mut h_a.1,
            bit_a,
        );
        block_step(
            eq_b[last_b],
            &mut vp_b[last_b],
            &mut vn_b[last_b],
            &mut h_b.0,
            &mut h_b.1,
            bit_b,
        );
        [h_a, h_b]
    }

    /// Column `j` of two passes, their block steps interleaved.
    #[inline(always)]
    fn column_pair(&self, a: Lane<'_, &[u64]>, b: Lane<'_, &[u64]>, j: usize) {
        let ((st_a, vp_a, vn_a, eq_a), (st_b, vp_b, vn_b, eq_b)) = (a, b);
        let static_last = self.begin_column(st_a, vp_a, vn_a, j);
        self.begin_column(st_b, vp_b, vn_b, j);
        let [h_a, h_b] = self.advance_pair((st_a, vp_a, vn_a, eq_a), (st_b, vp_b, vn_b, eq_b));
        self.end_column(st_a, vp_a, vn_a, j, static_last, h_a, |b| eq_a[b]);
        self.end_column(st_b, vp_b, vn_b, j, static_last, h_b, |b| eq_b[b]);
    }

    /// Columns `j .. j + COLUMNS` of two passes (`eqs`: the masks of their text symbols): eight
    /// independent carry chains. Each column follows one block behind the one before (its block
    /// `b` needs the previous column's block `b` and its own block `b − 1`), so at each step
    /// block `t − c` of every column `c` of both passes advances.
    ///
    /// Every column starts where column `j` started and takes every block the column before it
    /// ends with (no block is dropped before the last column, and the blocks above the band are
    /// left only at column `j + COLUMNS`): a superset of the blocks [`myers_pruned`] computes,
    /// each from a valid previous column, so every value is still an upper bound, exact wherever
    /// an optimal path runs inside the computed blocks (the reads the callers make).
    fn columns_pair(
        &self,
        a: Lane<'_, [&[u64]; COLUMNS]>,
        b: Lane<'_, [&[u64]; COLUMNS]>,
        j: usize,
    ) {
        let ((st_a, vp_a, vn_a, eqs_a), (st_b, vp_b, vn_b, eqs_b)) = (a, b);
        self.begin_column(st_a, vp_a, vn_a, j);
        self.begin_column(st_b, vp_b, vn_b, j);
        // The lockstep needs `COLUMNS + 1` blocks in column `j` of each; narrower: one at a time.
        let steps = (st_a.last - st_a.first).min(st_b.last - st_b.first);
        if steps < COLUMNS {
            for c in 0..COLUMNS {
                let (a, b) = (
                    (&mut *st_a, &mut *vp_a, &mut *vn_a, eqs_a[c]),
                    (&mut *st_b, &mut *vp_b, &mut *vn_b, eqs_b[c]),
                );
                self.column_pair(a, b, j + c);
            }
            return;
        }
        let (f_a, f_b) = (st_a.first, st_b.first);
        let mut h_a = lead_in(st_a, vp_a, vn_a, eqs_a);
        let mut h_b = lead_in(st_b, vp_b, vn_b, eqs_b);
        columns_steps(
            (
                &mut vp_a[f_a..f_a + steps],
                &mut vn_a[f_a..f_a + steps],
                eqs_a.map(|eq| &eq[f_a..f_a + steps]),
            ),
            (
                &mut vp_b[f_b..f_b + steps],
                &mut vn_b[f_b..f_b + steps],
                eqs_b.map(|eq| &eq[f_b..f_b + steps]),
            ),
            &mut h_a,
            &mut h_b,
        );
        for (st, vp, vn, eqs, f, h) in [
            (st_a, vp_a, vn_a, eqs_a, f_a, h_a),
            (st_b, vp_b, vn_b, eqs_b, f_b, h_b),
        ] {
            // Each column in turn from where the lockstep left it to the last block of the one
            // before, entering blocks below; the last column also drops.
            for (c, (eq, h)) in eqs.into_iter().zip(h).enumerate() {
                let (mut hp, mut hn) = h;
                let last = st.last;
                for b in f + steps - c..last {
                    block_step(eq[b], &mut vp[b], &mut vn[b], &mut hp, &mut hn, 63);
                }
                let bit = self.out_bit(last);
                block_step(
                    eq[last],
                    &mut vp[last],
                    &mut vn[last],
                    &mut hp,
                    &mut hn,
                    bit,
                );
                let static_last = self.band.blocks(j + c, self.m).1;
                let eq = |b: usize| eq[b];
                if c + 1 < COLUMNS {
                    self.enter_below(st, vp, vn, j + c, static_last, (hp, hn), eq);
                } else {
                    self.end_column(st, vp, vn, j + c, static_last, (hp, hn), eq);
                }
            }
        }
    }

    /// Finish column `j` once its computed blocks are advanced (`h` leaving the last one): enter
    /// blocks below while an optimal path may enter them, then drop the bottom and top blocks no
    /// optimal path can use.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn end_column(
        &self,
        st: &mut RowState,
        vp: &mut [u64],
        vn: &mut [u64],
        j: usize,
        static_last: usize,
        h: (u64, u64),
        eq: impl Fn(usize) -> u64,
    ) {
        self.enter_below(st, vp, vn, j, static_last, h, eq);
        self.drop_unreachable(st, vp, vn, j);
    }

    /// The score of column `j` from `h` leaving its last block, and the blocks entered below.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn enter_below(
        &self,
        st: &mut RowState,
        vp: &mut [u64],
        vn: &mut [u64],
        j: usize,
        static_last: usize,
        (mut hp, mut hn): (u64, u64),
        eq: impl Fn(usize) -> u64,
    ) {
        // `prev`: the last block's bottom value in the previous column.
        let mut prev = st.score;
        st.score = (st.score as isize + hp as isize - hn as isize) as usize;
        while st.last < static_last {
            let e = 64 * (st.last + 1);
            if !self.reachable(e, prev, j - 1) && !self.reachable(e, st.score, j) {
                break;
            }
            let b = st.last + 1;
            vp[b] = !0;
            vn[b] = 0;
            // The entered block's previous column: +1 per row below the bottom value above it.
            prev += self.end(b) - 64 * b;
            block_step(
                eq(b),
                &mut vp[b],
                &mut vn[b],
                &mut hp,
                &mut hn,
                self.out_bit(b),
            );
            if st.first == st.last {
                st.top = st.score;
            }
            st.score = (prev as isize + hp as isize - hn as isize) as usize;
            st.last = b;
        }
    }

    /// Drop the bottom and top blocks of column `j` no optimal path can use.
    #[inline(always)]
    fn drop_unreachable(&self, st: &mut RowState, vp: &[u64], vn: &[u64], j: usize) {
        // (A bottom block is dropped only when the block above's bottom cell is out of reach
        // too, so that it is not entered again in the next column: no drop-and-enter churn.)
        while st.last > st.first && self.unreachable_block(st.last, st.score, j) {
            let last = st.last;
            let above =
                (st.score as isize - block_delta(vp[last], vn[last], last, self.m)) as usize;
            if self.reachable(self.end(last - 1), above, j) {
                break;
            }
            st.score = above;
            st.last -= 1;
        }
        if st.first == st.last {
            st.top = st.score;
        }
        while st.first < st.last && self.unreachable_block(st.first, st.top, j) {
            st.first += 1;
            st.top = (st.top as isize + block_delta(vp[st.first], vn[st.first], st.first, self.m))
                as usize;
        }
    }
}

/// `D'` at the last row of every block `b ∈ first..=last` (the band's blocks in the final
/// column) after [`myers_banded`], from its result `score` (the last row of block `last`)
/// upwards by the blocks' vertical deltas; `out[b]` is `usize::MAX` for the other blocks.
pub(crate) fn block_bottoms(
    vp: &[u64],
    vn: &[u64],
    m: usize,
    (first, last): (usize, usize),
    score: usize,
    out: &mut Vec<usize>,
) -> Result<(), TryReserveError> {
    fill(out, m.div_ceil(64), usize::MAX)?;
    let mut v = score;
    for b in (first..=last).rev() {
        out[b] = v;
        let rows = (64 * (b + 1)).min(m) - 64 * b;
        let mask = if rows == 64 { !0 } else { (1u64 << rows) - 1 };
        v = v + (vn[b] & mask).count_ones() as usize - (vp[b] & mask).count_ones() as usize;
    }
    Ok(())
}

/// First budget of a banded pass: the length difference plus 128, i.e. two or three blocks per
/// column beyond the difference. Even when the distance is larger, the best path inside such a
/// band is usually close to optimal, so the bound it gives is a good second budget.
pub(crate) fn first_budget(m: usize, n: usize) -> usize {
    m.abs_diff(n) + 128
}

/// The budget after a banded pass with budget `k` gave the upper bound `bound > k`: the bound
/// itself, so the next pass is exact and the last. (Doubling instead, `min(2k, bound)`, costs
/// several passes on OCR pages: the best path inside even a narrow band is usually within a few
/// edits of the optimum, far above `2k` when the first budget is small.)
pub(crate) fn next_budget(k: usize, bound: usize) -> usize {
    bound.max(k + 1)
}

/// Distance of a pattern longer than 64 symbols: banded passes over the cells a path of cost at
/// most `k` can use, `k` growing until the result fits it. A result `≤ k` is exact: the optimal
/// paths (cost `d ≤` result `≤ k`) lie inside the band, so the minimum reaches `d`.
fn banded_distance(
    ws: &mut DistanceWorkspace,
    m: usize,
    text: &[u32],
) -> Result<usize, TryReserveError> {
    let n = text.len();
    let mut k = first_budget(m, n);
    let mut proven = false;
    loop {
        let band = Band::tight(m, n, k);
        let (masks, vp, vn) = (&ws.masks, &mut ws.vp, &mut ws.vn);
        let d = if proven {
            // `k` is the previous pass's result, so at least the distance: prune.
            let prune = Prune::new(m, n, k);
            myers_pruned(masks, m, text, band, prune, vp, vn, |_, _, _, _| {})?.0
        } else {
            myers_banded(masks, m, text, band, vp, vn, |_, _, _, _| {})?
        };
        if d <= k || band.is_full(m, n) {
            return Ok(d);
        }
        k = next_budget(k, d);
        proven = true;
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

    /// `D[i][j]` for the pattern `a` (rows) and text `b` (columns), and the cost of finishing
    /// from `(i, j)`, from the plain DP.
    fn forward_backward(a: &[u32], b: &[u32]) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let fwd = reference::matrix(a, b);
        let (ra, rb): (Vec<u32>, Vec<u32>) = (
            a.iter().rev().copied().collect(),
            b.iter().rev().copied().collect(),
        );
        let rev = reference::matrix(&ra, &rb);
        let (m, n) = (a.len(), b.len());
        let bwd = (0..=m)
            .map(|i| (0..=n).map(|j| rev[m - i][n - j]).collect())
            .collect();
        (fwd, bwd)
    }

    #[test]
    fn tight_band_holds_every_cell_of_every_cheap_path() {
        let mut rng = Rng(3);
        for case in 0..400 {
            let a = rng.seq(if case % 4 == 0 { 5 } else { 40 }, &[1, 2, 3]);
            let b = rng.seq(40, &[1, 2, 3]);
            let (m, n) = (a.len(), b.len());
            let (fwd, bwd) = forward_backward(&a, &b);
            let d = fwd[m][n];
            for k in [d, d + 1, d + 5, m.abs_diff(n), 0] {
                let band = Band::tight(m, n, k);
                let diagonals = (band.above + band.below + 1) as isize;
                assert!(diagonals <= k.max(m.abs_diff(n)) as isize + 1);
                for i in 0..=m {
                    for j in 0..=n {
                        let inside = j as isize - i as isize <= band.above as isize
                            && i as isize - j as isize <= band.below as isize;
                        if fwd[i][j] + bwd[i][j] <= k {
                            assert!(inside, "{a:?} {b:?} k={k} cell ({i}, {j}) {band:?}");
                        }
                    }
                }
                // The reversed problem has the same band.
                assert_eq!(band, Band::tight(m, n, k));
            }
        }
    }

    /// One banded pass with the tight band of budget `k`, from scratch.
    fn banded(a: &[u32], b: &[u32], k: usize, sparse: bool) -> usize {
        let mut ws = DistanceWorkspace::new();
        ws.masks.force_sparse = sparse;
        ws.masks.build(a).unwrap();
        let band = Band::tight(a.len(), b.len(), k);
        myers_banded(
            &ws.masks,
            a.len(),
            b,
            band,
            &mut ws.vp,
            &mut ws.vn,
            |_, _, _, _| {},
        )
        .unwrap()
    }

    #[test]
    fn banded_pass_is_exact_within_its_budget_and_an_upper_bound_below_it() {
        let mut rng = Rng(21);
        // Single-word patterns, two or three blocks, many blocks; equal and very unequal lengths.
        for (alphabet, la, lb) in [
            (vec![1u32, 2], 60, 70),
            (vec![1, 2, 3], 64, 64),
            (vec![1, 2, 3, 4], 200, 200),
            (vec![1, 2], 300, 40),
            (vec![1, 2], 40, 300),
            (vec![5, 6, 7, 8, 9], 700, 500),
            ((0..30).collect(), 1000, 1100),
        ] {
            for case in 0..40 {
                let a = rng.seq(la, &alphabet);
                let mut b = if case % 2 == 0 {
                    rng.seq(lb, &alphabet)
                } else {
                    // A few edits of `a`: a small distance in a long pattern.
                    let mut b = a.clone();
                    for _ in 0..rng.below(12) {
                        let at = rng.below(b.len() + 1);
                        match rng.below(3) {
                            0 if at < b.len() => b[at] = alphabet[rng.below(alphabet.len())],
                            1 if at < b.len() => {
                                b.remove(at);
                            }
                            _ => b.insert(at, alphabet[rng.below(alphabet.len())]),
                        }
                    }
                    b
                };
                if a.is_empty() {
                    continue;
                }
                b.truncate(lb.max(la) + 20);
                let d = reference::distance(&a, &b);
                for k in [d, d + 1, d + 64, d / 2, m_diff(&a, &b), 0] {
                    for sparse in [false, true] {
                        let got = banded(&a, &b, k, sparse);
                        if k >= d {
                            assert_eq!(got, d, "k={k} {a:?} {b:?}");
                            assert_eq!(pruned(&a, &b, k, sparse), d, "pruned, k={k}");
                        } else {
                            assert!(got >= d, "k={k} below the distance {d}: {got}");
                        }
                    }
                }
            }
        }
    }

    /// One pruned pass with budget `k` (meant to be at least the distance), from scratch.
    fn pruned(a: &[u32], b: &[u32], k: usize, sparse: bool) -> usize {
        let mut ws = DistanceWorkspace::new();
        ws.masks.force_sparse = sparse;
        ws.masks.build(a).unwrap();
        let (m, n) = (a.len(), b.len());
        let band = Band::tight(m, n, k);
        let prune = Prune::new(m, n, k);
        let (d, first, last) = myers_pruned(
            &ws.masks,
            m,
            b,
            band,
            prune,
            &mut ws.vp,
            &mut ws.vn,
            |_, _, _, _| {},
        )
        .unwrap();
        assert_eq!(last, m.div_ceil(64) - 1);
        assert!(first <= last);
        d
    }

    #[test]
    fn pruned_pass_keeps_every_optimal_cell_exact() {
        // Final-column values of the pruned pass, read from its blocks, equal the plain DP at
        // every row an optimal path ends a column in (here: every row whose D + |δ − t| ≤ d).
        let mut rng = Rng(5150);
        for (alphabet, la, lb) in [
            (vec![1u32, 2], 300, 280),
            (vec![1, 2, 3], 500, 200),
            (vec![1, 2, 3], 130, 700),
            (vec![1, 2, 3, 4, 5, 6], 900, 950),
        ] {
            for _ in 0..30 {
                let a = rng.seq(la, &alphabet);
                let b = rng.seq(lb, &alphabet);
                if a.is_empty() || b.is_empty() {
                    continue;
                }
                let (m, n) = (a.len(), b.len());
                let full = reference::matrix(&a, &b);
                let d = full[m][n];
                // A prefix of the text, pruned for the whole problem (as the split passes are).
                let mid = n / 2;
                let mut ws = DistanceWorkspace::new();
                ws.masks.build(&a).unwrap();
                let band = Band::tight(m, n, d);
                let (score, first, last) = myers_pruned(
                    &ws.masks,
                    m,
                    &b[..mid],
                    band,
                    Prune::new(m, n, d),
                    &mut ws.vp,
                    &mut ws.vn,
                    |_, _, _, _| {},
                )
                .unwrap();
                let mut bottoms = Vec::new();
                block_bottoms(&ws.vp, &ws.vn, m, (first, last), score, &mut bottoms).unwrap();
                let rev = reference::matrix(
                    &a.iter().rev().copied().collect::<Vec<_>>(),
                    &b.iter().rev().copied().collect::<Vec<_>>(),
                );
                for (blk, &bottom) in bottoms.iter().enumerate().take(last + 1).skip(first) {
                    let mut v = bottom;
                    let end = (64 * (blk + 1)).min(m);
                    for i in (64 * blk + 1..=end).rev() {
                        assert!(v >= full[i][mid], "below the true value at {i}");
                        if full[i][mid] + rev[m - i][n - mid] == d {
                            assert_eq!(v, full[i][mid], "optimal cell ({i}, {mid})");
                        }
                        let bit = (i - 1) % 64;
                        v = v + (ws.vn[blk] >> bit & 1) as usize - (ws.vp[blk] >> bit & 1) as usize;
                    }
                }
                // Every optimal cell of that column is inside the computed blocks.
                for i in 1..=m {
                    if full[i][mid] + rev[m - i][n - mid] == d {
                        assert!(
                            (first..=last).contains(&((i - 1) / 64)),
                            "cell ({i}, {mid}) pruned"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn paired_passes_keep_every_optimal_cell_exact() {
        // A Hirschberg split's forward and backward passes run together (`myers_pruned_pair`,
        // `COLUMNS` columns at a time where the band has more blocks, one at a time otherwise): in each pass's final column every value read from its blocks is at least
        // the plain DP's, and equal at every row an optimal path crosses the split row in (all
        // inside the computed blocks) when the budget is at least the distance — pruned, or
        // unpruned as the split's first pass; texts of equal lengths and one longer; dense and
        // sparse masks (sparse columns take the one-pass path). With SIMD on this reaches the
        // AVX2 steps, with it off the portable ones.
        let mut rng = Rng(4242);
        let mut optimal_rows = 0;
        for case in 0..240 {
            let alphabet: &[u32] = if case % 2 == 0 {
                &[1, 2, 3]
            } else {
                &[4, 5, 6, 7, 8, 9, 10]
            };
            let a = rng.seq(900, alphabet);
            let b = rng.seq(900, alphabet);
            if a.len() < 2 || b.len() < 2 {
                continue;
            }
            let (m, n) = (a.len(), b.len());
            let full = reference::matrix(&a, &b);
            let d = full[m][n];
            let mid = n / 2;
            let ra: Vec<u32> = a.iter().rev().copied().collect();
            let rb: Vec<u32> = b[mid..].iter().rev().copied().collect();
            let rev_all: Vec<u32> = b.iter().rev().copied().collect();
            let rev = reference::matrix(&ra, &rev_all);
            let texts = [&b[..mid], &rb[..]];
            let mut masks = [PatternMasks::default(), PatternMasks::default()];
            masks[0].force_sparse = case % 3 == 0;
            masks[1].force_sparse = case % 5 == 0;
            masks[0].build(&a).unwrap();
            masks[1].build(&ra).unwrap();
            let k = [d, d + 1 + rng.below(50), first_budget(m, n)][case % 3];
            let band = Band::tight(m, n, k);
            let prune = (k >= d && case % 4 != 3).then(|| Prune::new(m, n, k));
            let (mut vp, mut vn) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
            let [vp0, vp1] = &mut vp;
            let [vn0, vn1] = &mut vn;
            let paired = myers_pruned_pair(
                [&masks[0], &masks[1]],
                m,
                texts,
                band,
                prune,
                [vp0, vp1],
                [vn0, vn1],
            )
            .unwrap();
            for (side, &(score, first, last)) in paired.iter().enumerate() {
                // The true value of the pass's row `i`, and whether an optimal path crosses
                // the split row there.
                let truth = |i: usize| match side {
                    0 => (full[i][mid], full[i][mid] + rev[m - i][n - mid] == d),
                    _ => (rev[i][n - mid], full[m - i][mid] + rev[i][n - mid] == d),
                };
                let mut bottoms = Vec::new();
                block_bottoms(&vp[side], &vn[side], m, (first, last), score, &mut bottoms).unwrap();
                for blk in first..=last {
                    let (bvp, bvn) = (vp[side][blk], vn[side][blk]);
                    let mut v = bottoms[blk];
                    for i in (64 * blk + 1..=(64 * (blk + 1)).min(m)).rev() {
                        let (want, optimal) = truth(i);
                        assert!(v >= want, "case {case} side {side}: below the truth at {i}");
                        if optimal && k >= d {
                            assert_eq!(v, want, "case {case} side {side}: optimal row {i}");
                            optimal_rows += 1;
                        }
                        let bit = (i - 1) % 64;
                        v = v + (bvn >> bit & 1) as usize - (bvp >> bit & 1) as usize;
                    }
                }
                if k >= d {
                    for i in 1..=m {
                        if truth(i).1 {
                            let blk = (i - 1) / 64;
                            assert!(
                                (first..=last).contains(&blk),
                                "case {case}: row {i} dropped"
                            );
                        }
                    }
                }
            }
        }
        assert!(
            optimal_rows > 10_000,
            "only {optimal_rows} optimal rows checked"
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_pair_step_equals_two_block_steps() {
        // Whatever the switch says: the vector step against the scalar one on random words.
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = Rng(17);
        for len in [0, 1, 2, 7, 64] {
            let mut words = |k: usize| (0..len).map(|_| rng.next() >> k).collect::<Vec<u64>>();
            let (mut vp_a, mut vn_a, eq_a) = (words(0), words(3), words(1));
            let (mut vp_b, mut vn_b, eq_b) = (words(2), words(0), words(5));
            let (mut h_a, mut h_b) = ((1u64, 0u64), (0u64, 1u64));
            let (mut want_vp_a, mut want_vn_a) = (vp_a.clone(), vn_a.clone());
            let (mut want_vp_b, mut want_vn_b) = (vp_b.clone(), vn_b.clone());
            let (mut want_h_a, mut want_h_b) = (h_a, h_b);
            for k in 0..len {
                let (hp, hn) = &mut want_h_a;
                block_step(eq_a[k], &mut want_vp_a[k], &mut want_vn_a[k], hp, hn, 63);
                let (hp, hn) = &mut want_h_b;
                block_step(eq_b[k], &mut want_vp_b[k], &mut want_vn_b[k], hp, hn, 63);
            }
            // SAFETY: the processor supports AVX2 (checked at the top of the test).
            unsafe {
                block_steps_pair_avx2(
                    (&mut vp_a, &mut vn_a, &eq_a),
                    (&mut vp_b, &mut vn_b, &eq_b),
                    &mut h_a,
                    &mut h_b,
                )
            };
            assert_eq!((vp_a, vn_a, h_a), (want_vp_a, want_vn_a, want_h_a));
            assert_eq!((vp_b, vn_b, h_b), (want_vp_b, want_vn_b, want_h_b));
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_column_steps_equal_the_scalar_schedule() {
        // Whatever the switch says: the vector lockstep against its schedule in scalar steps
        // (block `t − c` of every column `c`, from `t = COLUMNS`).
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = Rng(23);
        for len in [COLUMNS, COLUMNS + 1, COLUMNS + 2, 9, 70] {
            let mut words = |k: usize| (0..len).map(|_| rng.next() >> k).collect::<Vec<u64>>();
            let (vp_a, vn_a, vp_b, vn_b) = (words(0), words(2), words(1), words(0));
            let eqs_a: Vec<Vec<u64>> = (0..COLUMNS).map(|c| words(c + 1)).collect();
            let eqs_b: Vec<Vec<u64>> = (0..COLUMNS).map(|c| words(5 - c)).collect();
            let h_a = [(1u64, 0u64), (0, 1), (0, 0), (1, 0)];
            let h_b = [(0u64, 0u64), (1, 0), (0, 1), (1, 0)];
            let mut want_a = (vp_a.clone(), vn_a.clone());
            let mut want_b = (vp_b.clone(), vn_b.clone());
            let (mut want_h_a, mut want_h_b) = (h_a, h_b);
            for t in COLUMNS..len {
                for c in 0..COLUMNS {
                    let b = t - c;
                    for ((vp, vn), h, e) in [
                        (&mut want_a, &mut want_h_a, &eqs_a),
                        (&mut want_b, &mut want_h_b, &eqs_b),
                    ] {
                        let (hp, hn) = &mut h[c];
                        block_step(e[c][b], &mut vp[b], &mut vn[b], hp, hn, 63);
                    }
                }
            }
            let (mut got_a, mut got_b) = ((vp_a, vn_a), (vp_b, vn_b));
            let (mut got_h_a, mut got_h_b) = (h_a, h_b);
            // SAFETY: the processor supports AVX2 (checked at the top of the test).
            unsafe {
                columns_steps_avx2(
                    (
                        &mut got_a.0,
                        &mut got_a.1,
                        std::array::from_fn(|c| &eqs_a[c][..]),
                    ),
                    (
                        &mut got_b.0,
                        &mut got_b.1,
                        std::array::from_fn(|c| &eqs_b[c][..]),
                    ),
                    &mut got_h_a,
                    &mut got_h_b,
                )
            };
            assert_eq!((got_a, got_h_a), (want_a, want_h_a), "len {len}");
            assert_eq!((got_b, got_h_b), (want_b, want_h_b), "len {len}");
        }
    }

    fn m_diff(a: &[u32], b: &[u32]) -> usize {
        a.len().abs_diff(b.len())
    }

    #[test]
    fn budget_growth_always_ends_exact() {
        // Distances far above the first budget, on the growth path min(2k, bound).
        let mut rng = Rng(77);
        let mut ws = DistanceWorkspace::new();
        for (la, lb) in [(2000, 2000), (3000, 600), (600, 3000), (1500, 1700)] {
            let a: Vec<u32> = (0..la).map(|_| rng.below(4) as u32).collect();
            let b: Vec<u32> = (0..lb).map(|_| rng.below(4) as u32).collect();
            assert_eq!(
                distance(&mut ws, &a, &b).unwrap(),
                reference::distance(&a, &b)
            );
        }
        assert_eq!(next_budget(100, 150), 150);
        assert_eq!(next_budget(100, 5000), 5000);
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
