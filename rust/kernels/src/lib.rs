//! scorekit-kernels: the pure-Rust scoring kernels of scorekit.
//!
//! One module per algorithm family. Inputs are plain slices (`&[u32]` code points or token ids,
//! cost tables as `&[f64]`), outputs are plain values and structs. Nothing here knows Python;
//! the `scorekit-bindings` crate wraps these functions for `scorekit._core`.

pub mod align;
pub mod anls;
pub mod bootstrap;
pub mod calibration;
pub mod canon;
pub mod conformal;
pub mod fca;
pub mod flows;
pub mod ged;
pub mod groups;
pub mod interning;
pub mod isotonic;
pub mod levenshtein;
pub mod platt;
pub mod record_values;
pub mod records;
pub mod rover;
pub mod simd;
pub mod text_columns;
pub mod tree;

/// The `i64` equal to `f` under Python's `int == float`: `Some` for an integral float in
/// `-2**63..2**63` (`-0.0` gives 0), `None` for a fraction, a larger magnitude, an infinity or NaN.
/// The one rule by which every binding keys numbers by value, so two paths never disagree on which
/// floats equal which ints.
pub fn exact_i64(f: f64) -> Option<i64> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2**63
    (f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

/// Runs two closures once each, one after the other or side by side on two threads (the bindings
/// pass `rayon::join`); kernels that split their work in two halves take one.
pub trait Join: Fn(&mut (dyn FnMut() + Send), &mut (dyn FnMut() + Send)) {}

impl<F: Fn(&mut (dyn FnMut() + Send), &mut (dyn FnMut() + Send))> Join for F {}

/// The [`Join`] that runs both halves on the calling thread.
pub fn one_thread(first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
    first();
    second();
}

#[cfg(test)]
mod tests {
    use super::exact_i64;

    #[test]
    fn exact_i64_is_pythons_int_equals_float() {
        assert_eq!(exact_i64(-0.0), Some(0));
        assert_eq!(exact_i64(9.2e18), Some(9_200_000_000_000_000_000));
        let below = 9_223_372_036_854_774_784; // 2**63 - 1024, the largest float below 2**63
        assert_eq!(exact_i64(below as f64), Some(below));
        assert_eq!(exact_i64(9_223_372_036_854_775_808.0), None); // 2**63
        assert_eq!(exact_i64(-9_223_372_036_854_775_808.0), Some(i64::MIN));
        for f in [0.5, -1.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e300] {
            assert_eq!(exact_i64(f), None);
        }
    }
}
