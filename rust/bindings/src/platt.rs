//! Bindings of the `platt` kernel: argument conversion, GIL release, errors as `ValueError`.
//! No calibration logic lives here.

use std::borrow::Cow;

use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scorekit_kernels::platt;

use crate::packing::{bools_in, floats_in};
use crate::parallel::{guarded, run_here};

/// The Platt fit of `scores` (float64 array) and `correct` (bool array of the same length, either
/// strided or not), the rows whose score is not finite left out: `(a, b, rows, correct rows)`,
/// `a` or `b` non-finite when the iteration overflowed. Runs on the calling thread, the GIL released.
#[pyfunction]
fn platt_fit(
    py: Python<'_>,
    scores: PyReadonlyArray1<'_, f64>,
    correct: PyReadonlyArray1<'_, bool>,
    max_iter: usize,
) -> PyResult<(f64, f64, usize, usize)> {
    guarded(|| {
        // A strided array (a view) is copied; the rows are read in place otherwise.
        let x: Cow<[f64]> = scores
            .as_slice()
            .map_or_else(|_| Cow::Owned(scores.as_array().to_vec()), Cow::Borrowed);
        let c: Cow<[bool]> = correct
            .as_slice()
            .map_or_else(|_| Cow::Owned(correct.as_array().to_vec()), Cow::Borrowed);
        let fit = run_here(py, || platt::fit(&x, &c, max_iter))?
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((fit.a, fit.b, fit.rows, fit.positive))
    })
}

/// [`platt_fit`] of `scores` and `correct` read as `read_floats` and `read_bools` read them
/// (exact lists or tuples of plain numbers and of bools, of one length), without making arrays;
/// `None` for any other input (the caller reads and checks it, then calls [`platt_fit`]).
#[pyfunction]
fn platt_fit_listed(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    max_iter: usize,
) -> PyResult<Option<(f64, f64, usize, usize)>> {
    guarded(|| {
        let (Some(x), Some(c)) = (floats_in(scores), bools_in(correct)) else {
            return Ok(None);
        };
        if x.len() != c.len() {
            return Ok(None);
        }
        let fit = run_here(py, || platt::fit(&x, &c, max_iter))?
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Some((fit.a, fit.b, fit.rows, fit.positive)))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(platt_fit, m)?)?;
    m.add_function(wrap_pyfunction!(platt_fit_listed, m)?)
}
