//! Graph edit distance family: exact GED of small attributed graphs under arbitrary
//! non-negative costs, with a deterministic search budget.
//!
//! Owns the cost model's *mechanics* (node substitution/deletion/insertion tables, edge classes with
//! class cost tables) and the search; it knows nothing of node ids, attributes or Python. Callers
//! turn attributes into cost tables once (see `scorekit.graphs` and `scorekit.metrics.graphs`).
//!
//! # Model
//! Graph 1 has `n1` nodes, graph 2 has `n2` nodes, both simple (at most one edge per ordered pair
//! when directed, per unordered pair when undirected; self-loops allowed). Every edge carries a
//! class id; `edge_sub[c1 * n_class2 + c2]`, `edge_del[c1]`, `edge_ins[c2]` give its costs (an
//! explicit per-edge table is the special case of one class per edge). An edit path is a partial
//! injective node map `f` from graph 1 to graph 2; its cost is
//! * `node_sub[u, f(u)]` for mapped nodes, `node_del[u]` for unmapped graph-1 nodes and
//!   `node_ins[v]` for graph-2 nodes outside the image;
//! * for a graph-1 edge `(u, w)` whose endpoints are both mapped and `(f(u), f(w))` is an edge of
//!   graph 2 (same direction when directed): `min(edge_sub, edge_del + edge_ins)`; every other
//!   graph-1 edge is deleted and every graph-2 edge that is not such an image is inserted.
//!
//! The distance is the minimum cost over all edit paths: the value `networkx.graph_edit_distance`
//! computes for simple graphs with the same cost functions, outside networkx's known corner-case
//! bugs (see `scorekit.graphs`).
//!
//! # Search
//! Depth-first branch and bound over the graph-1 nodes, each assigned to a free graph-2 node or
//! deleted; the node decided next is the one whose second-cheapest choice costs most under the
//! current bound (fail first), ties going to higher degree. The lower bound of a partial map is exact for everything already
//! decided plus an assignment bound ([`lsap`]) on the undecided nodes: each pair's cost is its node
//! cost, the exact cost of its edges towards decided nodes, and half of a bound on matching its
//! edges among undecided nodes. A visited state solves that assignment once; its children are
//! bounded by the state's bound plus their reduced costs under the optimal duals (valid by LP
//! duality, and free), visited cheapest first, and re-bounded with their own assignment when
//! visited. The assignment found by every bound is completed into a full edit path and costed
//! exactly, which gives the upper bound (Riesen–Bunke at the root, after the trivial delete-all /
//! insert-all path, so the answer never exceeds that path's cost). The explicit per-level
//! candidate stack means no recursion and no allocation after setup.
//!
//! # Budget
//! `budget` caps the number of expanded states (a state is expanded when it is visited: its
//! assignment bound is solved and, unless pruned, its children generated). When the cap is hit the
//! result has `exact = false`, `distance` = the best edit path found and `lower_bound` = the
//! minimum bound over the unexplored frontier. Nothing depends on time
//! or threads.

mod lsap;
mod search;

pub use search::graph_edit_distance;

use std::fmt;

/// One edge: `(source, target, class)`; indices into the graph's nodes and its class table.
pub type Edge = (u32, u32, u32);

/// The full input of one GED problem (see the module docs for the model).
#[derive(Clone, Copy, Debug)]
pub struct GedProblem<'a> {
    pub n1: usize,
    pub n2: usize,
    /// Row-major `n1 × n2`.
    pub node_sub: &'a [f64],
    pub node_del: &'a [f64],
    pub node_ins: &'a [f64],
    pub edges1: &'a [Edge],
    pub edges2: &'a [Edge],
    pub n_class1: usize,
    pub n_class2: usize,
    /// Row-major `n_class1 × n_class2`.
    pub edge_sub: &'a [f64],
    pub edge_del: &'a [f64],
    pub edge_ins: &'a [f64],
    pub directed: bool,
}

/// Outcome of [`graph_edit_distance`].
#[derive(Clone, Debug, PartialEq)]
pub struct GedResult {
    /// Cost of the best edit path found (the exact distance when `exact`).
    pub distance: f64,
    /// Proven lower bound on the distance (equal to `distance` when `exact`).
    pub lower_bound: f64,
    /// `true` when the search completed within the budget.
    pub exact: bool,
    /// Number of states expanded.
    pub expanded: u64,
    /// Best edit path: `mapping[u]` is the graph-2 node of graph-1 node `u`, or -1 if deleted.
    pub mapping: Vec<i64>,
}

/// Invalid input, with a message naming the argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GedError(pub String);

impl fmt::Display for GedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GedError {}

fn check_len(name: &str, got: usize, want: usize) -> Result<(), GedError> {
    if got != want {
        return Err(GedError(format!(
            "{name} must have {want} entries, got {got}"
        )));
    }
    Ok(())
}

fn check_costs(name: &str, costs: &[f64]) -> Result<(), GedError> {
    for (i, &c) in costs.iter().enumerate() {
        if !c.is_finite() || c < 0.0 {
            return Err(GedError(format!(
                "{name} must hold finite non-negative costs, got {c} at index {i}"
            )));
        }
    }
    Ok(())
}

fn check_edges(
    name: &str,
    edges: &[Edge],
    n: usize,
    n_class: usize,
    directed: bool,
) -> Result<(), GedError> {
    let mut seen = vec![false; n * n];
    for (k, &(s, d, c)) in edges.iter().enumerate() {
        let (s, d, c) = (s as usize, d as usize, c as usize);
        if s >= n || d >= n {
            return Err(GedError(format!(
                "{name}[{k}] = ({s}, {d}) refers to a node outside 0..{n}"
            )));
        }
        if c >= n_class {
            return Err(GedError(format!(
                "{name}[{k}] has edge class {c}, outside 0..{n_class}"
            )));
        }
        let (a, b) = if directed || s <= d { (s, d) } else { (d, s) };
        if seen[a * n + b] {
            return Err(GedError(format!(
                "{name}[{k}] = ({s}, {d}) duplicates an earlier edge (graphs must be simple)"
            )));
        }
        seen[a * n + b] = true;
    }
    Ok(())
}

impl GedProblem<'_> {
    /// Check sizes, index ranges, simplicity and that every cost is finite and non-negative.
    pub fn validate(&self) -> Result<(), GedError> {
        check_len("node_sub", self.node_sub.len(), self.n1 * self.n2)?;
        check_len("node_del", self.node_del.len(), self.n1)?;
        check_len("node_ins", self.node_ins.len(), self.n2)?;
        check_len(
            "edge_sub",
            self.edge_sub.len(),
            self.n_class1 * self.n_class2,
        )?;
        check_len("edge_del", self.edge_del.len(), self.n_class1)?;
        check_len("edge_ins", self.edge_ins.len(), self.n_class2)?;
        check_costs("node_sub", self.node_sub)?;
        check_costs("node_del", self.node_del)?;
        check_costs("node_ins", self.node_ins)?;
        check_costs("edge_sub", self.edge_sub)?;
        check_costs("edge_del", self.edge_del)?;
        check_costs("edge_ins", self.edge_ins)?;
        check_edges("edges1", self.edges1, self.n1, self.n_class1, self.directed)?;
        check_edges("edges2", self.edges2, self.n2, self.n_class2, self.directed)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
