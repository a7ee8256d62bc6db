//! `scorekit._core`: PyO3 bindings over `scorekit-kernels`.
//!
//! One module per kernel family registers its functions here. Every function converts arguments,
//! releases the GIL around the kernel, parallelises batches with rayon, and maps kernel errors to
//! Python exceptions; no panic crosses into Python.

use pyo3::prelude::*;

mod flows;
mod levenshtein;
mod parallel;
mod tree;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    levenshtein::register(m)?;
    tree::register(m)?;
    flows::register(m)?;
    Ok(())
}
