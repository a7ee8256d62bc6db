//! Bindings of the `isotonic` kernel: argument conversion, GIL release, errors as `ValueError`.
//! No fitting logic lives here.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scorekit_kernels::isotonic;

/// The isotonic fit of `correct` (bool array) on `scores` (finite float64 array): the distinct
/// scores, ascending, and the pooled accuracy at each, as two float64 arrays.
#[pyfunction]
fn isotonic_fit<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    correct: PyReadonlyArray1<'py, bool>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
    let x = scores
        .as_slice()
        .map_err(|_| PyValueError::new_err("scores must be a contiguous 1-D array"))?;
    let c = correct
        .as_slice()
        .map_err(|_| PyValueError::new_err("correct must be a contiguous 1-D array"))?;
    let fit = py
        .detach(|| isotonic::isotonic_fit(x, c))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((fit.values.into_pyarray(py), fit.levels.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(isotonic_fit, m)?)
}
