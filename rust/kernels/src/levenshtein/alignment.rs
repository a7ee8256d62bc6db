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
//! bounded: a direct traceback stores only the bit rows of the blocks meeting the tight band of
//! the distance (the diagonals a path of that cost can use, [`Band::tight`]; see [`fill_rows`]
//! for why that is enough for the rule). Every other buffer is linear in the input, and all are
//! grown fallibly (out of memory is an error, not an abort).
//!
//! Each value is computed once: a part produced by a split comes with its exact distance, which
//! is the budget of its own split or traceback pass (pruned to the blocks an optimal path can
//! reach); only the whole problem (whose distance is unknown) starts from a guessed budget: a
//! narrow first pass gives a bound close to the distance, and a pass with that bound as budget is
//! exact.

use std::collections::TryReserveError;

use super::common_affix;
use super::distance::{
    block_bottoms, first_budget, hyyro_step, myers_banded, myers_pruned, myers_pruned_pair,
    next_budget, Band, DistanceWorkspace, Prune,
};
use super::pattern::{fill, PatternMasks, ShortMasks};

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
    /// A diagonal move: a substitution when the symbols `differ`, otherwise a hit (no operation).
    #[inline(always)]
    fn diagonal(&mut self, differ: bool, ref_pos: usize, hyp_pos: usize) {
        if differ {
            self.op(EditOpKind::Substitute, ref_pos, hyp_pos);
        }
    }
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
    /// Without a branch: hits and substitutions alternate unpredictably in real text.
    #[inline(always)]
    fn diagonal(&mut self, differ: bool, _: usize, _: usize) {
        self.substitutions += usize::from(differ);
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
    /// Stored bit rows of the direct traceback of a pattern of more than one word: row `r` keeps
    /// words `first_word[r]..` at `row_start[r]..row_start[r + 1]` of `vp`/`vn`.
    vp: Vec<u64>,
    vn: Vec<u64>,
    first_word: Vec<usize>,
    row_start: Vec<usize>,
    /// The rows of a pattern of at most 64 symbols: row `r`'s `[vp, vn]` words.
    word_rows: Vec<[u64; 2]>,
    /// Masks of one-word patterns of symbols.
    short: ShortMasks,
    block_vp: Vec<u64>,
    block_vn: Vec<u64>,
    /// The backward pass of a Hirschberg split (run with the forward one): the reversed
    /// pattern's masks and its blocks.
    rev_masks: PatternMasks,
    rev_vp: Vec<u64>,
    rev_vn: Vec<u64>,
    /// Hirschberg splits: the reversed halves, the forward and backward prefix distances, and the
    /// block bottoms they are read from.
    rev1: Vec<u32>,
    rev2: Vec<u32>,
    forward: Vec<usize>,
    backward: Vec<usize>,
    bottoms: Vec<usize>,
    /// Long problems run on dense ids of the reference's symbols (`PatternMasks::encode`), so
    /// that each part's masks are built without hashing and each text row finds its masks
    /// directly: the number of ids while aligning such a problem.
    ids: Option<usize>,
    ids1: Vec<u32>,
    ids2: Vec<u32>,
}

impl AlignWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bit `i` of the stored `vp` (or `vn`) row `row` of a pattern of more than one word.
    #[inline(always)]
    fn bit(&self, vp: bool, row: usize, i: usize) -> bool {
        let v = if vp { &self.vp } else { &self.vn };
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
///
/// The common prefix and suffix are hits and are cut once here; the middles are what the
/// alignment sees either way (the top-level split works on the middles and their longer length),
/// so aligning them gives the counts of aligning the whole texts.
pub fn align(
    ws: &mut AlignWorkspace,
    reference: &[u32],
    hypothesis: &[u32],
) -> Result<AlignmentCounts, TryReserveError> {
    let (prefix, suffix) = common_affix(reference, hypothesis);
    let a = &reference[prefix..reference.len() - suffix];
    let b = &hypothesis[prefix..hypothesis.len() - suffix];
    let mut counts = match small_middle_counts(a, b) {
        Some(counts) => counts,
        None => {
            let mut counts = AlignmentCounts::default();
            run(ws, a, b, &mut counts)?;
            counts
        }
    };
    counts.hits = reference.len() - counts.substitutions - counts.deletions;
    Ok(counts)
}

/// The counts (without hits) of two middles (no common prefix or suffix) when one has at most
/// one symbol; `None` otherwise. Every optimal alignment of such a pair has the same counts, so
/// no dynamic program is needed: one symbol against `m` is `m - 1` insertions (or deletions)
/// plus a hit when the symbol occurs among the `m`, a substitution when it does not.
fn small_middle_counts(a: &[u32], b: &[u32]) -> Option<AlignmentCounts> {
    let mut counts = AlignmentCounts::default();
    match (a.len(), b.len()) {
        (0, m) => counts.insertions = m,
        (n, 0) => counts.deletions = n,
        (1, m) => {
            counts.insertions = m - 1;
            counts.substitutions = usize::from(!b.contains(&a[0]));
        }
        (n, 1) => {
            counts.deletions = n - 1;
            counts.substitutions = usize::from(!a.contains(&b[0]));
        }
        _ => return None,
    }
    Some(counts)
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
    if s1.len() <= 64 || s2.is_empty() {
        ws.ids = None;
        return align_part(ws, s1, s2, 0, 0, bound, false, sink);
    }
    // Every comparison below is of a reference symbol with a hypothesis symbol, which the ids
    // answer exactly as the symbols do (common affixes, hits, masks).
    let (mut ids1, mut ids2) = (std::mem::take(&mut ws.ids1), std::mem::take(&mut ws.ids2));
    let result = ws
        .dist
        .masks
        .encode(s1, s2, &mut ids1, &mut ids2)
        .and_then(|ids| {
            ws.ids = Some(ids);
            align_part(ws, &ids1, &ids2, 0, 0, bound, false, sink)
        });
    ws.ids = None;
    (ws.ids1, ws.ids2) = (ids1, ids2);
    result
}

/// Build the masks of `pattern` (symbols, or ids below `ids` while aligning an encoded problem).
fn build_masks(
    masks: &mut PatternMasks,
    ids: Option<usize>,
    pattern: &[u32],
) -> Result<(), TryReserveError> {
    match ids {
        Some(ids) => masks.build_ids(pattern, ids),
        None => masks.build(pattern),
    }
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
        let known = exact.then_some(bound);
        return direct_traceback(ws, s1, s2, src_pos, dest_pos, known, sink);
    }
    let split = if exact {
        hirschberg_split(ws, s1, s2, bound, true)?
    } else {
        // The distance is unknown: split with a guessed budget; a minimal total within the budget
        // is exact (see `hirschberg_split`), otherwise that total bounds the distance.
        let (mut k, mut proven) = (first_budget(s1.len(), s2.len()), false);
        loop {
            let split = hirschberg_split(ws, s1, s2, k, proven)?;
            if split.total <= k {
                break split;
            }
            // The total is a real path's cost: the next budget is at least the distance.
            k = next_budget(k, split.total);
            proven = true;
        }
    };
    let (mid1, mid2) = (split.mid1, split.mid2);
    align_part(
        ws,
        &s1[..mid1],
        &s2[..mid2],
        src_pos,
        dest_pos,
        split.left,
        true,
        sink,
    )?;
    align_part(
        ws,
        &s1[mid1..],
        &s2[mid2..],
        src_pos + mid1,
        dest_pos + mid2,
        split.right,
        true,
        sink,
    )
}

/// Upper bounds of the distances from the pattern's prefixes (`m` symbols) to a text of
/// `text_len` symbols, from a pass's final column (blocks `first..=last` of `vp`/`vn`, `score` at
/// the last row of block `last`): `out[i]` ≥ D(pattern[..i], text) for `i ∈ 0..=m` (`usize::MAX`
/// outside the computed blocks), equal wherever an optimal path to `(i, text_len)` lies in the
/// computed blocks.
fn prefix_distances(
    (vp, vn): (&[u64], &[u64]),
    m: usize,
    text_len: usize,
    (score, first, last): (usize, usize, usize),
    bottoms: &mut Vec<usize>,
    out: &mut Vec<usize>,
) -> Result<(), TryReserveError> {
    block_bottoms(vp, vn, m, (first, last), score, bottoms)?;
    fill(out, m + 1, usize::MAX)?;
    out[0] = text_len;
    for b in first..=last {
        let end = (64 * (b + 1)).min(m);
        let (vp, vn) = (vp[b], vn[b]);
        let mut v = bottoms[b];
        out[end] = v;
        for i in (64 * b + 1..=end).rev() {
            let bit = (i - 1) % 64;
            v = v + (vn >> bit & 1) as usize - (vp >> bit & 1) as usize;
            out[i - 1] = out[i - 1].min(v);
        }
    }
    Ok(())
}

/// Split passes run together ([`myers_pruned_pair`]) when their band spans this many blocks.
const PAIRED_MIN_BLOCKS: usize = 8;

/// One split pass alone: [`myers_pruned`] with `prune`, else [`myers_banded`]; returns `D'` at
/// the last row of the final column's last computed block, and its first and last blocks.
fn one_pass(
    masks: &PatternMasks,
    m: usize,
    text: &[u32],
    band: Band,
    prune: Option<Prune>,
    vp: &mut Vec<u64>,
    vn: &mut Vec<u64>,
) -> Result<(usize, usize, usize), TryReserveError> {
    match prune {
        Some(prune) => myers_pruned(masks, m, text, band, prune, vp, vn, |_, _, _, _| {}),
        None => {
            let score = myers_banded(masks, m, text, band, vp, vn, |_, _, _, _| {})?;
            let (first, last) = band.blocks(text.len(), m);
            Ok((score, first, last))
        }
    }
}

/// Result of one Hirschberg split pass.
struct Split {
    /// The minimal forward + backward total found (an upper bound of the distance; the distance
    /// itself when it is at most the pass's budget).
    total: usize,
    mid1: usize,
    mid2: usize,
    left: usize,
    right: usize,
}

/// Split at the middle row of `s2` and the first column of `s1` (0 included) minimising the sum of
/// the forward and backward distances, computed inside the tight band of budget `k` of the whole
/// part (pruned as in [`myers_pruned`] when `proven`: `k` is known to be at least the distance).
/// Returns the split and the minimal total found.
///
/// When the distance `d` of the part is at most `k`, the result is exactly rapidfuzz's: every
/// column `i` whose true total is `d` has `(i, mid2)` on an optimal path, whose two halves lie in
/// the band (they are optimal paths of total cost `d ≤ k`), so its banded total is exact; every
/// other column's banded total is at least its true total, `> d`. So the minimum is `d`, reached
/// first at the true first minimising column, with exact left and right distances. Conversely a
/// minimum `≤ k` proves `d ≤ k` (every banded total is the cost of a real path).
fn hirschberg_split(
    ws: &mut AlignWorkspace,
    s1: &[u32],
    s2: &[u32],
    k: usize,
    proven: bool,
) -> Result<Split, TryReserveError> {
    let (m, n) = (s1.len(), s2.len());
    let band = Band::tight(m, n, k);
    // The reversed problem has the same length difference, so the same pruning.
    let prune = proven.then(|| Prune::new(m, n, k));
    let mid2 = n / 2;
    let mut forward = std::mem::take(&mut ws.forward);
    let mut backward = std::mem::take(&mut ws.backward);
    let mut rev1 = std::mem::take(&mut ws.rev1);
    let mut rev2 = std::mem::take(&mut ws.rev2);
    let result = (|| {
        fill(&mut rev1, 0, 0)?;
        rev1.try_reserve(m)?;
        rev1.extend(s1.iter().rev());
        fill(&mut rev2, 0, 0)?;
        rev2.try_reserve(n - mid2)?;
        rev2.extend(s2[mid2..].iter().rev());
        build_masks(&mut ws.dist.masks, ws.ids, s1)?;
        build_masks(&mut ws.rev_masks, ws.ids, &rev1)?;
        // The tight band is its own reverse, so the backward pass uses the same one. Passes over
        // a wide band run together; over a narrow one (a few blocks per column, low distances)
        // the per-column work of running them together costs more than it saves: one by one.
        let (texts, masks) = ([&s2[..mid2], &rev2[..]], [&ws.dist.masks, &ws.rev_masks]);
        let [fwd, bwd] = if band.above + band.below >= 64 * PAIRED_MIN_BLOCKS {
            myers_pruned_pair(
                masks,
                m,
                texts,
                band,
                prune,
                [&mut ws.block_vp, &mut ws.rev_vp],
                [&mut ws.block_vn, &mut ws.rev_vn],
            )?
        } else {
            [
                one_pass(
                    masks[0],
                    m,
                    texts[0],
                    band,
                    prune,
                    &mut ws.block_vp,
                    &mut ws.block_vn,
                )?,
                one_pass(
                    masks[1],
                    m,
                    texts[1],
                    band,
                    prune,
                    &mut ws.rev_vp,
                    &mut ws.rev_vn,
                )?,
            ]
        };
        let (vp, vn) = (&ws.block_vp[..], &ws.block_vn[..]);
        prefix_distances((vp, vn), m, mid2, fwd, &mut ws.bottoms, &mut forward)?;
        let (vp, vn) = (&ws.rev_vp[..], &ws.rev_vn[..]);
        prefix_distances((vp, vn), m, n - mid2, bwd, &mut ws.bottoms, &mut backward)?;
        let (mut total, mut mid1) = (usize::MAX, 0);
        for i in 0..=m {
            let t = forward[i].saturating_add(backward[m - i]);
            if t < total {
                total = t;
                mid1 = i;
            }
        }
        Ok(Split {
            total,
            mid1,
            mid2,
            left: forward[mid1],
            right: backward[m - mid1],
        })
    })();
    (ws.forward, ws.backward, ws.rev1, ws.rev2) = (forward, backward, rev1, rev2);
    result
}

/// Fill the stored bit rows for pattern `s1` over text `s2`: the band words of every text row, in
/// the tight band of the distance `d` (`known`, or found by growing a guessed budget until the
/// pass's result fits it, which proves it exact).
///
/// Passes whose budget is known to be at least the distance are also pruned ([`myers_pruned`]).
///
/// Why the stored blocks are enough for the traceback rule, although cells outside them, and
/// cells inside them but off every optimal path, may hold over-estimates `D' ≥ D`. The walk only
/// visits cells on optimal paths (each move goes to an optimal predecessor), and such cells, with
/// their whole optimal prefix, lie in the tight band and survive the pruning, so `D'` is exact
/// there. At a visited cell `(i, j)`:
///
/// * delete reads the `+1` bit of `D[i][j] − D[i−1][j]`. If it is truly set, `(i − 1, j)` is an
///   optimal predecessor, on an optimal path, exact: the stored bit is set. If not,
///   `D[i−1][j] ≥ D[i][j]`, and `D'[i−1][j] ≥ D[i−1][j]` keeps the stored delta `≤ 0`; a word
///   outside the band reads as 0, also right.
/// * insert (delete refused) reads the `−1` bit of `D[i][j−1] − D[i−1][j−1]`. If it is truly
///   set, the diagonal cannot beat the insertion, so `(i, j − 1)` is an optimal predecessor,
///   exact, and `D'[i−1][j−1] ≥ D[i][j−1] + 1` forces the stored bit. If it is truly clear, the
///   diagonal is optimal (without it the insertion would be the only optimal move, which sets
///   the bit), so `(i − 1, j − 1)` is exact and `D'[i][j−1] ≥ D[i][j−1] ≥ D[i−1][j−1]` keeps the
///   stored bit clear.
fn fill_rows(
    ws: &mut AlignWorkspace,
    s1: &[u32],
    s2: &[u32],
    known: Option<usize>,
) -> Result<(), TryReserveError> {
    let (m, n) = (s1.len(), s2.len());
    if m <= 64 {
        let mut vp: u64 = if m == 64 { !0 } else { (1u64 << m) - 1 };
        let mut vn: u64 = 0;
        let mut row = |eq: u64| {
            hyyro_step(eq, &mut vp, &mut vn);
            [vp, vn]
        };
        ws.word_rows.clear();
        ws.word_rows.try_reserve(n)?;
        // Symbols (not ids) take the lean masks of short patterns: the same masks.
        if ws.ids.is_none() {
            ws.short.build(s1);
            let masks = &ws.short;
            ws.word_rows.extend(s2.iter().map(|&c| row(masks.get(c))));
        } else {
            build_masks(&mut ws.dist.masks, ws.ids, s1)?;
            let masks = &ws.dist.masks;
            ws.word_rows
                .extend(s2.iter().map(|&c| row(masks.single(c))));
        }
        return Ok(());
    }
    ws.vp.clear();
    ws.vn.clear();
    ws.first_word.clear();
    ws.row_start.clear();
    build_masks(&mut ws.dist.masks, ws.ids, s1)?;
    // A known distance, or a previous pass's result, is at least the distance: such passes prune.
    let (mut k, mut proven) = match known {
        Some(d) => (d, true),
        None => (first_budget(m, n), false),
    };
    loop {
        let band = Band::tight(m, n, k);
        ws.vp.clear();
        ws.vn.clear();
        ws.first_word.clear();
        ws.row_start.clear();
        // Reserve the band's words up front, so that storing them cannot fail half-way.
        let stored: usize = (1..=n)
            .map(|j| {
                let (first, last) = band.blocks(j, m);
                last + 1 - first
            })
            .sum();
        ws.vp.try_reserve(stored)?;
        ws.vn.try_reserve(stored)?;
        ws.first_word.try_reserve(n)?;
        ws.row_start.try_reserve(n + 1)?;
        let (vp, vn, first_word, row_start) = (
            &mut ws.vp,
            &mut ws.vn,
            &mut ws.first_word,
            &mut ws.row_start,
        );
        // (Word by word: the band is a few words, too short for a `memcpy` call to pay.)
        let store = |_, first, band_vp: &[u64], band_vn: &[u64]| {
            first_word.push(first);
            row_start.push(vp.len());
            for (&p, &n) in band_vp.iter().zip(band_vn) {
                vp.push(p);
                vn.push(n);
            }
        };
        let (masks, block_vp, block_vn) = (&ws.dist.masks, &mut ws.block_vp, &mut ws.block_vn);
        let d = if proven {
            let prune = Prune::new(m, n, k);
            myers_pruned(masks, m, s2, band, prune, block_vp, block_vn, store)?.0
        } else {
            myers_banded(masks, m, s2, band, block_vp, block_vn, store)?
        };
        ws.row_start.push(ws.vp.len());
        if proven || d <= k || band.is_full(m, n) {
            return Ok(());
        }
        k = next_budget(k, d);
        proven = true;
    }
}

fn direct_traceback<S: OpSink>(
    ws: &mut AlignWorkspace,
    s1: &[u32],
    s2: &[u32],
    src_pos: usize,
    dest_pos: usize,
    known: Option<usize>,
    sink: &mut S,
) -> Result<(), TryReserveError> {
    let start = sink.segment_start();
    let (mut col, mut row) = (s1.len(), s2.len());
    if col > 0 && row > 0 {
        fill_rows(ws, s1, s2, known)?;
        let at = (src_pos, dest_pos);
        (col, row) = if s1.len() <= 64 {
            let rows = &ws.word_rows[..row];
            let bit = |vp: bool, r: usize, i: usize| rows[r][usize::from(!vp)] >> i & 1 == 1;
            walk(bit, s1, s2, at, sink)
        } else {
            walk(|vp, r, i| ws.bit(vp, r, i), s1, s2, at, sink)
        };
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

/// The traceback rule (see the module docs) from `(s1.len(), s2.len())` until a side is used up,
/// reading the stored rows through `bit(vp, row, i)` (the `vp` or `vn` bit `i` of `row`); `at`
/// is where the part starts in the whole problem. Returns where the walk stopped.
#[inline(always)]
fn walk<S: OpSink>(
    bit: impl Fn(bool, usize, usize) -> bool,
    s1: &[u32],
    s2: &[u32],
    (src_pos, dest_pos): (usize, usize),
    sink: &mut S,
) -> (usize, usize) {
    let (mut col, mut row) = (s1.len(), s2.len());
    while row > 0 && col > 0 {
        if bit(true, row - 1, col - 1) {
            col -= 1;
            sink.op(EditOpKind::Delete, col + src_pos, row + dest_pos);
        } else {
            row -= 1;
            if row > 0 && bit(false, row - 1, col - 1) {
                sink.op(EditOpKind::Insert, col + src_pos, row + dest_pos);
            } else {
                col -= 1;
                sink.diagonal(s1[col] != s2[row], col + src_pos, row + dest_pos);
            }
        }
    }
    (col, row)
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

    /// `D(a[..i], b)` for every `i`, by the plain DP over `b` (linear memory).
    fn last_row(a: &[u32], b: &[u32]) -> Vec<usize> {
        let mut col: Vec<usize> = (0..=a.len()).collect();
        for (j, &c) in b.iter().enumerate() {
            let mut diag = col[0];
            col[0] = j + 1;
            for i in 1..=a.len() {
                let up = col[i];
                col[i] = (diag + usize::from(a[i - 1] != c))
                    .min(up + 1)
                    .min(col[i - 1] + 1);
                diag = up;
            }
        }
        col
    }

    /// rapidfuzz's editops recursion written with plain dynamic programs: the same split rule
    /// (bound, 1 MiB test, middle row, first minimising column) and the traceback rule on the full
    /// matrix of each leaf. The oracle of the banded, guessed and reused computations.
    fn reference_ops(
        a: &[u32],
        b: &[u32],
        src: usize,
        dest: usize,
        bound: usize,
        exact: bool,
        out: &mut Vec<EditOp>,
    ) {
        let (prefix, suffix) = common_affix(a, b);
        let a = &a[prefix..a.len() - suffix];
        let b = &b[prefix..b.len() - suffix];
        let (src, dest) = (src + prefix, dest + prefix);
        let clipped = bound.min(a.len().max(b.len()));
        let full_band = a.len().min(2 * clipped + 1);
        if 2 * full_band * b.len() / 8 < 1 << 20 || a.len() < 65 || b.len() < 10 {
            let d = reference::matrix(a, b);
            let mut seg = Vec::new();
            let (mut i, mut j) = (a.len(), b.len());
            while i > 0 && j > 0 {
                if d[i][j] == d[i - 1][j] + 1 {
                    i -= 1;
                    seg.push((EditOpKind::Delete, i, j));
                } else if j > 1 && d[i][j - 1] + 1 == d[i - 1][j - 1] {
                    j -= 1;
                    seg.push((EditOpKind::Insert, i, j));
                } else {
                    i -= 1;
                    j -= 1;
                    if a[i] != b[j] {
                        seg.push((EditOpKind::Substitute, i, j));
                    }
                }
            }
            while i > 0 {
                i -= 1;
                seg.push((EditOpKind::Delete, i, j));
            }
            while j > 0 {
                j -= 1;
                seg.push((EditOpKind::Insert, i, j));
            }
            out.extend(seg.iter().rev().map(|&(kind, i, j)| EditOp {
                kind,
                ref_pos: i + src,
                hyp_pos: j + dest,
            }));
            return;
        }
        let d = if exact {
            bound
        } else {
            last_row(a, b)[a.len()]
        };
        let mid2 = b.len() / 2;
        let fwd = last_row(a, &b[..mid2]);
        let ra: Vec<u32> = a.iter().rev().copied().collect();
        let rb: Vec<u32> = b[mid2..].iter().rev().copied().collect();
        let bwd = last_row(&ra, &rb);
        let m = a.len();
        let mid1 = (0..=m).min_by_key(|&i| (fwd[i] + bwd[m - i], i)).unwrap();
        assert_eq!(fwd[mid1] + bwd[m - mid1], d);
        reference_ops(&a[..mid1], &b[..mid2], src, dest, fwd[mid1], true, out);
        reference_ops(
            &a[mid1..],
            &b[mid2..],
            src + mid1,
            dest + mid2,
            bwd[m - mid1],
            true,
            out,
        );
    }

    #[test]
    fn small_middles_count_as_the_traceback_does() {
        // Pairs whose middle (past the common affixes) has 0 or 1 symbol on a side take the
        // shortcut; their counts equal those of the traceback's script (`editops`, which never
        // takes it), and the distance.
        let mut rng = Rng(77);
        let mut ws = AlignWorkspace::new();
        let mut shortcut = 0;
        for case in 0..20_000 {
            let alphabet: &[u32] = if case % 2 == 0 {
                &[1, 2]
            } else {
                &[1, 2, 3, 4, 5]
            };
            let len = rng.below(90);
            let a = page(&mut rng, len, alphabet);
            let b = noisy(&mut rng, &a, alphabet, [5, 20, 60][case % 3]);
            let counts = align(&mut ws, &a, &b).unwrap();
            let mut expected = AlignmentCounts::default();
            for op in editops(&mut ws, &a, &b).unwrap() {
                expected.op(op.kind, 0, 0);
            }
            expected.hits = a.len() - expected.substitutions - expected.deletions;
            assert_eq!(counts, expected, "{a:?} {b:?}");
            assert_eq!(counts.edits(), reference::distance(&a, &b));
            let (prefix, suffix) = common_affix(&a, &b);
            let middles = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
            shortcut += usize::from(small_middle_counts(middles.0, middles.1).is_some());
        }
        assert!(shortcut > 5_000, "only {shortcut} pairs took the shortcut");
        // Long pages (banded and split problems): `align` works on the middles, `editops` on the
        // whole texts; the counts agree.
        for case in 0..120 {
            let alphabet: &[u32] = if case % 2 == 0 {
                &[1, 2, 3]
            } else {
                &[7, 8, 9, 10, 11, 12]
            };
            let len = 65 + rng.below(3000);
            let a = page(&mut rng, len, alphabet);
            let b = noisy(&mut rng, &a, alphabet, [2, 30, 200][case % 3]);
            let counts = align(&mut ws, &a, &b).unwrap();
            let mut expected = AlignmentCounts::default();
            for op in editops(&mut ws, &a, &b).unwrap() {
                expected.op(op.kind, 0, 0);
            }
            expected.hits = a.len() - expected.substitutions - expected.deletions;
            assert_eq!(counts, expected, "page case {case}");
        }
    }

    /// A copy of `a` with about `rate` edits per symbol (substitutions, deletions, insertions),
    /// and stretches of one repeated symbol (tie-prone).
    fn noisy(rng: &mut Rng, a: &[u32], alphabet: &[u32], per_thousand: usize) -> Vec<u32> {
        let mut b = Vec::with_capacity(a.len() + a.len() / 8);
        for &c in a {
            if rng.below(1000) >= per_thousand {
                b.push(c);
                continue;
            }
            match rng.below(3) {
                0 => b.push(alphabet[rng.below(alphabet.len())]),
                1 => {}
                _ => {
                    b.push(c);
                    b.push(alphabet[rng.below(alphabet.len())]);
                }
            }
        }
        b
    }

    fn page(rng: &mut Rng, len: usize, alphabet: &[u32]) -> Vec<u32> {
        let mut a = Vec::with_capacity(len);
        while a.len() < len {
            if rng.below(20) == 0 {
                // A run of one symbol, or of two alternating ones.
                let (x, y) = (alphabet[rng.below(2)], alphabet[rng.below(alphabet.len())]);
                for k in 0..rng.below(60) {
                    a.push(if k % 2 == 0 || y == x { x } else { y });
                }
            } else {
                a.push(alphabet[rng.below(alphabet.len())]);
            }
        }
        a.truncate(len);
        a
    }

    #[test]
    fn split_and_band_choices_equal_the_plain_dp_recursion() {
        let mut rng = Rng(2024);
        let mut ws = AlignWorkspace::new();
        let small: Vec<u32> = vec![1, 2, 3];
        let wide: Vec<u32> = (0x531..0x587).chain([32, 10]).collect();
        // Lengths around and above the top split (len1·len2 ≥ 4 Mi), low and higher error, very
        // unequal lengths (band edges far from the main diagonal), low and wide alphabets.
        let cases: Vec<(usize, usize, &[u32])> = vec![
            (2100, 5, &small),
            (2100, 20, &small),
            (2500, 60, &wide),
            (3000, 100, &small),
            (2048, 10, &small),
            (4000, 30, &wide),
            (2300, 250, &small),
            // High distances: bands wide enough for the split passes to run together.
            (3000, 400, &small),
            (2600, 600, &wide),
        ];
        for (len, rate, alphabet) in cases {
            let a = page(&mut rng, len, alphabet);
            let b = noisy(&mut rng, &a, alphabet, rate);
            for (x, y) in [(&a, &b), (&b, &a)] {
                let mut expected = Vec::new();
                let bound = x.len().max(y.len());
                reference_ops(x, y, 0, 0, bound, false, &mut expected);
                assert_eq!(
                    editops(&mut ws, x, y).unwrap(),
                    expected,
                    "len {len} rate {rate}"
                );
            }
        }
        // Very unequal lengths: a short hypothesis, and a long insertion.
        let a = page(&mut rng, 3000, &small);
        for (x, y) in [
            (a.clone(), a[1000..1400].to_vec()),
            (a[500..900].to_vec(), a.clone()),
            (
                a.clone(),
                [&a[..1500], &page(&mut rng, 700, &small)[..], &a[1500..]].concat(),
            ),
        ] {
            let mut expected = Vec::new();
            reference_ops(&x, &y, 0, 0, x.len().max(y.len()), false, &mut expected);
            assert_eq!(editops(&mut ws, &x, &y).unwrap(), expected);
        }
    }

    #[test]
    fn direct_tracebacks_with_a_guessed_budget_follow_the_rule() {
        // Unsplit problems of several blocks whose distance is above, at and below the first
        // budget (length difference + 128), equal and very unequal lengths.
        let mut rng = Rng(404);
        let mut ws = AlignWorkspace::new();
        let alphabet = [1u32, 2, 3];
        for (len, rate) in [
            (300, 20),
            (700, 100),
            (1000, 400),
            (900, 5),
            (65, 300),
            (129, 50),
        ] {
            for _ in 0..10 {
                let a = page(&mut rng, len, &alphabet);
                let mut b = noisy(&mut rng, &a, &alphabet, rate);
                if rng.below(3) == 0 {
                    b.truncate(b.len() / 3);
                }
                for (x, y) in [(&a, &b), (&b, &a)] {
                    assert_eq!(align(&mut ws, x, y).unwrap(), rule_counts(x, y));
                    let ops = editops(&mut ws, x, y).unwrap();
                    check_script(x, y, &ops);
                }
            }
        }
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
