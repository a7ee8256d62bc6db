//! Bindings of the `align` kernels (Needleman–Wunsch): argument conversion and validation, GIL
//! release, rayon over batches. No alignment logic lives here.

use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use rayon::prelude::*;
use scorekit_kernels::align::{
    self, AlignOp, CallCost, CallKernel, CallScratch, CallTable, TableCost,
};

use crate::parallel::{self, guarded, slice};

fn ops_array<'py>(py: Python<'py>, ops: Vec<AlignOp>) -> Bound<'py, PyArray2<i64>> {
    let k = ops.len();
    let flat: Vec<i64> = ops.into_iter().flatten().collect();
    flat.into_pyarray(py)
        .reshape([k, 3])
        .expect("k * 3 elements")
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
    guarded(|| {
        let n_cols = table.shape()[1];
        let table = table
            .as_slice()
            .map_err(|_| PyValueError::new_err("table must be a C-contiguous 2-D array"))?;
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
    })
}

/// Borrow the six call-table arrays as a validated [`CallTable`].
#[allow(clippy::too_many_arguments)]
fn call_table<'a>(
    tools: &'a PyReadonlyArray1<'_, u32>,
    mass: &'a PyReadonlyArray1<'_, f64>,
    arg_offsets: &'a PyReadonlyArray1<'_, i64>,
    arg_names: &'a PyReadonlyArray1<'_, u32>,
    arg_values: &'a PyReadonlyArray1<'_, u32>,
    arg_weights: &'a PyReadonlyArray1<'_, f64>,
) -> PyResult<CallTable<'a>> {
    let table = CallTable {
        tools: slice(tools, "tools")?,
        mass: slice(mass, "mass")?,
        arg_offsets: slice(arg_offsets, "arg_offsets")?,
        arg_names: slice(arg_names, "arg_names")?,
        arg_values: slice(arg_values, "arg_values")?,
        arg_weights: slice(arg_weights, "arg_weights")?,
    };
    table.validate().map_err(PyValueError::new_err)?;
    Ok(table)
}

/// Distance and alignment of two trajectories given as call ids `a_calls`, `b_calls` into one
/// call table (see `scorekit._kernels.align` for the layout). Returns `(distance, ops)` like
/// `nw_table_align`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn nw_calls_align<'py>(
    py: Python<'py>,
    tools: PyReadonlyArray1<'py, u32>,
    mass: PyReadonlyArray1<'py, f64>,
    arg_offsets: PyReadonlyArray1<'py, i64>,
    arg_names: PyReadonlyArray1<'py, u32>,
    arg_values: PyReadonlyArray1<'py, u32>,
    arg_weights: PyReadonlyArray1<'py, f64>,
    a_calls: PyReadonlyArray1<'py, u32>,
    b_calls: PyReadonlyArray1<'py, u32>,
) -> PyResult<(f64, Bound<'py, PyArray2<i64>>)> {
    guarded(|| {
        let table = call_table(
            &tools,
            &mass,
            &arg_offsets,
            &arg_names,
            &arg_values,
            &arg_weights,
        )?;
        let (a, b) = (slice(&a_calls, "a_calls")?, slice(&b_calls, "b_calls")?);
        table
            .validate_ids(a, "a_calls")
            .map_err(PyValueError::new_err)?;
        table
            .validate_ids(b, "b_calls")
            .map_err(PyValueError::new_err)?;
        let costs = CallCost::new(table, a, b);
        let (d, ops) = py.detach(|| align::align(&costs));
        Ok((d, ops_array(py, ops)))
    })
}

/// Trajectory distance of every pair `k`: call ids `a_calls[a_offsets[k]:a_offsets[k+1]]` against
/// `b_calls[b_offsets[k]:b_offsets[k+1]]`, all into one call table; `float64[n_pairs]`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn nw_calls_distance_batch<'py>(
    py: Python<'py>,
    tools: PyReadonlyArray1<'py, u32>,
    mass: PyReadonlyArray1<'py, f64>,
    arg_offsets: PyReadonlyArray1<'py, i64>,
    arg_names: PyReadonlyArray1<'py, u32>,
    arg_values: PyReadonlyArray1<'py, u32>,
    arg_weights: PyReadonlyArray1<'py, f64>,
    a_calls: PyReadonlyArray1<'py, u32>,
    a_offsets: PyReadonlyArray1<'py, i64>,
    b_calls: PyReadonlyArray1<'py, u32>,
    b_offsets: PyReadonlyArray1<'py, i64>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    guarded(|| {
        let table = call_table(
            &tools,
            &mass,
            &arg_offsets,
            &arg_names,
            &arg_values,
            &arg_weights,
        )?;
        let (ca, cb) = (slice(&a_calls, "a_calls")?, slice(&b_calls, "b_calls")?);
        let (oa, ob) = (
            slice(&a_offsets, "a_offsets")?,
            slice(&b_offsets, "b_offsets")?,
        );
        Ok(calls_distances(py, table, ca, oa, cb, ob, threads)?.into_pyarray(py))
    })
}

/// The trajectory distance of every pair of a packed batch (ids and offsets validated here),
/// across `threads` threads with the GIL released.
pub(crate) fn calls_distances(
    py: Python<'_>,
    table: CallTable<'_>,
    ca: &[u32],
    oa: &[i64],
    cb: &[u32],
    ob: &[i64],
    threads: usize,
) -> PyResult<Vec<f64>> {
    table
        .validate_ids(ca, "a_calls")
        .map_err(PyValueError::new_err)?;
    table
        .validate_ids(cb, "b_calls")
        .map_err(PyValueError::new_err)?;
    align::validate_seq_offsets(oa, ca.len(), "a_offsets").map_err(PyValueError::new_err)?;
    align::validate_seq_offsets(ob, cb.len(), "b_offsets").map_err(PyValueError::new_err)?;
    if oa.len() != ob.len() {
        return Err(PyValueError::new_err(format!(
            "a_offsets and b_offsets must describe the same number of pairs ({} vs {})",
            oa.len() - 1,
            ob.len() - 1
        )));
    }
    let n_pairs = oa.len() - 1;
    let kernel = CallKernel::new(table);
    let pair = |scratch: &mut CallScratch, k: usize| {
        kernel.distance(
            &ca[oa[k] as usize..oa[k + 1] as usize],
            &cb[ob[k] as usize..ob[k + 1] as usize],
            scratch,
        )
    };
    if n_pairs < parallel::SERIAL_BELOW {
        return Ok(py.detach(|| {
            let mut scratch = CallScratch::default();
            (0..n_pairs).map(|k| pair(&mut scratch, k)).collect()
        }));
    }
    parallel::run_detached(py, threads, || {
        (0..n_pairs)
            .into_par_iter()
            .with_min_len(parallel::MIN_ITEMS_PER_TASK)
            .map_init(CallScratch::default, |scratch, k| pair(scratch, k))
            .collect()
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(nw_table_align, m)?)?;
    m.add_function(wrap_pyfunction!(nw_calls_align, m)?)?;
    m.add_function(wrap_pyfunction!(nw_calls_distance_batch, m)?)?;
    Ok(())
}
