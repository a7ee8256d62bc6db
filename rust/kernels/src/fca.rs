//! Flexible character accuracy: the greedy line matching of `scorekit.ocr.fca`, every coefficient
//! combination's run advanced together (docs/ocr-metrics.md#flexible-character-accuracy).
//!
//! A *piece* is a non-empty part `values[start..end]` of one line (empty lines are no pieces). A
//! run's state is its ground-truth pieces, longest first (then by position), and its OCR pieces in
//! line order. Each step takes every run's longest ground-truth pieces (all of the first one's
//! length), aligns the shorter of each such `g` and each OCR piece `o` with its best substring in
//! the longer ([`best_substring`](crate::levenshtein::best_substring)), and gives every
//! coefficient combination of the run the pair `(g, o)` of least penalty `c_ed·d + c_ld·|a − b| +
//! c_off·offset − c_len·min(a, b)`: each `g`'s first `o` in line order among its equal
//! penalties, then the first `g` in line order among theirs (the paper's rule). Each distinct
//! choice makes a new state: the matched parts removed, what is left of the longer piece put back
//! as up to two pieces, the edits added to the errors. Equal states merge, keeping the fewer
//! errors (all that the minimum needs); a state with one side used up is finished, its errors
//! plus what is left on both sides. The result is the least of the finished states' errors.
//!
//! Pieces are numbered on first sight (one number per `(start, end)` on each side), so states
//! are short rows of numbers and equal states have equal rows. Each alignment is computed once:
//! within a step the runs are taken by their first ground-truth piece, and a run's OCR pieces find
//! their rows through a per-step stamp array, which asks the ground-truth piece's table of known
//! alignments once per distinct pair; the run's other longest pieces ask their own tables pair
//! by pair.

use std::collections::TryReserveError;
use std::fmt;

use crate::levenshtein::{best_substring, SubstringWorkspace};

/// The largest coefficient accepted: penalties stay far inside `i64` for any line length.
pub const MAX_COEFFICIENT: i64 = 1_000_000;
/// Sides must hold fewer characters than this (positions are numbered in 32 bits).
pub const MAX_SIDE: usize = u32::MAX as usize;

/// Why the matching cannot run.
#[derive(Debug)]
pub enum FcaError {
    /// Offsets that are not `n + 1` non-decreasing entries from 0 to the values' length.
    Offsets(&'static str),
    /// No coefficient combination, or a coefficient outside `0..=MAX_COEFFICIENT`.
    Coefficients,
    /// A side (of a page whose both sides hold characters) with `MAX_SIDE` characters or more, or
    /// a matching that makes more pieces than 32 bits can number.
    TooLarge(&'static str),
    /// A buffer could not be allocated.
    OutOfMemory(TryReserveError),
}

impl fmt::Display for FcaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FcaError::Offsets(side) => write!(
                f,
                "{side}_offsets must be n + 1 non-decreasing entries from 0 to len({side}_values)"
            ),
            FcaError::Coefficients => write!(
                f,
                "coefficients must be at least one row of four integers in 0..={MAX_COEFFICIENT}"
            ),
            FcaError::TooLarge("the matching") => {
                write!(f, "the matching makes more pieces than 32 bits can number")
            }
            FcaError::TooLarge(side) => {
                write!(f, "{side} has {MAX_SIDE} characters or more")
            }
            FcaError::OutOfMemory(e) => write!(f, "out of memory ({e})"),
        }
    }
}

impl std::error::Error for FcaError {}

impl From<TryReserveError> for FcaError {
    fn from(e: TryReserveError) -> Self {
        FcaError::OutOfMemory(e)
    }
}

/// The fewest errors of the greedy line matching over `coefficients` (rows `(edit distance,
/// length difference, offset, length)`); each side's lines are `values[offsets[k]..offsets[k+1]]`.
pub fn fca_errors(
    gt_values: &[u32],
    gt_offsets: &[i64],
    ocr_values: &[u32],
    ocr_offsets: &[i64],
    coefficients: &[[i64; 4]],
) -> Result<u64, FcaError> {
    let gt_lines = lines(gt_values.len(), gt_offsets, "gt")?;
    let ocr_lines = lines(ocr_values.len(), ocr_offsets, "ocr")?;
    if coefficients.is_empty()
        || coefficients
            .iter()
            .flatten()
            .any(|c| !(0..=MAX_COEFFICIENT).contains(c))
    {
        return Err(FcaError::Coefficients);
    }
    if gt_lines.is_empty() || ocr_lines.is_empty() {
        return Ok((gt_values.len() + ocr_values.len()) as u64);
    }
    for (values, side) in [(gt_values, "gt"), (ocr_values, "ocr")] {
        if values.len() >= MAX_SIDE {
            return Err(FcaError::TooLarge(side));
        }
    }
    Matching::new(gt_values, ocr_values).run(&gt_lines, &ocr_lines, coefficients)
}

/// The non-empty lines `(start, end)` of one side, after checking its offsets.
fn lines(len: usize, offsets: &[i64], side: &'static str) -> Result<Vec<(u32, u32)>, FcaError> {
    let bad = offsets.first() != Some(&0)
        || offsets.last() != Some(&(len as i64))
        || offsets.windows(2).any(|w| w[0] > w[1]);
    if bad {
        return Err(FcaError::Offsets(side));
    }
    let mut out = Vec::new();
    out.try_reserve(offsets.len())?;
    // Below MAX_SIDE when used: a side of MAX_SIDE characters is refused before any matching.
    out.extend(
        offsets
            .windows(2)
            .filter(|w| w[0] < w[1])
            .map(|w| (w[0] as u32, w[1] as u32)),
    );
    Ok(out)
}

/// A key of a [`Table`]: a number, all of whose bits set marks an empty slot.
trait Key: Copy + Eq {
    const EMPTY: Self;
    fn hash(self) -> u64;
}

impl Key for u32 {
    const EMPTY: u32 = u32::MAX;
    #[inline]
    fn hash(self) -> u64 {
        u64::from(self).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

impl Key for u64 {
    const EMPTY: u64 = u64::MAX;
    #[inline]
    fn hash(self) -> u64 {
        self.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// "No state": a finished state's number, and the end of a chain.
const NONE: u32 = u32::MAX;
/// A choice not yet made into a state.
const UNSET: u32 = u32::MAX - 1;

/// An open-addressing map from keys (never `K::EMPTY`) to values `V`, linear probing, at most
/// three quarters full; a key and its value share a slot (one cache line to read).
struct Table<K, V> {
    slots: Vec<(K, V)>,
    len: usize,
    shift: u32,
}

impl<K: Key, V: Copy + Default> Table<K, V> {
    fn new() -> Self {
        Table {
            slots: vec![(K::EMPTY, V::default()); 8],
            len: 0,
            shift: 61,
        }
    }

    /// The slot holding `key`, or the empty slot where it would go.
    #[inline]
    fn find(&self, key: K) -> usize {
        let mask = self.slots.len() - 1;
        let mut at = (key.hash() >> self.shift) as usize;
        while self.slots[at].0 != key && self.slots[at].0 != K::EMPTY {
            at = (at + 1) & mask;
        }
        at
    }

    /// Ask the processor to bring the first slot `key` would probe into the cache.
    #[inline]
    fn prefetch(&self, key: K) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let at = (key.hash() >> self.shift) as usize;
            // SAFETY: `at` is below the length (the shift leaves log2(len) bits), and a prefetch
            // only hints the cache: it reads nothing and cannot fault.
            unsafe { _mm_prefetch(self.slots.as_ptr().add(at).cast::<i8>(), _MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    fn get(&self, key: K) -> Option<V> {
        let (k, v) = self.slots[self.find(key)];
        (k == key).then_some(v)
    }

    /// Add `key` (not in the table) with `value`.
    fn insert(&mut self, key: K, value: V) -> Result<(), TryReserveError> {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            let mut grown = Table {
                slots: Vec::new(),
                len: self.len,
                shift: self.shift - 1,
            };
            grown.slots.try_reserve_exact(2 * self.slots.len())?;
            grown
                .slots
                .resize(2 * self.slots.len(), (K::EMPTY, V::default()));
            for &(k, v) in &self.slots {
                if k != K::EMPTY {
                    let at = grown.find(k);
                    grown.slots[at] = (k, v);
                }
            }
            *self = grown;
        }
        let at = self.find(key);
        self.slots[at] = (key, value);
        self.len += 1;
        Ok(())
    }

    fn clear(&mut self) {
        self.slots.fill((K::EMPTY, V::default()));
        self.len = 0;
    }
}

/// The pieces of one side met so far, numbered in order of first sight.
struct Pieces {
    start: Vec<u32>,
    end: Vec<u32>,
    numbers: Table<u64, u32>,
}

impl Pieces {
    fn new() -> Self {
        Pieces {
            start: Vec::new(),
            end: Vec::new(),
            numbers: Table::new(),
        }
    }

    /// The number of the piece `start..end`.
    fn number(&mut self, start: u32, end: u32) -> Result<u32, FcaError> {
        let key = u64::from(start) << 32 | u64::from(end);
        if let Some(id) = self.numbers.get(key) {
            return Ok(id);
        }
        // Numbers are below u32::MAX (the empty key of the alignment tables) and fit [`NONE`].
        let id = u32::try_from(self.start.len())
            .ok()
            .filter(|&id| id < UNSET)
            .ok_or(FcaError::TooLarge("the matching"))?;
        self.start.try_reserve(1)?;
        self.end.try_reserve(1)?;
        self.start.push(start);
        self.end.push(end);
        self.numbers.insert(key, id)?;
        Ok(id)
    }

    #[inline]
    fn len(&self, id: u32) -> u32 {
        self.end[id as usize] - self.start[id as usize]
    }

    /// Whether ground-truth piece `a` comes before `b`: longer first, then by position.
    #[inline]
    fn before(&self, a: u32, b: u32) -> bool {
        (self.len(b), self.start[a as usize]) < (self.len(a), self.start[b as usize])
    }
}

/// The runs of one step: each run's ground-truth and OCR piece numbers, and its errors so far.
#[derive(Default)]
struct Runs {
    gt: Vec<u32>,
    gt_at: Vec<usize>,
    ocr: Vec<u32>,
    ocr_at: Vec<usize>,
    errors: Vec<u64>,
}

impl Runs {
    fn clear(&mut self) {
        self.gt.clear();
        self.ocr.clear();
        self.errors.clear();
        self.gt_at.clear();
        self.ocr_at.clear();
        self.gt_at.push(0);
        self.ocr_at.push(0);
    }

    fn len(&self) -> usize {
        self.errors.len()
    }

    #[inline]
    fn gt(&self, r: usize) -> &[u32] {
        &self.gt[self.gt_at[r]..self.gt_at[r + 1]]
    }

    #[inline]
    fn ocr(&self, r: usize) -> &[u32] {
        &self.ocr[self.ocr_at[r]..self.ocr_at[r + 1]]
    }

    /// The rows of the state being added (after the last run), for comparing and hashing.
    fn pending(&self) -> (&[u32], &[u32]) {
        (
            &self.gt[*self.gt_at.last().unwrap()..],
            &self.ocr[*self.ocr_at.last().unwrap()..],
        )
    }

    /// Drop the state being added.
    fn discard(&mut self) {
        self.gt.truncate(*self.gt_at.last().unwrap());
        self.ocr.truncate(*self.ocr_at.last().unwrap());
    }

    /// Keep the state being added, with `errors`.
    fn commit(&mut self, errors: u64) -> Result<(), TryReserveError> {
        self.gt_at.try_reserve(1)?;
        self.ocr_at.try_reserve(1)?;
        self.errors.try_reserve(1)?;
        self.gt_at.push(self.gt.len());
        self.ocr_at.push(self.ocr.len());
        self.errors.push(errors);
        Ok(())
    }
}

/// A hash of a state's two rows (top bit clear, so never an empty slot's key).
fn state_hash(gt: &[u32], ocr: &[u32]) -> u64 {
    let mut h = gt.len() as u64;
    for &x in gt.iter().chain(ocr) {
        h = (h.rotate_left(23) ^ u64::from(x)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    (h ^ (h >> 31)) >> 1
}

/// One page's matching: both sides' pieces and the alignments known so far.
struct Matching<'a> {
    gt_values: &'a [u32],
    ocr_values: &'a [u32],
    gt: Pieces,
    ocr: Pieces,
    /// Per ground-truth piece `g`: OCR piece `o` → the pair's alignment `(d, start, end)`. One
    /// small table per `g`, since a step's lookups come grouped by `g` (one table keyed by the
    /// pair cost a cache miss per lookup).
    known: Vec<Table<u32, [u32; 3]>>,
    ws: SubstringWorkspace,
}

impl<'a> Matching<'a> {
    fn new(gt_values: &'a [u32], ocr_values: &'a [u32]) -> Self {
        Matching {
            gt_values,
            ocr_values,
            gt: Pieces::new(),
            ocr: Pieces::new(),
            known: Vec::new(),
            ws: SubstringWorkspace::new(),
        }
    }

    /// Make sure ground-truth piece `g` has its table of known alignments.
    fn known_of(&mut self, g: u32) -> Result<(), TryReserveError> {
        let gi = g as usize;
        if gi >= self.known.len() {
            self.known.try_reserve(gi + 1 - self.known.len())?;
            self.known.resize_with(gi + 1, Table::new);
        }
        Ok(())
    }

    /// The alignment `(d, start, end)` of the pair `(g, o)`, computed now if not met before
    /// (`g`'s table made by [`Self::known_of`]).
    fn alignment(&mut self, g: u32, o: u32) -> Result<[u32; 3], FcaError> {
        let gi = g as usize;
        if let Some(at) = self.known[gi].get(o) {
            return Ok(at);
        }
        let oi = o as usize;
        let gp = &self.gt_values[self.gt.start[gi] as usize..self.gt.end[gi] as usize];
        let op = &self.ocr_values[self.ocr.start[oi] as usize..self.ocr.end[oi] as usize];
        let (d, s, e) = if gp.len() <= op.len() {
            best_substring(&mut self.ws, gp, op)?
        } else {
            best_substring(&mut self.ws, op, gp)?
        };
        let row = [d as u32, s as u32, e as u32];
        self.known[gi].insert(o, row)?;
        Ok(row)
    }

    /// The fewest errors over `coefficients`, from the state holding every line.
    fn run(
        mut self,
        gt_lines: &[(u32, u32)],
        ocr_lines: &[(u32, u32)],
        coefficients: &[[i64; 4]],
    ) -> Result<u64, FcaError> {
        let mut runs = Runs::default();
        runs.clear();
        for &(start, end) in gt_lines {
            runs.gt.push(self.gt.number(start, end)?);
        }
        let gt = &self.gt;
        runs.gt
            .sort_by_key(|&x| (std::cmp::Reverse(gt.len(x)), gt.start[x as usize]));
        for &(start, end) in ocr_lines {
            runs.ocr.push(self.ocr.number(start, end)?);
        }
        runs.commit(0)?;

        let mut next = Runs::default();
        let mut merged = Table::<u64, u32>::new(); // state hash → first new state with that hash
        let mut same_hash: Vec<u32> = Vec::new(); // new state → next new state with its hash
                                                  // The active coefficient combinations and their runs.
        let mut active: Vec<u32> = (0..coefficients.len() as u32).collect();
        let mut run_of: Vec<u32> = vec![0; coefficients.len()];
        let mut members_at: Vec<usize> = Vec::new();
        let mut members: Vec<u32> = Vec::new();
        let mut order: Vec<u32> = Vec::new();
        let mut stamp: Vec<u32> = Vec::new(); // per OCR piece: the group that last looked it up
        let mut slot: Vec<[u32; 3]> = Vec::new(); // per OCR piece: its alignment in that group
        let mut features: Vec<[i64; 4]> = Vec::new();
        let mut rows: Vec<[u32; 3]> = Vec::new();
        let mut pending: Vec<u32> = Vec::new();
        let mut choice_state: Vec<u32> = Vec::new();
        let mut group = 0u32;
        let mut best = u64::MAX;

        while runs.len() > 0 {
            // The coefficient combinations of each run, by a counting sort.
            members_at.clear();
            members_at.resize(runs.len() + 1, 0);
            for &j in &active {
                members_at[run_of[j as usize] as usize + 1] += 1;
            }
            for r in 0..runs.len() {
                members_at[r + 1] += members_at[r];
            }
            members.clear();
            members.resize(active.len(), 0);
            let mut fill = members_at.clone();
            for &j in &active {
                let r = run_of[j as usize] as usize;
                members[fill[r]] = j;
                fill[r] += 1;
            }
            // The runs by their first ground-truth piece: one group per piece.
            order.clear();
            order.extend(0..runs.len() as u32);
            order.sort_unstable_by_key(|&r| runs.gt(r as usize)[0]);

            next.clear();
            merged.clear();
            same_hash.clear();
            let mut i = 0;
            while i < order.len() {
                let g = runs.gt(order[i] as usize)[0];
                let mut end = i;
                while end < order.len() && runs.gt(order[end] as usize)[0] == g {
                    end += 1;
                }
                group += 1;
                // The group's distinct OCR pieces, their table slots fetched ahead (the tables
                // are far larger than the caches), then their alignments.
                if stamp.len() < self.ocr.start.len() {
                    stamp.resize(self.ocr.start.len(), 0);
                    slot.resize(stamp.len(), [0; 3]);
                }
                self.known_of(g)?;
                pending.clear();
                for &r in &order[i..end] {
                    for &o in runs.ocr(r as usize) {
                        if stamp[o as usize] != group {
                            stamp[o as usize] = group;
                            self.known[g as usize].prefetch(o);
                            pending.push(o);
                        }
                    }
                }
                for &o in &pending {
                    slot[o as usize] = self.alignment(g, o)?;
                }
                for &r in &order[i..end] {
                    let r = r as usize;
                    // The candidates: the run's ground-truth pieces as long as its first, in
                    // line order (the row is longest first, then by position).
                    let gt_row = runs.gt(r);
                    let a = self.gt.len(g);
                    let tied = gt_row.iter().take_while(|&&x| self.gt.len(x) == a).count();
                    let a = i64::from(a);
                    let ocr = runs.ocr(r);
                    let n = ocr.len();
                    features.clear();
                    rows.clear();
                    for (t, &gc) in gt_row[..tied].iter().enumerate() {
                        if t > 0 {
                            self.known_of(gc)?;
                        }
                        for &o in ocr {
                            let row = if t == 0 {
                                slot[o as usize]
                            } else {
                                self.alignment(gc, o)?
                            };
                            let [d, s, e] = row;
                            let b = i64::from(self.ocr.len(o));
                            let (short, long) = (a.min(b), a.max(b));
                            let offset = i64::from(s).min(long - i64::from(e));
                            features.push([i64::from(d), long - short, offset, -short]);
                            rows.push(row);
                        }
                    }
                    choice_state.clear();
                    choice_state.resize(features.len(), UNSET);
                    for &j in &members[members_at[r]..members_at[r + 1]] {
                        let c = coefficients[j as usize];
                        // Each candidate's first OCR piece of least penalty, then the candidate
                        // of least penalty, the first in line order among equal ones: one scan
                        // with a strict `<` gives both.
                        let mut chosen = 0;
                        let mut least = i64::MAX;
                        for (k, f) in features.iter().enumerate() {
                            let p = c[0] * f[0] + c[1] * f[1] + c[2] * f[2] + c[3] * f[3];
                            if p < least {
                                least = p;
                                chosen = k;
                            }
                        }
                        if choice_state[chosen] == UNSET {
                            choice_state[chosen] = self.advance(
                                &runs,
                                r,
                                chosen / n,
                                chosen % n,
                                rows[chosen],
                                &mut next,
                                &mut merged,
                                &mut same_hash,
                                &mut best,
                            )?;
                        }
                        run_of[j as usize] = choice_state[chosen];
                    }
                }
                i = end;
            }
            active.retain(|&j| run_of[j as usize] != NONE);
            std::mem::swap(&mut runs, &mut next);
        }
        Ok(best)
    }

    /// The state after run `r` matches its ground-truth piece `t` with its OCR piece `k`
    /// (alignment `row`): added to `next` (or merged into an equal state there) and its
    /// number returned, or, when one side is used up, counted into `best` and [`NONE`] returned.
    #[allow(clippy::too_many_arguments)]
    fn advance(
        &mut self,
        runs: &Runs,
        r: usize,
        t: usize,
        k: usize,
        row: [u32; 3],
        next: &mut Runs,
        merged: &mut Table<u64, u32>,
        same_hash: &mut Vec<u32>,
        best: &mut u64,
    ) -> Result<u32, FcaError> {
        let (gt, ocr) = (runs.gt(r), runs.ocr(r));
        let (g, o) = (gt[t], ocr[k]);
        let [d, s, e] = row;
        let errors = runs.errors[r] + u64::from(d);
        next.gt.try_reserve(gt.len() + 1)?;
        next.ocr.try_reserve(ocr.len() + 1)?;
        let gt_from = next.gt.len();
        next.gt.extend_from_slice(&gt[..t]);
        next.gt.extend_from_slice(&gt[t + 1..]);
        if self.gt.len(g) <= self.ocr.len(o) {
            let (start, end) = (self.ocr.start[o as usize], self.ocr.end[o as usize]);
            next.ocr.extend_from_slice(&ocr[..k]);
            for (a, b) in [(start, start + s), (start + e, end)] {
                if b > a {
                    next.ocr.push(self.ocr.number(a, b)?);
                }
            }
            next.ocr.extend_from_slice(&ocr[k + 1..]);
        } else {
            let (start, end) = (self.gt.start[g as usize], self.gt.end[g as usize]);
            for (a, b) in [(start, start + s), (start + e, end)] {
                if b > a {
                    let piece = self.gt.number(a, b)?;
                    let tail = &next.gt[gt_from..];
                    let at = gt_from + tail.partition_point(|&x| self.gt.before(x, piece));
                    next.gt.insert(at, piece);
                }
            }
            next.ocr.extend_from_slice(&ocr[..k]);
            next.ocr.extend_from_slice(&ocr[k + 1..]);
        }
        let (new_gt, new_ocr) = next.pending();
        if new_gt.is_empty() || new_ocr.is_empty() {
            let left: u64 = new_gt
                .iter()
                .map(|&x| u64::from(self.gt.len(x)))
                .chain(new_ocr.iter().map(|&x| u64::from(self.ocr.len(x))))
                .sum();
            *best = (*best).min(errors + left);
            next.discard();
            return Ok(NONE);
        }
        let hash = state_hash(new_gt, new_ocr);
        let mut at = merged.get(hash).unwrap_or(NONE);
        while at != NONE {
            let a = at as usize;
            if next.gt(a) == new_gt && next.ocr(a) == new_ocr {
                next.errors[a] = next.errors[a].min(errors);
                next.discard();
                return Ok(at);
            }
            at = same_hash[a];
        }
        let number = next.len() as u32;
        let first = merged.find(hash);
        if merged.slots[first].0 == hash {
            // Another state has this hash: chain this one in after the first.
            let head = merged.slots[first].1 as usize;
            same_hash.push(same_hash[head]);
            same_hash[head] = number;
        } else {
            same_hash.push(NONE);
            merged.insert(hash, number)?;
        }
        next.commit(errors)?;
        Ok(number)
    }
}

#[cfg(test)]
mod tests;
