//! Depth-first branch and bound for [`super::graph_edit_distance`]: bounds, completions and the
//! iterative search loop. Every buffer is sized in [`Search::new`]; the search itself allocates
//! nothing.

use super::lsap::Lsap;
use super::{GedError, GedProblem, GedResult};

/// `map1[u]` of a graph-1 node that is not decided yet.
const UNDECIDED: i64 = -2;
/// `map1[u]` of a deleted graph-1 node; also "no node" in candidate lists and inverse maps.
const EPS: i64 = -1;
/// "No edge" in the adjacency matrices.
const NO_EDGE: i32 = -1;

/// Exact graph edit distance of `problem` within `budget` expanded states (see the module docs).
pub fn graph_edit_distance(problem: &GedProblem<'_>, budget: u64) -> Result<GedResult, GedError> {
    problem.validate()?;
    Ok(Search::new(problem).run(budget))
}

struct Search<'a> {
    n1: usize,
    n2: usize,
    directed: bool,
    node_sub: &'a [f64],
    node_del: &'a [f64],
    node_ins: &'a [f64],
    n_class2: usize,
    edge_del: &'a [f64],
    edge_ins: &'a [f64],
    /// `min(edge_sub, edge_del + edge_ins)` per class pair.
    edge_pair: Vec<f64>,
    /// Edge class of `(u, w)`, or `NO_EDGE`; symmetric when undirected.
    adj1: Vec<i32>,
    adj2: Vec<i32>,
    /// Graph-1 nodes by decreasing degree: the tie-break when choosing the next node to decide.
    order: Vec<usize>,
    /// `level_node[d]`: the graph-1 node decided at level `d` of the current path.
    level_node: Vec<usize>,
    map1: Vec<i64>,
    /// Graph-1 preimage of each graph-2 node, or `EPS` while it is free.
    inv2: Vec<i64>,
    // Bound workspace.
    decided: Vec<usize>,
    rows: Vec<usize>,
    cols: Vec<usize>,
    col_ins: Vec<f64>,
    matrix: Vec<f64>,
    lsap: Lsap,
    /// Edge classes between each undecided graph-1 node (by row) and the other undecided nodes:
    /// row `i` holds its outgoing edges at `[2i·n1, 2i·n1 + len)` and incoming ones (directed only)
    /// at `[(2i+1)·n1, …)`; lengths in `inner1_len[2i]`, `inner1_len[2i+1]`.
    inner1: Vec<i32>,
    inner1_len: Vec<usize>,
    /// The same for free graph-2 nodes (by column), with stride `n2`.
    inner2: Vec<i32>,
    inner2_len: Vec<usize>,
    excess: Vec<f64>,
    // Completion workspace.
    comp_map: Vec<i64>,
    comp_inv: Vec<i64>,
    best_map: Vec<i64>,
    ub: f64,
    // Candidate stack: level d holds the children of the state with level_node[..d] decided.
    stride: usize,
    cand_v: Vec<i64>,
    cand_step: Vec<f64>,
    cand_f: Vec<f64>,
    cand_count: Vec<usize>,
    cursor: Vec<usize>,
    g: Vec<f64>,
}

impl<'a> Search<'a> {
    fn new(p: &GedProblem<'a>) -> Self {
        let (n1, n2) = (p.n1, p.n2);
        let mut adj1 = vec![NO_EDGE; n1 * n1];
        let mut adj2 = vec![NO_EDGE; n2 * n2];
        let mut degree = vec![0usize; n1];
        for &(s, d, c) in p.edges1 {
            let (s, d) = (s as usize, d as usize);
            adj1[s * n1 + d] = c as i32;
            if !p.directed {
                adj1[d * n1 + s] = c as i32;
            }
            degree[s] += 1;
            if d != s {
                degree[d] += 1;
            }
        }
        for &(s, d, c) in p.edges2 {
            let (s, d) = (s as usize, d as usize);
            adj2[s * n2 + d] = c as i32;
            if !p.directed {
                adj2[d * n2 + s] = c as i32;
            }
        }
        let mut edge_pair = vec![0.0; p.n_class1 * p.n_class2];
        for a in 0..p.n_class1 {
            for b in 0..p.n_class2 {
                let k = a * p.n_class2 + b;
                edge_pair[k] = p.edge_sub[k].min(p.edge_del[a] + p.edge_ins[b]);
            }
        }
        let mut order: Vec<usize> = (0..n1).collect();
        order.sort_by(|&a, &b| degree[b].cmp(&degree[a]).then(a.cmp(&b)));
        let stride = n2 + 1;
        Search {
            n1,
            n2,
            directed: p.directed,
            node_sub: p.node_sub,
            node_del: p.node_del,
            node_ins: p.node_ins,
            n_class2: p.n_class2,
            edge_del: p.edge_del,
            edge_ins: p.edge_ins,
            edge_pair,
            adj1,
            adj2,
            order,
            level_node: vec![0; n1],
            map1: vec![UNDECIDED; n1],
            inv2: vec![EPS; n2],
            decided: Vec::with_capacity(n1),
            rows: Vec::with_capacity(n1),
            cols: Vec::with_capacity(n2),
            col_ins: vec![0.0; n2],
            matrix: vec![0.0; n1 * (n1 + n2)],
            lsap: Lsap::new(n1, n1 + n2),
            inner1: vec![NO_EDGE; 2 * n1 * n1],
            inner1_len: vec![0; 2 * n1],
            inner2: vec![NO_EDGE; 2 * n2 * n2],
            inner2_len: vec![0; 2 * n2],
            excess: vec![0.0; n1.max(n2)],
            comp_map: vec![EPS; n1],
            comp_inv: vec![EPS; n2],
            best_map: vec![EPS; n1],
            ub: f64::INFINITY,
            stride,
            cand_v: vec![EPS; n1 * stride],
            cand_step: vec![0.0; n1 * stride],
            cand_f: vec![0.0; n1 * stride],
            cand_count: vec![0; n1],
            cursor: vec![0; n1],
            g: vec![0.0; n1 + 1],
        }
    }

    /// Cost of the edge pair `(a, b)` (class ids or `NO_EDGE`) under the model.
    #[inline]
    fn pair_cost(&self, a: i32, b: i32) -> f64 {
        match (a >= 0, b >= 0) {
            (false, false) => 0.0,
            (true, false) => self.edge_del[a as usize],
            (false, true) => self.edge_ins[b as usize],
            (true, true) => self.edge_pair[a as usize * self.n_class2 + b as usize],
        }
    }

    /// Exact cost of deciding graph-1 node `u` as `v` (`EPS` = delete) given the decided nodes:
    /// its node cost, its self-loop, and its edges towards decided nodes on both sides.
    fn step_cost(&self, u: usize, v: i64) -> f64 {
        let (n1, n2) = (self.n1, self.n2);
        if v == EPS {
            let mut cost = self.node_del[u] + self.pair_cost(self.adj1[u * n1 + u], NO_EDGE);
            for &p in &self.decided {
                cost += self.pair_cost(self.adj1[u * n1 + p], NO_EDGE);
                if self.directed {
                    cost += self.pair_cost(self.adj1[p * n1 + u], NO_EDGE);
                }
            }
            return cost;
        }
        let v = v as usize;
        let mut cost = self.node_sub[u * n2 + v]
            + self.pair_cost(self.adj1[u * n1 + u], self.adj2[v * n2 + v]);
        for &p in &self.decided {
            let q = self.map1[p];
            let out2 = if q >= 0 {
                self.adj2[v * n2 + q as usize]
            } else {
                NO_EDGE
            };
            cost += self.pair_cost(self.adj1[u * n1 + p], out2);
            if self.directed {
                let in2 = if q >= 0 {
                    self.adj2[q as usize * n2 + v]
                } else {
                    NO_EDGE
                };
                cost += self.pair_cost(self.adj1[p * n1 + u], in2);
            }
        }
        cost
    }

    /// Exact cost of inserting free graph-2 node `v`: node, self-loop, edges to used nodes.
    fn insert_cost(&self, v: usize) -> f64 {
        let n2 = self.n2;
        let mut cost = self.node_ins[v] + self.pair_cost(NO_EDGE, self.adj2[v * n2 + v]);
        for &p in &self.decided {
            let q = self.map1[p];
            if q >= 0 {
                let q = q as usize;
                cost += self.pair_cost(NO_EDGE, self.adj2[v * n2 + q]);
                if self.directed {
                    cost += self.pair_cost(NO_EDGE, self.adj2[q * n2 + v]);
                }
            }
        }
        cost
    }

    /// Fill `inner1`/`inner2` with the edge classes among undecided (free) nodes.
    fn collect_inner_edges(&mut self) {
        let (n1, n2) = (self.n1, self.n2);
        for (i, &u) in self.rows.iter().enumerate() {
            let (mut out, mut inc) = (0, 0);
            for &w in &self.rows {
                if w == u {
                    continue;
                }
                let e = self.adj1[u * n1 + w];
                if e >= 0 {
                    self.inner1[2 * i * n1 + out] = e;
                    out += 1;
                }
                if self.directed {
                    let e = self.adj1[w * n1 + u];
                    if e >= 0 {
                        self.inner1[(2 * i + 1) * n1 + inc] = e;
                        inc += 1;
                    }
                }
            }
            self.inner1_len[2 * i] = out;
            self.inner1_len[2 * i + 1] = inc;
        }
        for (j, &v) in self.cols.iter().enumerate() {
            let (mut out, mut inc) = (0, 0);
            for &x in &self.cols {
                if x == v {
                    continue;
                }
                let e = self.adj2[v * n2 + x];
                if e >= 0 {
                    self.inner2[2 * j * n2 + out] = e;
                    out += 1;
                }
                if self.directed {
                    let e = self.adj2[x * n2 + v];
                    if e >= 0 {
                        self.inner2[(2 * j + 1) * n2 + inc] = e;
                        inc += 1;
                    }
                }
            }
            self.inner2_len[2 * j] = out;
            self.inner2_len[2 * j + 1] = inc;
        }
    }

    /// Half the bound on matching the inner edges of row `i` (or none) against those of column
    /// `j` (or none). Each inner edge touches two undecided nodes, so halving keeps the sum over
    /// an assignment admissible.
    fn inner_bound(&mut self, i: Option<usize>, j: Option<usize>) -> f64 {
        let (n1, n2) = (self.n1, self.n2);
        let mut total = 0.0;
        let passes = if self.directed { 2 } else { 1 };
        for pass in 0..passes {
            let a = match i {
                Some(i) => {
                    let start = (2 * i + pass) * n1;
                    &self.inner1[start..start + self.inner1_len[2 * i + pass]]
                }
                None => &[][..],
            };
            let b = match j {
                Some(j) => {
                    let start = (2 * j + pass) * n2;
                    &self.inner2[start..start + self.inner2_len[2 * j + pass]]
                }
                None => &[][..],
            };
            total += match_bound(
                a,
                b,
                &self.edge_pair,
                self.edge_del,
                self.edge_ins,
                self.n_class2,
                &mut self.excess,
            );
        }
        0.5 * total
    }

    /// Lower bound on the cost still to pay from the current partial map: an assignment of the
    /// undecided graph-1 nodes to free graph-2 nodes or deletion, free graph-2 nodes left over
    /// being inserted. Leaves the assignment in `self.lsap.row_col` over `self.rows`/`self.cols`.
    fn bound(&mut self) -> f64 {
        let (n1, n2) = (self.n1, self.n2);
        self.decided.clear();
        self.rows.clear();
        for u in 0..n1 {
            if self.map1[u] == UNDECIDED {
                self.rows.push(u);
            } else {
                self.decided.push(u);
            }
        }
        self.cols.clear();
        for v in 0..n2 {
            if self.inv2[v] == EPS {
                self.cols.push(v);
            }
        }
        let (r1, r2) = (self.rows.len(), self.cols.len());
        self.collect_inner_edges();
        let ld = n1 + n2;
        let mut h = 0.0;
        for j in 0..r2 {
            let v = self.cols[j];
            let c = self.insert_cost(v) + self.inner_bound(None, Some(j));
            self.col_ins[j] = c;
            h += c;
        }
        if r1 == 0 {
            return h;
        }
        for i in 0..r1 {
            let u = self.rows[i];
            let del = self.step_cost(u, EPS) + self.inner_bound(Some(i), None);
            for j in 0..r2 {
                let v = self.cols[j];
                let c = self.step_cost(u, v as i64) + self.inner_bound(Some(i), Some(j));
                self.matrix[i * ld + j] = c - self.col_ins[j];
            }
            for j in r2..r2 + r1 {
                self.matrix[i * ld + j] = del;
            }
        }
        h + self.lsap.solve(&self.matrix, r1, r2 + r1)
    }

    /// Complete the current partial map with the assignment of the last [`Search::bound`] call,
    /// cost it exactly and keep it if it beats the incumbent.
    fn try_completion(&mut self) {
        self.comp_map.copy_from_slice(&self.map1);
        let r2 = self.cols.len();
        for (i, &u) in self.rows.iter().enumerate() {
            let j = self.lsap.row_col[i];
            self.comp_map[u] = if j < r2 { self.cols[j] as i64 } else { EPS };
        }
        let cost = self.full_cost();
        if cost < self.ub {
            self.ub = cost;
            self.best_map.copy_from_slice(&self.comp_map);
        }
    }

    /// Exact cost of the complete edit path in `self.comp_map`, summed in a fixed order.
    fn full_cost(&mut self) -> f64 {
        let (n1, n2) = (self.n1, self.n2);
        self.comp_inv.fill(EPS);
        let mut cost = 0.0;
        for u in 0..n1 {
            let v = self.comp_map[u];
            if v >= 0 {
                self.comp_inv[v as usize] = u as i64;
                cost += self.node_sub[u * n2 + v as usize];
            } else {
                cost += self.node_del[u];
            }
        }
        for v in 0..n2 {
            if self.comp_inv[v] == EPS {
                cost += self.node_ins[v];
            }
        }
        for u in 0..n1 {
            let start = if self.directed { 0 } else { u };
            for w in start..n1 {
                let e1 = self.adj1[u * n1 + w];
                if e1 < 0 {
                    continue;
                }
                let (fu, fw) = (self.comp_map[u], self.comp_map[w]);
                let e2 = if fu >= 0 && fw >= 0 {
                    self.adj2[fu as usize * n2 + fw as usize]
                } else {
                    NO_EDGE
                };
                cost += self.pair_cost(e1, e2);
            }
        }
        for v in 0..n2 {
            let start = if self.directed { 0 } else { v };
            for x in start..n2 {
                let e2 = self.adj2[v * n2 + x];
                if e2 < 0 {
                    continue;
                }
                let (gv, gx) = (self.comp_inv[v], self.comp_inv[x]);
                let matched = gv >= 0 && gx >= 0 && self.adj1[gv as usize * n1 + gx as usize] >= 0;
                if !matched {
                    cost += self.edge_ins[e2 as usize];
                }
            }
        }
        cost
    }

    fn assign(&mut self, u: usize, v: i64) {
        self.map1[u] = v;
        if v >= 0 {
            self.inv2[v as usize] = u as i64;
        }
    }

    fn unassign(&mut self, u: usize) {
        let v = self.map1[u];
        if v >= 0 {
            self.inv2[v as usize] = EPS;
        }
        self.map1[u] = UNDECIDED;
    }

    /// Choose the node to decide at `level` and generate and sort its children, right after
    /// [`Search::bound`] bounded the state at `f` (= g + h). A child's bound is `f` plus the
    /// reduced cost of its pair under the assignment's optimal duals: every completion that makes
    /// this choice costs at least that (LP duality), so no child needs its own assignment yet.
    /// The node chosen is the one whose second-cheapest choice costs most (fail first: its
    /// alternatives are the likeliest to be pruned), ties going to higher degree.
    fn expand(&mut self, level: usize, f: f64) {
        let base = level * self.stride;
        let (r1, r2) = (self.rows.len(), self.cols.len());
        let (mut row, mut best_regret) = (usize::MAX, f64::NEG_INFINITY);
        for k in 0..self.n1 {
            let w = self.order[k];
            if self.map1[w] != UNDECIDED {
                continue;
            }
            let i = self
                .rows
                .iter()
                .position(|&x| x == w)
                .expect("undecided nodes are rows");
            let (mut first, mut second) = (f64::INFINITY, f64::INFINITY);
            let mut deleted = f64::INFINITY;
            for j in r2..r2 + r1 {
                deleted = deleted.min(self.reduced_cost(i, j));
            }
            for j in 0..=r2 {
                let rc = if j < r2 {
                    self.reduced_cost(i, j)
                } else {
                    deleted
                };
                if rc < first {
                    second = first;
                    first = rc;
                } else if rc < second {
                    second = rc;
                }
            }
            if second > best_regret {
                best_regret = second;
                row = i;
            }
        }
        let u = self.rows[row];
        self.level_node[level] = u;
        let mut deleted = f64::INFINITY;
        for j in r2..r2 + r1 {
            deleted = deleted.min(self.reduced_cost(row, j));
        }
        let mut count = 0;
        let mut col = 0;
        for c in 0..=self.n2 {
            let v = if c < self.n2 { c as i64 } else { EPS };
            if v >= 0 && self.inv2[c] != EPS {
                continue;
            }
            let rc = if v >= 0 {
                self.reduced_cost(row, col)
            } else {
                deleted
            };
            col += 1;
            self.cand_v[base + count] = v;
            self.cand_step[base + count] = self.step_cost(u, v);
            self.cand_f[base + count] = f + rc.max(0.0);
            count += 1;
        }
        // Stable insertion sort by bound: ties keep graph-2 index order, deletion last.
        for i in 1..count {
            let mut k = base + i;
            while k > base && self.cand_f[k - 1] > self.cand_f[k] {
                self.cand_f.swap(k - 1, k);
                self.cand_v.swap(k - 1, k);
                self.cand_step.swap(k - 1, k);
                k -= 1;
            }
        }
        self.cand_count[level] = count;
        self.cursor[level] = 0;
    }

    /// Reduced cost of row `i`, column `j` of the last assignment solved by [`Search::bound`].
    fn reduced_cost(&self, i: usize, j: usize) -> f64 {
        self.lsap.reduced_cost(&self.matrix, i, j)
    }

    fn result(&self, exact: bool, lower_bound: f64, expanded: u64) -> GedResult {
        GedResult {
            distance: self.ub,
            lower_bound: if exact {
                self.ub
            } else {
                lower_bound.min(self.ub)
            },
            exact,
            expanded,
            mapping: self.best_map.clone(),
        }
    }

    fn run(mut self, budget: u64) -> GedResult {
        // The trivial edit path (delete everything, insert everything) caps every answer.
        self.comp_map.fill(EPS);
        self.ub = self.full_cost();
        self.best_map.fill(EPS);
        let root_bound = self.bound();
        self.try_completion();
        if self.n1 == 0 || root_bound >= self.ub {
            return self.result(true, self.ub, 0);
        }
        if budget == 0 {
            return self.result(false, root_bound, 0);
        }
        let mut expanded = 1u64;
        self.g[0] = 0.0;
        self.expand(0, root_bound);
        let mut depth = 0usize;
        loop {
            let k = self.cursor[depth];
            let slot = depth * self.stride + k;
            if k < self.cand_count[depth] && self.cand_f[slot] < self.ub {
                let u = self.level_node[depth];
                let v = self.cand_v[slot];
                if depth + 1 == self.n1 {
                    self.cursor[depth] += 1;
                    self.assign(u, v);
                    self.comp_map.copy_from_slice(&self.map1);
                    let cost = self.full_cost();
                    if cost < self.ub {
                        self.ub = cost;
                        self.best_map.copy_from_slice(&self.map1);
                    }
                    self.unassign(u);
                    continue;
                }
                if expanded >= budget {
                    let mut frontier = f64::INFINITY;
                    for level in 0..=depth {
                        let k = self.cursor[level];
                        if k < self.cand_count[level] {
                            frontier = frontier.min(self.cand_f[level * self.stride + k]);
                        }
                    }
                    return self.result(false, frontier.max(root_bound), expanded);
                }
                self.cursor[depth] += 1;
                self.assign(u, v);
                self.g[depth + 1] = self.g[depth] + self.cand_step[slot];
                expanded += 1;
                let f = self.g[depth + 1] + self.bound();
                self.try_completion();
                if f >= self.ub {
                    self.unassign(u);
                    continue;
                }
                self.expand(depth + 1, f);
                depth += 1;
            } else {
                if depth == 0 {
                    break;
                }
                depth -= 1;
                let u = self.level_node[depth];
                self.unassign(u);
            }
        }
        self.result(true, self.ub, expanded)
    }
}

/// Lower bound on the cost of matching the edge classes `a` (graph 1) against `b` (graph 2):
/// each edge pays at least its cheapest option, and the surplus edges of the larger side are
/// deleted (inserted), paying their cheapest extra.
fn match_bound(
    a: &[i32],
    b: &[i32],
    edge_pair: &[f64],
    edge_del: &[f64],
    edge_ins: &[f64],
    c2: usize,
    excess: &mut [f64],
) -> f64 {
    let (na, nb) = (a.len(), b.len());
    let mut side1 = 0.0;
    for (i, &x) in a.iter().enumerate() {
        let x = x as usize;
        let mut best = edge_del[x];
        for &y in b {
            best = best.min(edge_pair[x * c2 + y as usize]);
        }
        side1 += best;
        excess[i] = edge_del[x] - best;
    }
    if na > nb {
        side1 += smallest_sum(&mut excess[..na], na - nb);
    }
    let mut side2 = 0.0;
    for (j, &y) in b.iter().enumerate() {
        let y = y as usize;
        let mut best = edge_ins[y];
        for &x in a {
            best = best.min(edge_pair[x as usize * c2 + y]);
        }
        side2 += best;
        excess[j] = edge_ins[y] - best;
    }
    if nb > na {
        side2 += smallest_sum(&mut excess[..nb], nb - na);
    }
    side1.max(side2)
}

/// Sum of the `k` smallest values of `values` (reorders `values`).
fn smallest_sum(values: &mut [f64], k: usize) -> f64 {
    let mut total = 0.0;
    for t in 0..k {
        let mut best = t;
        for i in t + 1..values.len() {
            if values[i] < values[best] {
                best = i;
            }
        }
        values.swap(t, best);
        total += values[t];
    }
    total
}
