//! Bindings of the `align` kernels (Needleman–Wunsch): argument conversion and validation, GIL
//! release, rayon over batches. No alignment logic lives here.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use scorekit_kernels::align::{self, AlignOp, CallCost, Steps, TableCost};

use crate::parallel;

fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, name: &str) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| PyValueError::new_err(format!("{name} must be a contiguous 1-D array")))
}

fn ops_array<'py>(py: Python<'py>, ops: Vec<AlignOp>) -> Bound<'py, PyArray2<i64>> {
    let k = ops.len();
    let flat: Vec<i64> = ops.into_iter().flatten().collect();
    flat.into_pyarray(py).reshape([k, 3]).expect("k * 3 elements")
}

/// Distance and alignment of symbol sequences `a`, `b` under a dense substitution `table`
/// (`table[sa, sb]`) and per-element gap costs `del` (for `a`) and `ins` (for `b`).
/// Returns `(distance, ops)` with `ops` an `int64[k, 3]` array of `(op, i, j)` rows
/// (op 0 aligned pair, 1 deletion of `a[i]`, 2 insertion of `b[j]`; -1 for the absent side).
#[pyfunction]
fn nw_table_align<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, u32>,
    b: PyReadonlyArray1<'py, u32>,
    table: PyReadonlyArray2<'py, f64>,
    del: PyReadonlyArray1<'py, f64>,
    ins: PyReadonlyArray1<'py, f64>,
) -> PyResult<(f64, Bound<'py, PyArray2<i64>>)> {
    let n_cols = table.shape()[1];
    let table = table.as_slice().map_err(|_| PyValueError::new_err("table must be a C-contiguous 2-D array"))?;
    let costs = TableCost {
        a: slice(&a, "a")?,
        b: slice(&b, "b")?,
        table,
        n_symbols_b: n_cols,
        del: slice(&del, "del")?,
        ins: slice(&ins, "ins")?,
    };
    costs.validate().map_err(PyValueError::new_err)?;
    let (d, ops) = py.detach(|| align::align(&costs));
    Ok((d, ops_array(py, ops)))
}

/// The six packed step arrays of one side, borrowed from NumPy.
struct StepArrays<'py> {
    tools: PyReadonlyArray1<'py, u32>,
    mass: PyReadonlyArray1<'py, f64>,
    arg_offsets: PyReadonlyArray1<'py, i64>,
    arg_names: PyReadonlyArray1<'py, u32>,
    arg_values: PyReadonlyArray1<'py, u32>,
    arg_weights: PyReadonlyArray1<'py, f64>,
}

impl StepArrays<'_> {
    fn steps(&self, side: &str) -> PyResult<Steps<'_>> {
        let steps = Steps {
            tools: slice(&self.tools, &format!("{side}_tools"))?,
            mass: slice(&self.mass, &format!("{side}_mass"))?,
            arg_offsets: slice(&self.arg_offsets, &format!("{side}_arg_offsets"))?,
            arg_names: slice(&self.arg_names, &format!("{side}_arg_names"))?,
            arg_values: slice(&self.arg_values, &format!("{side}_arg_values"))?,
            arg_weights: slice(&self.arg_weights, &format!("{side}_arg_weights"))?,
        };
        steps.validate(side).map_err(PyValueError::new_err)?;
        Ok(steps)
    }
}

/// Distance and alignment of two trajectories under the trajectory cost model
/// (see `scorekit._kernels.align` for the packed layout). Returns `(distance, ops)` like
/// `nw_table_align`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn nw_calls_align<'py>(
    py: Python<'py>,
    a_tools: PyReadonlyArray1<'py, u32>,
    a_mass: PyReadonlyArray1<'py, f64>,
    a_arg_offsets: PyReadonlyArray1<'py, i64>,
    a_arg_names: PyReadonlyArray1<'py, u32>,
    a_arg_values: PyReadonlyArray1<'py, u32>,
    a_arg_weights: PyReadonlyArray1<'py, f64>,
    b_tools: PyReadonlyArray1<'py, u32>,
    b_mass: PyReadonlyArray1<'py, f64>,
    b_arg_offsets: PyReadonlyArray1<'py, i64>,
    b_arg_names: PyReadonlyArray1<'py, u32>,
    b_arg_values: PyReadonlyArray1<'py, u32>,
    b_arg_weights: PyReadonlyArray1<'py, f64>,
) -> PyResult<(f64, Bound<'py, PyArray2<i64>>)> {
    let a = StepArrays {
        tools: a_tools,
        mass: a_mass,
        arg_offsets: a_arg_offsets,
        arg_names: a_arg_names,
        arg_values: a_arg_values,
        arg_weights: a_arg_weights,
    };
    let b = StepArrays {
        tools: b_tools,
        mass: b_mass,
        arg_offsets: b_arg_offsets,
        arg_names: b_arg_names,
        arg_values: b_arg_values,
        arg_weights: b_arg_weights,
    };
    let costs = CallCost { a: a.steps("a")?, b: b.steps("b")? };
    let (d, ops) = py.detach(|| align::align(&costs));
    Ok((d, ops_array(py, ops)))
}

/// Trajectory distance of every pair `k`: steps `a_seq_offsets[k]..a_seq_offsets[k+1]` of side a
/// against `b_seq_offsets[k]..b_seq_offsets[k+1]` of side b; `float64[n_pairs]`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn nw_calls_distance_batch<'py>(
    py: Python<'py>,
    a_tools: PyReadonlyArray1<'py, u32>,
    a_mass: PyReadonlyArray1<'py, f64>,
    a_arg_offsets: PyReadonlyArray1<'py, i64>,
    a_arg_names: PyReadonlyArray1<'py, u32>,
    a_arg_values: PyReadonlyArray1<'py, u32>,
    a_arg_weights: PyReadonlyArray1<'py, f64>,
    a_seq_offsets: PyReadonlyArray1<'py, i64>,
    b_tools: PyReadonlyArray1<'py, u32>,
    b_mass: PyReadonlyArray1<'py, f64>,
    b_arg_offsets: PyReadonlyArray1<'py, i64>,
    b_arg_names: PyReadonlyArray1<'py, u32>,
    b_arg_values: PyReadonlyArray1<'py, u32>,
    b_arg_weights: PyReadonlyArray1<'py, f64>,
    b_seq_offsets: PyReadonlyArray1<'py, i64>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let a = StepArrays {
        tools: a_tools,
        mass: a_mass,
        arg_offsets: a_arg_offsets,
        arg_names: a_arg_names,
        arg_values: a_arg_values,
        arg_weights: a_arg_weights,
    };
    let b = StepArrays {
        tools: b_tools,
        mass: b_mass,
        arg_offsets: b_arg_offsets,
        arg_names: b_arg_names,
        arg_values: b_arg_values,
        arg_weights: b_arg_weights,
    };
    let (sa, sb) = (a.steps("a")?, b.steps("b")?);
    let (oa, ob) = (slice(&a_seq_offsets, "a_seq_offsets")?, slice(&b_seq_offsets, "b_seq_offsets")?);
    align::validate_seq_offsets(oa, sa.tools.len(), "a_seq_offsets").map_err(PyValueError::new_err)?;
    align::validate_seq_offsets(ob, sb.tools.len(), "b_seq_offsets").map_err(PyValueError::new_err)?;
    if oa.len() != ob.len() {
        return Err(PyValueError::new_err(format!(
            "a_seq_offsets and b_seq_offsets must describe the same number of pairs ({} vs {})",
            oa.len() - 1,
            ob.len() - 1
        )));
    }
    let out: Vec<f64> = parallel::run_detached(py, threads, || {
        (0..oa.len() - 1)
            .into_par_iter()
            .with_min_len(parallel::MIN_ITEMS_PER_TASK)
            .map_init(Vec::new, |row, k| {
                let costs = CallCost {
                    a: sa.slice(oa[k] as usize, oa[k + 1] as usize),
                    b: sb.slice(ob[k] as usize, ob[k + 1] as usize),
                };
                align::distance(&costs, row)
            })
            .collect()
    })?;
    Ok(out.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(nw_table_align, m)?)?;
    m.add_function(wrap_pyfunction!(nw_calls_align, m)?)?;
    m.add_function(wrap_pyfunction!(nw_calls_distance_batch, m)?)?;
    Ok(())
}
