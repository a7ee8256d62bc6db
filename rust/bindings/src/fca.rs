//! Bindings of the `fca` kernel (the flexible character accuracy's greedy line matching, see
//! `scorekit._kernels.fca`): argument conversion, GIL release, errors as `ValueError` /
//! `MemoryError`. No matching logic lives here.

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use scorekit_kernels::fca::{self, FcaError};

use crate::parallel::{guarded, run_here, slice};

/// The fewest errors of the greedy line matching of the ground-truth lines (`gt_values`,
/// `gt_offsets`) with the OCR lines over `coefficients` (`int64[n, 4]` rows `(edit distance,
/// length difference, offset, length)`), on the calling thread.
#[pyfunction]
fn fca_errors(
    py: Python<'_>,
    gt_values: PyReadonlyArray1<'_, u32>,
    gt_offsets: PyReadonlyArray1<'_, i64>,
    ocr_values: PyReadonlyArray1<'_, u32>,
    ocr_offsets: PyReadonlyArray1<'_, i64>,
    coefficients: PyReadonlyArray2<'_, i64>,
) -> PyResult<u64> {
    guarded(|| {
        let (gv, go) = (
            slice(&gt_values, "gt_values")?,
            slice(&gt_offsets, "gt_offsets")?,
        );
        let (ov, oo) = (
            slice(&ocr_values, "ocr_values")?,
            slice(&ocr_offsets, "ocr_offsets")?,
        );
        // `as_slice` also takes a Fortran-ordered array, whose rows it would read as columns.
        let flat = coefficients
            .as_slice()
            .ok()
            .filter(|_| coefficients.shape()[1] == 4 && coefficients.is_c_contiguous())
            .ok_or_else(|| {
                PyValueError::new_err(
                    "coefficients must be a C-contiguous int64 array of shape (n, 4)",
                )
            })?;
        let rows: Vec<[i64; 4]> = flat
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        run_here(py, || fca::fca_errors(gv, go, ov, oo, &rows))?.map_err(|e| match e {
            FcaError::OutOfMemory(_) => PyMemoryError::new_err(e.to_string()),
            _ => PyValueError::new_err(e.to_string()),
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fca_errors, m)?)
}
