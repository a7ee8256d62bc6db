use std::cmp::Reverse;

use super::*;
use crate::levenshtein::reference::{distance, Rng};

/// The coefficient grid of `scorekit.ocr.fca.COEFFICIENTS`.
fn grid() -> Vec<[i64; 4]> {
    let mut out = Vec::new();
    for ed in (15..=30).step_by(5) {
        for ld in (0..24).step_by(3) {
            for off in 0..4 {
                for len in 0..6 {
                    out.push([ed, ld, off, len]);
                }
            }
        }
    }
    out
}

fn pack(lines: &[Vec<u32>]) -> (Vec<u32>, Vec<i64>) {
    let mut offsets = vec![0i64];
    let values: Vec<u32> = lines.iter().flatten().copied().collect();
    for line in lines {
        offsets.push(offsets.last().unwrap() + line.len() as i64);
    }
    (values, offsets)
}

fn errors(gt: &[Vec<u32>], ocr: &[Vec<u32>], coefficients: &[[i64; 4]]) -> u64 {
    let (gv, go) = pack(gt);
    let (ov, oo) = pack(ocr);
    fca_errors(&gv, &go, &ov, &oo, coefficients).unwrap()
}

/// Every substring of `text` tried: least distance to `pattern`, then the last end, then the
/// earliest start.
fn brute_substring(pattern: &[u32], text: &[u32]) -> (usize, usize, usize) {
    let mut best = (usize::MAX, 0, 0);
    for end in 0..=text.len() {
        for start in (0..=end).rev() {
            let d = distance(pattern, &text[start..end]);
            if d < best.0 || (d == best.0 && (end, Reverse(start)) >= (best.2, Reverse(best.1))) {
                best = (d, start, end);
            }
        }
    }
    best
}

/// One coefficient combination's greedy run, by the definition: pieces `(line, start, end)`;
/// every ground-truth piece of the longest length finds its first OCR piece of least penalty, and
/// the pair of least penalty (the first ground-truth piece in line order among equal ones) is
/// matched.
fn one_run(gt: &[Vec<u32>], ocr: &[Vec<u32>], c: [i64; 4]) -> u64 {
    let whole = |lines: &[Vec<u32>]| -> Vec<(usize, usize, usize)> {
        (0..lines.len())
            .filter(|&k| !lines[k].is_empty())
            .map(|k| (k, 0, lines[k].len()))
            .collect()
    };
    let (mut gp, mut op) = (whole(gt), whole(ocr));
    let mut errors = 0u64;
    while !gp.is_empty() && !op.is_empty() {
        gp.sort_by_key(|&(line, start, end)| (Reverse(end - start), line, start));
        let longest = gp[0].2 - gp[0].1;
        let mut chosen: Option<(i64, usize, usize)> = None;
        let mut aligned = (0, 0, 0);
        for (t, &(gl, gs, ge)) in gp.iter().enumerate() {
            if ge - gs != longest {
                break;
            }
            let g = &gt[gl][gs..ge];
            for (k, &(ol, os, oe)) in op.iter().enumerate() {
                let o = &ocr[ol][os..oe];
                let (a, b) = (g.len() as i64, o.len() as i64);
                let (d, s, e) = if a <= b {
                    brute_substring(g, o)
                } else {
                    brute_substring(o, g)
                };
                let offset = (s as i64).min(a.max(b) - e as i64);
                let p = c[0] * d as i64 + c[1] * (a - b).abs() + c[2] * offset - c[3] * a.min(b);
                if chosen.is_none_or(|(least, _, _)| p < least) {
                    chosen = Some((p, t, k));
                    aligned = (d, s, e);
                }
            }
        }
        let ((_, t, k), (d, s, e)) = (chosen.unwrap(), aligned);
        let (gl, gs, ge) = gp.remove(t);
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
    let left: usize = gp.iter().chain(&op).map(|p| p.2 - p.1).sum();
    errors + left as u64
}

fn oracle(gt: &[Vec<u32>], ocr: &[Vec<u32>], coefficients: &[[i64; 4]]) -> u64 {
    coefficients
        .iter()
        .map(|&c| one_run(gt, ocr, c))
        .min()
        .unwrap()
}

fn text(lines: &[&str]) -> Vec<Vec<u32>> {
    lines
        .iter()
        .map(|l| l.chars().map(u32::from).collect())
        .collect()
}

#[test]
fn known_values() {
    let c = grid();
    assert_eq!(
        errors(
            &text(&["first line", "second line"]),
            &text(&["second line", "first line"]),
            &c
        ),
        0
    );
    assert_eq!(
        errors(&text(&["abc", "def"]), &text(&["def", "abx"]), &c),
        1
    );
    // `b` takes one `b` of `bb` for free; of the equally long `b` left and `a`, the paper's
    // step 3 matches `a` with `a` (the lower penalty), not the first in line order: 1, not 2.
    assert_eq!(errors(&text(&["bb", "a"]), &text(&["b", "a"]), &c), 1);
    assert_eq!(errors(&text(&["abc"]), &text(&[]), &c), 3);
    assert_eq!(errors(&text(&[]), &text(&["ab", "c"]), &c), 3);
    assert_eq!(errors(&text(&["", ""]), &text(&[""]), &c), 0);
}

#[test]
fn empty_lines_are_no_pieces() {
    let c = grid();
    let (gt, ocr) = (text(&["ab", "", "bba"]), text(&["", "ba", "", "b", ""]));
    let plain = errors(&text(&["ab", "bba"]), &text(&["ba", "b"]), &c);
    assert_eq!(errors(&gt, &ocr, &c), plain);
    assert_eq!(plain, oracle(&gt, &ocr, &c));
}

#[test]
fn matches_one_run_at_a_time_on_random_pages() {
    let mut rng = Rng(0xfca_5eed);
    let full = grid();
    for round in 0..300 {
        let page = |rng: &mut Rng| -> Vec<Vec<u32>> {
            (0..rng.below(5)).map(|_| rng.seq(7, &[1, 2, 3])).collect()
        };
        let (gt, ocr) = (page(&mut rng), page(&mut rng));
        let coefficients: Vec<[i64; 4]> = if round % 3 == 0 {
            full.clone()
        } else {
            (0..1 + rng.below(12))
                .map(|_| [0; 4].map(|_: i64| rng.below(41) as i64))
                .collect()
        };
        assert_eq!(
            errors(&gt, &ocr, &coefficients),
            oracle(&gt, &ocr, &coefficients),
            "{gt:?} / {ocr:?} / {coefficients:?}"
        );
    }
}

#[test]
fn matches_one_run_at_a_time_on_noisy_reordered_lines() {
    let mut rng = Rng(0x0c_0c0c);
    let full = grid();
    for _ in 0..6 {
        let gt: Vec<Vec<u32>> = (0..4 + rng.below(4))
            .map(|_| rng.seq(12, &[1, 2, 3, 4, 5]))
            .collect();
        let mut ocr: Vec<Vec<u32>> = gt
            .iter()
            .map(|line| {
                line.iter()
                    .filter_map(|&x| match rng.below(6) {
                        0 => None,
                        1 => Some(1 + rng.below(5) as u32),
                        _ => Some(x),
                    })
                    .collect()
            })
            .collect();
        let shift = rng.below(ocr.len());
        ocr.rotate_left(shift);
        assert_eq!(errors(&gt, &ocr, &full), oracle(&gt, &ocr, &full));
    }
}

#[test]
fn bad_input_is_an_error() {
    let c = [[1, 1, 1, 1]];
    let v = [1u32, 2, 3];
    assert!(matches!(
        fca_errors(&v, &[0, 4], &v, &[0, 3], &c),
        Err(FcaError::Offsets("gt"))
    ));
    assert!(matches!(
        fca_errors(&v, &[0, 3], &v, &[0, 2, 1, 3], &c),
        Err(FcaError::Offsets("ocr"))
    ));
    assert!(matches!(
        fca_errors(&v, &[], &v, &[0, 3], &c),
        Err(FcaError::Offsets("gt"))
    ));
    assert!(matches!(
        fca_errors(&v, &[1, 3], &v, &[0, 3], &c),
        Err(FcaError::Offsets("gt"))
    ));
    assert!(matches!(
        fca_errors(&v, &[0, 3], &v, &[0, 3], &[]),
        Err(FcaError::Coefficients)
    ));
    for bad in [-1, MAX_COEFFICIENT + 1] {
        assert!(matches!(
            fca_errors(&v, &[0, 3], &v, &[0, 3], &[[1, 1, bad, 1]]),
            Err(FcaError::Coefficients)
        ));
    }
    assert_eq!(
        fca_errors(&v, &[0, 3], &v, &[0, 3], &[[MAX_COEFFICIENT; 4]]).unwrap(),
        0
    );
}

#[test]
fn table_grows_and_finds_every_key() {
    let mut table = Table::<u64, u32>::new();
    for k in 0..5000u64 {
        table.insert((k * 7919) << 20 | k, k as u32).unwrap();
    }
    for k in 0..5000u64 {
        assert_eq!(table.get((k * 7919) << 20 | k), Some(k as u32));
    }
    assert_eq!(table.get(3), None);
    table.clear();
    assert_eq!(table.get(0), None);
}
