//! Flexible character accuracy (`scorekit_kernels::fca`): the batched greedy runs equal each
//! coefficient combination's run by the definition (pieces `(line, start, end)`, the longest
//! ground-truth piece first, the first OCR piece of least penalty, brute-force best substrings),
//! the least of them; malformed offsets and coefficients are errors, never a panic.
#![no_main]

use std::cmp::Reverse;

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::{levenshtein_dp, Input};
use scorekit_kernels::fca::{fca_errors, MAX_COEFFICIENT};

/// Least distance to `pattern` over every substring of `text`, then the last end, then the
/// earliest start: `(d, start, end)`.
fn best_substring(pattern: &[u32], text: &[u32]) -> (usize, usize, usize) {
    let mut best = (usize::MAX, 0, 0);
    for end in 0..=text.len() {
        for start in (0..=end).rev() {
            let d = levenshtein_dp(pattern, &text[start..end]);
            if d < best.0 || (d == best.0 && (end > best.2 || (end == best.2 && start < best.1))) {
                best = (d, start, end);
            }
        }
    }
    best
}

fn one_run(gt: &[Vec<u32>], ocr: &[Vec<u32>], c: [i64; 4]) -> u64 {
    let whole = |lines: &[Vec<u32>]| -> Vec<(usize, usize, usize)> {
        (0..lines.len())
            .filter(|&k| !lines[k].is_empty())
            .map(|k| (k, 0, lines[k].len()))
            .collect()
    };
    let (mut gp, mut op) = (whole(gt), whole(ocr));
    let mut errors = 0;
    while !gp.is_empty() && !op.is_empty() {
        gp.sort_by_key(|&(line, start, end)| (Reverse(end - start), line, start));
        let (gl, gs, ge) = gp.remove(0);
        let g = &gt[gl][gs..ge];
        let mut chosen = (i64::MAX, 0, (0, 0, 0));
        for (k, &(ol, os, oe)) in op.iter().enumerate() {
            let o = &ocr[ol][os..oe];
            let (a, b) = (g.len() as i64, o.len() as i64);
            let (d, s, e) = if a <= b {
                best_substring(g, o)
            } else {
                best_substring(o, g)
            };
            let offset = (s as i64).min(a.max(b) - e as i64);
            let p = c[0] * d as i64 + c[1] * (a - b).abs() + c[2] * offset - c[3] * a.min(b);
            if p < chosen.0 {
                chosen = (p, k, (d, s, e));
            }
        }
        let (_, k, (d, s, e)) = chosen;
        let (ol, os, oe) = op.remove(k);
        errors += d as u64;
        if ge - gs <= oe - os {
            let rest = [(ol, os, os + s), (ol, os + e, oe)];
            for (n, &p) in rest.iter().filter(|p| p.2 > p.1).enumerate() {
                op.insert(k + n, p);
            }
        } else {
            gp.extend(
                [(gl, gs, gs + s), (gl, gs + e, ge)]
                    .into_iter()
                    .filter(|p| p.2 > p.1),
            );
        }
    }
    errors
        + gp.iter()
            .chain(&op)
            .map(|p| (p.2 - p.1) as u64)
            .sum::<u64>()
}

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
        (0..input.below(5)).map(|_| input.sequence(7)).collect()
    };
    let (gt, ocr) = (page(&mut input), page(&mut input));
    let coefficients: Vec<[i64; 4]> = (0..1 + input.below(8))
        .map(|_| {
            [0; 4].map(|_: i64| match input.byte() % 8 {
                0 => MAX_COEFFICIENT,
                _ => i64::from(input.byte() % 32),
            })
        })
        .collect();
    let ((gv, go), (ov, oo)) = (pack(&gt), pack(&ocr));
    let expected = coefficients.iter().map(|&c| one_run(&gt, &ocr, c)).min();
    assert_eq!(fca_errors(&gv, &go, &ov, &oo, &coefficients).ok(), expected);

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
