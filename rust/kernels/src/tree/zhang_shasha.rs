//! Zhang–Shasha (1989) ordered tree edit distance over post-order arrays, and its edit mapping.
//!
//! For every pair of keyroots (`i`, `j`) — nodes that are the highest node with their leftmost leaf —
//! a forest-distance table over the post-order ranges `lld(i)..=i` × `lld(j)..=j` is filled; entries
//! where both nodes lie on their keyroot's leftmost path are tree distances and are stored in `td`.
//! Time O(n1·n2·min(depth, leaves)²), memory O(n1·n2).

use super::unit::{unit_distance, UnitBuffers};
use super::{CostModel, PostorderTree, Rename};
use crate::levenshtein::{distance as levenshtein, DistanceWorkspace};

/// Reusable buffers; one per thread in batch runs, so the kernel does not allocate per pair.
#[derive(Default)]
pub struct Workspace {
    td: Vec<f64>,
    fd: Vec<f64>,
    delete: Vec<f64>,
    insert: Vec<f64>,
    keyroots1: Vec<usize>,
    keyroots2: Vec<usize>,
    lb_rel: Vec<usize>,
    border: Vec<f64>,
    lev: DistanceWorkspace,
    masks: TextMasks,
    unit: UnitBuffers,
}

impl Workspace {
    pub fn new() -> Self {
        Self::default()
    }
}

/// `min` with the tie and operand order the Numba twin uses (`b` wins only when strictly smaller).
#[inline(always)]
fn fmin(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

fn keyroots(lld: &[u32], out: &mut Vec<usize>) {
    out.clear();
    let n = lld.len();
    let mut seen = vec![false; n];
    for k in (0..n).rev() {
        let l = lld[k] as usize;
        if !seen[l] {
            seen[l] = true;
            out.push(k);
        }
    }
    out.reverse();
}

struct Pricing<'a, 'c> {
    t1: PostorderTree<'a>,
    t2: PostorderTree<'a>,
    rename: &'c Rename<'a>,
    masks: &'c TextMasks,
}

/// Bit masks of the first tree's node texts (≤ 64 code points) for Hyyrö's single-word Levenshtein,
/// built once per tree pair: node `k`'s `(code point, positions)` entries are
/// `entries[start[k]..start[k + 1]]`; a node whose text is longer has no entries and `long[k]`.
#[derive(Default)]
struct TextMasks {
    start: Vec<usize>,
    entries: Vec<(u32, u64)>,
    long: Vec<bool>,
}

impl TextMasks {
    fn build(&mut self, rename: &Rename<'_>, n1: usize) {
        self.start.clear();
        self.entries.clear();
        self.long.clear();
        let Rename::Text { texts1, .. } = rename else {
            return;
        };
        for k in 0..n1 {
            self.start.push(self.entries.len());
            let text = texts1.get(k);
            self.long.push(text.len() > 64);
            if text.len() > 64 {
                continue;
            }
            let first = self.entries.len();
            for (bit, &c) in text.iter().enumerate() {
                match self.entries[first..].iter_mut().find(|(x, _)| *x == c) {
                    Some(entry) => entry.1 |= 1 << bit,
                    None => self.entries.push((c, 1 << bit)),
                }
            }
        }
        self.start.push(self.entries.len());
    }

    /// `lev(text1[a], b)` when node `a`'s text has masks (Hyyrö 2001, one machine word).
    #[inline]
    fn distance(&self, a: usize, len_a: usize, b: &[u32]) -> usize {
        let entries = &self.entries[self.start[a]..self.start[a + 1]];
        let last = 1u64 << (len_a - 1);
        let (mut vp, mut vn, mut score) = (!0u64, 0u64, len_a);
        for &c in b {
            let eq = entries.iter().find(|(x, _)| *x == c).map_or(0, |e| e.1);
            let x = eq | vn;
            let d0 = ((x & vp).wrapping_add(vp) ^ vp) | x;
            let hp = vn | !(d0 | vp);
            let hn = vp & d0;
            if hp & last != 0 {
                score += 1;
            } else if hn & last != 0 {
                score -= 1;
            }
            let hp = (hp << 1) | 1;
            vp = (hn << 1) | !(d0 | hp);
            vn = hp & d0;
        }
        score
    }
}

impl Pricing<'_, '_> {
    #[inline(always)]
    fn rename(&self, a: usize, b: usize, lev: &mut DistanceWorkspace) -> f64 {
        let (la, lb) = (self.t1.labels[a], self.t2.labels[b]);
        match *self.rename {
            Rename::Unit => {
                if la == lb {
                    0.0
                } else {
                    1.0
                }
            }
            Rename::Table { costs, n_labels } => costs[la as usize * n_labels + lb as usize],
            Rename::Text {
                texts1,
                texts2,
                label_mismatch,
            } => {
                if la != lb {
                    return label_mismatch;
                }
                let (x, y) = (texts1.get(a), texts2.get(b));
                if x == y {
                    return 0.0;
                }
                let edits = if x.is_empty() || y.is_empty() {
                    x.len().max(y.len())
                } else if self.masks.long[a] {
                    // Label texts are short; out of memory here is a panic the bindings report.
                    levenshtein(lev, x, y).expect("out of memory: label text distance")
                } else {
                    self.masks.distance(a, x.len(), y)
                };
                edits as f64 / x.len().max(y.len()) as f64
            }
        }
    }
}

fn fill_costs(costs: Option<&[f64]>, n: usize, out: &mut Vec<f64>) {
    out.clear();
    match costs {
        Some(c) => out.extend_from_slice(c),
        None => out.resize(n, 1.0),
    }
}

/// Column data of keyroot `j` shared by every `i`: `lb_rel[y - 1]` is the column of node
/// `b = lld2[j] + y - 1`'s leftmost leaf, minus one, and `border` the forest table's first row
/// (prefix sums of the insertion costs, added in column order).
fn column_data(
    lld2: &[u32],
    insert: &[f64],
    j: usize,
    lb_rel: &mut Vec<usize>,
    border: &mut Vec<f64>,
) {
    let l2 = lld2[j] as usize;
    lb_rel.clear();
    lb_rel.extend(lld2[l2..=j].iter().map(|&lb| lb as usize - l2));
    border.clear();
    border.push(0.0);
    for &c in &insert[l2..=j] {
        let last = *border.last().unwrap();
        border.push(last + c);
    }
}

/// Fill the forest-distance table of the subtrees rooted at `i` and `j` (row-major, width
/// `j - lld2[j] + 2`). With `store`, tree distances on the leftmost paths are written to `td`.
///
/// Cell order of operations, identical in the Numba twin: `del = fd[x-1][y] + delete[a]`,
/// `ins = fd[x][y-1] + insert[b]`, `best = fmin(del, ins)`, then `fmin(best, third)` where `third` is
/// `fd[x-1][y-1] + rename(a, b)` on the leftmost paths and `fd[lld(a)][lld(b)] + td[a][b]` elsewhere.
#[allow(clippy::too_many_arguments)]
fn forest_distance(
    pricing: &Pricing<'_, '_>,
    delete: &[f64],
    insert: &[f64],
    i: usize,
    j: usize,
    lb_rel: &[usize],
    border: &[f64],
    td: &mut [f64],
    fd: &mut [f64],
    lev: &mut DistanceWorkspace,
    store: bool,
) {
    let (lld1, lld2) = (pricing.t1.lld, pricing.t2.lld);
    let n2 = lld2.len();
    let l1 = lld1[i] as usize;
    let l2 = lld2[j] as usize;
    let rows = i - l1 + 2;
    let width = j - l2 + 2;
    let insert = &insert[l2..=j];
    fd[..width].copy_from_slice(border);
    for x in 1..rows {
        fd[x * width] = fd[(x - 1) * width] + delete[l1 + x - 1];
    }
    for x in 1..rows {
        let a = l1 + x - 1;
        let la = lld1[a] as usize;
        let cost_delete = delete[a];
        let (before, rest) = fd.split_at_mut(x * width);
        let prev = &before[(x - 1) * width..];
        let sub_row = &before[(la - l1) * width..(la - l1 + 1) * width];
        let cur = &mut rest[..width];
        let td_row = &mut td[a * n2 + l2..=a * n2 + j];
        let mut left = cur[0];
        if la == l1 {
            for y in 1..width {
                let del = prev[y] + cost_delete;
                let ins = left + insert[y - 1];
                let best = fmin(del, ins);
                let value = if lb_rel[y - 1] == 0 {
                    let value = fmin(best, prev[y - 1] + pricing.rename(a, l2 + y - 1, lev));
                    if store {
                        td_row[y - 1] = value;
                    }
                    value
                } else {
                    fmin(best, sub_row[lb_rel[y - 1]] + td_row[y - 1])
                };
                cur[y] = value;
                left = value;
            }
        } else {
            for y in 1..width {
                let del = prev[y] + cost_delete;
                let ins = left + insert[y - 1];
                let value = fmin(fmin(del, ins), sub_row[lb_rel[y - 1]] + td_row[y - 1]);
                cur[y] = value;
                left = value;
            }
        }
    }
}

/// Fill `ws.td` with the tree distance of every node pair; returns the distance of the two roots.
fn run(
    t1: &PostorderTree<'_>,
    t2: &PostorderTree<'_>,
    costs: &CostModel<'_>,
    ws: &mut Workspace,
) -> f64 {
    let (n1, n2) = (t1.len(), t2.len());
    fill_costs(costs.delete, n1, &mut ws.delete);
    fill_costs(costs.insert, n2, &mut ws.insert);
    if n1 == 0 || n2 == 0 {
        // Only deletions or only insertions; summed in post-order like the DP's border row.
        return ws.delete.iter().fold(0.0, |s, &c| s + c)
            + ws.insert.iter().fold(0.0, |s, &c| s + c);
    }
    keyroots(t1.lld, &mut ws.keyroots1);
    keyroots(t2.lld, &mut ws.keyroots2);
    ws.td.clear();
    ws.td.resize(n1 * n2, 0.0);
    ws.fd.clear();
    ws.fd.resize((n1 + 1) * (n2 + 1), 0.0);
    ws.masks.build(&costs.rename, n1);
    let pricing = Pricing {
        t1: *t1,
        t2: *t2,
        rename: &costs.rename,
        masks: &ws.masks,
    };
    // Two leaf keyroots depend on nothing: their 1×1 forest tables are filled first, in closed
    // form with the same operations as `forest_distance` (wide trees have many leaf keyroots).
    for &j in ws.keyroots2.iter().filter(|&&j| t2.lld[j] as usize == j) {
        for &i in ws.keyroots1.iter().filter(|&&i| t1.lld[i] as usize == i) {
            let (del, ins) = (
                (0.0 + ws.insert[j]) + ws.delete[i],
                (0.0 + ws.delete[i]) + ws.insert[j],
            );
            ws.td[i * n2 + j] = fmin(fmin(del, ins), 0.0 + pricing.rename(i, j, &mut ws.lev));
        }
    }
    // Keyroot pairs in any order with both sequences ascending are valid; `j` outer lets the column
    // data be built once per keyroot of the second tree.
    for &j in &ws.keyroots2 {
        column_data(t2.lld, &ws.insert, j, &mut ws.lb_rel, &mut ws.border);
        let j_leaf = t2.lld[j] as usize == j;
        for &i in &ws.keyroots1 {
            if j_leaf && t1.lld[i] as usize == i {
                continue;
            }
            forest_distance(
                &pricing,
                &ws.delete,
                &ws.insert,
                i,
                j,
                &ws.lb_rel,
                &ws.border,
                &mut ws.td,
                &mut ws.fd,
                &mut ws.lev,
                true,
            );
        }
    }
    ws.td[n1 * n2 - 1]
}

/// Tree edit distance between `t1` and `t2` under `costs`.
///
/// Both trees and the cost model must have passed [`super::validate_tree`] and
/// [`super::validate_costs`]; indices are trusted here. With an empty side the distance is the sum of
/// the other side's deletion or insertion costs (added in post-order, starting from 0). Unit costs
/// run on the integer kernel of `unit.rs` (same distances, exactly).
pub fn zhang_shasha(
    t1: &PostorderTree<'_>,
    t2: &PostorderTree<'_>,
    costs: &CostModel<'_>,
    ws: &mut Workspace,
) -> f64 {
    match costs {
        CostModel {
            delete: None,
            insert: None,
            rename: Rename::Unit,
        } => f64::from(unit_distance(t1, t2, &mut ws.unit)),
        _ => run(t1, t2, costs, ws),
    }
}

/// Tree edit distance and one optimal edit mapping.
///
/// The mapping lists `(a, b)` post-order index pairs: `(a, -1)` deletes node `a` of `t1`, `(-1, b)`
/// inserts node `b` of `t2`, and `(a, b)` maps `a` onto `b` (a rename when their costs differ from 0).
/// Every node of both trees appears exactly once; the costs of the pairs add up to the distance.
/// Order: subtree pairs are resolved last-in first-out starting from the roots; inside one forest
/// table the walk goes from the bottom-right corner, preferring a deletion, then an insertion, then
/// the diagonal or a subtree jump.
pub fn zhang_shasha_mapping(
    t1: &PostorderTree<'_>,
    t2: &PostorderTree<'_>,
    costs: &CostModel<'_>,
    ws: &mut Workspace,
) -> (f64, Vec<(i64, i64)>) {
    let distance = run(t1, t2, costs, ws);
    let (n1, n2) = (t1.len(), t2.len());
    let mut mapping: Vec<(i64, i64)> = Vec::with_capacity(n1 + n2);
    if n1 == 0 || n2 == 0 {
        mapping.extend((0..n1 as i64).map(|a| (a, -1)));
        mapping.extend((0..n2 as i64).map(|b| (-1, b)));
        return (distance, mapping);
    }
    let pricing = Pricing {
        t1: *t1,
        t2: *t2,
        rename: &costs.rename,
        masks: &ws.masks,
    };
    let mut pending: Vec<(usize, usize)> = vec![(n1 - 1, n2 - 1)];
    while let Some((i, j)) = pending.pop() {
        column_data(t2.lld, &ws.insert, j, &mut ws.lb_rel, &mut ws.border);
        forest_distance(
            &pricing,
            &ws.delete,
            &ws.insert,
            i,
            j,
            &ws.lb_rel,
            &ws.border,
            &mut ws.td,
            &mut ws.fd,
            &mut ws.lev,
            false,
        );
        let l1 = t1.lld[i] as usize;
        let l2 = t2.lld[j] as usize;
        let width = j - l2 + 2;
        let fd = &ws.fd;
        let (mut x, mut y) = (i - l1 + 1, j - l2 + 1);
        while x > 0 || y > 0 {
            let here = fd[x * width + y];
            if x > 0 && here == fd[(x - 1) * width + y] + ws.delete[l1 + x - 1] {
                mapping.push(((l1 + x - 1) as i64, -1));
                x -= 1;
            } else if y > 0 && here == fd[x * width + y - 1] + ws.insert[l2 + y - 1] {
                mapping.push((-1, (l2 + y - 1) as i64));
                y -= 1;
            } else {
                let (a, b) = (l1 + x - 1, l2 + y - 1);
                let (la, lb) = (t1.lld[a] as usize, t2.lld[b] as usize);
                if la == l1 && lb == l2 {
                    mapping.push((a as i64, b as i64));
                    x -= 1;
                    y -= 1;
                } else {
                    pending.push((a, b));
                    x = la - l1;
                    y = lb - l2;
                }
            }
        }
    }
    (distance, mapping)
}
