//! ANLS* over answer trees held in one flat arena per batch: listing the leaf pairs a score
//! compares ([`Arena::collect`]), scoring once their similarities are known ([`Scorer`]), and the
//! list pairing solver ([`assign`], with the shortcut [`distinct_cheapest`]).
//!
//! This is the compiled twin of the trees of `scorekit.metrics.anls` (`_Reader.collect`,
//! `_Scorer`, `assign`): the same traversal order, the same float operations in the same order
//! (sums as the interpreter's `sum` adds floats, `nextafter` for exact list items), the same
//! tie-breaking, so both give bit-identical values. The arena is filled by a reader (the
//! bindings read Python objects into it); leaves are known by raw id, and two leaves with the same
//! raw id are the same text (a `str`) or the same object (any other leaf).

use std::collections::HashMap;

use crate::bootstrap::{sum, Summation};

/// The node every arena starts with: `None`, also the "missing answer" a dict key is scored against.
pub const NULL: u32 = 0;
/// In [`Arena::matches`]: a gold key absent from the predicted dict.
const NO_MATCH: u32 = u32::MAX;
/// Below this many key comparisons two dicts are matched by scanning, above it by hashing.
const SCAN_KEYS: usize = 64;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A plain answer; `start` is its raw id.
    Leaf,
    /// `None`.
    Null,
    /// Items `kids[start..start + len]`.
    List,
    /// Values `kids[start..start + len]` under keys `keys[start..start + len]`.
    Dict,
    /// Alternatives `kids[start..start + len]` (gold only, never empty).
    Tuple,
}

/// One node of an answer tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    pub kind: Kind,
    pub start: u32,
    pub len: u32,
    /// The leaves under a list or dict (summed), the largest alternative's size for a tuple.
    pub size: u64,
}

impl Node {
    pub const NULL: Node = Node {
        kind: Kind::Null,
        start: 0,
        len: 0,
        size: 1,
    };

    pub fn leaf(raw: u32) -> Node {
        Node {
            kind: Kind::Leaf,
            start: raw,
            len: 0,
            size: 1,
        }
    }

    /// The size a comparison counts: 1 for a leaf or `None`.
    pub fn weight(&self) -> u64 {
        match self.kind {
            Kind::Leaf | Kind::Null => 1,
            _ => self.size,
        }
    }
}

/// The value of a leaf, by raw id, as far as Python's `==` between leaves needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leaf {
    /// A `str` (equal to another leaf exactly when it has the same raw id).
    Text {
        empty: bool,
    },
    /// An `int` or `bool` that fits 64 bits.
    Int(i64),
    Float(f64),
    /// Anything else (a large `int`): compared by the caller's `equal_others`.
    Other,
}

/// A dict key, canonical: two keys are the same Python dict key exactly when they are equal here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A `str`, by its id among the key texts.
    Text(u32),
    /// An `int`, a `bool`, or an integral `float` that fits 64 bits.
    Int(i64),
    /// Any other `float` but NaN, by its bits.
    Float(u64),
    /// A key equal only to itself (a NaN), by identity.
    Object(usize),
    Null,
}

/// One scored pair of answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    pub gold: u32,
    pub pred: u32,
    /// Its first leaf pair in [`Arena::left`] / [`Arena::right`].
    pub pairs: usize,
    /// Its first entry in [`Arena::matches`].
    pub matches: usize,
}

/// The answer trees of a batch and what scoring them compares.
#[derive(Debug, Default)]
pub struct Arena {
    /// The largest gold-items × predicted-items product of one list-against-list comparison.
    pub max_cells: u64,
    /// Node 0 is [`NULL`].
    pub nodes: Vec<Node>,
    pub kids: Vec<u32>,
    /// In step with `kids` (entries under lists and tuples are unused).
    pub keys: Vec<Key>,
    /// By raw id.
    pub leaves: Vec<Leaf>,
    /// Leaf pair `i` is gold raw id `left[i]` against predicted raw id `right[i]`.
    pub left: Vec<u32>,
    pub right: Vec<u32>,
    /// Per dict-against-dict comparison: for each gold key the index of the predicted key equal
    /// to it (or `NO_MATCH`), then for each predicted key 1 when the gold has no such key.
    pub matches: Vec<u32>,
    pub items: Vec<Item>,
}

/// Why a batch could not be scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreError {
    /// Item `item` pairs a list of `gold` items with one of `pred` items, more than
    /// [`Arena::max_cells`] comparisons.
    Cells { item: usize, gold: u64, pred: u64 },
    /// `equal_others` failed on item `item`.
    Compare { item: usize },
    /// The similarities or the arena do not fit together (a caller bug).
    Inconsistent,
}

impl Arena {
    pub fn new(max_cells: u64) -> Arena {
        Arena {
            max_cells,
            nodes: vec![Node::NULL],
            ..Arena::default()
        }
    }

    /// A new leaf (its raw id the next one): its node.
    #[inline]
    pub fn push_leaf(&mut self, leaf: Leaf) -> u32 {
        let raw = self.leaves.len() as u32;
        self.leaves.push(leaf);
        self.nodes.push(Node::leaf(raw));
        self.nodes.len() as u32 - 1
    }

    /// A new list, dict or tuple over `children` (`(node, key)`, keys used under a dict only):
    /// its node. Its size is the sum of the children's weights, for a tuple their largest.
    pub fn push_container(
        &mut self,
        kind: Kind,
        children: impl IntoIterator<Item = (u32, Key)>,
    ) -> u32 {
        debug_assert!(matches!(kind, Kind::List | Kind::Dict | Kind::Tuple));
        let start = self.kids.len() as u32;
        let mut size = 0;
        for (node, key) in children {
            let weight = self.nodes[node as usize].weight();
            size = if kind == Kind::Tuple {
                weight.max(size)
            } else {
                size + weight
            };
            self.kids.push(node);
            self.keys.push(key);
        }
        let len = self.kids.len() as u32 - start;
        self.nodes.push(Node {
            kind,
            start,
            len,
            size,
        });
        self.nodes.len() as u32 - 1
    }

    /// Add item `(gold, pred)`: list its leaf pairs and key matches, in the order the scorer
    /// uses them (a list comparison beyond `max_cells` lists nothing: scoring stops there).
    pub fn add_item(&mut self, gold: u32, pred: u32) {
        self.items.push(Item {
            gold,
            pred,
            pairs: self.left.len(),
            matches: self.matches.len(),
        });
        self.collect(gold, pred);
    }

    fn collect(&mut self, g: u32, p: u32) {
        let (gn, pn) = (self.nodes[g as usize], self.nodes[p as usize]);
        match (gn.kind, pn.kind) {
            (Kind::Leaf, Kind::Leaf) => {
                self.left.push(gn.start);
                self.right.push(pn.start);
            }
            (Kind::Tuple, _) => {
                for i in range(gn) {
                    self.collect(self.kids[i], p);
                }
            }
            (Kind::List, Kind::List) => {
                if u64::from(gn.len) * u64::from(pn.len) > self.max_cells {
                    return;
                }
                for i in range(gn) {
                    for j in range(pn) {
                        self.collect(self.kids[i], self.kids[j]);
                    }
                }
            }
            (Kind::Dict, Kind::Dict) => {
                let at = self.matches.len();
                self.match_keys(gn, pn);
                for (i, k) in range(gn).enumerate() {
                    let j = self.matches[at + i];
                    if j != NO_MATCH {
                        self.collect(self.kids[k], self.kids[pn.start as usize + j as usize]);
                    }
                }
            }
            _ => {}
        }
    }

    fn match_keys(&mut self, gn: Node, pn: Node) {
        let (g_keys, p_keys) = (&self.keys[range(gn)], &self.keys[range(pn)]);
        let at = self.matches.len();
        self.matches.resize(at + g_keys.len(), NO_MATCH);
        self.matches.resize(at + g_keys.len() + p_keys.len(), 1);
        let (gold, extra) = self.matches[at..].split_at_mut(g_keys.len());
        if g_keys.len() * p_keys.len() <= SCAN_KEYS {
            for (i, key) in g_keys.iter().enumerate() {
                if let Some(j) = p_keys.iter().position(|k| k == key) {
                    gold[i] = j as u32;
                    extra[j] = 0;
                }
            }
        } else {
            let index: HashMap<Key, u32> = p_keys.iter().zip(0..).map(|(&k, j)| (k, j)).collect();
            for (i, key) in g_keys.iter().enumerate() {
                if let Some(&j) = index.get(key) {
                    gold[i] = j;
                    extra[j as usize] = 0;
                }
            }
        }
    }

    /// Whether a node is an empty answer: `None`, `""`, `[]` or `{}`.
    fn noney(&self, node: Node) -> bool {
        match node.kind {
            Kind::Null => true,
            Kind::Leaf => self.leaves[node.start as usize] == Leaf::Text { empty: true },
            _ => node.len == 0,
        }
    }
}

fn range(node: Node) -> std::ops::Range<usize> {
    node.start as usize..node.start as usize + node.len as usize
}

/// Python's `int == float`: exact.
fn int_equals_float(i: i64, f: f64) -> bool {
    crate::exact_i64(f) == Some(i)
}

/// `(leaf similarities appended to the output, size, exact)` of one comparison; `exact` is 1 when
/// the resolved gold equals the prediction, 2 when they are only the same object (a NaN leaf),
/// else 0.
type Outcome = Result<(u64, u8), ScoreError>;

/// Scores the items of an [`Arena`] once the similarity of every listed leaf pair is known.
pub struct Scorer<'a, E> {
    arena: &'a Arena,
    sims: &'a [f64],
    /// The similarity of two equal texts (0.0 when the threshold is above 1).
    same: f64,
    summation: Summation,
    /// `Some(equal)` / `None` (failed) for two leaves of which one is [`Leaf::Other`].
    equal_others: E,
    item: usize,
    pair_at: usize,
    match_at: usize,
}

impl<'a, E: FnMut(u32, u32) -> Option<bool>> Scorer<'a, E> {
    /// `sims[i]` is the thresholded similarity of leaf pair `i`.
    pub fn new(
        arena: &'a Arena,
        sims: &'a [f64],
        same: f64,
        summation: Summation,
        equal_others: E,
    ) -> Self {
        Scorer {
            arena,
            sims,
            same,
            summation,
            equal_others,
            item: 0,
            pair_at: 0,
            match_at: 0,
        }
    }

    /// The ANLS* of item `k`.
    pub fn score(&mut self, k: usize) -> Result<f64, ScoreError> {
        let item = self.arena.items[k];
        self.item = k;
        self.pair_at = item.pairs;
        self.match_at = item.matches;
        let mut sims = Vec::new();
        let (size, _) = self.pair(item.gold, item.pred, &mut sims)?;
        Ok(self.average(&sims, size))
    }

    fn average(&self, sims: &[f64], size: u64) -> f64 {
        if size == 0 {
            1.0
        } else {
            sum(sims, self.summation) / size as f64
        }
    }

    fn node(&self, id: u32) -> Node {
        self.arena.nodes[id as usize]
    }

    fn kid(&self, node: Node, i: usize) -> u32 {
        self.arena.kids[node.start as usize + i]
    }

    /// The similarity of the next listed leaf pair, gold raw id `a` against predicted `b`.
    fn next_sim(&mut self, a: u32, b: u32) -> Result<f64, ScoreError> {
        let i = self.pair_at;
        let arena = self.arena;
        if i >= self.sims.len() || arena.left[i] != a || arena.right[i] != b {
            return Err(ScoreError::Inconsistent);
        }
        self.pair_at += 1;
        Ok(if a == b { self.same } else { self.sims[i] })
    }

    /// Python's `==` between the leaves with raw ids `a` and `b`.
    fn equal(&mut self, a: u32, b: u32) -> Result<bool, ScoreError> {
        let leaves = &self.arena.leaves;
        Ok(match (leaves[a as usize], leaves[b as usize]) {
            (Leaf::Text { .. }, Leaf::Text { .. }) => a == b,
            (Leaf::Text { .. }, _) | (_, Leaf::Text { .. }) => false,
            (Leaf::Int(x), Leaf::Int(y)) => x == y,
            (Leaf::Int(i), Leaf::Float(f)) | (Leaf::Float(f), Leaf::Int(i)) => {
                int_equals_float(i, f)
            }
            (Leaf::Float(x), Leaf::Float(y)) => x == y,
            _ => (self.equal_others)(a, b).ok_or(ScoreError::Compare { item: self.item })?,
        })
    }

    fn pair(&mut self, g: u32, p: u32, out: &mut Vec<f64>) -> Outcome {
        let (gn, pn) = (self.node(g), self.node(p));
        match (gn.kind, pn.kind) {
            (Kind::Leaf, Kind::Leaf) => {
                let (a, b) = (gn.start, pn.start);
                out.push(self.next_sim(a, b)?);
                let exact = if self.equal(a, b)? {
                    1
                } else if a == b {
                    2 // the same object (a NaN): raw ids of other leaves go by identity
                } else {
                    0
                };
                Ok((1, exact))
            }
            (Kind::Null, _) => {
                let empty = self.arena.noney(pn);
                out.push(if empty { 1.0 } else { 0.0 });
                Ok((pn.weight().max(1), u8::from(empty)))
            }
            (Kind::Tuple, _) => self
                .choose(gn, p, out)
                .map(|(size, exact, _)| (size, exact)),
            (Kind::List, Kind::List) => self.lists(gn, pn, out),
            (Kind::Dict, Kind::Dict) => self.dicts(gn, pn, out),
            (Kind::Leaf, _) => {
                out.push(0.0);
                Ok((pn.weight().max(1), 0))
            }
            _ => {
                out.push(0.0);
                Ok((gn.size.max(pn.weight()), 0))
            }
        }
    }

    /// `(size, exact, option)` of the alternative of `tuple` with the best average against `p`
    /// (ties: the first exact one, then the first), its similarities appended to `out`.
    fn choose(
        &mut self,
        tuple: Node,
        p: u32,
        out: &mut Vec<f64>,
    ) -> Result<(u64, u8, u32), ScoreError> {
        let base = out.len();
        let mut best: Option<(f64, u64, u8, u32)> = None;
        for i in 0..tuple.len as usize {
            let option = self.kid(tuple, i);
            let start = out.len();
            let (size, exact) = self.pair(option, p, out)?;
            let avg = self.average(&out[start..], size);
            let better = match best {
                None => true,
                Some((best_avg, _, best_exact, _)) => {
                    avg > best_avg || (avg == best_avg && exact == 1 && best_exact != 1)
                }
            };
            if better {
                let len = out.len() - start;
                out.copy_within(start.., base);
                out.truncate(base + len);
                best = Some((avg, size, exact, option));
            } else {
                out.truncate(start);
            }
        }
        let (_, size, exact, option) = best.ok_or(ScoreError::Inconsistent)?;
        Ok((size, exact, option))
    }

    /// Whether gold `g`, resolved against a missing answer, is itself an empty answer.
    fn resolves_empty(&mut self, mut g: u32) -> Result<bool, ScoreError> {
        let mut scratch = Vec::new();
        while self.node(g).kind == Kind::Tuple {
            scratch.clear();
            g = self.choose(self.node(g), NULL, &mut scratch)?.2;
        }
        Ok(self.arena.noney(self.node(g)))
    }

    fn total_weight(&self, node: Node) -> u64 {
        (0..node.len as usize)
            .map(|i| self.node(self.kid(node, i)).weight())
            .sum()
    }

    fn lists(&mut self, gn: Node, pn: Node, out: &mut Vec<f64>) -> Outcome {
        let (k, m) = (gn.len as usize, pn.len as usize);
        if k == 0 || m == 0 {
            return Ok((
                self.total_weight(gn) + self.total_weight(pn),
                u8::from(k == m),
            ));
        }
        if (k as u64) * (m as u64) > self.arena.max_cells {
            return Err(ScoreError::Cells {
                item: self.item,
                gold: k as u64,
                pred: m as u64,
            });
        }
        let base = out.len();
        let mut results = Vec::with_capacity(k * m); // (first similarity, size, exact)
        let mut profits = Vec::with_capacity(k * m);
        for i in 0..k {
            let gc = self.kid(gn, i);
            for j in 0..m {
                let start = out.len();
                let (size, exact) = self.pair(gc, self.kid(pn, j), out)?;
                let avg = self.average(&out[start..], size);
                profits.push(if exact == 1 { avg.next_up() } else { avg });
                results.push((start, size, exact));
            }
        }
        let top = profits
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a });
        let costs: Vec<f64> = profits.iter().map(|&x| top - x).collect();
        let pairs = distinct_cheapest(&costs, k, m).unwrap_or_else(|| assign(&costs, k, m));
        let end_of = |r: usize| {
            results
                .get(r + 1)
                .map_or(out.len(), |next: &(usize, u64, u8)| next.0)
        };
        let mut chosen = Vec::new();
        let (mut size, mut exact, mut paired) = (0, k == m, 0);
        for &(i, j) in &pairs {
            let r = i * m + j;
            let (start, r_size, r_exact) = results[r];
            chosen.extend_from_slice(&out[start..end_of(r)]);
            size += r_size;
            exact = exact && r_exact > 0;
            paired += self.node(self.kid(gn, i)).weight() + self.node(self.kid(pn, j)).weight();
        }
        out.truncate(base);
        out.extend_from_slice(&chosen);
        if k != m {
            size += self.total_weight(gn) + self.total_weight(pn) - paired;
        }
        Ok((size, u8::from(exact)))
    }

    fn dicts(&mut self, gn: Node, pn: Node, out: &mut Vec<f64>) -> Outcome {
        let at = self.match_at;
        let (k, m) = (gn.len as usize, pn.len as usize);
        if at + k + m > self.arena.matches.len() {
            return Err(ScoreError::Inconsistent);
        }
        self.match_at += k + m;
        let (mut size, mut exact) = (0, true);
        for i in 0..k {
            let gc = self.kid(gn, i);
            let j = self.arena.matches[at + i];
            if j == NO_MATCH {
                size += self.pair(gc, NULL, out)?.0;
                exact = exact && self.resolves_empty(gc)?;
                continue;
            }
            let pc = self.kid(pn, j as usize);
            let (g_node, p_node) = (self.node(gc), self.node(pc));
            if g_node.kind == Kind::Leaf && p_node.kind == Kind::Leaf {
                let (a, b) = (g_node.start, p_node.start);
                out.push(self.next_sim(a, b)?);
                size += 1;
                exact = exact && (self.equal(a, b)? || a == b);
            } else {
                let (r_size, r_exact) = self.pair(gc, pc, out)?;
                size += r_size;
                exact = exact && r_exact > 0;
            }
        }
        for j in 0..m {
            if self.arena.matches[at + k + j] == 1 {
                exact = false;
                let p_node = self.node(self.kid(pn, j));
                size += p_node.weight().max(1);
                if !self.arena.noney(p_node) {
                    out.push(0.0);
                }
            }
        }
        Ok((size, u8::from(exact)))
    }
}

/// The first smallest value of a line (Python's `min`).
fn first_min(line: impl Iterator<Item = f64>) -> f64 {
    line.fold(
        f64::NAN,
        |low, x| if low.is_nan() || x < low { x } else { low },
    )
}

/// Minimum-cost pairing of the rows and columns of a `n_rows × n_cols` cost matrix (row-major):
/// `min(n_rows, n_cols)` pairs `(row, column)`, sorted by row. Exact ties are broken as the
/// pure-Python solver of `munkres` 3 breaks them (the twin of `scorekit.metrics.anls.assign`):
/// rows (columns, for a matrix with more rows than columns) are taken in order, each first takes
/// the first free column at its minimum, and the rest are added by shortest augmenting paths over
/// the columns in index order.
pub fn assign(costs: &[f64], n_rows: usize, n_cols: usize) -> Vec<(usize, usize)> {
    if n_rows == 0 || n_cols == 0 {
        return Vec::new();
    }
    let transposed = n_rows > n_cols;
    let (n, m) = if transposed {
        (n_cols, n_rows)
    } else {
        (n_rows, n_cols)
    };
    let rows: Vec<f64> = if transposed {
        (0..n)
            .flat_map(|i| (0..m).map(move |j| costs[j * n_cols + i]))
            .collect()
    } else {
        costs.to_vec()
    };
    let mut solver = Solver {
        rows: &rows,
        m,
        u: vec![0.0; n],
        v: vec![0.0; m],
        row_of: vec![usize::MAX; m],
        col_of: vec![usize::MAX; n],
    };
    for i in 0..n {
        let row = &rows[i * m..(i + 1) * m];
        let low = first_min(row.iter().copied());
        solver.u[i] = low;
        if let Some(j) = (0..m).find(|&j| row[j] == low && solver.row_of[j] == usize::MAX) {
            solver.row_of[j] = i;
            solver.col_of[i] = j;
        }
    }
    for i in 0..n {
        if solver.col_of[i] == usize::MAX {
            solver.augment(i);
        }
    }
    let mut pairs: Vec<(usize, usize)> = if transposed {
        solver
            .col_of
            .iter()
            .enumerate()
            .map(|(i, &j)| (j, i))
            .collect()
    } else {
        solver.col_of.iter().copied().enumerate().collect()
    };
    pairs.sort_unstable();
    pairs
}

struct Solver<'a> {
    rows: &'a [f64],
    m: usize,
    u: Vec<f64>,
    v: Vec<f64>,
    row_of: Vec<usize>,
    col_of: Vec<usize>,
}

impl Solver<'_> {
    /// Add row `start` along a shortest augmenting path (Dijkstra over reduced costs, columns
    /// scanned in index order, the first column at the minimum taken).
    fn augment(&mut self, start: usize) {
        const FREE: usize = usize::MAX;
        let m = self.m;
        let mut dist = vec![f64::INFINITY; m];
        let mut via = vec![FREE; m]; // FREE: reached from `start`
        let mut done = vec![false; m];
        let (mut seen_rows, mut seen_cols) = (vec![start], Vec::new());
        let (mut row, mut came_from) = (start, FREE);
        let last = loop {
            let (costs, ur) = (&self.rows[row * m..(row + 1) * m], self.u[row]);
            let (mut delta, mut next) = (f64::INFINITY, FREE);
            for j in 0..m {
                if !done[j] {
                    let reduced = costs[j] - ur - self.v[j];
                    if reduced < dist[j] {
                        dist[j] = reduced;
                        via[j] = came_from;
                    }
                    if dist[j] < delta {
                        delta = dist[j];
                        next = j;
                    }
                }
            }
            if next == FREE {
                return; // only non-finite costs left: nothing to pair (finite costs never get here)
            }
            for &r in &seen_rows {
                self.u[r] += delta;
            }
            for &j in &seen_cols {
                self.v[j] -= delta;
            }
            for j in 0..m {
                if !done[j] {
                    dist[j] -= delta;
                }
            }
            done[next] = true;
            seen_cols.push(next);
            if self.row_of[next] == FREE {
                break next;
            }
            row = self.row_of[next];
            came_from = next;
            seen_rows.push(row);
        };
        let mut j = last;
        loop {
            let back = via[j];
            let r = if back == FREE {
                start
            } else {
                self.row_of[back]
            };
            self.row_of[j] = r;
            self.col_of[r] = j;
            if back == FREE {
                return;
            }
            j = back;
        }
    }
}

/// The pairing [`assign`] returns, found without it when it is obvious (the twin of
/// `_distinct_cheapest`): along the shorter side each line has one strictly cheapest entry and
/// no two lines share the other index, so the optimum is unique. `None` otherwise.
pub fn distinct_cheapest(
    costs: &[f64],
    n_rows: usize,
    n_cols: usize,
) -> Option<Vec<(usize, usize)>> {
    let by_rows = n_rows <= n_cols;
    let (lines, width) = if by_rows {
        (n_rows, n_cols)
    } else {
        (n_cols, n_rows)
    };
    let at = |line: usize, i: usize| {
        if by_rows {
            costs[line * n_cols + i]
        } else {
            costs[i * n_cols + line]
        }
    };
    let mut taken = vec![false; width];
    let mut pairs = Vec::with_capacity(lines);
    for line in 0..lines {
        let low = first_min((0..width).map(|i| at(line, i)));
        let mut cheapest = (0..width).filter(|&i| at(line, i) == low);
        let pick = cheapest.next()?;
        if cheapest.next().is_some() || taken[pick] {
            return None;
        }
        taken[pick] = true;
        pairs.push(if by_rows { (line, pick) } else { (pick, line) });
    }
    pairs.sort_unstable();
    Some(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(costs: &[f64], n_rows: usize, n_cols: usize) -> f64 {
        fn go(
            costs: &[f64],
            n_cols: usize,
            row: usize,
            n_rows: usize,
            used: &mut Vec<bool>,
        ) -> f64 {
            if row == n_rows {
                return 0.0;
            }
            let mut best = f64::INFINITY;
            for j in 0..n_cols {
                if !used[j] {
                    used[j] = true;
                    best = best
                        .min(costs[row * n_cols + j] + go(costs, n_cols, row + 1, n_rows, used));
                    used[j] = false;
                }
            }
            best
        }
        if n_rows <= n_cols {
            go(costs, n_cols, 0, n_rows, &mut vec![false; n_cols])
        } else {
            let t: Vec<f64> = (0..n_cols)
                .flat_map(|j| (0..n_rows).map(move |i| costs[i * n_cols + j]))
                .collect();
            go(&t, n_rows, 0, n_cols, &mut vec![false; n_rows])
        }
    }

    #[test]
    fn containers_count_their_leaves() {
        let mut arena = Arena::new(100);
        let (a, b) = (
            arena.push_leaf(Leaf::Int(1)),
            arena.push_leaf(Leaf::Text { empty: false }),
        );
        assert_eq!((a, b), (1, 2));
        assert_eq!(arena.nodes[2], Node::leaf(1));
        let list = arena.push_container(
            Kind::List,
            [(a, Key::Null), (b, Key::Null), (NULL, Key::Null)],
        );
        assert_eq!(arena.nodes[list as usize].size, 3);
        let dict = arena.push_container(Kind::Dict, [(list, Key::Text(0)), (a, Key::Int(2))]);
        assert_eq!(arena.nodes[dict as usize].size, 4);
        assert_eq!(arena.keys[3..], [Key::Text(0), Key::Int(2)]);
        let tuple = arena.push_container(
            Kind::Tuple,
            [(a, Key::Null), (dict, Key::Null), (list, Key::Null)],
        );
        let node = arena.nodes[tuple as usize];
        assert_eq!((node.size, node.start, node.len), (4, 5, 3));
        assert_eq!(arena.kids, [a, b, NULL, list, a, a, dict, list]);
        let empty = arena.push_container(Kind::List, []);
        assert_eq!(
            (
                arena.nodes[empty as usize].size,
                arena.nodes[empty as usize].len
            ),
            (0, 0)
        );
    }

    #[test]
    fn assign_examples() {
        let costs = [4.0, 1.0, 3.0, 2.0, 0.0, 5.0, 3.0, 2.0, 2.0];
        assert_eq!(assign(&costs, 3, 3), vec![(0, 1), (1, 0), (2, 2)]);
        assert_eq!(
            assign(&[1.0, 1.0, 1.0, 1.0, 0.0, 0.0], 3, 2),
            vec![(0, 1), (2, 0)]
        );
        assert_eq!(assign(&[], 0, 3), vec![]);
    }

    #[test]
    fn assign_is_optimal_and_the_shortcut_agrees() {
        let mut state = 7u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut shortcuts = 0;
        for _ in 0..3000 {
            let (r, c) = (next(5) as usize + 1, next(5) as usize + 1);
            let costs: Vec<f64> = (0..r * c).map(|_| next(4) as f64 * 0.25).collect();
            let pairs = assign(&costs, r, c);
            assert_eq!(pairs.len(), r.min(c));
            let total: f64 = pairs.iter().map(|&(i, j)| costs[i * c + j]).sum();
            assert_eq!(total, brute_force(&costs, r, c));
            if let Some(quick) = distinct_cheapest(&costs, r, c) {
                shortcuts += 1;
                assert_eq!(quick, pairs);
            }
        }
        assert!(shortcuts > 300);
    }

    #[test]
    fn python_int_float_equality() {
        assert!(
            int_equals_float(1, 1.0) && int_equals_float(-3, -3.0) && int_equals_float(0, -0.0)
        );
        assert!(!int_equals_float(1, 1.5) && !int_equals_float(0, f64::NAN));
        assert!(!int_equals_float(i64::MAX, 9_223_372_036_854_775_808.0));
        assert!(int_equals_float(i64::MIN, -9_223_372_036_854_775_808.0));
        assert!(!int_equals_float(
            9_007_199_254_740_993,
            9_007_199_254_740_992.0
        ));
    }

    /// `{"a": ["x", "y"]}` against `{"a": ["y", "q"], "b": None}` with pairs x/y, x/q, y/y, y/q.
    #[test]
    fn scores_a_small_tree() {
        let mut arena = Arena::new(4_000_000);
        arena.leaves = vec![Leaf::Text { empty: false }; 3]; // x, y, q
        let list = |arena: &mut Arena, raws: &[u32]| {
            let start = arena.kids.len() as u32;
            for &raw in raws {
                arena.nodes.push(Node::leaf(raw));
                arena.kids.push(arena.nodes.len() as u32 - 1);
                arena.keys.push(Key::Null);
            }
            arena.nodes.push(Node {
                kind: Kind::List,
                start,
                len: raws.len() as u32,
                size: raws.len() as u64,
            });
            arena.nodes.len() as u32 - 1
        };
        let gl = list(&mut arena, &[0, 1]);
        let pl = list(&mut arena, &[1, 2]);
        let dict = |arena: &mut Arena, kids: &[(u32, u32)], size: u64| {
            let start = arena.kids.len() as u32;
            for &(key, kid) in kids {
                arena.kids.push(kid);
                arena.keys.push(Key::Text(key));
            }
            arena.nodes.push(Node {
                kind: Kind::Dict,
                start,
                len: kids.len() as u32,
                size,
            });
            arena.nodes.len() as u32 - 1
        };
        let g = dict(&mut arena, &[(0, gl)], 2);
        let p = dict(&mut arena, &[(0, pl), (1, NULL)], 3);
        arena.add_item(g, p);
        assert_eq!(
            (arena.left.clone(), arena.right.clone()),
            (vec![0, 0, 1, 1], vec![1, 2, 1, 2])
        );
        assert_eq!(arena.matches, vec![0, 0, 1]);
        let sims = [0.0, 0.0, 0.0, 0.0];
        let mut scorer = Scorer::new(&arena, &sims, 1.0, Summation::Sequential, |_, _| None);
        // y pairs with y (1.0), x with q (0.0); the extra key "b" is empty: size 2 + 1, no 0.0 added
        assert_eq!(scorer.score(0), Ok(1.0 / 3.0));
    }
}
