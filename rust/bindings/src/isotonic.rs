//! Bindings of the `isotonic` kernel: argument conversion, GIL release, the two outcomes' sorts
//! side by side in the thread pool, errors as `ValueError`. No fitting logic lives here.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scorekit_kernels::{isotonic, one_thread};

use crate::parallel::{guarded, run_detached, run_here, two_threads, TWO_THREADS_FROM};

/// The distinct scores and their pooled accuracies.
type FitArrays<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

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
) -> PyResult<FitArrays<'py>> {
    guarded(|| {
        let x = scores
            .as_slice()
            .map_err(|_| PyValueError::new_err("scores must be a contiguous 1-D array"))?;
        let c = correct
            .as_slice()
            .map_err(|_| PyValueError::new_err("correct must be a contiguous 1-D array"))?;
        // Below TWO_THREADS_FROM rows the fit runs on the calling thread: handing a short fit to
        // a pool thread costs more than the fit.
        let fit = if x.len() < TWO_THREADS_FROM {
            run_here(py, || isotonic::isotonic_fit_by(x, c, one_thread))?
        } else {
            run_detached(py, threads, || isotonic::isotonic_fit_by(x, c, two_threads))?
        }
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((fit.values.into_pyarray(py), fit.levels.into_pyarray(py)))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(isotonic_fit, m)?)
}
