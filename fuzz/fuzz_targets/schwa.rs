//! Schwa-forgiving distance: between 0 and the plain distance, equal to it without joins, equal to
//! the previous row-by-row kernel, and out-of-range joins are errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::{levenshtein_dp, Input};
use scorekit_kernels::levenshtein::{schwa_distance, schwa_distance_rows, SchwaWorkspace};

const SCHWA: [u32; 2] = [0x568, 0x538];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut gt = input.sequence(120);
    let mut pred = input.sequence(120);
    // Sprinkle schwas so that joins next to them matter.
    for k in 0..input.below(4) {
        let side = if k % 2 == 0 { &mut gt } else { &mut pred };
        let at = input.below(side.len() + 1);
        side.insert(at, SCHWA[k % 2]);
    }
    let joins = |input: &mut Input<'_>, len: usize| -> Vec<i64> {
        (0..input.below(4))
            .map(|_| input.below(len + 3) as i64 - 1)
            .collect()
    };
    let gt_joins = joins(&mut input, gt.len());
    let pred_joins = joins(&mut input, pred.len());
    let plain = levenshtein_dp(&gt, &pred);
    let mut ws = SchwaWorkspace::new();
    let in_range = |j: &[i64], len: usize| j.iter().all(|&p| 0 <= p && p as usize <= len);
    match schwa_distance(&mut ws, &gt, &pred, &gt_joins, &pred_joins, &SCHWA) {
        Ok(d) => {
            assert!(in_range(&gt_joins, gt.len()) && in_range(&pred_joins, pred.len()));
            assert!(d <= plain);
            assert_eq!(
                schwa_distance_rows(&mut ws, &gt, &pred, &gt_joins, &pred_joins, &SCHWA),
                Ok(d)
            );
            assert_eq!(
                schwa_distance(&mut ws, &gt, &pred, &[], &[], &SCHWA),
                Ok(plain)
            );
        }
        Err(message) => {
            assert!(
                !in_range(&gt_joins, gt.len()) || !in_range(&pred_joins, pred.len()),
                "{message:?}"
            );
        }
    }
});
