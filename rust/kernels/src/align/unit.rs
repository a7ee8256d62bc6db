//! The trajectory distance under unit weights (every tool and argument weighs 1) in integers.
//!
//! Same recurrence as [`super::distance`] over [`super::CallCost`], specialised for the default
//! cost model: a call's mass is `1 + number of arguments`, so every cost and every distance is a
//! small integer and `as f64` equals the general kernel's result exactly (the tests compare the
//! two on random trajectories).
//!
//! The argument lists of a pair are laid out densely: the argument names used by the pair get
//! local slots `0..r`, and each call becomes a row of `r` value ids (padded to a multiple of 4)
//! with [`MISSING`] where it lacks a name. Two calls of the same tool then cost the number of
//! slots whose entries differ (a name on one side only, or different values): a branch-free
//! comparison of two short rows instead of a merge. A row of the table first gets every cell's
//! vertical and different-tool diagonal move (both masses, one vectorised pass); only the cells
//! whose call has the row's tool, found through `b`'s positions chained by tool, then try their
//! cheaper substitution, before the horizontal moves are scanned.

use super::CallTable;

/// The value of a slot whose argument name the call does not have.
const MISSING: u32 = u32::MAX;

/// Most local argument-name slots of a pair on the dense path (more take the general kernel).
const MAX_SLOTS: usize = 16;

/// Largest argument-name id and tool id (plus one) of a table the dense layout accepts: slots and
/// tools are looked up in per-thread arrays of this many entries at most.
const MAX_NAME_IDS: usize = 1 << 16;
const MAX_TOOL_IDS: usize = 1 << 16;

/// The end of a list of positions.
const NONE: u32 = u32::MAX;

/// The cost of a cell outside the band (far below overflow when costs are added to it).
const INF: i32 = i32::MAX / 4;

/// Diagonals tried on either side of the ones between 0 and `m - n` before widening the band to
/// what the first path's cost requires (8 covers most trajectory pairs that are alike).
const FIRST_BAND: usize = 8;

/// Reusable buffers of [`UnitModel::distance`].
#[derive(Default)]
pub struct UnitScratch {
    /// Local slot + 1 of every table name id used by the current pair (0: none yet).
    slot_of: Vec<u8>,
    /// Table name id of every local slot.
    slots: Vec<u32>,
    /// `n × width` and `m × width` slot values of `a` and `b` (row-major).
    dense_a: Vec<u32>,
    dense_b: Vec<u32>,
    /// The first position of `b` with each tool id (during [`UnitModel::banded`], the first one
    /// not left of the current row's band), and for every position the next one with the same
    /// tool ([`NONE`] ends a list): the cells of a row whose call shares its tool.
    first_of_tool: Vec<u32>,
    next_same_tool: Vec<u32>,
    /// The masses of `a`'s and `b`'s calls.
    mass_a: Vec<i32>,
    mass_b: Vec<i32>,
    prev: Vec<i32>,
    cur: Vec<i32>,
}

/// A call table whose calls all have unit weights (each argument weighs 1 and the mass is
/// `1 + number of arguments`), argument-name ids below [`MAX_NAME_IDS`] and no value id equal to
/// [`MISSING`]: the tables the integer kernel accepts.
pub struct UnitModel<'a> {
    table: CallTable<'a>,
    n_name_ids: usize,
    n_tool_ids: usize,
}

impl<'a> UnitModel<'a> {
    /// The model of `table` (validated), or `None` when the table is not of that kind.
    pub fn new(table: CallTable<'a>) -> Option<Self> {
        let unit = table.arg_weights.iter().all(|&w| w == 1.0)
            && table
                .mass
                .iter()
                .zip(table.arg_offsets.windows(2))
                .all(|(&mass, w)| mass == 1.0 + (w[1] - w[0]) as f64);
        let n_name_ids = table.arg_names.iter().max().map_or(0, |&k| k as usize + 1);
        let n_tool_ids = table.tools.iter().max().map_or(0, |&k| k as usize + 1);
        (unit
            && n_name_ids <= MAX_NAME_IDS
            && n_tool_ids <= MAX_TOOL_IDS
            && !table.arg_values.contains(&MISSING))
        .then_some(UnitModel {
            table,
            n_name_ids,
            n_tool_ids,
        })
    }

    /// The distance between call sequences `a` and `b` (ids validated), or `None` when the pair
    /// uses more than [`MAX_SLOTS`] argument names or its distance could overflow `i32`.
    pub fn distance(&self, a: &[u32], b: &[u32], s: &mut UnitScratch) -> Option<f64> {
        let (n, m) = (a.len(), b.len());
        // every distance is at most the sum of all masses, each at most 1 + MAX_SLOTS
        if (n + m).checked_mul(MAX_SLOTS + 1)? >= i32::MAX as usize {
            return None;
        }
        let fits = self.assign_slots(a, b, s);
        let width = s.slots.len().next_multiple_of(4);
        if fits {
            self.lay_out(a, &mut s.dense_a, width, &s.slot_of);
            self.lay_out(b, &mut s.dense_b, width, &s.slot_of);
        }
        for &name in &s.slots {
            s.slot_of[name as usize] = 0;
        }
        if !fits {
            return None;
        }
        let table = &self.table;
        let masses = |calls: &[u32], out: &mut Vec<i32>| {
            out.clear();
            out.extend(calls.iter().map(|&c| table.mass[c as usize] as i32));
        };
        masses(a, &mut s.mass_a);
        masses(b, &mut s.mass_b);
        // Every gap costs at least `min_gap`, and a path through diagonal `d = j - i` makes at
        // least `|d| + |m - n - d|` gaps; so when the best path within `extra` diagonals of the
        // ones between 0 and m - n costs at most what leaving them costs, it is the best path.
        let min_gap = s
            .mass_a
            .iter()
            .chain(&s.mass_b)
            .copied()
            .min()
            .unwrap_or(1)
            .max(1);
        let skew = n.abs_diff(m) as i32;
        let leaving_costs = |extra: usize| min_gap * (skew + 2 * (extra as i32 + 1));
        let mut d = self.banded(a, b, width, FIRST_BAND, s);
        if d > leaving_costs(FIRST_BAND) {
            // wide enough that leaving costs more than the path found
            let extra = ((d / min_gap - skew) / 2).max(0) as usize;
            d = self.banded(a, b, width, extra, s);
        }
        Some(d as f64)
    }

    /// The cheapest path through the diagonals `d = j - i` from `min(0, m - n) - extra` to
    /// `max(0, m - n) + extra` (cells outside cost [`INF`]).
    fn banded(&self, a: &[u32], b: &[u32], width: usize, extra: usize, s: &mut UnitScratch) -> i32 {
        let table = &self.table;
        let (n, m) = (a.len(), b.len());
        let skew = m as isize - n as isize;
        let (d_lo, d_hi) = (skew.min(0) - extra as isize, skew.max(0) + extra as isize);
        let band = |i: usize| {
            let lo = (i as isize + d_lo).max(0) as usize;
            let hi = (i as isize + d_hi).min(m as isize) as usize;
            (lo, hi)
        };
        // each tool's chain is walked from its first position not left of the band (the band
        // only moves right): `first_of_tool` advances row by row
        self.link_tools(b, s);
        s.prev.clear();
        s.prev.resize(m + 2, INF);
        s.cur.clear();
        s.cur.resize(m + 2, INF);
        // the buffers as plain local slices: the row loop keeps them in registers
        let UnitScratch {
            dense_a,
            dense_b,
            first_of_tool,
            next_same_tool,
            mass_a,
            mass_b,
            prev,
            cur,
            ..
        } = s;
        let (mass_b, next_same_tool) = (&mass_b[..m], &next_same_tool[..m]);
        let (mut prev, mut cur) = (&mut prev[..m + 2], &mut cur[..m + 2]);
        let (_, hi) = band(0);
        prev[0] = 0;
        for j in 0..hi {
            prev[j + 1] = prev[j] + mass_b[j];
        }
        for (i, (&p, &mass)) in a.iter().zip(&mass_a[..n]).enumerate() {
            let tool = table.tools[p as usize];
            let (lo, hi) = band(i + 1);
            // cells lo.max(1)..=hi: cur[j + 1] pairs a[i] with b[j] for j in first..hi
            let first = lo.max(1) - 1;
            cur[first] = if lo == 0 { prev[0] + mass } else { INF };
            // vertical moves, and diagonal ones as if every call had another tool (both masses)
            let moves = prev[first..hi].iter().zip(&prev[first + 1..=hi]);
            for ((cell, (&diag, &up)), &g_mass) in cur[first + 1..=hi]
                .iter_mut()
                .zip(moves)
                .zip(&mass_b[first..hi])
            {
                *cell = mass + (diag + g_mass).min(up);
            }
            // the calls with a[i]'s tool: a substitution cheaper than both masses
            let row = &dense_a[i * width..(i + 1) * width];
            let chain = &mut first_of_tool[tool as usize];
            while *chain != NONE && (*chain as usize) < first {
                *chain = next_same_tool[*chain as usize];
            }
            let mut j = *chain;
            while j != NONE && (j as usize) < hi {
                let k = j as usize;
                let sub = if b[k] == p {
                    0 // the same call: every argument agrees
                } else {
                    slots_differing(row, &dense_b[k * width..(k + 1) * width])
                };
                cur[k + 1] = cur[k + 1].min(prev[k] + sub);
                j = next_same_tool[k];
            }
            // horizontal moves, left to right; prev[hi] is INF when the previous row ended at
            // hi - 1
            let mut left = cur[first];
            for (cell, &g_mass) in cur[first + 1..=hi].iter_mut().zip(&mass_b[first..hi]) {
                left = (*cell).min(left + g_mass);
                *cell = left;
            }
            cur[hi + 1] = INF;
            std::mem::swap(&mut prev, &mut cur);
        }
        let distance = prev[m];
        for &g in b {
            first_of_tool[table.tools[g as usize] as usize] = NONE;
        }
        distance
    }

    /// Give every argument name of the pair a local slot (first-seen order); `false` when that
    /// needs more than [`MAX_SLOTS`]. The caller clears `slot_of` for `slots` afterwards.
    fn assign_slots(&self, a: &[u32], b: &[u32], s: &mut UnitScratch) -> bool {
        if s.slot_of.len() < self.n_name_ids {
            s.slot_of.resize(self.n_name_ids, 0);
        }
        s.slots.clear();
        for &call in a.iter().chain(b) {
            for &name in &self.table.arg_names[self.arguments(call)] {
                if s.slot_of[name as usize] == 0 {
                    if s.slots.len() == MAX_SLOTS {
                        return false;
                    }
                    s.slots.push(name);
                    s.slot_of[name as usize] = s.slots.len() as u8;
                }
            }
        }
        true
    }

    /// Chain the positions of `b` by tool (`first_of_tool`, `next_same_tool`, in increasing
    /// order); [`Self::banded`], which advances `first_of_tool`, resets it for `b`'s tools.
    fn link_tools(&self, b: &[u32], s: &mut UnitScratch) {
        if s.first_of_tool.len() < self.n_tool_ids {
            s.first_of_tool.resize(self.n_tool_ids, NONE);
        }
        s.next_same_tool.clear();
        s.next_same_tool.resize(b.len(), NONE);
        for (j, &g) in b.iter().enumerate().rev() {
            let tool = self.table.tools[g as usize] as usize;
            s.next_same_tool[j] = s.first_of_tool[tool];
            s.first_of_tool[tool] = j as u32;
        }
    }

    /// `dense`: one row of `width` slot values per call of `calls` (`MISSING` where absent);
    /// `slot_of` holds every name's slot + 1 ([`Self::assign_slots`]).
    fn lay_out(&self, calls: &[u32], dense: &mut Vec<u32>, width: usize, slot_of: &[u8]) {
        dense.clear();
        dense.resize(calls.len() * width, MISSING);
        let table = &self.table;
        for (row, &call) in dense.chunks_exact_mut(width.max(1)).zip(calls) {
            let range = self.arguments(call);
            for (&name, &value) in table.arg_names[range.clone()]
                .iter()
                .zip(&table.arg_values[range])
            {
                row[slot_of[name as usize] as usize - 1] = value;
            }
        }
    }

    /// The positions of `call`'s arguments in the table's argument arrays.
    #[inline]
    fn arguments(&self, call: u32) -> std::ops::Range<usize> {
        let k = call as usize;
        self.table.arg_offsets[k] as usize..self.table.arg_offsets[k + 1] as usize
    }
}

/// The number of slots in which two calls' rows differ: their same-tool substitution cost. Rows
/// are whole groups of four slots, compared group by group.
#[inline]
fn slots_differing(row_a: &[u32], row_b: &[u32]) -> i32 {
    let mut same = 0;
    for (x, y) in row_a.chunks_exact(4).zip(row_b.chunks_exact(4)) {
        same += (0..4).map(|k| (x[k] == y[k]) as i32).sum::<i32>();
    }
    row_a.len() as i32 - same
}
