//! Needleman–Wunsch global alignment with arbitrary substitution costs and per-element gap costs.
//!
//! This module owns the dynamic program and its traceback; it knows nothing of tools, arguments
//! or canonicalisation (the Python layer interns those into the plain arrays used here).
//!
//! With `a` of length `n`, `b` of length `m`, `del[i]` the cost of leaving `a[i]` against a gap,
//! `ins[j]` the cost of leaving `b[j]` against a gap and `sub(i, j)` the cost of aligning
//! `a[i]` with `b[j]`:
//!
//! ```text
//! D[0][0] = 0,  D[0][j] = D[0][j-1] + ins[j-1],  D[i][0] = D[i-1][0] + del[i-1]
//! D[i][j] = min(D[i-1][j-1] + sub(i-1, j-1), D[i-1][j] + del[i-1], D[i][j-1] + ins[j-1])
//! ```
//!
//! `min` keeps the first of equal candidates in that order (Python's `min(a, b, c)`), and every
//! cell is evaluated with exactly these additions, so results are bit-identical to the plain
//! Python dynamic program (docs/decisions.md#trajectory-cost-model).
//!
//! Traceback (alignment) preference from `(n, m)`: the diagonal if
//! `D[i][j] == D[i-1][j-1] + sub`, else a deletion of `a[i-1]` if `D[i][j] == D[i-1][j] + del`,
//! else an insertion of `b[j-1]`.
//!
//! Two cost models are provided: [`TableCost`] (symbols with a dense substitution table) and
//! [`CallCost`] (the trajectory cost model: sequences of ids into a [`CallTable`] of distinct
//! calls, each a tool id and a sorted argument list of `(name id, value id, weight)`).
//! [`CallKernel`] computes call-sequence distances, in integers ([`unit`]) when every weight is 1.

use crate::bootstrap::{RunningSum, Summation};

pub mod table;
pub mod unit;

pub use table::{
    ranks_by_bytes, ranks_of_order, CallRows, CallTableBuilder, NewCall, SortedArguments,
};

/// Operation code of an aligned pair (equal or substituted elements).
pub const OP_MATCH: i64 = 0;
/// Operation code of an element of `a` left against a gap.
pub const OP_DELETE: i64 = 1;
/// Operation code of an element of `b` left against a gap.
pub const OP_INSERT: i64 = 2;

/// One step of an alignment: `(op, index in a or -1, index in b or -1)`.
pub type AlignOp = [i64; 3];

/// A cost model: gap costs per element of each side and a substitution cost per pair.
pub trait Costs {
    /// Number of elements of side `a`.
    fn len_a(&self) -> usize;
    /// Number of elements of side `b`.
    fn len_b(&self) -> usize;
    /// Cost of leaving `a[i]` against a gap.
    fn del(&self, i: usize) -> f64;
    /// Cost of leaving `b[j]` against a gap.
    fn ins(&self, j: usize) -> f64;
    /// Cost of aligning `a[i]` with `b[j]`.
    fn sub(&self, i: usize, j: usize) -> f64;
    /// `out[j] = sub(i, j)` for every `j` (cost models may fill a row faster than cell by cell).
    fn sub_row(&self, i: usize, out: &mut [f64]) {
        for (j, cost) in out.iter_mut().enumerate() {
            *cost = self.sub(i, j);
        }
    }
}

/// Symbols with a dense substitution table `table[sa * n_symbols_b + sb]`.
pub struct TableCost<'a> {
    pub a: &'a [u32],
    pub b: &'a [u32],
    pub table: &'a [f64],
    pub n_symbols_b: usize,
    pub del: &'a [f64],
    pub ins: &'a [f64],
}

impl TableCost<'_> {
    /// Check shapes and symbol ranges; `Err` names the offending argument.
    pub fn validate(&self) -> Result<(), String> {
        if self.del.len() != self.a.len() {
            return Err(format!(
                "del must have one cost per element of a ({}), got {}",
                self.a.len(),
                self.del.len()
            ));
        }
        if self.ins.len() != self.b.len() {
            return Err(format!(
                "ins must have one cost per element of b ({}), got {}",
                self.b.len(),
                self.ins.len()
            ));
        }
        if self.n_symbols_b == 0 {
            if self.a.is_empty() || self.b.is_empty() {
                return Ok(());
            }
            return Err("table must have at least one column".to_string());
        }
        let rows = self.table.len() / self.n_symbols_b;
        if let Some(&s) = self.a.iter().find(|&&s| s as usize >= rows) {
            return Err(format!(
                "a holds symbol {s}, but table has only {rows} rows"
            ));
        }
        if let Some(&s) = self.b.iter().find(|&&s| s as usize >= self.n_symbols_b) {
            return Err(format!(
                "b holds symbol {s}, but table has only {} columns",
                self.n_symbols_b
            ));
        }
        Ok(())
    }
}

impl Costs for TableCost<'_> {
    fn len_a(&self) -> usize {
        self.a.len()
    }
    fn len_b(&self) -> usize {
        self.b.len()
    }
    fn del(&self, i: usize) -> f64 {
        self.del[i]
    }
    fn ins(&self, j: usize) -> f64 {
        self.ins[j]
    }
    #[inline]
    fn sub(&self, i: usize, j: usize) -> f64 {
        self.table[self.a[i] as usize * self.n_symbols_b + self.b[j] as usize]
    }
}

/// The mass of a call: its tool's weight plus its arguments' weights, summed in argument order
/// from 0 the way the Python in use sums them (`summation`: CPython >= 3.12 compensates), as
/// Python's `w_tool + sum(weights)` does; the gap cost of [`CallTable`].
pub fn call_mass(tool_weight: f64, arg_weights: &[f64], summation: Summation) -> f64 {
    let mut sum = RunningSum::new(summation);
    for &w in arg_weights {
        sum.add(w);
    }
    tool_weight + sum.total()
}

/// The distinct calls of a batch (both sides share one table).
///
/// Call `k` has tool `tools[k]`, gap cost (its *mass*) `mass[k]` and the arguments
/// `arg_offsets[k]..arg_offsets[k+1]` of `arg_names`/`arg_values`/`arg_weights`, sorted by
/// strictly increasing name id. Two arguments are equal iff their value ids are equal.
#[derive(Clone, Copy)]
pub struct CallTable<'a> {
    pub tools: &'a [u32],
    pub mass: &'a [f64],
    pub arg_offsets: &'a [i64],
    pub arg_names: &'a [u32],
    pub arg_values: &'a [u32],
    pub arg_weights: &'a [f64],
}

impl CallTable<'_> {
    /// Number of calls in the table.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the table holds no call.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Check array shapes and argument ordering; `Err` names the offending array.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.tools.len();
        if self.mass.len() != n {
            return Err(format!(
                "mass must have one value per call ({n}), got {}",
                self.mass.len()
            ));
        }
        if self.arg_offsets.len() != n + 1 {
            return Err(format!(
                "arg_offsets must have n_calls + 1 = {} entries, got {}",
                n + 1,
                self.arg_offsets.len()
            ));
        }
        let n_args = self.arg_names.len();
        if self.arg_values.len() != n_args || self.arg_weights.len() != n_args {
            return Err(
                "arg_names, arg_values and arg_weights must have equal lengths".to_string(),
            );
        }
        if self.arg_offsets[0] != 0 || self.arg_offsets[n] != n_args as i64 {
            return Err(format!(
                "arg_offsets must start at 0 and end at the number of arguments ({n_args})"
            ));
        }
        for k in 0..n {
            let (lo, hi) = (self.arg_offsets[k], self.arg_offsets[k + 1]);
            if hi < lo {
                return Err(format!("arg_offsets must be non-decreasing (call {k})"));
            }
            for t in (lo as usize + 1)..(hi as usize) {
                if self.arg_names[t - 1] >= self.arg_names[t] {
                    return Err(format!(
                        "arg_names must be strictly increasing within a call (call {k})"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Check that every id of `calls` addresses this table; `Err` names `name`.
    pub fn validate_ids(&self, calls: &[u32], name: &str) -> Result<(), String> {
        match calls.iter().find(|&&c| c as usize >= self.len()) {
            Some(c) => Err(format!(
                "{name} holds call id {c}, but the call table has {} calls",
                self.len()
            )),
            None => Ok(()),
        }
    }

    /// Substitution cost between calls `p` and `g` (docs/decisions.md#trajectory-cost-model): different tools cost
    /// both masses; the same tool costs the weights of the argument names (union of both sides,
    /// in name-id order) whose values differ or are missing on one side.
    #[inline]
    pub fn sub(&self, p: usize, g: usize) -> f64 {
        if self.tools[p] != self.tools[g] {
            return self.mass[p] + self.mass[g];
        }
        self.sub_same_tool(p, g)
    }

    /// [`CallTable::sub`] of two calls of the same tool.
    #[inline]
    fn sub_same_tool(&self, p: usize, g: usize) -> f64 {
        let (mut i, i_end) = (
            self.arg_offsets[p] as usize,
            self.arg_offsets[p + 1] as usize,
        );
        let (mut j, j_end) = (
            self.arg_offsets[g] as usize,
            self.arg_offsets[g + 1] as usize,
        );
        let mut cost = 0.0;
        while i < i_end || j < j_end {
            if j == j_end || (i < i_end && self.arg_names[i] < self.arg_names[j]) {
                cost += self.arg_weights[i];
                i += 1;
            } else if i == i_end || self.arg_names[j] < self.arg_names[i] {
                cost += self.arg_weights[j];
                j += 1;
            } else {
                if self.arg_values[i] != self.arg_values[j] {
                    cost += self.arg_weights[j];
                }
                i += 1;
                j += 1;
            }
        }
        cost
    }
}

/// The trajectory cost model over two sequences of call ids into one [`CallTable`].
pub struct CallCost<'a> {
    table: CallTable<'a>,
    a: &'a [u32],
    b: &'a [u32],
    /// Mass of every call of `b`, gathered once (read for every cell).
    b_mass: Vec<f64>,
    /// The positions of `b` ordered by tool (then position), with their tools alongside: the
    /// cells of a row whose calls share the row's tool are found by binary search.
    by_tool: Vec<(u32, u32)>,
}

impl<'a> CallCost<'a> {
    /// The cost model of call sequences `a` and `b` (ids into `table`, already validated).
    pub fn new(table: CallTable<'a>, a: &'a [u32], b: &'a [u32]) -> Self {
        let b_mass = b.iter().map(|&g| table.mass[g as usize]).collect();
        let mut by_tool: Vec<(u32, u32)> = b
            .iter()
            .enumerate()
            .map(|(j, &g)| (table.tools[g as usize], j as u32))
            .collect();
        by_tool.sort_unstable();
        CallCost {
            table,
            a,
            b,
            b_mass,
            by_tool,
        }
    }
}

impl Costs for CallCost<'_> {
    fn len_a(&self) -> usize {
        self.a.len()
    }
    fn len_b(&self) -> usize {
        self.b.len()
    }
    fn del(&self, i: usize) -> f64 {
        self.table.mass[self.a[i] as usize]
    }
    fn ins(&self, j: usize) -> f64 {
        self.b_mass[j]
    }
    #[inline]
    fn sub(&self, i: usize, j: usize) -> f64 {
        let (p, g) = (self.a[i], self.b[j]);
        if p == g {
            return 0.0; // the same call: every argument agrees
        }
        self.table.sub(p as usize, g as usize)
    }

    /// Every cell first gets the different-tool cost (a vectorised pass), then the cells whose
    /// call has the row's tool are overwritten with their argument-level cost.
    fn sub_row(&self, i: usize, out: &mut [f64]) {
        let t = &self.table;
        let p = self.a[i];
        let (tool, mass) = (t.tools[p as usize], t.mass[p as usize]);
        for (cost, &g_mass) in out.iter_mut().zip(&self.b_mass) {
            *cost = mass + g_mass;
        }
        let first = self.by_tool.partition_point(|&(g_tool, _)| g_tool < tool);
        for &(g_tool, j) in &self.by_tool[first..] {
            if g_tool != tool {
                break;
            }
            let g = self.b[j as usize];
            out[j as usize] = if g == p {
                0.0 // the same call: every argument agrees
            } else {
                t.sub_same_tool(p as usize, g as usize)
            };
        }
    }
}

/// Distances between call sequences over one [`CallTable`]: the integer kernel of [`unit`] when
/// the table has unit weights (checked once here), else [`distance`] over [`CallCost`]. Both give
/// identical results.
pub struct CallKernel<'a> {
    table: CallTable<'a>,
    unit: Option<unit::UnitModel<'a>>,
}

/// Fewest table cells (`len(a) · len(b)`) for which [`CallKernel`] uses the integer kernel
/// (measured: 10-step pairs run faster on the general kernel, 50-step pairs on the integer one).
const UNIT_MIN_CELLS: usize = 400;

/// Reusable buffers of [`CallKernel::distance`].
#[derive(Default)]
pub struct CallScratch {
    general: Scratch,
    unit: unit::UnitScratch,
}

impl<'a> CallKernel<'a> {
    /// The kernel over `table` (validated).
    pub fn new(table: CallTable<'a>) -> Self {
        CallKernel {
            table,
            unit: unit::UnitModel::new(table),
        }
    }

    /// The distance between call sequences `a` and `b` (ids validated against the table).
    pub fn distance(&self, a: &[u32], b: &[u32], scratch: &mut CallScratch) -> f64 {
        // short pairs: the dense layout costs more than the general kernel saves
        if let (Some(unit), true) = (&self.unit, a.len() * b.len() >= UNIT_MIN_CELLS) {
            if let Some(d) = unit.distance(a, b, &mut scratch.unit) {
                return d;
            }
        }
        distance(&CallCost::new(self.table, a, b), &mut scratch.general)
    }
}

/// Scratch space of [`distance`], reused across calls: the DP row, the gap costs of `b` and the
/// substitution costs of the current row.
#[derive(Default)]
pub struct Scratch {
    row: Vec<f64>,
    ins: Vec<f64>,
    subs: Vec<f64>,
}

/// The distance `D[n][m]`, in O(m) memory.
///
/// Each row first gathers its substitution costs (the cost model's branches stay out of the
/// recurrence), then runs the recurrence, whose `if x < best` selects compile to `minsd`.
pub fn distance<C: Costs>(costs: &C, scratch: &mut Scratch) -> f64 {
    let (n, m) = (costs.len_a(), costs.len_b());
    let Scratch { row, ins, subs } = scratch;
    ins.clear();
    ins.extend((0..m).map(|j| costs.ins(j)));
    row.clear();
    row.push(0.0);
    for &g in ins.iter() {
        let v = row[row.len() - 1] + g;
        row.push(v);
    }
    subs.clear();
    subs.resize(m, 0.0);
    for i in 0..n {
        costs.sub_row(i, subs);
        let d = costs.del(i);
        let mut diag = row[0];
        let mut left = diag + d;
        row[0] = left;
        for ((cell, &g), &s) in row[1..].iter_mut().zip(ins.iter()).zip(subs.iter()) {
            let up = *cell;
            let mut best = diag + s;
            let via_up = up + d;
            if via_up < best {
                best = via_up;
            }
            let via_left = left + g;
            if via_left < best {
                best = via_left;
            }
            diag = up;
            left = best;
            *cell = best;
        }
    }
    row[m]
}

/// The distance and one optimal alignment (left to right), using the full `(n+1)·(m+1)` table.
pub fn align<C: Costs>(costs: &C) -> (f64, Vec<AlignOp>) {
    let (n, m) = (costs.len_a(), costs.len_b());
    let w = m + 1;
    let mut dp = vec![0.0f64; (n + 1) * w];
    for j in 0..m {
        dp[j + 1] = dp[j] + costs.ins(j);
    }
    for i in 1..=n {
        let d = costs.del(i - 1);
        dp[i * w] = dp[(i - 1) * w] + d;
        for j in 1..=m {
            let mut best = dp[(i - 1) * w + j - 1] + costs.sub(i - 1, j - 1);
            let via_up = dp[(i - 1) * w + j] + d;
            if via_up < best {
                best = via_up;
            }
            let via_left = dp[i * w + j - 1] + costs.ins(j - 1);
            if via_left < best {
                best = via_left;
            }
            dp[i * w + j] = best;
        }
    }
    let mut ops = Vec::with_capacity(n + m);
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let here = dp[i * w + j];
        if i > 0 && j > 0 && here == dp[(i - 1) * w + j - 1] + costs.sub(i - 1, j - 1) {
            ops.push([OP_MATCH, (i - 1) as i64, (j - 1) as i64]);
            i -= 1;
            j -= 1;
        } else if i > 0 && (j == 0 || here == dp[(i - 1) * w + j] + costs.del(i - 1)) {
            ops.push([OP_DELETE, (i - 1) as i64, -1]);
            i -= 1;
        } else {
            ops.push([OP_INSERT, -1, (j - 1) as i64]);
            j -= 1;
        }
    }
    ops.reverse();
    (dp[n * w + m], ops)
}

/// Check the sequence offsets of a batch side: `n_pairs + 1` non-decreasing entries from 0 to `n_steps`.
pub fn validate_seq_offsets(offsets: &[i64], n_steps: usize, name: &str) -> Result<(), String> {
    if offsets.is_empty() {
        return Err(format!("{name} must have n_pairs + 1 entries, got 0"));
    }
    if offsets[0] != 0 || *offsets.last().unwrap() != n_steps as i64 {
        return Err(format!(
            "{name} must start at 0 and end at the number of steps ({n_steps})"
        ));
    }
    if offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(format!("{name} must be non-decreasing"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
