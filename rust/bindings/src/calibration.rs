//! Calibration rows read straight from Python lists (no arrays) for the small-input paths: the
//! bins `expected_calibration_error` and `reliability_curve` are built from, and the sorted rows
//! of the risk-control fit and the risk-coverage curve.

use std::collections::BTreeMap;

use pyo3::prelude::*;

use crate::packing::read_exact_rows;
use crate::parallel::guarded;

/// Per bin in use, ascending: row counts, sums of probabilities, numbers correct; and the rows.
type Bins = (Vec<u64>, Vec<f64>, Vec<f64>, u64);

/// Per bin in use, ascending: `(counts, sums, hits, n)` of `_binned` (in `scorekit.qe.calibrate`)
/// when `probs` is exactly a `list` or `tuple` of `float`s and `correct` one of `True` and `False`
/// as long; else `None` (the caller reads the rows and names what is wrong). Non-finite
/// probabilities are skipped, the others clamped into `[0, 1]`; a row's bin is
/// `min(int(p * n_bins), n_bins - 1)`, and each bin's probabilities and outcomes are added in row
/// order onto `0.0`, as `np.bincount` adds them. `n_bins` is at least 1 and at most 2**53.
#[pyfunction]
fn listed_bins(
    py: Python<'_>,
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    n_bins: u64,
) -> PyResult<Option<Bins>> {
    guarded(|| {
        let Some((p, c)) = read_exact_rows(py, probs, correct) else {
            return Ok(None);
        };
        if n_bins == 0 || n_bins > 1 << 53 {
            return Ok(None);
        }
        let mut bins: BTreeMap<u64, (u64, f64, f64)> = BTreeMap::new();
        let mut n = 0;
        for (&x, &ok) in p.iter().zip(&c) {
            if !x.is_finite() {
                continue;
            }
            let x = x.clamp(0.0, 1.0); // -0.0 stays -0.0, as in the Python path
            let bin = ((x * n_bins as f64) as u64).min(n_bins - 1);
            let (count, sum, hits) = bins.entry(bin).or_insert((0, 0.0, 0.0));
            *count += 1;
            *sum += x;
            *hits += if ok { 1.0 } else { 0.0 };
            n += 1;
        }
        let mut out = (Vec::new(), Vec::new(), Vec::new(), n);
        for (count, sum, hits) in bins.into_values() {
            out.0.push(count);
            out.1.push(sum);
            out.2.push(hits);
        }
        Ok(Some(out))
    })
}

/// Calibration rows as `(p, wrong)`, ascending, and how many are wrong.
type SortedRows = (Vec<(f64, bool)>, usize);

/// The finite rows as `(p, wrong)`, ascending, and how many are wrong, when `probs` is exactly a
/// `list` or `tuple` of fewer than `limit` `float`s and `correct` one of `True` and `False` as long,
/// with no finite probability outside `[0, 1]` and no `-0.0` (whose place among equal zeros
/// NumPy's sort decides); else `None`.
fn sorted_rows(
    py: Python<'_>,
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    limit: usize,
) -> Option<SortedRows> {
    let (p, c) = read_exact_rows(py, probs, correct)?;
    if p.len() >= limit {
        return None;
    }
    let mut rows = Vec::with_capacity(p.len());
    rows.extend(
        p.iter()
            .zip(&c)
            .filter(|(x, _)| x.is_finite())
            .map(|(&x, &ok)| (x, !ok)),
    );
    let odd =
        |&(x, _): &(f64, bool)| !(0.0..=1.0).contains(&x) || (x == 0.0 && x.is_sign_negative());
    if rows.iter().any(odd) {
        return None;
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))); // as Python sorts the tuples
    let wrong = rows.iter().filter(|row| row.1).count();
    Some((rows, wrong))
}

/// `_small_sorted_rows` (in `scorekit.qe.decide`): the rows of [`sorted_rows`] (as a list of
/// `(p, wrong)` tuples) and how many are wrong, or `None` (the caller reads the rows with NumPy).
#[pyfunction]
fn listed_sorted_rows(
    py: Python<'_>,
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    limit: usize,
) -> PyResult<Option<SortedRows>> {
    guarded(|| Ok(sorted_rows(py, probs, correct, limit)))
}

/// `_small_risk_fit` (in `scorekit.qe.decide`): `(n, lam)` of `RiskControlGate.fit` with the 0/1
/// loss over the rows of [`sorted_rows`], as `_small_risk_threshold` counts them (the same
/// integer counts and float operations), or `None` (the caller reads the rows with NumPy).
#[pyfunction]
fn listed_risk_fit(
    py: Python<'_>,
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
    limit: usize,
    bound: f64,
    target: f64,
) -> PyResult<Option<(usize, f64)>> {
    const ACCEPT_NOTHING: f64 = 1.0 + 1e-9; // decide._ACCEPT_NOTHING
    guarded(|| {
        let Some((rows, mut wrong)) = sorted_rows(py, probs, correct, limit) else {
            return Ok(None);
        };
        let n = rows.len();
        if n == 0 {
            return Ok(Some((
                0,
                if bound <= target { 0.0 } else { ACCEPT_NOTHING },
            )));
        }
        // Python's (n * (wrong / n) + bound) / (n + 1) <= target, the counts exact as floats.
        let within = |wrong: usize| {
            (n as f64 * (wrong as f64 / n as f64) + bound) / (n + 1) as f64 <= target
        };
        if within(wrong) {
            return Ok(Some((n, 0.0)));
        }
        let mut last = None;
        for (lam, w) in rows {
            if last != Some(lam) {
                if within(wrong) {
                    return Ok(Some((n, lam)));
                }
                last = Some(lam);
            }
            wrong -= usize::from(w);
        }
        Ok(Some((n, ACCEPT_NOTHING)))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(listed_bins, m)?)?;
    m.add_function(wrap_pyfunction!(listed_sorted_rows, m)?)?;
    m.add_function(wrap_pyfunction!(listed_risk_fit, m)?)
}
