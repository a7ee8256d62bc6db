//! Workflow trees and their metrics: FlowSim, TreeBLEU, Trigger Match and Component Match.
//!
//! A caller that has read a workflow document (see `docs/flows.md` for the decomposition rules)
//! feeds it to a [`TreeBuilder`]: the trigger's label, then each component list with its
//! components' labels and `order`/`block` keys. The builder nests blocked components under the
//! component whose `order` they name, rejects what is not a valid workflow (an `order` used twice,
//! a `block` naming no component, a cycle, nesting beyond [`MAX_DEPTH`], more than `max_nodes`
//! nodes), and writes the finished tree into a [`FlowBatch`] as flat arrays. [`FlowBatch::score`]
//! then scores every pair of the batch.
//!
//! Trigger Match is decided by the caller (StarFlow's recipe compares whole triggers with Python's
//! `==`) and passed in with each pair.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use crate::exact_i64;
use crate::tree::{zhang_shasha, CostModel, PostorderTree, Workspace};

/// Nesting depth of inline `children` lists beyond which a document is not a workflow.
pub const MAX_DEPTH: usize = 200;
/// Marks "no node" in the tree arena.
const NONE: u32 = u32::MAX;

/// The document is not a workflow this module builds (the caller scores or reports it elsewhere).
#[derive(Debug, PartialEq, Eq)]
pub struct Rejected;

pub type Step<T> = Result<T, Rejected>;

// -- hashing and interning --------------------------------------------------------------------------

/// A multiply-rotate hasher for short keys (label bytes, small integers), seeded per batch.
#[derive(Clone, Copy)]
struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 31)
    }
}

/// Builds [`FastHasher`]s from one random seed (label texts come from model outputs).
#[derive(Clone, Copy)]
struct Seeded(u64);

impl Default for Seeded {
    fn default() -> Self {
        Seeded(std::collections::hash_map::RandomState::new().hash_one(0x5C0E_u64))
    }
}

impl BuildHasher for Seeded {
    type Hasher = FastHasher;

    fn build_hasher(&self) -> FastHasher {
        FastHasher(self.0)
    }
}

/// An `order` or `block` value under Python's equality: ints and integral floats compare as
/// integers, other floats by value, strings by content.
#[derive(Debug, PartialEq, Eq, Hash)]
pub enum OrderKey {
    Int(i64),
    Float(u64),
    Str(Box<[u8]>),
}

impl OrderKey {
    /// The key of a float: an integral one equals the int of that value; NaN equals nothing and
    /// is rejected.
    pub fn of_float(f: f64) -> Step<OrderKey> {
        if f.is_nan() {
            return Err(Rejected);
        }
        Ok(match exact_i64(f) {
            Some(n) => OrderKey::Int(n),
            None => OrderKey::Float(f.to_bits()),
        })
    }
}

// -- tree building ----------------------------------------------------------------------------------

/// The tree of one flow under construction: labels and first-child / next-sibling links.
#[derive(Default)]
struct Arena {
    label: Vec<u32>,
    first_child: Vec<u32>,
    last_child: Vec<u32>,
    next_sibling: Vec<u32>,
}

impl Arena {
    fn clear(&mut self) {
        self.label.clear();
        self.first_child.clear();
        self.last_child.clear();
        self.next_sibling.clear();
    }

    fn len(&self) -> usize {
        self.label.len()
    }

    fn add(&mut self, label: u32) -> u32 {
        self.label.push(label);
        self.first_child.push(NONE);
        self.last_child.push(NONE);
        self.next_sibling.push(NONE);
        (self.label.len() - 1) as u32
    }

    /// Append `child` (not yet attached anywhere) to `parent`'s children.
    fn attach(&mut self, parent: u32, child: u32) {
        let (p, c) = (parent as usize, child as usize);
        match self.last_child[p] {
            NONE => self.first_child[p] = child,
            last => self.next_sibling[last as usize] = child,
        }
        self.last_child[p] = child;
        self.next_sibling[c] = NONE;
    }
}

/// One open component list: its nodes and the `order`/`block` keys met so far.
#[derive(Default)]
struct Scope {
    nodes: Vec<u32>,
    by_order: HashMap<OrderKey, u32, Seeded>,
    block_keys: Vec<(u32, OrderKey)>,
    blocks: Vec<(u32, u32)>,
    parent_of: Vec<u32>,
}

impl Scope {
    fn clear(&mut self) {
        self.nodes.clear();
        self.by_order.clear();
        self.block_keys.clear();
        self.blocks.clear();
    }
}

/// Builds the trees of a batch's flows, one at a time; owns the label ids (shared by the whole
/// batch: equal ids mean equal texts) and every scratch buffer.
pub struct TreeBuilder {
    labels: HashMap<Box<[u8]>, u32, Seeded>,
    max_nodes: usize,
    arena: Arena,
    /// The component lists being read, innermost last.
    open: Vec<Scope>,
    spare_scopes: Vec<Scope>,
    text: Vec<u8>,
    stack: Vec<(u32, u32, u32)>,
    fixed: [u32; 3],
}

impl TreeBuilder {
    /// A builder whose flows hold at most `max_nodes` tree nodes (a larger one is rejected).
    pub fn new(max_nodes: usize) -> Self {
        let mut builder = TreeBuilder {
            labels: HashMap::with_hasher(Seeded::default()),
            max_nodes,
            arena: Arena::default(),
            open: Vec::new(),
            spare_scopes: Vec::new(),
            text: Vec::new(),
            stack: Vec::new(),
            fixed: [0; 3],
        };
        builder.fixed = [
            builder.label(b"flow"),
            builder.label(b"trigger"),
            builder.label(b"components"),
        ];
        builder
    }

    /// The id of a label text.
    pub fn label(&mut self, text: &[u8]) -> u32 {
        if let Some(&id) = self.labels.get(text) {
            return id;
        }
        let id = self.labels.len() as u32;
        self.labels.insert(text.into(), id);
        id
    }

    /// The id of a component's label `category:definition` (category `action` when absent).
    pub fn component_label(&mut self, category: Option<&[u8]>, definition: &[u8]) -> u32 {
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        text.extend_from_slice(category.unwrap_or(b"action"));
        text.push(b':');
        text.extend_from_slice(definition);
        let id = self.label(&text);
        self.text = text;
        id
    }

    /// Start a new flow (dropping any unfinished one): `flow` with the children `trigger` (above
    /// the trigger's label, when there is a trigger) and `components`. Returns the `components`
    /// node, the parent of the top-level component list.
    pub fn start_flow(&mut self, trigger: Option<u32>) -> u32 {
        while let Some(scope) = self.open.pop() {
            self.spare_scopes.push(scope);
        }
        let [flow_label, trigger_label, components_label] = self.fixed;
        self.arena.clear();
        let root = self.arena.add(flow_label);
        let trigger_node = self.arena.add(trigger_label);
        self.arena.attach(root, trigger_node);
        if let Some(trigger) = trigger {
            let leaf = self.arena.add(trigger);
            self.arena.attach(trigger_node, leaf);
        }
        let components_node = self.arena.add(components_label);
        self.arena.attach(root, components_node);
        components_node
    }

    /// Open a component list (nested in the current one's last component, if one is open).
    pub fn open_list(&mut self) -> Step<()> {
        if self.open.len() > MAX_DEPTH {
            return Err(Rejected);
        }
        let mut scope = self.spare_scopes.pop().unwrap_or_default();
        scope.clear();
        self.open.push(scope);
        Ok(())
    }

    /// Add a component to the open list; its node (the parent of a list nested in it).
    pub fn add_component(
        &mut self,
        label: u32,
        order: Option<OrderKey>,
        block: Option<OrderKey>,
    ) -> Step<u32> {
        let node = self.arena.add(label);
        if self.arena.len() > self.max_nodes {
            return Err(Rejected);
        }
        let scope = self.open.last_mut().ok_or(Rejected)?;
        let k = scope.nodes.len() as u32;
        scope.nodes.push(node);
        if let Some(order) = order {
            if scope.by_order.insert(order, k).is_some() {
                return Err(Rejected); // an order used twice
            }
        }
        if let Some(block) = block {
            scope.block_keys.push((k, block));
        }
        Ok(node)
    }

    /// Close the innermost open list: nest its blocked components under the components they name
    /// and attach the rest to `parent`.
    pub fn close_list(&mut self, parent: u32) -> Step<()> {
        let mut scope = self.open.pop().ok_or(Rejected)?;
        let result = Self::resolve(&mut self.arena, &mut scope, parent);
        self.spare_scopes.push(scope);
        result
    }

    fn resolve(arena: &mut Arena, scope: &mut Scope, parent: u32) -> Step<()> {
        for (k, key) in scope.block_keys.drain(..) {
            let p = *scope.by_order.get(&key).ok_or(Rejected)?;
            scope.blocks.push((k, p));
        }
        if scope.blocks.is_empty() {
            for &node in &scope.nodes {
                arena.attach(parent, node);
            }
            return Ok(());
        }
        scope.parent_of.clear();
        scope.parent_of.resize(scope.nodes.len(), NONE);
        for &(k, p) in &scope.blocks {
            scope.parent_of[k as usize] = p;
        }
        for &(k, _) in &scope.blocks {
            // A chain longer than the number of nested components goes round a cycle.
            let (mut at, mut steps) = (k, 0);
            while scope.parent_of[at as usize] != NONE {
                steps += 1;
                if steps > scope.blocks.len() {
                    return Err(Rejected);
                }
                at = scope.parent_of[at as usize];
            }
        }
        for &(k, p) in &scope.blocks {
            arena.attach(scope.nodes[p as usize], scope.nodes[k as usize]);
        }
        for (&node, &p) in scope.nodes.iter().zip(&scope.parent_of) {
            if p == NONE {
                arena.attach(parent, node);
            }
        }
        Ok(())
    }

    /// Write the finished flow into `batch`: where its data lies there.
    pub fn finish_flow(&mut self, batch: &mut FlowBatch) -> Step<FlowSpan> {
        if !self.open.is_empty() || self.arena.len() > self.max_nodes {
            return Err(Rejected);
        }
        Ok(self.emit(batch))
    }

    /// Walk the arena in post-order into `batch`: labels, leftmost leaves, S(F) and the component
    /// label set.
    fn emit(&mut self, batch: &mut FlowBatch) -> FlowSpan {
        let arena = &self.arena;
        let node_start = batch.labels.len();
        let subtree_start = batch.subtrees.len();
        // Frames: (node, next child, leftmost leaf of the first child), from the root (node 0).
        self.stack.clear();
        self.stack.push((0, arena.first_child[0], NONE));
        while let Some(frame) = self.stack.last_mut() {
            if frame.1 != NONE {
                let child = frame.1;
                frame.1 = arena.next_sibling[child as usize];
                self.stack
                    .push((child, arena.first_child[child as usize], NONE));
                continue;
            }
            let (node, _, first) = self.stack.pop().unwrap();
            let k = (batch.labels.len() - node_start) as u32;
            let left = if first == NONE { k } else { first };
            let label = arena.label[node as usize];
            batch.labels.push(label);
            batch.lld.push(left);
            if let Some(parent) = self.stack.last_mut() {
                if parent.2 == NONE {
                    parent.2 = left;
                }
                let mut child = arena.first_child[node as usize];
                if child != NONE {
                    // Every 1-height subtree but the root's: (label, child labels...).
                    let at = batch.subtrees.len();
                    batch.subtrees.extend([0, label]);
                    while child != NONE {
                        batch.subtrees.push(arena.label[child as usize]);
                        child = arena.next_sibling[child as usize];
                    }
                    batch.subtrees[at] = (batch.subtrees.len() - at - 2) as u32;
                }
            }
        }
        let node_end = batch.labels.len();
        // Post-order ends with the components subtree, then the root: its nodes are components.
        let component_start = batch.components.len();
        let first_component = node_start + batch.lld[node_end - 2] as usize;
        batch
            .components
            .extend_from_slice(&batch.labels[first_component..node_end - 2]);
        sort_distinct(&mut batch.components, component_start);
        FlowSpan {
            nodes: (node_start as u32, node_end as u32),
            subtrees: (subtree_start as u32, batch.subtrees.len() as u32),
            components: (component_start as u32, batch.components.len() as u32),
        }
    }
}

/// Sort `values[start..]` and drop its repeats.
fn sort_distinct(values: &mut Vec<u32>, start: usize) {
    values[start..].sort_unstable();
    let mut end = start;
    for k in start..values.len() {
        if end == start || values[k] != values[end - 1] {
            values[end] = values[k];
            end += 1;
        }
    }
    values.truncate(end);
}

// -- scoring ----------------------------------------------------------------------------------------

/// Where one flow's data lies in its [`FlowBatch`]'s arrays.
#[derive(Clone, Copy, Debug)]
pub struct FlowSpan {
    nodes: (u32, u32),
    subtrees: (u32, u32),
    components: (u32, u32),
}

/// The flat arrays of a batch of built flows and their pairs, ready to score on any thread.
#[derive(Default)]
pub struct FlowBatch {
    /// (prediction, reference) of each pair; `None` for a flow not built here.
    pairs: Vec<[Option<FlowSpan>; 2]>,
    /// Trigger Match of each pair, as the caller decided it.
    trigger_match: Vec<bool>,
    labels: Vec<u32>,
    lld: Vec<u32>,
    /// The 1-height subtrees (S(F), with repeats) of each flow: `[n, label, n child labels]` each.
    subtrees: Vec<u32>,
    /// Sorted, distinct component label ids of each flow.
    components: Vec<u32>,
}

/// The S(F) sets of the two flows of a pair, as buffers reused across the pairs of a batch.
type SubtreeSets<'a> = (Vec<&'a [u32]>, Vec<&'a [u32]>);

/// Size of the intersection of two sorted, distinct lists.
fn shared<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut count) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                count += 1;
                i += 1;
                j += 1;
            }
        }
    }
    count
}

impl FlowBatch {
    /// Add a pair: its two flows (`None` when one was not built) and whether their triggers match.
    pub fn push_pair(
        &mut self,
        pred: Option<FlowSpan>,
        reference: Option<FlowSpan>,
        trigger_match: bool,
    ) {
        self.pairs.push([pred, reference]);
        self.trigger_match.push(trigger_match);
    }

    /// Whether the prediction and the reference of each pair are missing.
    pub fn missing(&self) -> impl Iterator<Item = (bool, bool)> + '_ {
        self.pairs.iter().map(|[p, r]| (p.is_none(), r.is_none()))
    }

    fn range(values: &[u32], (start, end): (u32, u32)) -> &[u32] {
        &values[start as usize..end as usize]
    }

    fn tree(&self, span: &FlowSpan) -> PostorderTree<'_> {
        PostorderTree {
            labels: Self::range(&self.labels, span.nodes),
            lld: Self::range(&self.lld, span.nodes),
        }
    }

    /// S(F) of one flow, sorted and without repeats, into `out`.
    fn subtree_set<'a>(&'a self, span: &FlowSpan, out: &mut Vec<&'a [u32]>) {
        out.clear();
        let mut rest = Self::range(&self.subtrees, span.subtrees);
        while let Some(&n) = rest.first() {
            let (subtree, tail) = rest[1..].split_at(n as usize + 1);
            out.push(subtree);
            rest = tail;
        }
        out.sort_unstable();
        out.dedup();
    }

    /// FlowSim, TreeBLEU, Trigger Match and Component Match of one pair.
    fn metrics<'a>(
        &'a self,
        p: &FlowSpan,
        r: &FlowSpan,
        trigger_match: bool,
        ws: &mut Workspace,
        (s1, s2): &mut SubtreeSets<'a>,
    ) -> [f64; 4] {
        let (t1, t2) = (self.tree(p), self.tree(r));
        let ted = zhang_shasha(&t1, &t2, &CostModel::UNIT, ws);
        let flowsim = 1.0 - ted / ((t1.len() + t2.len()) as f64);
        self.subtree_set(p, s1);
        self.subtree_set(r, s2);
        let treebleu = if s1.is_empty() {
            0.0
        } else {
            shared(s1, s2) as f64 / s1.len() as f64
        };
        let trigger_match = if trigger_match { 1.0 } else { 0.0 };
        let (c1, c2) = (
            Self::range(&self.components, p.components),
            Self::range(&self.components, r.components),
        );
        let both = shared(c1, c2);
        let union = c1.len() + c2.len() - both;
        let component_match = if union == 0 {
            0.0
        } else {
            both as f64 / union as f64
        };
        [flowsim, treebleu, trigger_match, component_match]
    }

    /// `[FlowSim, TreeBLEU, Trigger Match, Component Match]` of every pair (NaN for a pair with a
    /// missing flow), on this thread.
    pub fn score(&self, ws: &mut Workspace) -> Vec<[f64; 4]> {
        let mut sets = SubtreeSets::default();
        self.pairs
            .iter()
            .zip(&self.trigger_match)
            .map(|(pair, &trigger_match)| match pair {
                [Some(p), Some(r)] => self.metrics(p, r, trigger_match, ws, &mut sets),
                _ => [f64::NAN; 4],
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A component as the tests write it: label, `order`, `block`, nested components.
    struct C(&'static str, Option<i64>, Option<i64>, Vec<C>);

    fn plain(label: &'static str) -> C {
        C(label, None, None, Vec::new())
    }

    fn list(builder: &mut TreeBuilder, components: &[C], parent: u32) -> Step<()> {
        builder.open_list()?;
        for C(label, order, block, children) in components {
            let label = builder.component_label(None, label.as_bytes());
            let node =
                builder.add_component(label, order.map(OrderKey::Int), block.map(OrderKey::Int))?;
            if !children.is_empty() {
                list(builder, children, node)?;
            }
        }
        builder.close_list(parent)
    }

    fn build(
        builder: &mut TreeBuilder,
        batch: &mut FlowBatch,
        trigger: Option<&str>,
        components: &[C],
    ) -> Step<FlowSpan> {
        let trigger = trigger.map(|t| builder.label(t.as_bytes()));
        let parent = builder.start_flow(trigger);
        list(builder, components, parent)?;
        builder.finish_flow(batch)
    }

    /// The metrics of one pair of flows, Trigger Match given.
    fn metrics(
        pred: (Option<&str>, &[C]),
        reference: (Option<&str>, &[C]),
        trigger_match: bool,
    ) -> [f64; 4] {
        let (mut builder, mut batch) = (TreeBuilder::new(1000), FlowBatch::default());
        let p = build(&mut builder, &mut batch, pred.0, pred.1).unwrap();
        let r = build(&mut builder, &mut batch, reference.0, reference.1).unwrap();
        batch.push_pair(Some(p), Some(r), trigger_match);
        batch.score(&mut Workspace::new())[0]
    }

    #[test]
    fn one_relabelled_component() {
        // flow(trigger(t1), components(A, B)) against components(A, C): one relabel in 12 nodes;
        // S(F) {trigger/t1, components/A,B} shares one of two; components {A,B} ~ {A,C}: 1 of 3.
        let got = metrics(
            (Some("t1"), &[plain("A"), plain("B")]),
            (Some("t1"), &[plain("A"), plain("C")]),
            true,
        );
        assert_eq!(got, [1.0 - 1.0 / 12.0, 0.5, 1.0, 1.0 / 3.0]);
    }

    #[test]
    fn identical_flows_score_one() {
        let flow = || [plain("A"), C("B", Some(1), None, vec![plain("C")])];
        assert_eq!(
            metrics((Some("t"), &flow()), (Some("t"), &flow()), true),
            [1.0; 4]
        );
    }

    #[test]
    fn a_block_nests_under_the_order_it_names() {
        // components(A(B)) against components(A, B): B deleted and inserted (2 of 10 nodes);
        // S(F) {components/A, A/B} against {components/A,B}: none shared; the same components.
        let got = metrics(
            (
                None,
                &[C("A", Some(1), None, vec![]), C("B", None, Some(1), vec![])],
            ),
            (None, &[plain("A"), plain("B")]),
            false,
        );
        assert_eq!(got, [0.8, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn blocks_and_nested_lists_match_the_python_reference() {
        // scorekit.flows.compute_metrics (Numba backend) of
        // {"components": [{"type": "A", "order": 1, "children": [{"type": "C", "order": 1},
        //   {"type": "D", "block": 1}]}, {"type": "B", "block": 1}]}
        // against {"trigger": "t", "components": ["A", "B", "C", "D"]}: 0.6, 0.0, 0.0, 1.0.
        let nested = vec![C("C", Some(1), None, vec![]), C("D", None, Some(1), vec![])];
        let got = metrics(
            (
                None,
                &[C("A", Some(1), None, nested), C("B", None, Some(1), vec![])],
            ),
            (Some("t"), &[plain("A"), plain("B"), plain("C"), plain("D")]),
            false,
        );
        assert_eq!(got, [0.6, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn empty_flows_have_no_subtrees_and_no_components() {
        // flow(trigger, components) twice: no 1-height subtree but the root's, no components.
        assert_eq!(
            metrics((None, &[]), (None, &[]), true),
            [1.0, 0.0, 1.0, 0.0]
        );
    }

    #[test]
    fn a_missing_flow_scores_nan() {
        let (mut builder, mut batch) = (TreeBuilder::new(1000), FlowBatch::default());
        let p = build(&mut builder, &mut batch, None, &[plain("A")]).unwrap();
        batch.push_pair(Some(p), None, true);
        batch.push_pair(None, Some(p), true);
        let rows = batch.score(&mut Workspace::new());
        assert!(rows.iter().flatten().all(|v| v.is_nan()));
        assert_eq!(
            batch.missing().collect::<Vec<_>>(),
            [(false, true), (true, false)]
        );
    }

    fn rejected(components: &[C], max_nodes: usize) -> bool {
        let (mut builder, mut batch) = (TreeBuilder::new(max_nodes), FlowBatch::default());
        let result = build(&mut builder, &mut batch, None, components).is_err();
        // The builder starts the next flow cleanly after a rejection (flow, trigger, components).
        let next = build(&mut builder, &mut FlowBatch::default(), None, &[]);
        assert_eq!(next.is_ok(), max_nodes >= 3);
        result
    }

    #[test]
    fn invalid_workflows_are_rejected() {
        let dup = [C("A", Some(1), None, vec![]), C("B", Some(1), None, vec![])];
        assert!(rejected(&dup, 1000), "an order used twice");
        assert!(
            rejected(&[C("A", None, Some(7), vec![])], 1000),
            "a block naming no order"
        );
        let cycle = [
            C("A", Some(1), Some(2), vec![]),
            C("B", Some(2), Some(1), vec![]),
        ];
        assert!(rejected(&cycle, 1000), "a cycle of blocks");
        let own = [C("A", Some(1), Some(1), vec![])];
        assert!(rejected(&own, 1000), "a component blocked under itself");
        // flow, trigger, components and two components: 5 nodes.
        let two = [plain("A"), plain("B")];
        assert!(!rejected(&two, 5));
        assert!(rejected(&two, 4), "more nodes than max_nodes");
        assert!(rejected(&[], 2), "the fixed nodes count too");
    }

    #[test]
    fn nesting_deeper_than_max_depth_is_rejected() {
        let nest = |depth: usize| {
            let mut c = plain("leaf");
            for _ in 0..depth {
                c = C("x", None, None, vec![c]);
            }
            c
        };
        // The top list is at depth 0; MAX_DEPTH nested lists are accepted, one more is not.
        assert!(!rejected(&[nest(MAX_DEPTH)], 10_000));
        assert!(rejected(&[nest(MAX_DEPTH + 1)], 10_000));
    }

    #[test]
    fn order_keys_follow_pythons_equality() {
        assert_eq!(OrderKey::of_float(1.0), Ok(OrderKey::Int(1)));
        assert_eq!(OrderKey::of_float(-0.0), Ok(OrderKey::Int(0)));
        assert_eq!(
            OrderKey::of_float(0.5),
            Ok(OrderKey::Float(0.5f64.to_bits()))
        );
        assert_eq!(OrderKey::of_float(f64::NAN), Err(Rejected));
        // A float order names an int block of the same value.
        let (mut builder, mut batch) = (TreeBuilder::new(100), FlowBatch::default());
        let parent = builder.start_flow(None);
        builder.open_list().unwrap();
        let a = builder.label(b"a");
        builder
            .add_component(a, Some(OrderKey::of_float(2.0).unwrap()), None)
            .unwrap();
        builder
            .add_component(a, None, Some(OrderKey::Int(2)))
            .unwrap();
        builder.close_list(parent).unwrap();
        assert!(builder.finish_flow(&mut batch).is_ok());
    }

    #[test]
    fn labels_are_interned_by_text() {
        let mut builder = TreeBuilder::new(10);
        let a = builder.component_label(None, b"x");
        assert_eq!(builder.label(b"action:x"), a);
        assert_eq!(builder.component_label(Some(b"action"), b"x"), a);
        assert_ne!(builder.component_label(Some(b"tool"), b"x"), a);
        assert_ne!(builder.label(b"flow"), a);
    }
}
