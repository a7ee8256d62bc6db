//! Alignment breakdown: one optimal edit script between `reference` and `hypothesis`, chosen among
//! the optimal ones exactly as rapidfuzz's `Levenshtein.editops(reference, hypothesis)` chooses it,
//! so hit/substitution/deletion/insertion counts equal jiwer's.
//!
//! The choice rule, with `D[i][j]` = distance(ref[..i], hyp[..j]), walking back from the end:
//! delete `ref[i-1]` if `D[i][j] == D[i-1][j] + 1`; else insert `hyp[j-1]` if
//! `D[i][j-1] + 1 == D[i-1][j-1]` (only for `j > 1`); else take the diagonal. Both tests read only
//! vertical deltas (`D[i][·] − D[i-1][·]`), which the bit-parallel rows give directly.
//!
//! Common prefixes and suffixes are hits. Large problems are divided Hirschberg-style exactly where
//! rapidfuzz divides them (the split position changes which optimal script is chosen): the middle
//! text row, and the first pattern column with a minimal forward + backward distance. Memory is
//! bounded: a direct traceback stores only the bit rows inside a diagonal band of half-width
//! `distance + 3`, which holds every cell an optimal path (and the rule) can touch, because a
//! cell `(i, j)` on an optimal path has `|i − j| ≤ D[i][j] ≤ distance`. Every other buffer is
//! linear in the input, and all are grown fallibly (out of memory is an error, not an abort).

use std::collections::TryReserveError;

use super::common_affix;
use super::distance::{band_blocks, hyyro_step, myers_banded, DistanceWorkspace};
use super::pattern::fill;

/// Kind of one edit operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EditOpKind {
    Substitute = 1,
    Delete = 2,
    Insert = 3,
}

/// One edit operation; positions are as rapidfuzz reports them (`src_pos`, `dest_pos`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EditOp {
    pub kind: EditOpKind,
    pub ref_pos: usize,
    pub hyp_pos: usize,
}

/// Hits, substitutions, deletions and insertions of one alignment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlignmentCounts {
    pub hits: usize,
    pub substitutions: usize,
    pub deletions: usize,
    pub insertions: usize,
}

impl AlignmentCounts {
    pub fn edits(&self) -> usize {
        self.substitutions + self.deletions + self.insertions
    }
}

/// Where the traceback reports operations.
trait OpSink {
    fn op(&mut self, kind: EditOpKind, ref_pos: usize, hyp_pos: usize);
    /// Called when a traceback segment (emitted back to front) starts and ends.
    fn segment_start(&mut self) -> usize {
        0
    }
    fn segment_end(&mut self, _start: usize) {}
}

impl OpSink for AlignmentCounts {
    #[inline]
    fn op(&mut self, kind: EditOpKind, _: usize, _: usize) {
        match kind {
            EditOpKind::Substitute => self.substitutions += 1,
            EditOpKind::Delete => self.deletions += 1,
            EditOpKind::Insert => self.insertions += 1,
        }
    }
}

impl OpSink for Vec<EditOp> {
    fn op(&mut self, kind: EditOpKind, ref_pos: usize, hyp_pos: usize) {
        self.push(EditOp {
            kind,
            ref_pos,
            hyp_pos,
        });
    }
    fn segment_start(&mut self) -> usize {
        self.len()
    }
    fn segment_end(&mut self, start: usize) {
        self[start..].reverse();
    }
}

/// Reusable buffers for alignments (one per thread in batch use).
#[derive(Default)]
pub struct AlignWorkspace {
    dist: DistanceWorkspace,
    /// Stored bit rows of the direct traceback: row `r` keeps words `first_word[r]..` at
    /// `row_start[r]..row_start[r + 1]` of `vp`/`vn`.
    vp: Vec<u64>,
    vn: Vec<u64>,
    first_word: Vec<usize>,
    row_start: Vec<usize>,
    /// True when the pattern fits one word: row `r` is then simply `vp[r]`/`vn[r]`.
    single_word: bool,
    block_vp: Vec<u64>,
    block_vn: Vec<u64>,
    bottom: Vec<usize>,
}

impl AlignWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn bit(&self, vp: bool, row: usize, i: usize) -> bool {
        let v = if vp { &self.vp } else { &self.vn };
        if self.single_word {
            return v[row] >> i & 1 == 1;
        }
        let word = i / 64;
        let first = self.first_word[row];
        let (start, end) = (self.row_start[row], self.row_start[row + 1]);
        if word < first || first + (end - start) <= word {
            return false;
        }
        v[start + word - first] >> (i % 64) & 1 == 1
    }
}

/// Counts of the alignment of `reference` and `hypothesis` (an error only when out of memory).
pub fn align(
    ws: &mut AlignWorkspace,
    reference: &[u32],
    hypothesis: &[u32],
) -> Result<AlignmentCounts, TryReserveError> {
    let mut counts = AlignmentCounts::default();
    run(ws, reference, hypothesis, &mut counts)?;
    counts.hits = reference.len() - counts.substitutions - counts.deletions;
    Ok(counts)
}

/// The edit operations turning `reference` into `hypothesis`, in sequence order (an error only
/// when out of memory).
pub fn editops(
    ws: &mut AlignWorkspace,
    reference: &[u32],
    hypothesis: &[u32],
) -> Result<Vec<EditOp>, TryReserveError> {
    let mut ops = Vec::new();
    // A script never has more operations than the longer side has symbols.
    ops.try_reserve(reference.len().max(hypothesis.len()))?;
    run(ws, reference, hypothesis, &mut ops)?;
    Ok(ops)
}

fn run<S: OpSink>(
    ws: &mut AlignWorkspace,
    s1: &[u32],
    s2: &[u32],
    sink: &mut S,
) -> Result<(), TryReserveError> {
    // rapidfuzz's Python `editops` starts from the trivial bound max(len1, len2) (no exact
    // distance first); that bound decides where the Hirschberg splits happen. Verified against
    // rapidfuzz 3.14 on random strings of up to 5,000 symbols (tests/test_levenshtein_kernels.py).
    let bound = s1.len().max(s2.len());
    align_part(ws, s1, s2, 0, 0, bound, false, sink)
}

/// Align one part; `bound` is the bound rapidfuzz would use here, and the exact distance of the
/// part when `exact` (every part produced by a split).
#[allow(clippy::too_many_arguments)]
fn align_part<S: OpSink>(
    ws: &mut AlignWorkspace,
    s1: &[u32],
    s2: &[u32],
    src_pos: usize,
    dest_pos: usize,
    bound: usize,
    exact: bool,
    sink: &mut S,
) -> Result<(), TryReserveError> {
    let (prefix, suffix) = common_affix(s1, s2);
    let s1 = &s1[prefix..s1.len() - suffix];
    let s2 = &s2[prefix..s2.len() - suffix];
    let (src_pos, dest_pos) = (src_pos + prefix, dest_pos + prefix);
    let clipped = bound.min(s1.len().max(s2.len()));
    let full_band = s1.len().min(2 * clipped + 1);
    let matrix_bytes = 2 * full_band * s2.len() / 8;
    if matrix_bytes < 1 << 20 || s1.len() < 65 || s2.len() < 10 {
        return direct_traceback(ws, s1, s2, src_pos, dest_pos, sink);
    }
    let d = if exact {
        bound
    } else {
        super::distance(&mut ws.dist, s1, s2)?
    };
    let (mid1, mid2, left, right) = hirschberg_split(ws, s1, s2, d)?;
    align_part(
        ws,
        &s1[..mid1],
        &s2[..mid2],
        src_pos,
        dest_pos,
        left,
        true,
        sink,
    )?;
    align_part(
        ws,
        &s1[mid1..],
        &s2[mid2..],
        src_pos + mid1,
        dest_pos + mid2,
        right,
        true,
        sink,
    )
}

/// Upper bounds of the distances from the pattern's prefixes to `text`, exact wherever they are at
/// most `w`: `out[i]` ≥ D(pattern[..i], text) for `i ∈ 0..=m` (`usize::MAX` outside the band).
fn prefix_distances(
    ws: &mut AlignWorkspace,
    pattern: &[u32],
    text: &[u32],
    w: usize,
    out: &mut Vec<usize>,
) -> Result<(), TryReserveError> {
    let m = pattern.len();
    ws.dist.masks.build(pattern)?;
    myers_banded(
        &ws.dist.masks,
        m,
        text,
        w,
        &mut ws.block_vp,
        &mut ws.block_vn,
        &mut ws.bottom,
        |_, _, _, _| {},
    )?;
    fill(out, m + 1, usize::MAX)?;
    out[0] = text.len();
    let (first, last) = band_blocks(text.len(), w, m);
    for b in first..=last {
        let end = (64 * (b + 1)).min(m);
        let mut v = ws.bottom[b];
        out[end] = v;
        for i in (64 * b + 1..=end).rev() {
            let bit = (i - 1) % 64;
            v = v + (ws.block_vn[b] >> bit & 1) as usize - (ws.block_vp[b] >> bit & 1) as usize;
            out[i - 1] = out[i - 1].min(v);
        }
    }
    Ok(())
}

/// Split at the middle row of `s2` and the first column of `s1` (0 included) minimising the sum of
/// the forward and backward distances; `d` is the exact distance of `s1`, `s2`, so a band of
/// half-width `d` holds every optimal split. Returns `(mid1, mid2, left distance, right distance)`.
fn hirschberg_split(
    ws: &mut AlignWorkspace,
    s1: &[u32],
    s2: &[u32],
    d: usize,
) -> Result<(usize, usize, usize, usize), TryReserveError> {
    let mid2 = s2.len() / 2;
    let mut forward = Vec::new();
    prefix_distances(ws, s1, &s2[..mid2], d + 1, &mut forward)?;
    let reversed = |s: &[u32]| -> Result<Vec<u32>, TryReserveError> {
        let mut r = Vec::new();
        r.try_reserve(s.len())?;
        r.extend(s.iter().rev());
        Ok(r)
    };
    let (rev1, rev2) = (reversed(s1)?, reversed(&s2[mid2..])?);
    let mut backward = Vec::new();
    prefix_distances(ws, &rev1, &rev2, d + 1, &mut backward)?;
    let n = s1.len();
    let (mut best, mut mid1) = (usize::MAX, 0);
    for i in 0..=n {
        let total = forward[i].saturating_add(backward[n - i]);
        if total < best {
            best = total;
            mid1 = i;
        }
    }
    Ok((mid1, mid2, forward[mid1], backward[n - mid1]))
}

/// Fill the stored bit rows for pattern `s1` over text `s2` (band of the exact distance).
fn fill_rows(ws: &mut AlignWorkspace, s1: &[u32], s2: &[u32]) -> Result<(), TryReserveError> {
    let m = s1.len();
    ws.vp.clear();
    ws.vn.clear();
    ws.first_word.clear();
    ws.row_start.clear();
    ws.dist.masks.build(s1)?;
    ws.single_word = m <= 64;
    if ws.single_word {
        ws.vp.try_reserve(s2.len())?;
        ws.vn.try_reserve(s2.len())?;
        let mut vp: u64 = if m == 64 { !0 } else { (1u64 << m) - 1 };
        let mut vn: u64 = 0;
        for &c in s2 {
            hyyro_step(ws.dist.masks.single(c), &mut vp, &mut vn);
            ws.vp.push(vp);
            ws.vn.push(vn);
        }
        return Ok(());
    }
    let d = super::distance(&mut ws.dist, s1, s2)?;
    ws.dist.masks.build(s1)?;
    // Exact vertical deltas wherever D ≤ d + 3: everything the traceback reads (path cells have
    // D ≤ d and the rule only compares them with neighbours).
    let margin = d + 3;
    // Reserve the band's words up front, so that storing them cannot fail half-way.
    let stored: usize = (1..=s2.len())
        .map(|j| {
            let (first, last) = band_blocks(j, margin, m);
            last + 1 - first
        })
        .sum();
    ws.vp.try_reserve(stored)?;
    ws.vn.try_reserve(stored)?;
    ws.first_word.try_reserve(s2.len())?;
    ws.row_start.try_reserve(s2.len() + 1)?;
    let (vp, vn, first_word, row_start) = (
        &mut ws.vp,
        &mut ws.vn,
        &mut ws.first_word,
        &mut ws.row_start,
    );
    myers_banded(
        &ws.dist.masks,
        m,
        s2,
        margin,
        &mut ws.block_vp,
        &mut ws.block_vn,
        &mut ws.bottom,
        |_, first, band_vp, band_vn| {
            first_word.push(first);
            row_start.push(vp.len());
            vp.extend_from_slice(band_vp);
            vn.extend_from_slice(band_vn);
        },
    )?;
    ws.row_start.push(ws.vp.len());
    Ok(())
}

fn direct_traceback<S: OpSink>(
    ws: &mut AlignWorkspace,
    s1: &[u32],
    s2: &[u32],
    src_pos: usize,
    dest_pos: usize,
    sink: &mut S,
) -> Result<(), TryReserveError> {
    let start = sink.segment_start();
    let (mut col, mut row) = (s1.len(), s2.len());
    if col > 0 && row > 0 {
        fill_rows(ws, s1, s2)?;
        while row > 0 && col > 0 {
            if ws.bit(true, row - 1, col - 1) {
                col -= 1;
                sink.op(EditOpKind::Delete, col + src_pos, row + dest_pos);
            } else {
                row -= 1;
                if row > 0 && ws.bit(false, row - 1, col - 1) {
                    sink.op(EditOpKind::Insert, col + src_pos, row + dest_pos);
                } else {
                    col -= 1;
                    if s1[col] != s2[row] {
                        sink.op(EditOpKind::Substitute, col + src_pos, row + dest_pos);
                    }
                }
            }
        }
    }
    while col > 0 {
        col -= 1;
        sink.op(EditOpKind::Delete, col + src_pos, row + dest_pos);
    }
    while row > 0 {
        row -= 1;
        sink.op(EditOpKind::Insert, col + src_pos, row + dest_pos);
    }
    sink.segment_end(start);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::reference::{self, Rng};
    use super::*;

    /// Apply the script to `reference` and check it yields `hypothesis` with `distance` ops.
    fn check_script(a: &[u32], b: &[u32], ops: &[EditOp]) {
        assert_eq!(
            ops.len(),
            reference::distance(a, b),
            "not optimal: {a:?} → {b:?}"
        );
        let mut out = Vec::new();
        let mut i = 0;
        for op in ops {
            while i < op.ref_pos {
                out.push(a[i]);
                i += 1;
            }
            match op.kind {
                EditOpKind::Substitute => {
                    out.push(b[op.hyp_pos]);
                    i += 1;
                }
                EditOpKind::Delete => i += 1,
                EditOpKind::Insert => out.push(b[op.hyp_pos]),
            }
        }
        out.extend_from_slice(&a[i..]);
        assert_eq!(out, b);
    }

    /// The choice rule evaluated on the full matrix of the affix-stripped pair (no bit tricks,
    /// no splits).
    fn rule_counts(a_full: &[u32], b_full: &[u32]) -> AlignmentCounts {
        let (prefix, suffix) = common_affix(a_full, b_full);
        let a = &a_full[prefix..a_full.len() - suffix];
        let b = &b_full[prefix..b_full.len() - suffix];
        let d = reference::matrix(a, b);
        let mut c = AlignmentCounts::default();
        let (mut i, mut j) = (a.len(), b.len());
        while i > 0 && j > 0 {
            if d[i][j] == d[i - 1][j] + 1 {
                c.deletions += 1;
                i -= 1;
            } else if j > 1 && d[i][j - 1] + 1 == d[i - 1][j - 1] {
                c.insertions += 1;
                j -= 1;
            } else {
                if a[i - 1] != b[j - 1] {
                    c.substitutions += 1;
                }
                i -= 1;
                j -= 1;
            }
        }
        c.deletions += i;
        c.insertions += j;
        c.hits = a_full.len() - c.substitutions - c.deletions;
        c
    }

    #[test]
    fn rapidfuzz_documented_example() {
        // rapidfuzz documents editops("qabxcd", "abycdf"): delete 0, replace 3→2, insert 6→5.
        let s = |t: &str| t.chars().map(|c| c as u32).collect::<Vec<_>>();
        let mut ws = AlignWorkspace::new();
        let ops = editops(&mut ws, &s("qabxcd"), &s("abycdf")).unwrap();
        let expected = vec![
            EditOp {
                kind: EditOpKind::Delete,
                ref_pos: 0,
                hyp_pos: 0,
            },
            EditOp {
                kind: EditOpKind::Substitute,
                ref_pos: 3,
                hyp_pos: 2,
            },
            EditOp {
                kind: EditOpKind::Insert,
                ref_pos: 6,
                hyp_pos: 5,
            },
        ];
        assert_eq!(ops, expected);
        let counts = align(&mut ws, &s("hello world"), &s("hello wrld")).unwrap();
        assert_eq!(
            counts,
            AlignmentCounts {
                hits: 10,
                substitutions: 0,
                deletions: 1,
                insertions: 0
            }
        );
    }

    #[test]
    fn direct_traceback_follows_the_rule_on_random_pairs() {
        let mut rng = Rng(99);
        let mut ws = AlignWorkspace::new();
        for (alphabet, max_len) in [
            (vec![1u32, 2], 12),
            (vec![1, 2, 3, 0x568], 90),
            (vec![5, 6, 7], 200),
        ] {
            for _ in 0..1500 {
                let a = rng.seq(max_len, &alphabet);
                let b = rng.seq(max_len, &alphabet);
                let ops = editops(&mut ws, &a, &b).unwrap();
                check_script(&a, &b, &ops);
                assert_eq!(
                    align(&mut ws, &a, &b).unwrap(),
                    rule_counts(&a, &b),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn sparse_masks_align_exactly_like_dense_ones() {
        let mut rng = Rng(31);
        let (mut dense, mut sparse) = (AlignWorkspace::new(), AlignWorkspace::new());
        sparse.dist.masks.force_sparse = true;
        let alphabet: Vec<u32> = (250..330).chain([1, 2, 3]).collect();
        for max_len in [60, 200, 700] {
            for _ in 0..150 {
                let a = rng.seq(max_len, &alphabet);
                let b = rng.seq(max_len, &alphabet);
                let ops = editops(&mut sparse, &a, &b).unwrap();
                check_script(&a, &b, &ops);
                assert_eq!(ops, editops(&mut dense, &a, &b).unwrap());
                assert_eq!(align(&mut sparse, &a, &b).unwrap(), rule_counts(&a, &b));
            }
        }
    }

    #[test]
    fn traceback_storage_stays_bounded() {
        // Unrelated 6,000-symbol sequences: a full bit matrix would hold 6,000 × 94 words per
        // side; the Hirschberg splits keep each stored band under about 1 MiB.
        let mut rng = Rng(8);
        let a: Vec<u32> = (0..6000).map(|_| rng.below(4) as u32).collect();
        let b: Vec<u32> = (0..6000).map(|_| rng.below(4) as u32).collect();
        let mut ws = AlignWorkspace::new();
        let ops = editops(&mut ws, &a, &b).unwrap();
        check_script(&a, &b, &ops);
        let stored_bytes = 8 * (ws.vp.capacity() + ws.vn.capacity());
        assert!(stored_bytes < 3 << 20, "{stored_bytes} bytes of bit rows");
    }

    #[test]
    fn split_alignments_stay_optimal_and_valid() {
        let mut rng = Rng(5);
        let mut ws = AlignWorkspace::new();
        for _ in 0..3 {
            let a: Vec<u32> = (0..2500).map(|_| rng.below(4) as u32).collect();
            let b: Vec<u32> = (0..2300).map(|_| rng.below(4) as u32).collect();
            let ops = editops(&mut ws, &a, &b).unwrap();
            check_script(&a, &b, &ops);
            let counts = align(&mut ws, &a, &b).unwrap();
            assert_eq!(counts.edits(), ops.len());
        }
    }
}
