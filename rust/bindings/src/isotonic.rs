//! Bindings of the `isotonic` kernel: argument conversion, GIL release, the two outcomes' sorts
//! side by side in the thread pool, errors as `ValueError`. No fitting logic lives here.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scorekit_kernels::isotonic;

use crate::parallel::{guarded, run_detached};

/// Below this many rows the two sorts run one after the other (a thread hand-off costs more).
const PARALLEL_FROM: usize = 1 << 16;

/// The isotonic fit of `correct` (bool array) on `scores` (finite float64 array): the distinct
/// scores, ascending, and the pooled accuracy at each, as two float64 arrays. `threads`: as for
/// the batch kernels (0 = every core); the fit uses two at most.
#[pyfunction]
#[pyo3(signature = (scores, correct, threads=0))]
fn isotonic_fit<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    correct: PyReadonlyArray1<'py, bool>,
    threads: usize,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
    guarded(|| {
        let x = scores
            .as_slice()
            .map_err(|_| PyValueError::new_err("scores must be a contiguous 1-D array"))?;
        let c = correct
            .as_slice()
            .map_err(|_| PyValueError::new_err("correct must be a contiguous 1-D array"))?;
        let threads = if x.len() < PARALLEL_FROM { 1 } else { threads };
        let fit = run_detached(py, threads, || {
            isotonic::isotonic_fit_by(x, c, |hits, misses| {
                rayon::join(hits, misses);
            })
        })?
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((fit.values.into_pyarray(py), fit.levels.into_pyarray(py)))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(isotonic_fit, m)?)
}
