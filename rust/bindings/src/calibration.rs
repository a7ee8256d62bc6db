//! Bindings of the `calibration` kernel: calibration rows read straight from Python lists (no
//! arrays) for the small-input paths, and the kernel's answers converted back. No calibration
//! logic lives here.

use pyo3::prelude::*;
use scorekit_kernels::calibration::{self, Bins, SortedRows};

use crate::packing::read_exact_rows;
use crate::parallel::guarded;

/// `_binned` (in `scorekit.qe.calibrate`): per bin in use, ascending, `(counts, sums, hits, n)`
/// (the kernel's `calibration::bins`) when `probs` is exactly a `list` or `tuple` of `float`s and
/// `correct` one of `True` and `False` as long, and `n_bins` from 1 to 2**53; else `None` (the
/// caller reads the rows and names what is wrong).
#[pyfunction]
fn listed_bins(
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    n_bins: u64,
) -> PyResult<Option<Bins>> {
    guarded(|| {
        if n_bins == 0 || n_bins > 1 << 53 {
            return Ok(None);
        }
        Ok(read_exact_rows(probs, correct).map(|(p, c)| calibration::bins(&p, &c, n_bins)))
    })
}

/// The rows of `probs` and `correct` as `calibration::sorted_rows` sorts them, when `probs` is
/// exactly a `list` or `tuple` of fewer than `limit` `float`s and `correct` one of `True` and
/// `False` as long; else `None`.
fn sorted_rows(
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    limit: usize,
) -> Option<SortedRows> {
    let (p, c) = read_exact_rows(probs, correct)?;
    if p.len() >= limit {
        return None;
    }
    calibration::sorted_rows(&p, &c)
}

/// `_small_sorted_rows` (in `scorekit.qe.decide`): the rows of [`sorted_rows`] (as a list of
/// `(p, wrong)` tuples) and how many are wrong, or `None` (the caller reads the rows with NumPy).
#[pyfunction]
fn listed_sorted_rows(
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    limit: usize,
) -> PyResult<Option<SortedRows>> {
    guarded(|| Ok(sorted_rows(probs, correct, limit)))
}

/// `_small_risk_fit` (in `scorekit.qe.decide`): `(n, lam)` of `RiskControlGate.fit` with the 0/1
/// loss over the rows of [`sorted_rows`] (the kernel's `calibration::risk_threshold`), or `None`
/// (the caller reads the rows with NumPy).
#[pyfunction]
fn listed_risk_fit(
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    limit: usize,
    bound: f64,
    target: f64,
) -> PyResult<Option<(usize, f64)>> {
    guarded(|| {
        Ok(sorted_rows(probs, correct, limit).map(|(rows, wrong)| {
            (
                rows.len(),
                calibration::risk_threshold(&rows, wrong, bound, target),
            )
        }))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(listed_bins, m)?)?;
    m.add_function(wrap_pyfunction!(listed_sorted_rows, m)?)?;
    m.add_function(wrap_pyfunction!(listed_risk_fit, m)?)
}
