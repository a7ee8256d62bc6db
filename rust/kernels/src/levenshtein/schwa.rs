//! Schwa-forgiving edit distance (see docs/decisions.md): a designated code point (the Armenian schwa
//! `ը`/`Ը` by default) present in one string and absent from the other costs nothing when it sits
//! at a join position (a reassembled line break) of either string. Substitutions are never free.
//!
//! An optimal path makes at most `strict + F` insertions and deletions: the paid ones cost at most
//! the forgiving distance, which the strict distance bounds from above, and each free one consumes
//! one of the `F` schwas that can ever be free. A path through diagonal `d = j - i` that ends on
//! diagonal `δ = m - n` makes at least `|d| + |δ - d|` of them, so the DP runs only over the
//! diagonals with `|d| + |δ - d| <= strict + F`; when `F` is 0 the answer is the strict distance.

use std::collections::TryReserveError;

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
    let mut free = 0;
    for (k, c) in text.iter().enumerate() {
        let mut f = 0;
        if schwa_chars.contains(c) {
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
    let strict = distance(&mut ws.dist, gt, pred)?;
    if strict == 0 || (gt_joins.is_empty() && pred_joins.is_empty()) {
        return Ok(strict);
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
        return Ok(strict);
    }
    let (n, m) = (gt.len(), pred.len());
    // the reachable diagonals d_lo..=d_hi (module docs); budget >= |delta|, so both halves are >= 0
    let (budget, delta) = ((strict + free) as i64, m as i64 - n as i64);
    let (d_lo, d_hi) = (-((budget - delta) / 2), (budget + delta) / 2);
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

    #[test]
    fn banded_dp_equals_the_full_table() {
        let alphabet: Vec<u32> = "աըԸ- b".chars().map(|c| c as u32).collect();
        let schwa: Vec<u32> = "ըԸ".chars().map(|c| c as u32).collect();
        let mut rng = Rng(1234);
        let mut ws = SchwaWorkspace::new();
        for _ in 0..4000 {
            let g = rng.seq(40, &alphabet);
            let p = rng.seq(40, &alphabet);
            let jg: Vec<i64> = (0..rng.below(4))
                .map(|_| rng.below(g.len() + 1) as i64)
                .collect();
            let jp: Vec<i64> = (0..rng.below(4))
                .map(|_| rng.below(p.len() + 1) as i64)
                .collect();
            let got = schwa_distance(&mut ws, &g, &p, &jg, &jp, &schwa).unwrap();
            assert_eq!(
                got,
                full_dp(&g, &p, &jg, &jp, &schwa),
                "{g:?} {p:?} {jg:?} {jp:?}"
            );
        }
    }
}
