//! One text pair scored straight from its two `str`s (`StringMetric` on a single pair): the
//! counts come back as Python ints, so scoring one pair needs neither packing nor NumPy, and a
//! first `scorekit.score` call does not pay for importing NumPy.

use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use scorekit_kernels::levenshtein::{align, word_alignment, AlignWorkspace, WordWorkspace};

use crate::graphemes::Segmenter;
use crate::packing::{CodePoints, Reader};
use crate::parallel::{guarded, run_here};

/// `(ref_len, substitutions, deletions, insertions)` of `hypothesis` against `reference`, with
/// `ref_len` in code points (`mode="cer"`) or words split as Python's `str.split()` does
/// (`mode="wer"`): the kernels and counts of `levenshtein_alignment_batch` and
/// `word_alignment_batch`. `unit="grapheme"` (CER only) counts extended grapheme clusters, read
/// as `GraphemePacker` reads them. A lone surrogate is a `ValueError` naming `pred[0]` or `gold[0]`.
#[pyfunction]
#[pyo3(signature = (reference, hypothesis, mode, unit = "char"))]
fn text_pair_counts(
    py: Python<'_>,
    reference: &Bound<'_, PyString>,
    hypothesis: &Bound<'_, PyString>,
    mode: &str,
    unit: &str,
) -> PyResult<(i64, i64, i64, i64)> {
    guarded(|| {
        let words = match mode {
            "cer" => false,
            "wer" => true,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "mode must be 'cer' or 'wer', got '{mode}'"
                )))
            }
        };
        let (mut pred, mut gold) = (Vec::new(), Vec::new());
        match (unit, words) {
            ("char", _) => {
                CodePoints.append(py, hypothesis, &mut pred, "pred", 0)?;
                CodePoints.append(py, reference, &mut gold, "gold", 0)?;
            }
            ("grapheme", false) => {
                let mut segmenter = Segmenter::default();
                segmenter.append(py, hypothesis, &mut pred, "pred", 0)?;
                segmenter.append(py, reference, &mut gold, "gold", 0)?;
            }
            ("grapheme", true) => {
                return Err(PyValueError::new_err(
                    "unit='grapheme' applies to CER only, not to mode 'wer'",
                ))
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unit must be 'char' or 'grapheme', got '{unit}'"
                )))
            }
        }
        let counts = run_here(py, move || {
            if words {
                word_alignment(&mut WordWorkspace::new(), &gold, &pred)
                    .map(|w| (w.ref_words, w.counts))
            } else {
                align(&mut AlignWorkspace::new(), &gold, &pred).map(|c| (gold.len(), c))
            }
        })?;
        let (ref_len, c) =
            counts.map_err(|e| PyMemoryError::new_err(format!("out of memory ({e})")))?;
        Ok((
            ref_len as i64,
            c.substitutions as i64,
            c.deletions as i64,
            c.insertions as i64,
        ))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(text_pair_counts, m)?)
}
