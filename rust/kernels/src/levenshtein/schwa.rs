//! Schwa-forgiving edit distance (see docs/decisions.md): a designated code point (the Armenian schwa
//! `ը`/`Ը` by default) present in one string and absent from the other costs nothing when it sits
//! at a join position (a reassembled line break) of either string. Substitutions are never free.
//!
//! An optimal path makes at most `U + F` insertions and deletions, for any upper bound `U` of the
//! distance: the paid ones cost at most the distance, and each free one consumes one of the `F`
//! schwas that can ever be free. A path through diagonal `d = j - i` that ends on diagonal
//! `δ = m - n` makes at least `|d| + |δ - d|` of them, so the DP runs only over the diagonals with
//! `|d| + |δ - d| <= U + F`; when `F` is 0 the answer is the strict distance.
//!
//! ## Evaluation order
//!
//! [`schwa_distance`] evaluates that recurrence along anti-diagonals `s = i + j`: the cells of one
//! anti-diagonal depend only on the two before it, so a whole anti-diagonal is one branch-free,
//! element-wise pass (min and saturating add over `i16` lanes for page-length texts, which the
//! compiler vectorises; an AVX2 copy of the same code is chosen at run time). Cell `(i, s - i)` is
//! kept at index `i + 1` of its anti-diagonal's buffer, the prediction and its per-column cost
//! tables are stored reversed (index `m - j`), so every operand of the pass is a contiguous slice.
//! Memory: a few arrays of `n + 1` and `m + 1` entries.
//!
//! It makes two passes. The first keeps only the cells within a small slack of the best of their
//! anti-diagonal (X-drop); every value it computes is the cost of a real path, so its last cell is
//! an upper bound `U` of the distance (usually the distance itself). The second is exact: on the
//! band of `U`, a cell is dropped from the ends of its anti-diagonal when its value plus a lower
//! bound of the cost still to pay exceeds `U` (Ukkonen's cut-off). Computed values are always
//! costs of paths (or saturated, above `U`), and every cell of an optimal path has value +
//! remaining cost = the distance <= `U`, so it is never dropped and is computed exactly from its
//! predecessor on that path. The lower bound from `(i, j)` is the larger of two: a path to
//! `(n, m)` makes at least `r = (m - j) - (n - i)` more insertions than deletions when `r > 0`, of
//! which at most the free-able schwas of `pred[j..]` are free (symmetrically with deletions and
//! `gt[i..]`); and the rest costs at least the difference in length of `gt[i..]` and `pred[j..]`
//! without their schwas (see `Job::hopeless`). Neither pass needs the strict distance (it is
//! computed only when there are no joins or no free-able schwa, where it is the answer).
//! [`schwa_distance_rows`] is the previous row-by-row kernel (strict distance, then the band row by
//! row), kept as the reference of the tests and the A/B benchmark.

use std::collections::TryReserveError;
use std::ops::{BitAnd, BitOr};

use super::distance::{distance, DistanceWorkspace};
use super::pattern::fill;

/// Why [`schwa_distance`] gave no distance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchwaError {
    /// A join position outside its string (the message says which).
    BadJoin(String),
    /// A buffer could not be allocated.
    OutOfMemory(TryReserveError),
}

impl From<TryReserveError> for SchwaError {
    fn from(e: TryReserveError) -> Self {
        SchwaError::OutOfMemory(e)
    }
}

/// Reusable buffers for [`schwa_distance`].
#[derive(Default)]
pub struct SchwaWorkspace {
    dist: DistanceWorkspace,
    gt_join: Vec<bool>,
    pred_join: Vec<bool>,
    gt_flags: Vec<u8>,
    pred_flags: Vec<u8>,
    prev: Vec<u32>,
    cur: Vec<u32>,
    tables: Vec<u32>,
    gt_free_after: Vec<u32>,
    pred_free_after: Vec<u32>,
    gt_plain_after: Vec<u32>,
    pred_plain_after: Vec<u32>,
    narrow: Lanes<u16, i16>,
    wide: Lanes<u32, i32>,
    /// Tests: use the `u32`/`i32` lanes whatever the input.
    force_wide: bool,
    /// Tests: add this to the upper bound of the first pass (the exact pass must not need a
    /// tight one).
    loosen: usize,
    /// Tests: the portable code even where AVX2 is available.
    force_portable: bool,
    /// Tests: treat first-pass results from this value up as saturated (0: `i16::MAX`).
    narrow_limit: usize,
}

impl SchwaWorkspace {
    pub fn new() -> Self {
        Self::default()
    }
}

fn mark_joins(
    joins: &[i64],
    len: usize,
    out: &mut Vec<bool>,
    side: &str,
) -> Result<(), SchwaError> {
    fill(out, len + 1, false)?;
    for &k in joins {
        if k < 0 || k as usize > len {
            return Err(SchwaError::BadJoin(format!(
                "{side} join position {k} is outside 0..={len}"
            )));
        }
        out[k as usize] = true;
    }
    Ok(())
}

const INF: u32 = u32::MAX / 4;
/// Flag bits per 1-based position: the character is a schwa; it touches one of its own joins.
const SCHWA: u8 = 1;
const AT_OWN_JOIN: u8 = 2;

/// Flags of `text[k-1]` at index `k` (index 0 unused); returns how many of its schwas can ever be
/// free (those at their own join, or all of them when the other side has a join).
fn mark_schwas(
    text: &[u32],
    joins: &[bool],
    schwa_chars: &[u32],
    other_has_joins: bool,
    out: &mut Vec<u8>,
) -> Result<usize, TryReserveError> {
    out.clear();
    out.try_reserve(text.len() + 1)?;
    out.push(0);
    // The usual one or two schwas (ը, Ը) compared directly.
    let (s0, s1) = match schwa_chars {
        [a] => (*a, *a),
        [a, b] => (*a, *b),
        _ => (u32::MAX, u32::MAX),
    };
    let general = schwa_chars.len() > 2;
    let mut free = 0;
    for (k, c) in text.iter().enumerate() {
        let mut f = 0;
        if *c == s0 || *c == s1 || (general && schwa_chars.contains(c)) {
            f |= SCHWA;
            if joins[k] || joins[k + 1] {
                f |= AT_OWN_JOIN;
            }
            if f & AT_OWN_JOIN != 0 || other_has_joins {
                free += 1;
            }
        }
        out.push(f);
    }
    Ok(free)
}

/// What both kernels need once the joins are read: the strict distance and `F`, or the answer.
enum Prepared {
    Done(usize),
    Band { strict: usize, free: usize },
}

fn prepare(
    ws: &mut SchwaWorkspace,
    gt: &[u32],
    pred: &[u32],
    gt_joins: &[i64],
    pred_joins: &[i64],
    schwa_chars: &[u32],
) -> Result<Prepared, SchwaError> {
    mark_joins(gt_joins, gt.len(), &mut ws.gt_join, "gt")?;
    mark_joins(pred_joins, pred.len(), &mut ws.pred_join, "pred")?;
    let strict = distance(&mut ws.dist, gt, pred)?;
    if strict == 0 || (gt_joins.is_empty() && pred_joins.is_empty()) {
        return Ok(Prepared::Done(strict));
    }
    let free = mark_schwas(
        gt,
        &ws.gt_join,
        schwa_chars,
        !pred_joins.is_empty(),
        &mut ws.gt_flags,
    )? + mark_schwas(
        pred,
        &ws.pred_join,
        schwa_chars,
        !gt_joins.is_empty(),
        &mut ws.pred_flags,
    )?;
    if free == 0 {
        return Ok(Prepared::Done(strict));
    }
    Ok(Prepared::Band { strict, free })
}

/// The reachable diagonals `d_lo..=d_hi` (module docs); `budget >= |delta|`, so `d_lo <= 0 <= d_hi`.
fn band(strict: usize, free: usize, n: usize, m: usize) -> (i64, i64) {
    let (budget, delta) = ((strict + free) as i64, m as i64 - n as i64);
    (-((budget - delta) / 2), (budget + delta) / 2)
}

/// Schwa-forgiving distance between `gt` and `pred` with join boundary positions `gt_joins`,
/// `pred_joins` (each in `0..=len`); an out-of-range join is an error, and so is running out of
/// memory.
pub fn schwa_distance(
    ws: &mut SchwaWorkspace,
    gt: &[u32],
    pred: &[u32],
    gt_joins: &[i64],
    pred_joins: &[i64],
    schwa_chars: &[u32],
) -> Result<usize, SchwaError> {
    mark_joins(gt_joins, gt.len(), &mut ws.gt_join, "gt")?;
    mark_joins(pred_joins, pred.len(), &mut ws.pred_join, "pred")?;
    if gt_joins.is_empty() && pred_joins.is_empty() {
        return Ok(distance(&mut ws.dist, gt, pred)?);
    }
    if gt == pred {
        return Ok(0);
    }
    let (gt_others, pred_others) = (!pred_joins.is_empty(), !gt_joins.is_empty());
    let free = mark_schwas(gt, &ws.gt_join, schwa_chars, gt_others, &mut ws.gt_flags)?
        + mark_schwas(
            pred,
            &ws.pred_join,
            schwa_chars,
            pred_others,
            &mut ws.pred_flags,
        )?;
    if free == 0 {
        return Ok(distance(&mut ws.dist, gt, pred)?);
    }
    let (n, m) = (gt.len(), pred.len());
    free_after(
        &ws.gt_flags,
        gt_others,
        &mut ws.gt_free_after,
        &mut ws.gt_plain_after,
    )?;
    free_after(
        &ws.pred_flags,
        pred_others,
        &mut ws.pred_free_after,
        &mut ws.pred_plain_after,
    )?;
    let mut job = Job {
        n,
        m,
        bound: 0,
        band: (-(n as i64), m as i64),
        gt_join: &ws.gt_join,
        pred_join: &ws.pred_join,
        gt_flags: &ws.gt_flags,
        pred_flags: &ws.pred_flags,
        gt_free_after: &ws.gt_free_after,
        pred_free_after: &ws.pred_free_after,
        gt_plain_after: &ws.gt_plain_after,
        pred_plain_after: &ws.pred_plain_after,
        both_joined: gt_others && pred_others,
    };
    // u16 symbols keep equality when every code point is below 2^16; i16 lanes hold every value
    // below i16::MAX exactly (a saturated value is at least that large, so it is never the
    // answer of a run whose answer is smaller).
    let symbols16 = !ws.force_wide && gt.iter().chain(pred).all(|&c| c <= u32::from(u16::MAX));
    let narrow_limit = match ws.narrow_limit {
        0 => i16::MAX as usize,
        limit => limit,
    };
    let mut wide_loaded = false;
    // Pass 1: an upper bound, the cost of the path an X-drop search finds.
    let mut upper = narrow_limit;
    if symbols16 {
        ws.narrow.load(gt, pred, &job)?;
        upper = run_pass::<_, _, true>(&mut ws.narrow, &job, ws.force_portable)?;
    }
    if upper >= narrow_limit {
        ws.wide.load(gt, pred, &job)?;
        wide_loaded = true;
        upper = run_pass::<_, _, true>(&mut ws.wide, &job, ws.force_portable)?;
    }
    // max(n, m) bounds every distance (the plain one, hence the forgiving one).
    let upper = upper.saturating_add(ws.loosen).min(n.max(m));
    // Pass 2: the exact distance, over the band and the cut-off that `upper` allows.
    job.bound = upper;
    job.band = band(upper, free, n, m);
    let d = if symbols16 && upper < narrow_limit {
        run_pass::<_, _, false>(&mut ws.narrow, &job, ws.force_portable)?
    } else {
        if !wide_loaded {
            ws.wide.load(gt, pred, &job)?;
        }
        run_pass::<_, _, false>(&mut ws.wide, &job, ws.force_portable)?
    };
    Ok(d.min(upper))
}

/// `free[k]` = how many of the characters `k..` of a side (flags as [`mark_schwas`] made them)
/// can ever be free, `plain[k]` how many are not schwas; length `len + 1`.
fn free_after(
    flags: &[u8],
    other_has_joins: bool,
    free: &mut Vec<u32>,
    plain: &mut Vec<u32>,
) -> Result<(), TryReserveError> {
    let len = flags.len().saturating_sub(1);
    fill(free, len + 1, 0)?;
    fill(plain, len + 1, 0)?;
    let (mut free_sum, mut plain_sum) = (0, 0);
    let out = free[..len].iter_mut().zip(plain[..len].iter_mut()).rev();
    // flags[k + 1] belongs to character k.
    for ((fr, pl), &f) in out.zip(flags[1..].iter().rev()) {
        let freeable = f & SCHWA != 0 && (f & AT_OWN_JOIN != 0 || other_has_joins);
        free_sum += u32::from(freeable);
        plain_sum += u32::from(f & SCHWA == 0);
        (*fr, *pl) = (free_sum, plain_sum);
    }
    Ok(())
}

/// Slack of the X-drop pass: it keeps the cells within this much of the best of their
/// anti-diagonal. Any slack gives an upper bound; a larger one finds a better path at more cost.
const XDROP_SLACK: i64 = 24;

/// The inputs of one anti-diagonal run, shared by both lane widths.
struct Job<'a> {
    n: usize,
    m: usize,
    /// An upper bound of the distance (the exact pass).
    bound: usize,
    band: (i64, i64),
    gt_join: &'a [bool],
    pred_join: &'a [bool],
    gt_flags: &'a [u8],
    pred_flags: &'a [u8],
    gt_free_after: &'a [u32],
    pred_free_after: &'a [u32],
    gt_plain_after: &'a [u32],
    pred_plain_after: &'a [u32],
    /// Both sides have joins.
    both_joined: bool,
}

impl Job<'_> {
    /// Whether cell `(i, j)` with value `v` is beyond `bound` once the lower bound of the rest of
    /// the path is added (module docs).
    #[inline]
    fn hopeless(&self, i: usize, j: usize, v: i64) -> bool {
        // Without their schwas, the rest of the texts differ in length by `plain`: at least as
        // many paid edits (every forgiving alignment of the rest maps to a plain one of the
        // texts without schwas that costs no more: a schwa matched, deleted or inserted vanishes,
        // a schwa substituted becomes an insertion or a deletion).
        let plain = i64::from(self.gt_plain_after[i]) - i64::from(self.pred_plain_after[j]);
        let mut rest = plain.abs();
        // When both sides have joins every schwa is free-able, and `rest` is at least this
        // other bound: with r > 0, |r + S_gt - S_pred| >= r - S_pred (S: schwas left).
        if !self.both_joined {
            let r = (self.m - j) as i64 - (self.n - i) as i64;
            rest = rest.max(if r > 0 {
                r - i64::from(self.pred_free_after[j])
            } else {
                -r - i64::from(self.gt_free_after[i])
            });
        }
        v + rest > self.bound as i64
    }
}

/// A DP value: `i16` or `i32`, with saturating addition (`INF` absorbs).
trait Cell: Copy + Ord + Default + BitAnd<Output = Self> + BitOr<Output = Self> {
    const INF: Self;
    const ZERO: Self;
    const ONE: Self;
    fn sat_add(self, other: Self) -> Self;
    fn of(b: bool) -> Self;
    fn bits(b: u8) -> Self;
    fn shr(self, k: u32) -> Self;
    fn wide(self) -> i64;
}

/// The two lane types share one implementation of [`Cell`].
macro_rules! impl_cell {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            const INF: Self = <$t>::MAX;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn sat_add(self, other: Self) -> Self {
                self.saturating_add(other)
            }
            #[inline(always)]
            fn of(b: bool) -> Self {
                Self::from(b)
            }
            #[inline(always)]
            fn bits(b: u8) -> Self {
                Self::from(b)
            }
            #[inline(always)]
            fn shr(self, k: u32) -> Self {
                self >> k
            }
            #[inline(always)]
            fn wide(self) -> i64 {
                i64::from(self)
            }
        }
    )*};
}

impl_cell!(i16, i32);

/// A symbol: `u16` (every code point of the pair below 2^16) or `u32`.
trait Symbol: Copy + Eq + Default {
    fn of(c: u32) -> Self;
}

impl Symbol for u16 {
    #[inline(always)]
    fn of(c: u32) -> Self {
        c as u16 // callers check c <= u16::MAX
    }
}

impl Symbol for u32 {
    #[inline(always)]
    fn of(c: u32) -> Self {
        c
    }
}

/// Buffers of the anti-diagonal kernel for one lane width.
#[derive(Default)]
struct Lanes<S, T> {
    /// `gt[i - 1]` at index `i` (index 0 and the last BLOCK are padding), length `n + 1 + BLOCK`.
    gt: Vec<S>,
    /// `pred[m - 1 - k]` at index `k` (index `m` and the last BLOCK are padding), length
    /// `m + 1 + BLOCK`.
    pred: Vec<S>,
    /// Per row `i`, flags (see `load`), length `n + 1 + BLOCK`.
    rows: Vec<T>,
    /// Per reversed column `k = m - j`, flags (see `load`), length `m + 1 + BLOCK`.
    cols: Vec<T>,
    /// Three chunks of `n + 2 + BLOCK` cells, one per anti-diagonal in use (cell `i` at index
    /// `i + 1`; index 0 stays `INF`).
    diags: Vec<T>,
}

impl<S: Symbol, T: Cell> Lanes<S, T> {
    fn load(&mut self, gt: &[u32], pred: &[u32], job: &Job) -> Result<(), TryReserveError> {
        let (n, m) = (job.n, job.m);
        let (rs, cs) = (n + 1 + BLOCK, m + 1 + BLOCK);
        self.gt.clear();
        self.gt.try_reserve(rs)?;
        self.gt.push(S::default());
        self.gt.extend(gt.iter().map(|&c| S::of(c)));
        self.gt.resize(rs, S::default());
        self.pred.clear();
        self.pred.try_reserve(cs)?;
        self.pred.extend(pred.iter().rev().map(|&c| S::of(c)));
        self.pred.resize(cs, S::default());
        // Row flags: bit 0 `gt[i-1]` is not a schwa, bit 1 it is not at its own join, bit 2 `i`
        // is not a gt join (flags index 0 is unused, 0: row 0 reads "not a schwa", like the
        // padding).
        fill(&mut self.rows, rs, T::bits(7))?;
        for (r, (&f, &join)) in self
            .rows
            .iter_mut()
            .zip(job.gt_flags.iter().zip(job.gt_join))
        {
            *r = T::bits(
                u8::from(f & SCHWA == 0)
                    | u8::from(f & AT_OWN_JOIN == 0) << 1
                    | u8::from(!join) << 2,
            );
        }
        // Column flags, column k = m - j (the flags read backwards): bit 0 `pred[j-1]` is not a
        // schwa, bit 1 `j` is not a pred join, bit 2 `pred[j-1]` is not at its own join.
        fill(&mut self.cols, cs, T::bits(7))?;
        let flags = job.pred_flags.iter().rev().zip(job.pred_join.iter().rev());
        for (c, (&f, &join)) in self.cols.iter_mut().zip(flags) {
            *c = T::bits(
                u8::from(f & SCHWA == 0)
                    | u8::from(!join) << 1
                    | u8::from(f & AT_OWN_JOIN == 0) << 2,
            );
        }
        fill(&mut self.diags, 3 * (n + 2 + BLOCK), T::INF)?;
        Ok(())
    }

    /// One pass over the anti-diagonals (module docs); `load` must have been called with a job
    /// on the same texts. `XDROP`: keep the cells within [`XDROP_SLACK`] of the best of their
    /// anti-diagonal and return the cost of the path found (an upper bound; saturated values are
    /// returned as they are). Otherwise: the exact distance, given that `job.bound` bounds it.
    #[inline(always)]
    fn run<const XDROP: bool>(&mut self, job: &Job) -> Result<usize, SchwaError> {
        let (n, m) = (job.n, job.m);
        let (d_lo, d_hi) = job.band;
        // Row tables, column tables and anti-diagonal chunks: their lengths, BLOCK past the last
        // entry used (a short anti-diagonal is computed as a whole block).
        let (rs, cs, w) = (n + 1 + BLOCK, m + 1 + BLOCK, n + 2 + BLOCK);
        // Every table has the length `load` gave it; the pointer arithmetic below relies on it.
        if self.gt.len() != rs
            || self.pred.len() != cs
            || self.rows.len() != rs
            || self.cols.len() != cs
            || self.diags.len() != 3 * w
        {
            return Ok(usize::MAX);
        }
        let rows = self.rows.as_ptr();
        let cols = self.cols.as_ptr();
        let (gsym, psym) = (self.gt.as_ptr(), self.pred.as_ptr());
        // The live cells `lo..=hi` of an anti-diagonal are kept as `(lo, hi)` (`EMPTY`: none);
        // all other cells of its chunk of `diags` are INF. `r0`, `r1`, `r2` are the ranges of
        // anti-diagonals s - 1, s - 2, s - 3 at the top of the loop, `o0`, `o1`, `o2` the offsets
        // of their chunks (distinct multiples of w, below 3w); s reuses the chunk of s - 3.
        const EMPTY: (usize, usize) = (usize::MAX / 2, 0);
        self.diags.fill(T::INF);
        self.diags[1] = T::ZERO;
        let (mut r0, mut r1, mut r2) = ((0, 0), EMPTY, EMPTY);
        let (mut o0, mut o1, mut o2) = (0, w, 2 * w);
        let base = self.diags.as_mut_ptr();
        // SAFETY (every access through `base` below): an index o + i + 1 with o one of the
        // offsets and i <= n, or o + i with 1 <= i <= n + 1, is below o + w <= 3w.
        let at = |o: usize, i: usize| {
            debug_assert!(o + i + 1 < 3 * w);
            unsafe { base.add(o + i + 1) }
        };
        for s in 1..=n + m {
            // Cells reachable from the live cells of s - 1 (right, down) and s - 2 (diagonal).
            let lo = r0.0.min(r1.0 + 1);
            let hi = (r0.1 + 1).max(r1.1 + 1);
            let s64 = s as i64;
            let lo = lo
                .max(s.saturating_sub(m))
                .max((s64 - d_hi + 1).div_euclid(2).max(0) as usize);
            let hi = hi.min(n).min(s).min((s64 - d_lo).div_euclid(2) as usize);
            // Back to all-INF outside lo..=hi (which is overwritten below); r2.1 <= n.
            let (a, b) = r2;
            if a < lo {
                for i in a..=b.min(lo - 1) {
                    unsafe { *at(o2, i) = T::INF };
                }
            }
            if b > hi {
                for i in a.max(hi + 1)..=b {
                    unsafe { *at(o2, i) = T::INF };
                }
            }
            let mut new = EMPTY;
            if lo <= hi {
                // k = m - j of cell lo; lo >= s - m, so k >= 0, and hi <= s keeps
                // k + len - 1 <= m.
                let (k0, len) = (m + lo - s, hi - lo + 1);
                // SAFETY: `cells` touches entries lo..lo + max(len, BLOCK) of the row tables and
                // `gt` (lo <= hi <= n, length rs = n + 1 + BLOCK), indices up to max(hi, lo +
                // BLOCK - 1) + 1 <= n + BLOCK of a chunk (length w = n + 2 + BLOCK), and columns
                // k0..k0 + max(len, BLOCK) of `pred` and the column tables (k0 + len - 1 = m + hi
                // - s <= m, k0 <= m; length cs = m + 1 + BLOCK). The chunks o2 (written), o0 and
                // o1 (read) are distinct.
                let best = unsafe {
                    let ops = Operands {
                        out: base.add(o2 + lo + 1),
                        diag: base.add(o1 + lo),
                        up: base.add(o0 + lo),
                        left: base.add(o0 + lo + 1),
                        g: gsym.add(lo),
                        p: psym.add(k0),
                        rows: rows.add(lo),
                        cols: cols.add(k0),
                    };
                    cells::<S, T, XDROP>(&ops, len)
                };
                let value = |i: usize| unsafe { *at(o2, i) }.wide();
                let clear = |i: usize| unsafe { *at(o2, i) = T::INF };
                let (mut lo, mut hi) = (lo, hi);
                if XDROP {
                    let cut = best.wide() + XDROP_SLACK;
                    while lo < hi && value(lo) > cut {
                        clear(lo);
                        lo += 1;
                    }
                    while lo < hi && value(hi) > cut {
                        clear(hi);
                        hi -= 1;
                    }
                } else {
                    while lo <= hi && job.hopeless(lo, s - lo, value(lo)) {
                        clear(lo);
                        lo += 1;
                    }
                    while lo < hi && job.hopeless(hi, s - hi, value(hi)) {
                        clear(hi);
                        hi -= 1;
                    }
                }
                if lo <= hi {
                    new = (lo, hi);
                }
            }
            (r0, r1, r2) = (new, r0, r1);
            (o0, o1, o2) = (o2, o0, o1);
        }
        // r0, o0: the last anti-diagonal, s = n + m.
        let last = if r0.0 <= n && n <= r0.1 {
            unsafe { *at(o0, n) }.wide() as usize
        } else {
            usize::MAX
        };
        // The exact pass always keeps the last cell (it is on every path, module docs): the
        // min() only makes the code total.
        #[cfg(test)]
        assert!(
            XDROP || last <= job.bound,
            "the exact pass lost the last cell"
        );
        Ok(if XDROP { last } else { last.min(job.bound) })
    }
}

/// Cells per step of the anti-diagonal pass (a whole number of vectors for both lane widths).
const BLOCK: usize = 16;

/// The operands of the cells `lo..=hi` of one anti-diagonal, each pointing at its value for
/// cell `lo`: the output, the diagonal, upper and left neighbours, the two symbols compared, the
/// row flags and the column flags (see `Lanes::load`).
struct Operands<S, T> {
    out: *mut T,
    diag: *const T,
    up: *const T,
    left: *const T,
    g: *const S,
    p: *const S,
    rows: *const T,
    cols: *const T,
}

/// Computes the `len` cells of `ops` (element-wise, in blocks of [`BLOCK`], the last block moved
/// back to end at the last cell: recomputing a cell gives the same value, no operand is written)
/// and returns their minimum when `BEST` (otherwise INF). Fewer than [`BLOCK`] cells are computed
/// as one block, the outputs past `len` then set back to INF.
///
/// # Safety
/// Every pointer of `ops` is valid for `max(len, BLOCK)` elements, and `out` overlaps none of the
/// others.
#[inline(always)]
unsafe fn cells<S: Symbol, T: Cell, const BEST: bool>(ops: &Operands<S, T>, len: usize) -> T {
    let mut best = T::INF;
    if len < BLOCK {
        // SAFETY: BLOCK elements are valid (caller).
        let v = unsafe { block(ops, 0) };
        for t in len..BLOCK {
            // SAFETY: t < BLOCK.
            unsafe { *ops.out.add(t) = T::INF };
        }
        if BEST {
            best = v[..len].iter().copied().fold(T::INF, T::min);
        }
        return best;
    }
    let mut acc = [T::INF; BLOCK];
    let mut at = 0;
    loop {
        let at_block = at.min(len - BLOCK);
        // SAFETY: at_block + BLOCK <= len.
        let v = unsafe { block(ops, at_block) };
        if BEST {
            for t in 0..BLOCK {
                acc[t] = acc[t].min(v[t]);
            }
        }
        at += BLOCK;
        if at >= len {
            break;
        }
    }
    if BEST {
        best = acc.iter().copied().fold(T::INF, T::min);
    }
    best
}

/// Cells `at..at + BLOCK` of `ops`, stored and returned.
///
/// # Safety
/// As [`cells`], with `at + BLOCK <= len`.
#[inline(always)]
unsafe fn block<S: Symbol, T: Cell>(ops: &Operands<S, T>, at: usize) -> [T; BLOCK] {
    // SAFETY (all loads and the store): elements at..at + BLOCK are in bounds (caller).
    let ld = |p: *const T| unsafe { p.add(at).cast::<[T; BLOCK]>().read_unaligned() };
    let ls = |p: *const S| unsafe { p.add(at).cast::<[S; BLOCK]>().read_unaligned() };
    let (diag, up, left, g, p) = (ld(ops.diag), ld(ops.up), ld(ops.left), ls(ops.g), ls(ops.p));
    let (rows, cols) = (ld(ops.rows), ld(ops.cols));
    let mut out = [T::INF; BLOCK];
    for t in 0..BLOCK {
        out[t] = cell(diag[t], up[t], left[t], g[t], p[t], rows[t], cols[t]);
    }
    unsafe { ops.out.add(at).cast::<[T; BLOCK]>().write_unaligned(out) };
    out
}

/// One cell from its three neighbours, its symbols, row and column flags (see `Lanes::load`).
#[inline(always)]
fn cell<S: Symbol, T: Cell>(diag: T, up: T, left: T, g: S, p: S, row: T, col: T) -> T {
    // Deleting gt[i-1] is free for a schwa at its own join or across from a pred join: it costs
    // row bit 0 | (row bit 1 & column bit 1). Inserting pred[j-1] is free for a schwa at its own
    // join or across from a gt join: column bit 0 | (column bit 2 & row bit 2).
    let both = row & col;
    let del = (row | both.shr(1)) & T::ONE;
    let ins = (col | both.shr(2)) & T::ONE;
    let sub = diag.sat_add(T::of(g != p));
    sub.min(up.sat_add(del)).min(left.sat_add(ins))
}

/// One pass with the lanes `lanes`, compiled for AVX2 when the processor has it (same code, same
/// results; `portable` forces the baseline code, for the tests).
fn run_pass<S: Symbol, T: Cell, const XDROP: bool>(
    lanes: &mut Lanes<S, T>,
    job: &Job,
    portable: bool,
) -> Result<usize, SchwaError> {
    #[cfg(target_arch = "x86_64")]
    {
        if !portable && crate::simd::avx2() {
            // SAFETY: the processor supports AVX2 (simd::avx2 checked it just above).
            return unsafe { run_pass_avx2::<S, T, XDROP>(lanes, job) };
        }
    }
    let _ = portable;
    lanes.run::<XDROP>(job)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_pass_avx2<S: Symbol, T: Cell, const XDROP: bool>(
    lanes: &mut Lanes<S, T>,
    job: &Job,
) -> Result<usize, SchwaError> {
    lanes.run::<XDROP>(job)
}

/// The previous kernel: the same band, row by row with a scalar inner loop. Kept as the
/// reference the tests and the A/B benchmark compare [`schwa_distance`] with.
#[doc(hidden)]
pub fn schwa_distance_rows(
    ws: &mut SchwaWorkspace,
    gt: &[u32],
    pred: &[u32],
    gt_joins: &[i64],
    pred_joins: &[i64],
    schwa_chars: &[u32],
) -> Result<usize, SchwaError> {
    let (strict, free) = match prepare(ws, gt, pred, gt_joins, pred_joins, schwa_chars)? {
        Prepared::Done(d) => return Ok(d),
        Prepared::Band { strict, free } => (strict, free),
    };
    let (n, m) = (gt.len(), pred.len());
    let (d_lo, d_hi) = band(strict, free, n, m);
    // Per-column costs, computed once: inserting pred[j-1] is free for a schwa at its own join, or
    // (second table) also across from a gt join; deleting a gt schwa that is not at its own join
    // is free across from a pred join.
    let (gj, pj, gf, pf) = (&ws.gt_join, &ws.pred_join, &ws.gt_flags, &ws.pred_flags);
    let tables = &mut ws.tables;
    fill(tables, 5 * (m + 1), 0)?;
    let (ins_plain, rest) = tables.split_at_mut(m + 1);
    let (ins_at_gt_join, rest) = rest.split_at_mut(m + 1);
    let (del_schwa, rest) = rest.split_at_mut(m + 1);
    let (ones, zeros) = rest.split_at_mut(m + 1);
    for j in 0..=m {
        let f = pf[j];
        let schwa = f & SCHWA != 0;
        ins_plain[j] = u32::from(!(schwa && f & AT_OWN_JOIN != 0));
        ins_at_gt_join[j] = u32::from(!schwa);
        del_schwa[j] = u32::from(!pj[j]);
        ones[j] = 1;
    }
    let zeros: &[u32] = zeros;
    let (prev, cur) = (&mut ws.prev, &mut ws.cur);
    fill(prev, m + 2, INF)?;
    fill(cur, m + 2, INF)?;
    // Row 0 over its band.
    let hi0 = (d_hi as usize).min(m);
    let ins0: &[u32] = if gj[0] { ins_at_gt_join } else { ins_plain };
    prev[0] = 0;
    for j in 1..=hi0 {
        prev[j] = prev[j - 1] + ins0[j];
    }
    prev[hi0 + 1] = INF;
    for i in 1..=n {
        let lo = (i as i64 + d_lo).max(0) as usize;
        let hi = ((i as i64 + d_hi) as usize).min(m);
        let g = gt[i - 1];
        let ins: &[u32] = if gj[i] { ins_at_gt_join } else { ins_plain };
        let del: &[u32] = match (gf[i] & SCHWA != 0, gf[i] & AT_OWN_JOIN != 0) {
            (false, _) => ones,
            (true, true) => zeros,
            (true, false) => del_schwa,
        };
        // Column `lo` has no left neighbour inside the band.
        let mut left = if lo == 0 {
            prev[0] + del[0]
        } else {
            (prev[lo] + del[lo]).min(prev[lo - 1] + u32::from(g != pred[lo - 1]))
        };
        cur[lo] = left;
        let columns = cur[lo + 1..=hi]
            .iter_mut()
            .zip(&prev[lo..hi])
            .zip(&prev[lo + 1..=hi])
            .zip(&pred[lo..hi])
            .zip(&del[lo + 1..=hi])
            .zip(&ins[lo + 1..=hi]);
        for (((((c, &diag), &up), &p), &d), &ins_cost) in columns {
            let best = (diag + u32::from(g != p)).min(up + d).min(left + ins_cost);
            *c = best;
            left = best;
        }
        cur[hi + 1] = INF;
        std::mem::swap(prev, cur);
    }
    Ok(prev[m] as usize)
}

#[cfg(test)]
mod tests {
    use super::super::reference::Rng;
    use super::*;

    /// The definition written out: the full O(n·m) table.
    fn full_dp(g: &[u32], p: &[u32], jg: &[i64], jp: &[i64], schwa: &[u32]) -> usize {
        let inj = |set: &[i64], k: usize| set.contains(&(k as i64));
        let (n, m) = (g.len(), p.len());
        let mut d = vec![vec![usize::MAX / 4; m + 1]; n + 1];
        d[0][0] = 0;
        for i in 0..=n {
            for j in 0..=m {
                if i > 0 {
                    let free =
                        schwa.contains(&g[i - 1]) && (inj(jg, i - 1) || inj(jg, i) || inj(jp, j));
                    d[i][j] = d[i][j].min(d[i - 1][j] + usize::from(!free));
                }
                if j > 0 {
                    let free =
                        schwa.contains(&p[j - 1]) && (inj(jp, j - 1) || inj(jp, j) || inj(jg, i));
                    d[i][j] = d[i][j].min(d[i][j - 1] + usize::from(!free));
                }
                if i > 0 && j > 0 {
                    d[i][j] = d[i][j].min(d[i - 1][j - 1] + usize::from(g[i - 1] != p[j - 1]));
                }
            }
        }
        d[n][m]
    }

    #[test]
    fn schwa_at_a_join_is_free() {
        let s = |t: &str| t.chars().map(|c| c as u32).collect::<Vec<_>>();
        let schwa = s("ըԸ");
        let mut ws = SchwaWorkspace::new();
        // gt "աբ" joined at 1; pred has a schwa inserted there.
        assert_eq!(
            schwa_distance(&mut ws, &s("աբ"), &s("աըբ"), &[1], &[], &schwa),
            Ok(0)
        );
        assert_eq!(
            schwa_distance(&mut ws, &s("աբ"), &s("աըբ"), &[], &[], &schwa),
            Ok(1)
        );
        // A schwa away from any join still costs one.
        assert_eq!(
            schwa_distance(&mut ws, &s("աբգ"), &s("աբգը"), &[1], &[], &schwa),
            Ok(1)
        );
        assert!(schwa_distance(&mut ws, &s("ա"), &s("ա"), &[5], &[], &schwa).is_err());
    }

    /// [`full_dp`] with the join sets as tables and one row at a time (fast enough for pages of a
    /// few thousand characters).
    fn full_dp_rows(g: &[u32], p: &[u32], jg: &[i64], jp: &[i64], schwa: &[u32]) -> usize {
        let (n, m) = (g.len(), p.len());
        let mut gj = vec![false; n + 1];
        let mut pj = vec![false; m + 1];
        jg.iter().for_each(|&k| gj[k as usize] = true);
        jp.iter().for_each(|&k| pj[k as usize] = true);
        let gs: Vec<bool> = g.iter().map(|c| schwa.contains(c)).collect();
        let ps: Vec<bool> = p.iter().map(|c| schwa.contains(c)).collect();
        let mut prev = vec![0usize; m + 1];
        for j in 1..=m {
            let free = ps[j - 1] && (pj[j - 1] || pj[j] || gj[0]);
            prev[j] = prev[j - 1] + usize::from(!free);
        }
        let mut cur = vec![0usize; m + 1];
        for i in 1..=n {
            let free = gs[i - 1] && (gj[i - 1] || gj[i] || pj[0]);
            cur[0] = prev[0] + usize::from(!free);
            for j in 1..=m {
                let del_free = gs[i - 1] && (gj[i - 1] || gj[i] || pj[j]);
                let ins_free = ps[j - 1] && (pj[j - 1] || pj[j] || gj[i]);
                cur[j] = (prev[j - 1] + usize::from(g[i - 1] != p[j - 1]))
                    .min(prev[j] + usize::from(!del_free))
                    .min(cur[j - 1] + usize::from(!ins_free));
            }
            std::mem::swap(&mut prev, &mut cur);
        }
        prev[m]
    }

    /// The kernel with each lane width, and the row kernel; panics unless all agree, returns the
    /// distance.
    fn all_kernels(g: &[u32], p: &[u32], jg: &[i64], jp: &[i64], schwa: &[u32]) -> usize {
        let mut ws = SchwaWorkspace::new();
        let d = schwa_distance(&mut ws, g, p, jg, jp, schwa).unwrap();
        ws.force_wide = true;
        let wide = schwa_distance(&mut ws, g, p, jg, jp, schwa).unwrap();
        let rows = schwa_distance_rows(&mut ws, g, p, jg, jp, schwa).unwrap();
        (ws.force_wide, ws.force_portable) = (false, true);
        let portable = schwa_distance(&mut ws, g, p, jg, jp, schwa).unwrap();
        assert_eq!(
            (d, wide, portable),
            (rows, rows, rows),
            "{g:?} {p:?} {jg:?} {jp:?}"
        );
        // A looser upper bound from the first pass changes nothing.
        for (wide, loosen) in [(false, 1), (true, 2), (false, 5), (false, 1 << 20)] {
            (ws.force_wide, ws.loosen) = (wide, loosen);
            ws.force_portable = loosen == 5;
            // Falls back to the wide lanes after the first pass (or after the second).
            ws.narrow_limit = match loosen {
                1 => rows.max(1),
                5 => rows + 3,
                _ => 0,
            };
            let loose = schwa_distance(&mut ws, g, p, jg, jp, schwa).unwrap();
            assert_eq!(
                loose, rows,
                "loosened by {loosen}: {g:?} {p:?} {jg:?} {jp:?}"
            );
        }
        d
    }

    #[test]
    fn banded_dp_equals_the_full_table() {
        let alphabet: Vec<u32> = "աըԸ- b".chars().map(|c| c as u32).collect();
        let schwa: Vec<u32> = "ըԸ".chars().map(|c| c as u32).collect();
        let mut rng = Rng(1234);
        for _ in 0..4000 {
            let g = rng.seq(40, &alphabet);
            let p = rng.seq(40, &alphabet);
            let jg: Vec<i64> = (0..rng.below(4))
                .map(|_| rng.below(g.len() + 1) as i64)
                .collect();
            let jp: Vec<i64> = (0..rng.below(4))
                .map(|_| rng.below(p.len() + 1) as i64)
                .collect();
            let got = all_kernels(&g, &p, &jg, &jp, &schwa);
            assert_eq!(
                got,
                full_dp(&g, &p, &jg, &jp, &schwa),
                "{g:?} {p:?} {jg:?} {jp:?}"
            );
        }
    }

    /// A noisy copy of `text`: substitutions, insertions, deletions at rate `rate`, a schwa added
    /// or dropped here and there, and now and then a long gap (a dropped or doubled run).
    fn noisy(rng: &mut Rng, text: &[u32], alphabet: &[u32], schwa: u32, rate: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut k = 0;
        while k < text.len() {
            let roll = rng.below(1000);
            if roll < rate {
                out.push(alphabet[rng.below(alphabet.len())]);
                k += 1;
            } else if roll < 2 * rate {
                k += 1;
            } else if roll < 3 * rate {
                out.push(alphabet[rng.below(alphabet.len())]);
            } else if roll < 3 * rate + 10 {
                out.push(schwa);
            } else if roll == 999 {
                let run = rng.below(150);
                if rng.below(2) == 0 {
                    k += run;
                } else {
                    let end = (k + run).min(text.len());
                    out.extend_from_slice(&text[k..end]);
                }
            } else {
                out.push(text[k]);
                k += 1;
            }
        }
        out
    }

    /// Joins every few characters (and sometimes at 0 and at the end).
    fn some_joins(rng: &mut Rng, len: usize, every: usize) -> Vec<i64> {
        let mut joins: Vec<i64> = (0..len / every.max(1))
            .map(|_| rng.below(len + 1) as i64)
            .collect();
        if rng.below(3) == 0 {
            joins.push(0);
        }
        if rng.below(3) == 0 {
            joins.push(len as i64);
        }
        joins
    }

    #[test]
    fn long_pages_equal_the_full_table() {
        // Armenian-like text: a schwa about one letter in twenty, a space one in seven.
        let mut alphabet: Vec<u32> = ('ա'..='ֆ').map(|c| c as u32).collect();
        alphabet.extend([' ' as u32; 6]);
        alphabet.push('Ը' as u32);
        let schwa: Vec<u32> = "ըԸ".chars().map(|c| c as u32).collect();
        let mut rng = Rng(99);
        for case in 0..60 {
            let len = [0, 1, 15, 16, 17, 300, 1500, 3000][case % 8] + rng.below(200);
            let g: Vec<u32> = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let rate = rng.below(120);
            let p = noisy(&mut rng, &g, &alphabet, schwa[0], rate);
            let every = 5 + rng.below(60);
            let jg = some_joins(&mut rng, g.len(), every);
            let jp = if case % 5 == 0 {
                vec![]
            } else {
                some_joins(&mut rng, p.len(), every + 1)
            };
            let d = all_kernels(&g, &p, &jg, &jp, &schwa);
            // Both orientations (the distance is symmetric with the joins).
            assert_eq!(all_kernels(&p, &g, &jp, &jg, &schwa), d);
            if g.len() * p.len() <= 4_000_000 {
                assert_eq!(d, full_dp_rows(&g, &p, &jg, &jp, &schwa), "case {case}");
            }
        }
    }

    #[test]
    fn every_width_of_an_anti_diagonal() {
        // All lengths up to a few blocks on both sides, so the anti-diagonals take every width
        // below, at and around multiples of BLOCK; one side sometimes empty.
        let alphabet: Vec<u32> = "աբգըԸ ".chars().map(|c| c as u32).collect();
        let schwa: Vec<u32> = "ըԸ".chars().map(|c| c as u32).collect();
        let mut rng = Rng(7);
        for n in 0..=70 {
            for m in (0..=70).step_by(3) {
                let g: Vec<u32> = (0..n).map(|_| alphabet[rng.below(6)]).collect();
                let p: Vec<u32> = (0..m).map(|_| alphabet[rng.below(6)]).collect();
                let jg = some_joins(&mut rng, n, 4);
                let jp = some_joins(&mut rng, m, 4);
                let d = all_kernels(&g, &p, &jg, &jp, &schwa);
                assert_eq!(d, full_dp(&g, &p, &jg, &jp, &schwa), "{n} {m}");
            }
        }
    }

    #[test]
    fn misleading_pages_stay_exact() {
        // Periodic text, block moves and long gaps mislead the X-drop pass (a poor upper bound);
        // the exact pass must still find the distance.
        let schwa: Vec<u32> = "ըԸ".chars().map(|c| c as u32).collect();
        let s = |t: &str| t.chars().map(|c| c as u32).collect::<Vec<_>>();
        let unit = s("աըբ գըդ ");
        let periodic: Vec<u32> = unit.iter().copied().cycle().take(2000).collect();
        let mut shifted = periodic[3..].to_vec();
        shifted.extend_from_slice(&s("ըըը"));
        let mut moved = periodic[1000..].to_vec();
        moved.extend_from_slice(&periodic[..1000]);
        let mut gap = periodic[..700].to_vec();
        gap.extend_from_slice(&periodic[1200..]);
        for p in [&shifted, &moved, &gap, &periodic[..40].to_vec(), &vec![]] {
            for every in [3, 50, 400] {
                let jg: Vec<i64> = (0..=periodic.len())
                    .step_by(every)
                    .map(|k| k as i64)
                    .collect();
                let jp: Vec<i64> = (0..=p.len()).step_by(every + 1).map(|k| k as i64).collect();
                let d = all_kernels(&periodic, p, &jg, &jp, &schwa);
                assert_eq!(d, full_dp_rows(&periodic, p, &jg, &jp, &schwa));
                assert_eq!(all_kernels(p, &periodic, &jp, &jg, &schwa), d);
            }
        }
    }

    #[test]
    fn code_points_beyond_16_bits_are_not_truncated() {
        let schwa: Vec<u32> = "ըԸ".chars().map(|c| c as u32).collect();
        let (a, b) = ('ա' as u32, 'ա' as u32 + 0x1_0000);
        let mut ws = SchwaWorkspace::new();
        let g = [a, schwa[0], a, a];
        let p = [b, a, a];
        assert_eq!(schwa_distance(&mut ws, &g, &p, &[1], &[], &schwa), Ok(1));
        assert_eq!(all_kernels(&g, &p, &[2], &[0], &schwa), 1);
    }

    #[test]
    fn bad_joins_are_the_same_error() {
        let schwa: Vec<u32> = "ըԸ".chars().map(|c| c as u32).collect();
        let g: Vec<u32> = "աըբ".chars().map(|c| c as u32).collect();
        let mut ws = SchwaWorkspace::new();
        for (jg, jp) in [
            (vec![4], vec![]),
            (vec![-1], vec![]),
            (vec![], vec![9]),
            (vec![1], vec![-3]),
        ] {
            let new = schwa_distance(&mut ws, &g, &g, &jg, &jp, &schwa);
            let old = schwa_distance_rows(&mut ws, &g, &g, &jg, &jp, &schwa);
            assert!(matches!(new, Err(SchwaError::BadJoin(_))));
            assert_eq!(new, old);
        }
    }
}
