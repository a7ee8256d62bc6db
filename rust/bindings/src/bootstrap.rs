//! Bindings of the `bootstrap` kernel: argument conversion and validation, GIL release.
//! No resampling logic lives here.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scorekit_kernels::bootstrap::{self, BootstrapError, Mt19937, Summation};

use crate::parallel::{guarded, slice};

fn generator(state: &PyReadonlyArray1<'_, u32>, pos: usize) -> PyResult<Mt19937> {
    Mt19937::from_state(slice(state, "state")?, pos).map_err(value_error)
}

fn value_error(e: BootstrapError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Run a resampling kernel without the GIL; its statistics as an array.
fn statistics<'py>(
    py: Python<'py>,
    kernel: impl FnOnce() -> Result<Vec<f64>, BootstrapError> + Send,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    Ok(py.detach(kernel).map_err(value_error)?.into_pyarray(py))
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
        statistics(py, || {
            bootstrap::bootstrap_means(v, mt, resamples, summation(compensated))
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
        statistics(py, || {
            bootstrap::bootstrap_ratios(c, w, mt, resamples, summation(compensated))
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
