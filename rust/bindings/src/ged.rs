//! Bindings of the graph edit distance family (see `scorekit._kernels.ged`): one problem, or a
//! batch of problems solved in parallel. Arrays are validated here and by the kernel; errors
//! become `ValueError`, never panics.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use scorekit_kernels::ged::{graph_edit_distance, Edge, GedProblem, GedResult};

use crate::parallel::{guarded, run_detached};

/// One problem's arrays, copied out of Python so the kernel can run without the GIL.
struct OwnedProblem {
    n1: usize,
    n2: usize,
    node_sub: Vec<f64>,
    node_del: Vec<f64>,
    node_ins: Vec<f64>,
    edges1: Vec<Edge>,
    edges2: Vec<Edge>,
    edge_sub: Vec<f64>,
    edge_del: Vec<f64>,
    edge_ins: Vec<f64>,
    directed: bool,
}

impl OwnedProblem {
    fn view(&self) -> GedProblem<'_> {
        GedProblem {
            n1: self.n1,
            n2: self.n2,
            node_sub: &self.node_sub,
            node_del: &self.node_del,
            node_ins: &self.node_ins,
            edges1: &self.edges1,
            edges2: &self.edges2,
            n_class1: self.edge_del.len(),
            n_class2: self.edge_ins.len(),
            edge_sub: &self.edge_sub,
            edge_del: &self.edge_del,
            edge_ins: &self.edge_ins,
            directed: self.directed,
        }
    }
}

type ProblemArrays<'py> = (
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray2<'py, i64>,
    PyReadonlyArray2<'py, i64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    bool,
);

fn matrix(
    name: &str,
    a: &PyReadonlyArray2<'_, f64>,
    rows: usize,
    cols: usize,
) -> PyResult<Vec<f64>> {
    let shape = a.as_array().shape().to_vec();
    if shape[..] != [rows, cols] {
        return Err(PyValueError::new_err(format!(
            "{name} must have shape ({rows}, {cols}), got ({}, {})",
            shape[0], shape[1]
        )));
    }
    Ok(a.as_array().iter().copied().collect())
}

fn edges(name: &str, a: &PyReadonlyArray2<'_, i64>) -> PyResult<Vec<Edge>> {
    let arr = a.as_array();
    if arr.shape()[1] != 3 {
        return Err(PyValueError::new_err(format!(
            "{name} must have shape (m, 3) of (source, target, class), got {:?}",
            arr.shape()
        )));
    }
    let to_u32 = |x: i64| -> PyResult<u32> {
        u32::try_from(x)
            .map_err(|_| PyValueError::new_err(format!("{name} holds {x}, not a valid index")))
    };
    arr.rows()
        .into_iter()
        .map(|r| Ok((to_u32(r[0])?, to_u32(r[1])?, to_u32(r[2])?)))
        .collect()
}

fn owned(p: &ProblemArrays<'_>) -> PyResult<OwnedProblem> {
    let node_del = p.1.as_array().to_vec();
    let node_ins = p.2.as_array().to_vec();
    let edge_del = p.6.as_array().to_vec();
    let edge_ins = p.7.as_array().to_vec();
    Ok(OwnedProblem {
        n1: node_del.len(),
        n2: node_ins.len(),
        node_sub: matrix("node_sub", &p.0, node_del.len(), node_ins.len())?,
        edges1: edges("edges1", &p.3)?,
        edges2: edges("edges2", &p.4)?,
        edge_sub: matrix("edge_sub", &p.5, edge_del.len(), edge_ins.len())?,
        node_del,
        node_ins,
        edge_del,
        edge_ins,
        directed: p.8,
    })
}

fn budget_of(budget: Option<u64>) -> u64 {
    budget.unwrap_or(u64::MAX)
}

/// Exact GED of one problem. Returns `(distance, lower_bound, exact, expanded, mapping)`.
#[pyfunction]
#[pyo3(signature = (node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins, directed, budget))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn graph_edit_distance_pair<'py>(
    py: Python<'py>,
    node_sub: PyReadonlyArray2<'py, f64>,
    node_del: PyReadonlyArray1<'py, f64>,
    node_ins: PyReadonlyArray1<'py, f64>,
    edges1: PyReadonlyArray2<'py, i64>,
    edges2: PyReadonlyArray2<'py, i64>,
    edge_sub: PyReadonlyArray2<'py, f64>,
    edge_del: PyReadonlyArray1<'py, f64>,
    edge_ins: PyReadonlyArray1<'py, f64>,
    directed: bool,
    budget: Option<u64>,
) -> PyResult<(f64, f64, bool, u64, Bound<'py, PyArray1<i64>>)> {
    guarded(|| {
        let problem = owned(&(
            node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins, directed,
        ))?;
        let budget = budget_of(budget);
        let result = py.detach(|| graph_edit_distance(&problem.view(), budget));
        let r = result.map_err(|e| PyValueError::new_err(e.0))?;
        Ok((
            r.distance,
            r.lower_bound,
            r.exact,
            r.expanded,
            r.mapping.into_pyarray(py),
        ))
    })
}

/// Exact GED of every problem in `problems` (tuples of the single-problem arguments up to
/// `directed`), in parallel on `threads` threads (0 = all cores). Returns the arrays
/// `(distance, lower_bound, exact, expanded)`; results never depend on `threads`.
#[pyfunction]
#[pyo3(signature = (problems, budget, threads))]
#[allow(clippy::type_complexity)]
fn graph_edit_distance_batch<'py>(
    py: Python<'py>,
    problems: Vec<ProblemArrays<'py>>,
    budget: Option<u64>,
    threads: usize,
) -> PyResult<(
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<u64>>,
)> {
    guarded(|| {
        let owned_problems = problems
            .iter()
            .enumerate()
            .map(|(k, p)| {
                owned(p).map_err(|e| PyValueError::new_err(format!("problem {k}: {}", e.value(py))))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let budget = budget_of(budget);
        let results: Vec<Result<GedResult, String>> = run_detached(py, threads, || {
            owned_problems
                .par_iter()
                .map(|p| graph_edit_distance(&p.view(), budget).map_err(|e| e.0))
                .collect()
        })?;
        let n = results.len();
        let (mut distance, mut lower_bound) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut exact, mut expanded) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (k, r) in results.into_iter().enumerate() {
            let r = r.map_err(|e| PyValueError::new_err(format!("problem {k}: {e}")))?;
            distance.push(r.distance);
            lower_bound.push(r.lower_bound);
            exact.push(r.exact);
            expanded.push(r.expanded);
        }
        Ok((
            distance.into_pyarray(py),
            lower_bound.into_pyarray(py),
            exact.into_pyarray(py),
            expanded.into_pyarray(py),
        ))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(graph_edit_distance_pair, m)?)?;
    m.add_function(wrap_pyfunction!(graph_edit_distance_batch, m)?)?;
    Ok(())
}
