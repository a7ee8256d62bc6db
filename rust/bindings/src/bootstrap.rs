//! Bindings of the `bootstrap` kernel: argument conversion and validation, GIL release.
//! No resampling logic lives here.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scorekit_kernels::bootstrap::{self, BootstrapError, Mt19937, Summation};
use scorekit_kernels::one_thread;

use crate::parallel::{guarded, run_detached, slice, two_threads, worker_count, JoinFn};

fn generator(state: &PyReadonlyArray1<'_, u32>, pos: usize) -> PyResult<Mt19937> {
    Mt19937::from_state(slice(state, "state")?, pos).map_err(value_error)
}

fn value_error(e: BootstrapError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Below this many draws (values × resamples) a bootstrap runs on one thread: a round of
/// drawing beside summing would be too short to hand to a second thread.
const TWO_THREADS_FROM_DRAWS: usize = 1 << 20;

/// Run a resampling kernel of `draws` draws without the GIL, on two threads of the pool when
/// there is that much work and a second core; its statistics as an array.
fn statistics<'py>(
    py: Python<'py>,
    draws: usize,
    kernel: impl FnOnce(JoinFn) -> Result<Vec<f64>, BootstrapError> + Send,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let stats = if draws >= TWO_THREADS_FROM_DRAWS && worker_count(0) > 1 {
        run_detached(py, 0, || kernel(two_threads))?
    } else {
        py.detach(|| kernel(one_thread))
    };
    Ok(stats.map_err(value_error)?.into_pyarray(py))
}

/// How `sum` adds floats in the calling interpreter (`compensated`: CPython >= 3.12).
pub(crate) fn summation(compensated: bool) -> Summation {
    if compensated {
        Summation::Compensated
    } else {
        Summation::Sequential
    }
}

/// Mean of every bootstrap resample of `values`, in resample order. The generator starts from
/// `state` (624 uint32 words) at `pos`, as `random.Random(seed).getstate()` gives them;
/// `compensated` selects CPython >= 3.12's `sum` (Neumaier) over the plain left-to-right one.
#[pyfunction]
#[pyo3(signature = (values, state, pos, resamples, compensated))]
fn bootstrap_means<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    state: PyReadonlyArray1<'py, u32>,
    pos: usize,
    resamples: usize,
    compensated: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    guarded(|| {
        let v = slice(&values, "values")?;
        let mt = generator(&state, pos)?;
        statistics(py, v.len().saturating_mul(resamples), |join| {
            bootstrap::bootstrap_means(v, mt, resamples, summation(compensated), join)
        })
    })
}

/// `sum(costs) / sum(wins)` (`inf` without a win) of every bootstrap resample of the
/// `(costs[i], wins[i])` pairs, in resample order; generator and summation as `bootstrap_means`.
#[pyfunction]
#[pyo3(signature = (costs, wins, state, pos, resamples, compensated))]
fn bootstrap_ratios<'py>(
    py: Python<'py>,
    costs: PyReadonlyArray1<'py, f64>,
    wins: PyReadonlyArray1<'py, f64>,
    state: PyReadonlyArray1<'py, u32>,
    pos: usize,
    resamples: usize,
    compensated: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    guarded(|| {
        let c = slice(&costs, "costs")?;
        let w = slice(&wins, "wins")?;
        let mt = generator(&state, pos)?;
        statistics(py, c.len().saturating_mul(resamples), |join| {
            bootstrap::bootstrap_ratios(c, w, mt, resamples, summation(compensated), join)
        })
    })
}

/// `sum(values)` as this Python adds floats (`compensated`: CPython >= 3.12's Neumaier sum).
#[pyfunction]
fn float_sum(
    py: Python<'_>,
    values: PyReadonlyArray1<'_, f64>,
    compensated: bool,
) -> PyResult<f64> {
    guarded(|| {
        let v = slice(&values, "values")?;
        Ok(py.detach(|| bootstrap::sum(v, summation(compensated))))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bootstrap_means, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_ratios, m)?)?;
    m.add_function(wrap_pyfunction!(float_sum, m)?)?;
    Ok(())
}
