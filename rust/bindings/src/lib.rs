//! `scorekit._core`: PyO3 bindings over `scorekit-kernels`.
//!
//! One module per kernel family registers its functions here. Every function converts arguments,
//! releases the GIL around the kernel, parallelises batches with rayon, and maps kernel errors to
//! Python exceptions; no panic crosses into Python.

#![deny(clippy::undocumented_unsafe_blocks)]

use pyo3::prelude::*;

/// mimalloc keeps freed pages for reuse: batch buffers (several MB per call) are then not
/// page-faulted in afresh on every call, which otherwise dominates short-string batches. It is
/// built without its transparent-huge-page advice (`no_thp`): with the usual kernel setting
/// (`defrag=madvise`) a fault in advised memory may compact memory synchronously, which stalled
/// a million-row isotonic fit by 20–40 ms after other work had fragmented memory.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod align;
mod anls;
mod arrow_text;
mod bootstrap;
mod calibration;
mod calls;
mod case_steps;
mod conformal;
mod episodes;
mod fca;
mod flows;
mod ged;
mod graphemes;
mod isotonic;
mod levenshtein;
mod objects;
mod packing;
mod parallel;
mod platt;
mod records;
mod rover;
mod tags;
mod text_pair;
mod tree;

/// The module needs the GIL: its `unsafe` code has not been audited for free-threaded CPython
/// (docs/architecture.md).
#[pymodule(gil_used = true)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    ged::register(m)?;
    anls::register(m)?;
    levenshtein::register(m)?;
    m.add_function(wrap_pyfunction!(packing::pack_texts, m)?)?;
    m.add_function(wrap_pyfunction!(packing::pack_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(packing::pack_joined, m)?)?;
    m.add_function(wrap_pyfunction!(packing::read_floats, m)?)?;
    m.add_function(wrap_pyfunction!(packing::read_bools, m)?)?;
    m.add_function(wrap_pyfunction!(packing::fuse_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(packing::exact_floats, m)?)?;
    tree::register(m)?;
    flows::register(m)?;
    align::register(m)?;
    calls::register(m)?;
    rover::register(m)?;
    text_pair::register(m)?;
    graphemes::register(m)?;
    records::register(m)?;
    case_steps::register(m)?;
    bootstrap::register(m)?;
    calibration::register(m)?;
    episodes::register(m)?;
    isotonic::register(m)?;
    conformal::register(m)?;
    platt::register(m)?;
    arrow_text::register(m)?;
    tags::register(m)?;
    fca::register(m)?;
    Ok(())
}
