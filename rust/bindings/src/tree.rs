//! Bindings of the tree kernel family (`scorekit_kernels::tree`): Zhang–Shasha distances over a batch
//! of tree pairs, and one pair's edit mapping.
//!
//! Trees arrive packed (batch layout of docs/architecture.md): side `s` has `labels_s`/`lld_s` (`uint32`, lld
//! relative to its own tree) and `offsets_s` (`int64`, n_pairs + 1 node offsets). Cost arrays are
//! `float64`; an empty array means unit cost. `rename_mode` is 0 (unit), 1 (label table) or 2 (node
//! texts); text offsets are absolute per-node offsets into the side's text values (total nodes + 1).
//! Everything is validated before the GIL is released; errors become `ValueError`.

use crate::parallel::{check_offsets, guarded, run_detached, same_count, slice};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use scorekit_kernels::tree::{
    validate_costs, validate_tree, zhang_shasha, zhang_shasha_mapping, CostModel, NodeTexts,
    PostorderTree, Rename, Workspace,
};

/// The cost arrays of one call, before they are cut into per-pair views.
struct PackedCosts<'a> {
    delete: &'a [f64],
    insert: &'a [f64],
    mode: u8,
    table: &'a [f64],
    n_labels: usize,
    text1: (&'a [u32], &'a [i64]),
    text2: (&'a [u32], &'a [i64]),
    label_mismatch: f64,
}

impl<'a> PackedCosts<'a> {
    fn check(&self, nodes1: usize, nodes2: usize) -> PyResult<()> {
        if !self.delete.is_empty() && self.delete.len() != nodes1 {
            return Err(PyValueError::new_err(format!(
                "delete_costs must be empty (unit) or have one entry per node of the first trees ({nodes1}), got {}",
                self.delete.len()
            )));
        }
        if !self.insert.is_empty() && self.insert.len() != nodes2 {
            return Err(PyValueError::new_err(format!(
                "insert_costs must be empty (unit) or have one entry per node of the second trees ({nodes2}), got {}",
                self.insert.len()
            )));
        }
        match self.mode {
            0 | 1 => Ok(()),
            2 => {
                if self.text1.1.len() != nodes1 + 1 || self.text2.1.len() != nodes2 + 1 {
                    return Err(PyValueError::new_err(
                        "text offsets must have one entry per node plus one",
                    ));
                }
                Ok(())
            }
            m => Err(PyValueError::new_err(format!(
                "rename_mode must be 0 (unit), 1 (table) or 2 (text), got {m}"
            ))),
        }
    }

    /// The cost model of the pair whose nodes are `r1` (first side) and `r2` (second side).
    fn model(&self, r1: std::ops::Range<usize>, r2: std::ops::Range<usize>) -> CostModel<'a> {
        let delete = (!self.delete.is_empty()).then(|| &self.delete[r1.clone()]);
        let insert = (!self.insert.is_empty()).then(|| &self.insert[r2.clone()]);
        let rename = match self.mode {
            0 => Rename::Unit,
            1 => Rename::Table {
                costs: self.table,
                n_labels: self.n_labels,
            },
            _ => Rename::Text {
                texts1: NodeTexts {
                    values: self.text1.0,
                    offsets: &self.text1.1[r1.start..=r1.end],
                },
                texts2: NodeTexts {
                    values: self.text2.0,
                    offsets: &self.text2.1[r2.start..=r2.end],
                },
                label_mismatch: self.label_mismatch,
            },
        };
        CostModel {
            delete,
            insert,
            rename,
        }
    }
}

fn tree<'a>(labels: &'a [u32], lld: &'a [u32], r: std::ops::Range<usize>) -> PostorderTree<'a> {
    PostorderTree {
        labels: &labels[r.clone()],
        lld: &lld[r],
    }
}

fn check_pair(
    t1: &PostorderTree<'_>,
    t2: &PostorderTree<'_>,
    costs: &CostModel<'_>,
    pair: usize,
) -> PyResult<()> {
    let err = |side: &str, e: scorekit_kernels::tree::TreeError| {
        PyValueError::new_err(format!("pair {pair}, {side}: {e}"))
    };
    validate_tree(t1).map_err(|e| err("first tree", e))?;
    validate_tree(t2).map_err(|e| err("second tree", e))?;
    validate_costs(t1, t2, costs).map_err(|e| err("costs", e))
}

/// Zhang–Shasha distance of every packed pair; `float64[n_pairs]`.
#[pyfunction]
#[pyo3(signature = (labels1, lld1, offsets1, labels2, lld2, offsets2, delete_costs, insert_costs,
                    rename_mode, rename_table, n_labels, text1_values, text1_offsets, text2_values,
                    text2_offsets, label_mismatch, threads=0))]
#[allow(clippy::too_many_arguments)]
fn tree_distance_batch<'py>(
    py: Python<'py>,
    labels1: PyReadonlyArray1<'py, u32>,
    lld1: PyReadonlyArray1<'py, u32>,
    offsets1: PyReadonlyArray1<'py, i64>,
    labels2: PyReadonlyArray1<'py, u32>,
    lld2: PyReadonlyArray1<'py, u32>,
    offsets2: PyReadonlyArray1<'py, i64>,
    delete_costs: PyReadonlyArray1<'py, f64>,
    insert_costs: PyReadonlyArray1<'py, f64>,
    rename_mode: u8,
    rename_table: PyReadonlyArray1<'py, f64>,
    n_labels: usize,
    text1_values: PyReadonlyArray1<'py, u32>,
    text1_offsets: PyReadonlyArray1<'py, i64>,
    text2_values: PyReadonlyArray1<'py, u32>,
    text2_offsets: PyReadonlyArray1<'py, i64>,
    label_mismatch: f64,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    guarded(|| {
        let (l1, d1, o1) = (
            slice(&labels1, "labels1")?,
            slice(&lld1, "lld1")?,
            slice(&offsets1, "offsets1")?,
        );
        let (l2, d2, o2) = (
            slice(&labels2, "labels2")?,
            slice(&lld2, "lld2")?,
            slice(&offsets2, "offsets2")?,
        );
        if l1.len() != d1.len() || l2.len() != d2.len() {
            return Err(PyValueError::new_err(
                "labels and lld must have the same length on each side",
            ));
        }
        let n = same_count(
            check_offsets(o1, l1.len(), "offsets1")?,
            check_offsets(o2, l2.len(), "offsets2")?,
            "offsets1",
            "offsets2",
        )?;
        let costs = PackedCosts {
            delete: slice(&delete_costs, "delete_costs")?,
            insert: slice(&insert_costs, "insert_costs")?,
            mode: rename_mode,
            table: slice(&rename_table, "rename_table")?,
            n_labels,
            text1: (
                slice(&text1_values, "text1_values")?,
                slice(&text1_offsets, "text1_offsets")?,
            ),
            text2: (
                slice(&text2_values, "text2_values")?,
                slice(&text2_offsets, "text2_offsets")?,
            ),
            label_mismatch,
        };
        costs.check(l1.len(), l2.len())?;
        let range = |o: &[i64], p: usize| o[p] as usize..o[p + 1] as usize;
        for p in 0..n {
            let (r1, r2) = (range(o1, p), range(o2, p));
            check_pair(
                &tree(l1, d1, r1.clone()),
                &tree(l2, d2, r2.clone()),
                &costs.model(r1, r2),
                p,
            )?;
        }
        let compute = || -> Vec<f64> {
            (0..n)
                .into_par_iter()
                .map_init(Workspace::new, |ws, p| {
                    let (r1, r2) = (range(o1, p), range(o2, p));
                    let model = costs.model(r1.clone(), r2.clone());
                    zhang_shasha(&tree(l1, d1, r1), &tree(l2, d2, r2), &model, ws)
                })
                .collect()
        };
        // The result never depends on the thread count.
        let out = run_detached(py, threads, compute)?;
        Ok(out.into_pyarray(py))
    })
}

/// Distance and one optimal edit mapping of a single pair; `(float, int64[k, 2])`, -1 = no partner.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn tree_mapping<'py>(
    py: Python<'py>,
    labels1: PyReadonlyArray1<'py, u32>,
    lld1: PyReadonlyArray1<'py, u32>,
    labels2: PyReadonlyArray1<'py, u32>,
    lld2: PyReadonlyArray1<'py, u32>,
    delete_costs: PyReadonlyArray1<'py, f64>,
    insert_costs: PyReadonlyArray1<'py, f64>,
    rename_mode: u8,
    rename_table: PyReadonlyArray1<'py, f64>,
    n_labels: usize,
    text1_values: PyReadonlyArray1<'py, u32>,
    text1_offsets: PyReadonlyArray1<'py, i64>,
    text2_values: PyReadonlyArray1<'py, u32>,
    text2_offsets: PyReadonlyArray1<'py, i64>,
    label_mismatch: f64,
) -> PyResult<(f64, Bound<'py, PyArray2<i64>>)> {
    guarded(|| {
        let (l1, d1) = (slice(&labels1, "labels1")?, slice(&lld1, "lld1")?);
        let (l2, d2) = (slice(&labels2, "labels2")?, slice(&lld2, "lld2")?);
        let costs = PackedCosts {
            delete: slice(&delete_costs, "delete_costs")?,
            insert: slice(&insert_costs, "insert_costs")?,
            mode: rename_mode,
            table: slice(&rename_table, "rename_table")?,
            n_labels,
            text1: (
                slice(&text1_values, "text1_values")?,
                slice(&text1_offsets, "text1_offsets")?,
            ),
            text2: (
                slice(&text2_values, "text2_values")?,
                slice(&text2_offsets, "text2_offsets")?,
            ),
            label_mismatch,
        };
        let (t1, t2) = (
            PostorderTree {
                labels: l1,
                lld: d1,
            },
            PostorderTree {
                labels: l2,
                lld: d2,
            },
        );
        if l1.len() != d1.len() || l2.len() != d2.len() {
            return Err(PyValueError::new_err(
                "labels and lld must have the same length on each side",
            ));
        }
        costs.check(l1.len(), l2.len())?;
        let model = costs.model(0..l1.len(), 0..l2.len());
        check_pair(&t1, &t2, &model, 0)?;
        let (distance, mapping) =
            py.detach(|| zhang_shasha_mapping(&t1, &t2, &model, &mut Workspace::new()));
        let mut array = Array2::<i64>::zeros((mapping.len(), 2));
        for (k, (a, b)) in mapping.into_iter().enumerate() {
            array[[k, 0]] = a;
            array[[k, 1]] = b;
        }
        Ok((distance, array.into_pyarray(py)))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tree_distance_batch, m)?)?;
    m.add_function(wrap_pyfunction!(tree_mapping, m)?)?;
    Ok(())
}
