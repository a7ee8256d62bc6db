//! Bindings of the `rover` kernel: argument conversion and validation, GIL release.
//! No alignment or voting logic lives here.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scorekit_kernels::rover;

type RoverArrays<'py> = (
    Bound<'py, PyArray2<u32>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

/// ROVER over packed hypotheses: hypothesis `i` is `tokens[offsets[i]:offsets[i+1]]` (token ids
/// below 2**32 - 1, which is the NULL id) with `confs` alongside. `conf_weight` is the effective
/// confidence weight (0.0 for frequency-only voting); `max_tokens=None` disables the guard.
///
/// Returns `(slot_tokens uint32[S, N], slot_confs float64[S, N], winners uint32[S],
/// scores float64[S], vote_shares float64[S])`.
#[pyfunction]
#[pyo3(signature = (tokens, confs, offsets, conf_weight, null_conf, max_tokens=None))]
fn rover_align_vote<'py>(
    py: Python<'py>,
    tokens: PyReadonlyArray1<'py, u32>,
    confs: PyReadonlyArray1<'py, f64>,
    offsets: PyReadonlyArray1<'py, i64>,
    conf_weight: f64,
    null_conf: f64,
    max_tokens: Option<usize>,
) -> PyResult<RoverArrays<'py>> {
    let t = tokens
        .as_slice()
        .map_err(|_| PyValueError::new_err("tokens must be a contiguous 1-D array"))?;
    let c = confs
        .as_slice()
        .map_err(|_| PyValueError::new_err("confs must be a contiguous 1-D array"))?;
    let o = offsets
        .as_slice()
        .map_err(|_| PyValueError::new_err("offsets must be a contiguous 1-D array"))?;
    let r = py
        .detach(|| rover::rover(t, c, o, conf_weight, null_conf, max_tokens))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let (s, n) = (r.n_slots(), r.n_engines);
    let slot_tokens = r.tokens.into_pyarray(py).reshape([s, n])?;
    let slot_confs = r.confs.into_pyarray(py).reshape([s, n])?;
    Ok((
        slot_tokens,
        slot_confs,
        r.winners.into_pyarray(py),
        r.scores.into_pyarray(py),
        r.vote_shares.into_pyarray(py),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rover_align_vote, m)?)?;
    Ok(())
}
