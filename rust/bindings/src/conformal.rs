//! Bindings of the `conformal` kernel: argument conversion, GIL release, errors as `ValueError`.
//! No calibration logic lives here.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use scorekit_kernels::conformal::{self, ConformalError};
use scorekit_kernels::one_thread;

use crate::packing::{read_exact_floats, read_exact_rows};
use crate::parallel::{guarded, run_detached, run_here, two_threads, TWO_THREADS_FROM};

/// The split-conformal fit of the nonconformity `1 - p` of the rows with a correct outcome and a
/// finite probability (`probs`: float64 array, `correct`: bool array of the same length):
/// `(q, scores, n)` (the kernel's `conformal::fit_by`). `q` is the score of rank
/// `ceil((n + 1)(1 - alpha))` among those `n` scores (`inf` above `n`, `-inf` below 1); `scores` holds every row's score, NaN
/// for the rows left out. A finite probability outside `[0, 1]` raises `ValueError(row, value)`
/// for the first such row.
/// `threads`: as for the batch kernels (0 = every core); the fit uses two at most.
#[pyfunction]
#[pyo3(signature = (probs, correct, alpha, threads=0))]
fn conformal_fit<'py>(
    py: Python<'py>,
    probs: PyReadonlyArray1<'py, f64>,
    correct: PyReadonlyArray1<'py, bool>,
    alpha: f64,
    threads: usize,
) -> PyResult<(f64, Bound<'py, PyArray1<f64>>, usize)> {
    guarded(|| {
        let p = probs
            .as_slice()
            .map_err(|_| PyValueError::new_err("probs must be a contiguous 1-D array"))?;
        let c = correct
            .as_slice()
            .map_err(|_| PyValueError::new_err("correct must be a contiguous 1-D array"))?;
        if !(0.0..=1.0).contains(&alpha) {
            return Err(PyValueError::new_err(format!(
                "alpha must be in [0, 1], got {alpha}"
            )));
        }
        // Below TWO_THREADS_FROM rows the fit runs on the calling thread: handing a short fit to
        // a pool thread costs more than the fit.
        let fit = if p.len() < TWO_THREADS_FROM {
            run_here(py, || conformal::fit_by(p, c, alpha, one_thread))?
        } else {
            run_detached(py, threads, || conformal::fit_by(p, c, alpha, two_threads))?
        };
        match fit {
            Ok((q, scores, n)) => Ok((q, scores.into_pyarray(py), n)),
            Err(ConformalError::OutOfRange { row, value }) => {
                Err(PyValueError::new_err((row, value)))
            }
            Err(e) => Err(PyValueError::new_err(e.to_string())),
        }
    })
}

/// `split_conformal_quantile` of `scores` read straight from Python: the fit's quantile of the
/// scores (the kernel's `conformal::quantile`) when `alpha` is in `[0, 1]` and `scores` is exactly
/// a `list` or `tuple` whose every item is exactly a `float` other than NaN; else `None` (the
/// caller checks `alpha`, reads the scores and names what is wrong).
#[pyfunction]
fn listed_conformal_quantile(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    alpha: f64,
) -> PyResult<Option<f64>> {
    guarded(|| {
        if !(0.0..=1.0).contains(&alpha) {
            return Ok(None);
        }
        let Some(values) = read_exact_floats(scores).filter(|v| !v.iter().any(|x| x.is_nan()))
        else {
            return Ok(None);
        };
        let n = values.len();
        if n < TWO_THREADS_FROM {
            Ok(Some(conformal::quantile(&values, n, alpha, one_thread)))
        } else {
            run_here(py, || conformal::quantile(&values, n, alpha, one_thread)).map(Some)
        }
    })
}

/// [`conformal_fit`] of short lists read straight from Python, for the small-input path:
/// `(q, scores, n)` with the scores in a `list`, when `probs` is exactly a `list` or `tuple` of
/// `float`s, `correct` one of `True` and `False` as long, every finite probability is in `[0, 1]`
/// and `alpha` is; else `None` (the caller reads the rows and names what is wrong).
#[pyfunction]
fn listed_conformal_fit<'py>(
    py: Python<'py>,
    probs: &Bound<'py, PyAny>,
    correct: &Bound<'py, PyAny>,
    alpha: f64,
) -> PyResult<Option<(f64, Bound<'py, PyList>, usize)>> {
    guarded(|| {
        if !(0.0..=1.0).contains(&alpha) {
            return Ok(None);
        }
        let Some((p, c)) = read_exact_rows(probs, correct) else {
            return Ok(None);
        };
        let Ok((q, scores, n)) = conformal::fit_by(&p, &c, alpha, one_thread) else {
            return Ok(None); // a probability outside [0, 1]
        };
        Ok(Some((q, PyList::new(py, scores)?, n)))
    })
}

/// The `k`-th smallest (0-based) of the values of `values` (a float64 array) other than NaN, by
/// selection in O(n); a zero comes back as `0.0`.
#[pyfunction]
fn kth_smallest(py: Python<'_>, values: PyReadonlyArray1<'_, f64>, k: usize) -> PyResult<f64> {
    guarded(|| {
        let v = values
            .as_slice()
            .map_err(|_| PyValueError::new_err("values must be a contiguous 1-D array"))?;
        let counted = v.iter().filter(|x| !x.is_nan()).count();
        if k >= counted {
            return Err(PyValueError::new_err(format!(
                "rank {k} out of {counted} values other than NaN"
            )));
        }
        run_here(py, || conformal::kth_smallest(v, k))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(conformal_fit, m)?)?;
    m.add_function(wrap_pyfunction!(kth_smallest, m)?)?;
    m.add_function(wrap_pyfunction!(listed_conformal_quantile, m)?)?;
    m.add_function(wrap_pyfunction!(listed_conformal_fit, m)?)
}
