//! Levenshtein distance and alignment counts against the textbook dynamic programme.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::{levenshtein_dp, Input};
use scorekit_kernels::levenshtein::{align, distance, AlignWorkspace, DistanceWorkspace};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let a = input.sequence(300);
    let b = input.sequence(300);
    let expected = levenshtein_dp(&a, &b);
    let mut ws = DistanceWorkspace::new();
    assert_eq!(distance(&mut ws, &a, &b).unwrap(), expected);
    assert_eq!(distance(&mut ws, &b, &a).unwrap(), expected, "symmetry");
    let counts = align(&mut AlignWorkspace::new(), &a, &b).unwrap();
    assert_eq!(counts.edits(), expected);
    assert_eq!(
        counts.hits + counts.substitutions + counts.deletions,
        a.len()
    );
    assert_eq!(
        counts.hits + counts.substitutions + counts.insertions,
        b.len()
    );
});
