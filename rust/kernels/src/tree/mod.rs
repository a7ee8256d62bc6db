//! Tree family: the Zhang–Shasha ordered tree edit distance.
//!
//! Owns the exact tree edit distance (TED) between two ordered, labelled trees given as post-order
//! arrays, under unit costs or a general cost model, and the optional edit mapping. It does not parse
//! trees, intern labels, or normalise scores (that is `scorekit.trees` and its callers).
//!
//! A tree of `n` nodes is two slices of length `n` indexed by post-order position: `labels[k]` (a
//! label id) and `lld[k]`, the post-order index of the leftmost leaf descendant of node `k`; the
//! root is node `n - 1`. An empty tree (`n = 0`) is allowed. [`validate_tree`] checks the shape in
//! O(n) before any kernel runs.
//!
//! Cost model ([`CostModel`]): deleting node `k` of the first tree costs `delete[k]` (1 when absent),
//! inserting node `k` of the second tree costs `insert[k]` (1 when absent), and renaming `a` into `b`
//! costs, per [`Rename`], 0/1 on label equality, a label-by-label table entry, or, when the labels are
//! equal, the normalised Levenshtein distance between the two nodes' texts (`lev / max(len)`, 0 for two
//! empty texts; computed with the bit-parallel `crate::levenshtein::distance`) and `label_mismatch`
//! when they differ. Costs must be finite and non-negative.
//!
//! Floating-point operation order is fixed (documented on [`zhang_shasha`]) so that the Numba twin
//! returns bit-identical distances.

mod unit;
mod zhang_shasha;

pub use zhang_shasha::{zhang_shasha, zhang_shasha_mapping, Workspace};

use std::fmt;

/// One ordered tree in post-order layout (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub struct PostorderTree<'a> {
    /// Label id of each node, in post-order.
    pub labels: &'a [u32],
    /// Post-order index of each node's leftmost leaf descendant.
    pub lld: &'a [u32],
}

impl<'a> PostorderTree<'a> {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True for the empty tree.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// Per-node texts of one tree: node `k`'s text is `values[offsets[k]..offsets[k + 1]]` (code points).
#[derive(Debug, Clone, Copy)]
pub struct NodeTexts<'a> {
    pub values: &'a [u32],
    pub offsets: &'a [i64],
}

impl<'a> NodeTexts<'a> {
    #[inline]
    fn get(&self, k: usize) -> &'a [u32] {
        &self.values[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }
}

/// How renaming a node of the first tree into a node of the second is priced.
#[derive(Debug, Clone, Copy)]
pub enum Rename<'a> {
    /// 0 when the labels are equal, else 1.
    Unit,
    /// `costs[label_a * n_labels + label_b]`; every label id must be `< n_labels`.
    Table { costs: &'a [f64], n_labels: usize },
    /// `label_mismatch` when the labels differ, else the normalised Levenshtein distance of the texts.
    Text {
        texts1: NodeTexts<'a>,
        texts2: NodeTexts<'a>,
        label_mismatch: f64,
    },
}

/// Deletion, insertion and rename costs (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub struct CostModel<'a> {
    /// Cost of deleting each node of the first tree; `None` = 1 for every node.
    pub delete: Option<&'a [f64]>,
    /// Cost of inserting each node of the second tree; `None` = 1 for every node.
    pub insert: Option<&'a [f64]>,
    pub rename: Rename<'a>,
}

impl<'a> CostModel<'a> {
    /// Unit costs: delete = insert = 1, rename = 0/1 on label equality.
    pub const UNIT: CostModel<'static> = CostModel {
        delete: None,
        insert: None,
        rename: Rename::Unit,
    };
}

/// Why a tree or a cost model was rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum TreeError {
    /// `labels` and `lld` differ in length.
    LengthMismatch { labels: usize, lld: usize },
    /// The `lld` array does not describe one ordered tree in post-order.
    NotATree { node: usize, reason: &'static str },
    /// A cost array has the wrong length.
    CostLength {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// A cost is negative, NaN or infinite.
    BadCost {
        what: &'static str,
        index: usize,
        value: f64,
    },
    /// A label id is outside the rename table.
    LabelOutOfRange {
        tree: u8,
        node: usize,
        label: u32,
        n_labels: usize,
    },
    /// Text offsets are not a non-decreasing in-range array of `n + 1` entries.
    BadTextOffsets { tree: u8 },
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeError::LengthMismatch { labels, lld } => {
                write!(f, "labels has {labels} entries but lld has {lld}")
            }
            TreeError::NotATree { node, reason } => {
                write!(f, "lld does not describe a post-order tree at node {node}: {reason}")
            }
            TreeError::CostLength { what, expected, got } => {
                write!(f, "{what} must have {expected} entries, got {got}")
            }
            TreeError::BadCost { what, index, value } => {
                write!(f, "{what}[{index}] = {value} is not a finite non-negative cost")
            }
            TreeError::LabelOutOfRange { tree, node, label, n_labels } => write!(
                f,
                "tree {tree} node {node} has label id {label}, outside the {n_labels}x{n_labels} rename table"
            ),
            TreeError::BadTextOffsets { tree } => {
                write!(f, "text offsets of tree {tree} must be n + 1 non-decreasing in-range values")
            }
        }
    }
}

impl std::error::Error for TreeError {}

/// Check that `tree` is one ordered tree in post-order (or empty), in O(n) time.
///
/// Every node's subtree is the contiguous post-order range `lld[k]..=k`; the ranges of the subtrees
/// completed so far must tile exactly the range under each new node, and one range must remain.
pub fn validate_tree(tree: &PostorderTree<'_>) -> Result<(), TreeError> {
    let n = tree.labels.len();
    if tree.lld.len() != n {
        return Err(TreeError::LengthMismatch {
            labels: n,
            lld: tree.lld.len(),
        });
    }
    // Start indices of the completed subtrees not yet attached to a parent. Invariant: their ranges
    // are contiguous and cover 0..k, so each range ends where the next one starts.
    let mut starts: Vec<usize> = Vec::new();
    for k in 0..n {
        let l = tree.lld[k] as usize;
        if l > k {
            return Err(TreeError::NotATree {
                node: k,
                reason: "lld[k] > k",
            });
        }
        if l < k {
            // The children's ranges must cover l..k exactly: pop until the start reaches l.
            loop {
                match starts.pop() {
                    Some(s) if s > l => continue,
                    Some(s) if s == l => break,
                    _ => {
                        return Err(TreeError::NotATree {
                            node: k,
                            reason: "children do not tile lld[k]..k",
                        })
                    }
                }
            }
        }
        starts.push(l);
    }
    if n > 0 && starts.len() != 1 {
        return Err(TreeError::NotATree {
            node: n - 1,
            reason: "more than one root",
        });
    }
    Ok(())
}

fn check_costs(what: &'static str, costs: &[f64], expected: usize) -> Result<(), TreeError> {
    if costs.len() != expected {
        return Err(TreeError::CostLength {
            what,
            expected,
            got: costs.len(),
        });
    }
    for (index, &value) in costs.iter().enumerate() {
        if !(value.is_finite() && value >= 0.0) {
            return Err(TreeError::BadCost { what, index, value });
        }
    }
    Ok(())
}

fn check_texts(texts: &NodeTexts<'_>, n: usize, tree: u8) -> Result<(), TreeError> {
    let o = texts.offsets;
    if o.len() != n + 1
        || o[0] < 0
        || o[n] as usize > texts.values.len()
        || o.windows(2).any(|w| w[1] < w[0])
    {
        return Err(TreeError::BadTextOffsets { tree });
    }
    Ok(())
}

/// Check the cost model against the two trees (lengths, finiteness, label range, text offsets).
pub fn validate_costs(
    t1: &PostorderTree<'_>,
    t2: &PostorderTree<'_>,
    costs: &CostModel<'_>,
) -> Result<(), TreeError> {
    if let Some(d) = costs.delete {
        check_costs("delete_costs", d, t1.len())?;
    }
    if let Some(i) = costs.insert {
        check_costs("insert_costs", i, t2.len())?;
    }
    match costs.rename {
        Rename::Unit => {}
        Rename::Table {
            costs: table,
            n_labels,
        } => {
            check_costs("rename_table", table, n_labels * n_labels)?;
            for (tree, t) in [(1u8, t1), (2u8, t2)] {
                if let Some((node, &label)) = t
                    .labels
                    .iter()
                    .enumerate()
                    .find(|(_, &l)| l as usize >= n_labels)
                {
                    return Err(TreeError::LabelOutOfRange {
                        tree,
                        node,
                        label,
                        n_labels,
                    });
                }
            }
        }
        Rename::Text {
            texts1,
            texts2,
            label_mismatch,
        } => {
            check_texts(&texts1, t1.len(), 1)?;
            check_texts(&texts2, t2.len(), 2)?;
            check_costs("label_mismatch", &[label_mismatch], 1)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
