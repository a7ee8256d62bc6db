//! scorekit-kernels: the pure-Rust scoring kernels of scorekit.
//!
//! One module per algorithm family. Inputs are plain slices (`&[u32]` code points or token ids,
//! cost tables as `&[f64]`), outputs are plain values and structs. Nothing here knows Python;
//! the `scorekit-bindings` crate wraps these functions for `scorekit._core`.

pub mod align;
pub mod anls;
pub mod bootstrap;
pub mod canon;
pub mod conformal;
pub mod ged;
pub mod isotonic;
pub mod levenshtein;
pub mod records;
pub mod rover;
pub mod simd;
pub mod text_columns;
pub mod tree;

/// Runs two closures once each, one after the other or side by side on two threads (the bindings
/// pass `rayon::join`); kernels that split their work in two halves take one.
pub trait Join: Fn(&mut (dyn FnMut() + Send), &mut (dyn FnMut() + Send)) {}

impl<F: Fn(&mut (dyn FnMut() + Send), &mut (dyn FnMut() + Send))> Join for F {}

/// The [`Join`] that runs both halves on the calling thread.
pub fn one_thread(first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
    first();
    second();
}
