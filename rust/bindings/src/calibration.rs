//! The calibration measures' binning of rows read straight from Python lists (no arrays): the
//! bins `expected_calibration_error` and `reliability_curve` are built from.

use std::collections::BTreeMap;

use pyo3::prelude::*;

use crate::packing::{read_exact_bools, read_exact_floats};
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
        let (Some(p), Some(c)) = (read_exact_floats(py, probs), read_exact_bools(correct)) else {
            return Ok(None);
        };
        if p.len() != c.len() || n_bins == 0 || n_bins > 1 << 53 {
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(listed_bins, m)?)
}
