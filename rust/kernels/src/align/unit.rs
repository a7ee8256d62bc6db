//! The trajectory distance under unit weights (every tool and argument weighs 1) in integers.
//!
//! Same recurrence as [`super::distance`] over [`super::CallCost`], specialised for the default
//! cost model: a call's mass is `1 + number of arguments`, so every cost and every distance is a
//! small integer and `as f64` equals the general kernel's result exactly (the tests compare the
//! two on random trajectories).
//!
//! The argument lists of a pair are laid out densely: the argument names used by the pair get
//! local slots `0..r`, and each call becomes `r` value ids with [`MISSING`] where it lacks a name.
//! Two calls of the same tool then cost the number of slots whose entries differ (a name on one
//! side only, or different values), with no merge and no branch; the cost of a whole row of
//! cells is a few vectorised passes over the columns of `b`.

use super::CallTable;

/// The value of a slot whose argument name the call does not have.
const MISSING: u32 = u32::MAX;

/// Most local argument-name slots of a pair on the dense path (more take the general kernel).
const MAX_SLOTS: usize = 16;

/// Largest argument-name id (plus one) of a table the dense layout accepts: slots are looked up
/// in a per-thread array of this many entries at most.
const MAX_NAME_IDS: usize = 1 << 16;

/// Reusable buffers of [`UnitModel::distance`].
#[derive(Default)]
pub struct UnitScratch {
    /// Local slot + 1 of every table name id used by the current pair (0: none yet).
    slot_of: Vec<u8>,
    /// Table name id of every local slot.
    slots: Vec<u32>,
    /// `a`: `n × MAX_SLOTS` slot values (row-major); `b`: `MAX_SLOTS × m` (one column per slot).
    dense_a: Vec<u32>,
    dense_b: Vec<u32>,
    tools_b: Vec<u32>,
    mass_b: Vec<i32>,
    subs: Vec<i32>,
    prev: Vec<i32>,
    cur: Vec<i32>,
}

/// A call table whose calls all have unit weights (each argument weighs 1 and the mass is
/// `1 + number of arguments`), argument-name ids below [`MAX_NAME_IDS`] and no value id equal to
/// [`MISSING`]: the tables the integer kernel accepts.
pub struct UnitModel<'a> {
    table: CallTable<'a>,
    n_name_ids: usize,
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
        (unit && n_name_ids <= MAX_NAME_IDS && !table.arg_values.contains(&MISSING))
            .then_some(UnitModel { table, n_name_ids })
    }

    /// The distance between call sequences `a` and `b` (ids validated), or `None` when the pair
    /// uses more than [`MAX_SLOTS`] argument names or its distance could overflow `i32`.
    pub fn distance(&self, a: &[u32], b: &[u32], s: &mut UnitScratch) -> Option<f64> {
        let (n, m) = (a.len(), b.len());
        // every distance is at most the sum of all masses, each at most 1 + MAX_SLOTS
        if (n + m).checked_mul(MAX_SLOTS + 1)? >= i32::MAX as usize {
            return None;
        }
        let fits = self.lay_out(a, b, s);
        for &name in &s.slots {
            s.slot_of[name as usize] = 0;
        }
        if !fits {
            return None;
        }
        let table = &self.table;
        s.prev.clear();
        s.prev.push(0);
        for j in 0..m {
            let v = s.prev[j] + s.mass_b[j];
            s.prev.push(v);
        }
        s.cur.clear();
        s.cur.resize(m + 1, 0);
        s.subs.clear();
        s.subs.resize(m, 0);
        let r = s.slots.len();
        for (i, &p) in a.iter().enumerate() {
            let (tool, mass) = (table.tools[p as usize], table.mass[p as usize] as i32);
            let row = &s.dense_a[i * MAX_SLOTS..i * MAX_SLOTS + r];
            sub_row(
                tool,
                mass,
                row,
                &s.dense_b,
                &s.tools_b,
                &s.mass_b,
                &mut s.subs,
            );
            let (prev, cur) = (&s.prev[..], &mut s.cur[..]);
            // diagonal and vertical moves (independent across the row), then the horizontal scan
            cur[0] = prev[0] + mass;
            let moves = prev.iter().zip(&prev[1..]).zip(&s.subs);
            for (cell, ((&diag, &up), &sub)) in cur[1..].iter_mut().zip(moves) {
                *cell = (diag + sub).min(up + mass);
            }
            let mut left = cur[0];
            for (cell, &g_mass) in cur[1..].iter_mut().zip(&s.mass_b) {
                left = (*cell).min(left + g_mass);
                *cell = left;
            }
            std::mem::swap(&mut s.prev, &mut s.cur);
        }
        Some(s.prev[m] as f64)
    }

    /// Fill the dense layout of the pair (slots in first-seen order); `false` when it needs more
    /// than [`MAX_SLOTS`] slots. The caller clears `slot_of` for `slots` afterwards.
    fn lay_out(&self, a: &[u32], b: &[u32], s: &mut UnitScratch) -> bool {
        let (n, m) = (a.len(), b.len());
        if s.slot_of.len() < self.n_name_ids {
            s.slot_of.resize(self.n_name_ids, 0);
        }
        s.slots.clear();
        s.dense_a.clear();
        s.dense_a.resize(n * MAX_SLOTS, MISSING);
        s.dense_b.clear();
        s.dense_b.resize(MAX_SLOTS * m, MISSING);
        s.tools_b.clear();
        s.mass_b.clear();
        let table = &self.table;
        for (side, calls) in [a, b].into_iter().enumerate() {
            for (k, &call) in calls.iter().enumerate() {
                let c = call as usize;
                let (lo, hi) = (
                    table.arg_offsets[c] as usize,
                    table.arg_offsets[c + 1] as usize,
                );
                for (&name, &value) in table.arg_names[lo..hi]
                    .iter()
                    .zip(&table.arg_values[lo..hi])
                {
                    let mut slot = s.slot_of[name as usize] as usize;
                    if slot == 0 {
                        if s.slots.len() == MAX_SLOTS {
                            return false;
                        }
                        s.slots.push(name);
                        slot = s.slots.len();
                        s.slot_of[name as usize] = slot as u8;
                    }
                    let slot = slot - 1;
                    if side == 0 {
                        s.dense_a[k * MAX_SLOTS + slot] = value;
                    } else {
                        s.dense_b[slot * m + k] = value;
                    }
                }
                if side == 1 {
                    s.tools_b.push(table.tools[c]);
                    s.mass_b.push(table.mass[c] as i32);
                }
            }
        }
        true
    }
}

/// `subs[j]` = substitution cost of the call with `tool`, `mass` and slot values `row` against
/// column `j` of `b`: the number of differing slots for the same tool, else both masses.
#[inline]
fn sub_row(
    tool: u32,
    mass: i32,
    row: &[u32],
    dense_b: &[u32],
    tools_b: &[u32],
    mass_b: &[i32],
    subs: &mut [i32],
) {
    let m = subs.len();
    subs.fill(0);
    for (slot, &v) in row.iter().enumerate() {
        let column = &dense_b[slot * m..(slot + 1) * m];
        for (cost, &w) in subs.iter_mut().zip(column) {
            *cost += (w != v) as i32;
        }
    }
    for ((cost, &t), &g_mass) in subs.iter_mut().zip(tools_b).zip(mass_b) {
        // a mask select rather than a branch: the tools of a row mix unpredictably
        let other_tool = -((t != tool) as i32);
        *cost = (*cost & !other_tool) | ((mass + g_mass) & other_tool);
    }
}
