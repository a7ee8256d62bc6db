//! Zhang–Shasha under unit costs (delete = insert = 1, rename = 0/1 on label equality) in integers.
//!
//! Same recurrence as the general kernel in `zhang_shasha.rs`, specialised: costs are `u32`
//! constants instead of looked-up `f64`s, two leaf keyroots cost `labels differ` in closed form, and a
//! leaf keyroot on either side fills its one-row or one-column table without table bookkeeping. The distance
//! of two trees equals that of their mirror images, so when the mirrored trees need fewer table
//! cells (flat trees whose first child is small, like decomposed workflows) the kernel runs on them.
//! Every distance is a small integer, so `as f64` equals the general kernel's result exactly (the
//! tests compare the two on random trees).

use super::PostorderTree;

/// Reusable buffers of the unit-cost kernel (part of the general [`super::Workspace`]).
#[derive(Default)]
pub(super) struct UnitBuffers {
    td: Vec<u32>,
    fd: Vec<u32>,
    keyroots1: Vec<u32>,
    keyroots2: Vec<u32>,
    seen: Vec<bool>,
    lb_rel: Vec<u32>,
    mirror1: Mirror,
    mirror2: Mirror,
}

/// A tree's mirror image in post-order layout, and a stack used to build it.
#[derive(Default)]
struct Mirror {
    labels: Vec<u32>,
    lld: Vec<u32>,
    open: Vec<u32>,
}

impl Mirror {
    /// Mirror `tree`: node `k`'s pre-order index is `lld[k] + depth(k)`, its mirrored post-order
    /// index `n - 1 -` that, and its subtree keeps its size.
    fn build(&mut self, tree: &PostorderTree<'_>) {
        let n = tree.len();
        self.labels.clear();
        self.labels.resize(n, 0);
        self.lld.clear();
        self.lld.resize(n, 0);
        self.open.clear();
        for k in (0..n).rev() {
            // Ancestors of `k` are the open nodes whose range `lld..=node` contains it.
            while let Some(&top) = self.open.last() {
                if tree.lld[top as usize] as usize <= k {
                    break;
                }
                self.open.pop();
            }
            let depth = self.open.len();
            let m = n - 1 - (tree.lld[k] as usize + depth);
            self.labels[m] = tree.labels[k];
            self.lld[m] = (m - (k - tree.lld[k] as usize)) as u32;
            self.open.push(k as u32);
        }
    }

    fn tree(&self) -> PostorderTree<'_> {
        PostorderTree {
            labels: &self.labels,
            lld: &self.lld,
        }
    }
}

/// Keyroots of a post-order tree in ascending order (the highest node of each leftmost leaf);
/// returns their total table extent `sum(size + 1)` and how many are leaves.
fn keyroots(lld: &[u32], seen: &mut Vec<bool>, out: &mut Vec<u32>) -> (usize, usize) {
    out.clear();
    seen.clear();
    seen.resize(lld.len(), false);
    let (mut extent, mut leaves) = (0, 0);
    for k in (0..lld.len()).rev() {
        let l = lld[k] as usize;
        if !seen[l] {
            seen[l] = true;
            out.push(k as u32);
            extent += k - l + 2;
            leaves += usize::from(l == k);
        }
    }
    out.reverse();
    (extent, leaves)
}

/// What [`keyroots`] returns for the mirror image: its keyroots are the root and every node that
/// is not the last child of its parent (node `k` is a last child when node `k + 1` contains it).
fn mirror_extent(lld: &[u32]) -> (usize, usize) {
    let n = lld.len();
    let (mut extent, mut leaves) = (0, 0);
    for k in 0..n {
        if k + 1 == n || lld[k + 1] as usize > k {
            let l = lld[k] as usize;
            extent += k - l + 2;
            leaves += usize::from(l == k);
        }
    }
    (extent, leaves)
}

/// Table cells of one orientation: every keyroot pair but leaf × leaf (4 cells each).
fn cells((e1, f1): (usize, usize), (e2, f2): (usize, usize)) -> usize {
    e1 * e2 - 4 * f1 * f2
}

/// Unit-cost tree edit distance of `t1` and `t2` (validated trees; either may be empty).
pub(super) fn unit_distance(
    t1: &PostorderTree<'_>,
    t2: &PostorderTree<'_>,
    ws: &mut UnitBuffers,
) -> u32 {
    let (n1, n2) = (t1.len(), t2.len());
    if n1 == 0 || n2 == 0 {
        return (n1 + n2) as u32;
    }
    let k1 = keyroots(t1.lld, &mut ws.seen, &mut ws.keyroots1);
    let k2 = keyroots(t2.lld, &mut ws.seen, &mut ws.keyroots2);
    if cells(mirror_extent(t1.lld), mirror_extent(t2.lld)) < cells(k1, k2) {
        let (mut m1, mut m2) = (
            std::mem::take(&mut ws.mirror1),
            std::mem::take(&mut ws.mirror2),
        );
        m1.build(t1);
        m2.build(t2);
        keyroots(&m1.lld, &mut ws.seen, &mut ws.keyroots1);
        keyroots(&m2.lld, &mut ws.seen, &mut ws.keyroots2);
        let distance = run(&m1.tree(), &m2.tree(), ws);
        (ws.mirror1, ws.mirror2) = (m1, m2);
        return distance;
    }
    run(t1, t2, ws)
}

/// The keyroot loops, `ws.keyroots1` and `ws.keyroots2` already filled.
fn run(t1: &PostorderTree<'_>, t2: &PostorderTree<'_>, ws: &mut UnitBuffers) -> u32 {
    let (n1, n2) = (t1.len(), t2.len());
    // Every td entry is written before it is read, so stale values from an earlier pair are harmless.
    if ws.td.len() < n1 * n2 {
        ws.td.resize(n1 * n2, 0);
    }
    if ws.fd.len() < (n1 + 1) * (n2 + 1) {
        ws.fd.resize((n1 + 1) * (n2 + 1), 0);
    }
    let (lld1, lld2) = (t1.lld, t2.lld);
    // Two leaf keyroots: min(delete + insert, rename) = rename.
    for &j in ws.keyroots2.iter().filter(|&&j| lld2[j as usize] == j) {
        let lb = t2.labels[j as usize];
        for &i in ws.keyroots1.iter().filter(|&&i| lld1[i as usize] == i) {
            ws.td[i as usize * n2 + j as usize] = u32::from(t1.labels[i as usize] != lb);
        }
    }
    for &j in &ws.keyroots2 {
        let j = j as usize;
        let l2 = lld2[j] as usize;
        if l2 == j {
            for &i in ws.keyroots1.iter().filter(|&&i| lld1[i as usize] != i) {
                leaf_column(t1, t2, i as usize, j, &mut ws.td);
            }
            continue;
        }
        ws.lb_rel.clear();
        ws.lb_rel
            .extend(lld2[l2..=j].iter().map(|&lb| lb - l2 as u32));
        for &i in &ws.keyroots1 {
            let i = i as usize;
            if lld1[i] as usize == i {
                leaf_row(t1, t2, i, j, &ws.lb_rel, &mut ws.td);
            } else {
                forest_distance(t1, t2, i, j, &ws.lb_rel, &mut ws.td, &mut ws.fd);
            }
        }
    }
    ws.td[n1 * n2 - 1]
}

/// [`forest_distance`] when `j` is a leaf: one column, whose left neighbour `fd[x][0]` is `x`.
fn leaf_column(t1: &PostorderTree<'_>, t2: &PostorderTree<'_>, i: usize, j: usize, td: &mut [u32]) {
    let n2 = t2.len();
    let l1 = t1.lld[i] as usize;
    let label = t2.labels[j];
    let mut up = 1u32;
    for a in l1..=i {
        let x = (a - l1 + 1) as u32;
        let la = t1.lld[a] as usize;
        let cell = &mut td[a * n2 + j];
        up = if la == l1 {
            *cell = (x - 1 + u32::from(t1.labels[a] != label)).min(up.min(x) + 1);
            *cell
        } else {
            ((la - l1) as u32 + *cell).min(up.min(x) + 1)
        };
    }
}

/// [`forest_distance`] when `i` is a leaf: one row, over row 0 where `fd[0][y]` is `y`.
fn leaf_row(
    t1: &PostorderTree<'_>,
    t2: &PostorderTree<'_>,
    i: usize,
    j: usize,
    lb_rel: &[u32],
    td: &mut [u32],
) {
    let n2 = t2.len();
    let l2 = t2.lld[j] as usize;
    let label = t1.labels[i];
    let td_row = &mut td[i * n2 + l2..=i * n2 + j];
    let mut left = 1u32;
    for (y, (cell, (&rel, &lb))) in td_row
        .iter_mut()
        .zip(lb_rel.iter().zip(&t2.labels[l2..=j]))
        .enumerate()
    {
        let y = y as u32 + 1;
        left = if rel == 0 {
            *cell = (y - 1 + u32::from(label != lb)).min(left.min(y) + 1);
            *cell
        } else {
            (rel + *cell).min(left.min(y) + 1)
        };
    }
}

/// Fill the forest table of keyroots `i` and `j` (row-major, width `j - lld2[j] + 2`) and store the
/// tree distances of the node pairs on both leftmost paths in `td`.
fn forest_distance(
    t1: &PostorderTree<'_>,
    t2: &PostorderTree<'_>,
    i: usize,
    j: usize,
    lb_rel: &[u32],
    td: &mut [u32],
    fd: &mut [u32],
) {
    let n2 = t2.len();
    let l1 = t1.lld[i] as usize;
    let l2 = t2.lld[j] as usize;
    let rows = i - l1 + 2;
    let width = j - l2 + 2;
    let labels2 = &t2.labels[l2..=j];
    for (y, cell) in fd[..width].iter_mut().enumerate() {
        *cell = y as u32;
    }
    for x in 1..rows {
        let a = l1 + x - 1;
        let la = t1.lld[a] as usize;
        let (before, rest) = fd.split_at_mut(x * width);
        let prev = &before[(x - 1) * width..];
        let sub_row = &before[(la - l1) * width..(la - l1 + 1) * width];
        let cur = &mut rest[..width];
        let td_row = &mut td[a * n2 + l2..=a * n2 + j];
        let mut left = x as u32;
        cur[0] = left;
        if la == l1 {
            let label = t1.labels[a];
            for y in 1..width {
                let rel = lb_rel[y - 1] as usize;
                let other = if rel == 0 {
                    let rename = prev[y - 1] + u32::from(label != labels2[y - 1]);
                    let value = (left + 1).min(rename.min(prev[y] + 1));
                    td_row[y - 1] = value;
                    value
                } else {
                    (sub_row[rel] + td_row[y - 1]).min(prev[y] + 1)
                };
                left = other.min(left + 1);
                cur[y] = left;
            }
        } else {
            // `left` is the only loop-carried value: take the other two terms' minimum first.
            let columns = prev[1..]
                .iter()
                .zip(&lb_rel[..width - 1])
                .zip(td_row.iter());
            for (cell, ((&up, &rel), &td)) in cur[1..].iter_mut().zip(columns) {
                let other = (sub_row[rel as usize] + td).min(up + 1);
                left = other.min(left + 1);
                *cell = left;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::validate_tree;

    #[test]
    fn mirror_of_mirror_is_the_tree() {
        // {f{d{a}{c{b}}}{e}} -> {f{e}{d{c{b}}{a}}}
        let (labels, lld) = ([0u32, 1, 2, 3, 4, 5], [0u32, 1, 1, 0, 4, 0]);
        let tree = PostorderTree {
            labels: &labels,
            lld: &lld,
        };
        let mut m = Mirror::default();
        m.build(&tree);
        assert_eq!(
            (m.labels.as_slice(), m.lld.as_slice()),
            (&[4u32, 1, 2, 0, 3, 5][..], &[0u32, 1, 1, 3, 1, 0][..])
        );
        validate_tree(&m.tree()).unwrap();
        assert_eq!(
            mirror_extent(&lld),
            keyroots(&m.lld, &mut Vec::new(), &mut Vec::new())
        );
        let mut back = Mirror::default();
        back.build(&m.tree());
        assert_eq!(
            (back.labels.as_slice(), back.lld.as_slice()),
            (&labels[..], &lld[..])
        );
    }
}
