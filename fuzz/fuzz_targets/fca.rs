//! Flexible character accuracy (`scorekit_kernels::fca`): the runs of several coefficient rows,
//! advanced together (branching where their choices differ, merging equal states), give the
//! least of the rows' errors run one at a time; the errors lie between the length difference and
//! the two sides' characters; malformed offsets and coefficients are errors, never a panic. (The
//! unit tests check single runs against the definition, with brute-force substrings.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::Input;
use scorekit_kernels::fca::{fca_errors, MAX_COEFFICIENT};

fn pack(lines: &[Vec<u32>]) -> (Vec<u32>, Vec<i64>) {
    let mut offsets = vec![0i64];
    for line in lines {
        offsets.push(offsets.last().unwrap() + line.len() as i64);
    }
    (lines.concat(), offsets)
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let page = |input: &mut Input<'_>| -> Vec<Vec<u32>> {
        (0..input.below(7)).map(|_| input.sequence(12)).collect()
    };
    let (gt, ocr) = (page(&mut input), page(&mut input));
    let coefficients: Vec<[i64; 4]> = (0..1 + input.below(16))
        .map(|_| {
            [0; 4].map(|_: i64| match input.byte() % 8 {
                0 => MAX_COEFFICIENT,
                _ => i64::from(input.byte() % 32),
            })
        })
        .collect();
    let ((gv, go), (ov, oo)) = (pack(&gt), pack(&ocr));
    let together = fca_errors(&gv, &go, &ov, &oo, &coefficients).unwrap();
    let alone = coefficients
        .iter()
        .map(|c| fca_errors(&gv, &go, &ov, &oo, &[*c]).unwrap())
        .min();
    assert_eq!(Some(together), alone);
    let (n, m) = (gv.len() as u64, ov.len() as u64);
    assert!(n.abs_diff(m) <= together && together <= n + m);

    // Malformed offsets or coefficients: an error, never a panic.
    let bad_offsets: Vec<i64> = (0..input.below(4))
        .map(|_| i64::from(input.byte()) - 2)
        .collect();
    let _ = fca_errors(&gv, &bad_offsets, &ov, &oo, &coefficients);
    let bad = [
        [-1, 0, 0, 0],
        [0, 0, 0, MAX_COEFFICIENT + 1],
        [i64::MIN, i64::MAX, 0, 0],
    ];
    let pick = input.below(4);
    let rows = if pick == 3 {
        &bad[..0]
    } else {
        &bad[pick..=pick]
    };
    assert!(fca_errors(&gv, &go, &ov, &oo, rows).is_err());
});
