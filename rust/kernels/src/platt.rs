//! Platt scaling: the Newton/IRLS fit of `sigmoid(a * x + b)` to labelled scores
//! (`scorekit.qe.PlattCalibrator.fit` on up to `_KERNEL_ROWS` rows; longer fits run NumPy's
//! vectorised `exp` on the same iteration).
//!
//! The iteration is the reference kit's: from `a = 0` and `b` = the smoothed log-odds, Newton
//! steps on Platt's smoothed targets (`(n+ + 1) / (n+ + 2)` for a correct row, `1 / (n- + 2)`
//! otherwise) with a `1e-10` ridge on the Hessian, stopping when both steps are below `1e-9`,
//! when the Hessian is singular, or after `max_iter` steps. The steps are taken for
//! `(a, b + a * mu)` on scores centred at their mean `mu`, the ridge mapped to those coordinates:
//! the same iterates in exact arithmetic, without the reference's cancellation on scores far from
//! 0. Rows whose score is not finite are left out (as the reference leaves them out).
//!
//! Every sum is accurate to about one rounding of its total: the terms of a block of [`BLOCK`]
//! rows are added in 8 lanes (NumPy's pairwise block), and the blocks' totals with their rounding
//! errors carried (TwoSum), so no sum is less accurate than NumPy's pairwise one, whatever the
//! number of rows; `exp` is the platform's (`f64::exp`).

use std::fmt;

/// The reference's ridge on the Hessian's diagonal.
const RIDGE: f64 = 1e-10;
/// The floor of a row's weight `p (1 - p)`.
const WEIGHT_FLOOR: f64 = 1e-12;
/// A Hessian determinant below this (in magnitude) stops the iteration.
const SINGULAR: f64 = 1e-18;
/// Steps of `a` and `b` both below this stop the iteration.
const STEP_TOL: f64 = 1e-9;
/// Rows per block whose terms are added in 8 plain lanes.
pub const BLOCK: usize = 128;

/// Why the rows cannot be fitted.
#[derive(Debug, Clone, PartialEq)]
pub enum PlattError {
    /// `scores` and `correct` differ in length.
    LengthMismatch { scores: usize, correct: usize },
}

impl fmt::Display for PlattError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlattError::LengthMismatch { scores, correct } => {
                write!(f, "{scores} scores but {correct} correct flags")
            }
        }
    }
}

impl std::error::Error for PlattError {}

/// A fitted `(a, b)` (either may be non-finite when the iteration overflowed: the caller names
/// the error), and the rows with a finite score, in all and correct.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlattFit {
    pub a: f64,
    pub b: f64,
    pub rows: usize,
    pub positive: usize,
}

/// A sum with its rounding error carried (TwoSum): accurate to about one rounding of the total.
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    hi: f64,
    lo: f64,
}

impl Sum {
    #[inline]
    fn add(&mut self, v: f64) {
        let t = self.hi + v;
        let b = t - self.hi;
        self.lo += (self.hi - (t - b)) + (v - b);
        self.hi = t;
    }

    /// The total; an infinite or NaN running sum as it is (its error term is NaN then).
    fn value(self) -> f64 {
        if self.hi.is_finite() {
            self.hi + self.lo
        } else {
            self.hi
        }
    }
}

/// Eight lanes added as NumPy combines them.
#[inline]
fn lanes_total(l: &[f64; 8]) -> f64 {
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

/// `(rows, correct rows, sum of xc, sum of xc over the correct rows)` over the finite scores,
/// `xc = x - mu`.
fn target_sums(x: &[f64], c: &[bool], mu: f64) -> (usize, usize, f64, f64) {
    let (mut n, mut n_pos) = (0usize, 0usize);
    let (mut total, mut correct) = (Sum::default(), Sum::default());
    for (block, flags) in x.chunks(BLOCK).zip(c.chunks(BLOCK)) {
        let (mut all, mut pos) = ([0.0f64; 8], [0.0f64; 8]);
        for (group, group_flags) in block.chunks(8).zip(flags.chunks(8)) {
            for (l, (&v, &k)) in group.iter().zip(group_flags).enumerate() {
                if v.is_finite() {
                    all[l] += v - mu;
                    n += 1;
                    if k {
                        pos[l] += v - mu;
                        n_pos += 1;
                    }
                }
            }
        }
        total.add(lanes_total(&all));
        correct.add(lanes_total(&pos));
    }
    (n, n_pos, total.value(), correct.value())
}

/// With `xc = x - mu`, `p = sigmoid(a xc + bc)` and `w = max(p (1 - p), 1e-12)`, the five sums
/// `(p xc, p, w xc², w xc, w)` over the finite scores of `x`. Each group of 8 rows is computed
/// into 8 lanes (0 for a row left out), which the compiler keeps in vector registers.
fn pass(x: &[f64], mu: f64, a: f64, bc: f64) -> [Sum; 5] {
    let mut sums = [Sum::default(); 5];
    for block in x.chunks(BLOCK) {
        let mut lanes = [[0.0f64; 8]; 5];
        for group in block.chunks(8) {
            // A row left out: xc = 0, p = 0 (exp = inf) and weight 0 (kept = 0).
            let (mut xc, mut e, mut kept) = ([0.0f64; 8], [f64::INFINITY; 8], [0.0f64; 8]);
            for (l, &v) in group.iter().enumerate() {
                if v.is_finite() {
                    kept[l] = 1.0;
                    xc[l] = v - mu;
                    e[l] = (xc[l] * -a - bc).exp(); // overflow gives p = 0, its limit
                }
            }
            for l in 0..8 {
                let p = 1.0 / (e[l] + 1.0);
                let mut w = p - p * p;
                if w < WEIGHT_FLOOR {
                    w = WEIGHT_FLOOR; // NaN stays NaN
                }
                w *= kept[l];
                let wx = w * xc[l];
                lanes[0][l] += p * xc[l];
                lanes[1][l] += p;
                lanes[2][l] += wx * xc[l];
                lanes[3][l] += wx;
                lanes[4][l] += w;
            }
        }
        for (sum, lane) in sums.iter_mut().zip(&lanes) {
            sum.add(lanes_total(lane));
        }
    }
    sums
}

/// Up to `max_iter` Newton steps from `(a, bc)` on the finite scores of `x`.
fn newton(
    x: &[f64],
    c: &[bool],
    targets: (f64, f64),
    mu: f64,
    (mut a, mut bc): (f64, f64),
    max_iter: usize,
) -> (f64, f64) {
    let (t_pos, t_neg) = targets;
    let (n, n_pos, total, correct_sum) = target_sums(x, c, mu);
    let tx = t_pos * correct_sum + t_neg * (total - correct_sum); // sum of t xc
    let ts = t_pos * n_pos as f64 + t_neg * (n - n_pos) as f64; // sum of t
    let (r00, r01, r11) = (RIDGE * (1.0 + mu * mu), -RIDGE * mu, RIDGE); // J^T (ridge I) J
    for _ in 0..max_iter {
        let [px, ps, h00, h01, h11] = pass(x, mu, a, bc).map(Sum::value);
        let (g0, g1) = (px - tx, ps - ts);
        let (h00, h01, h11) = (h00 + r00, h01 + r01, h11 + r11);
        let det = h00 * h11 - h01 * h01;
        if det.abs() < SINGULAR {
            break;
        }
        let da = (h11 * g0 - h01 * g1) / det;
        let dbc = (h00 * g1 - h01 * g0) / det;
        a -= da;
        bc -= dbc;
        if da.abs() < STEP_TOL && (dbc - mu * da).abs() < STEP_TOL {
            break; // the steps of a and of b
        }
    }
    (a, bc)
}

/// The Platt fit of scores `x` and outcomes `c` (see the module docs).
pub fn fit(x: &[f64], c: &[bool], max_iter: usize) -> Result<PlattFit, PlattError> {
    if x.len() != c.len() {
        return Err(PlattError::LengthMismatch {
            scores: x.len(),
            correct: c.len(),
        });
    }
    let (n, n_pos, sum, _) = target_sums(x, c, 0.0);
    let n_neg = n - n_pos;
    let b = if n_neg > 0 {
        ((n_pos + 1) as f64 / (n_neg + 1) as f64).ln()
    } else {
        0.0
    };
    let result = |a: f64, b: f64| PlattFit {
        a,
        b,
        rows: n,
        positive: n_pos,
    };
    if n == 0 || max_iter == 0 {
        return Ok(result(0.0, b));
    }
    let mut mu = sum / n as f64;
    if !mu.is_finite() {
        let finite = || x.iter().copied().filter(|v| v.is_finite());
        mu = finite().fold(f64::INFINITY, f64::min) / 2.0
            + finite().fold(f64::NEG_INFINITY, f64::max) / 2.0;
    }
    let targets = (
        (n_pos + 1) as f64 / (n_pos + 2) as f64,
        1.0 / (n_neg + 2) as f64,
    );
    let (a, bc) = newton(x, c, targets, mu, (0.0, b), max_iter);
    Ok(result(a, bc - a * mu))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::levenshtein::reference::Rng;

    /// A uniform float in [0, 1) from the shared test generator.
    fn unit(rng: &mut Rng) -> f64 {
        (rng.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn rows(seed: u64, n: usize) -> (Vec<f64>, Vec<bool>) {
        let mut rng = Rng(seed);
        let x: Vec<f64> = (0..n).map(|_| unit(&mut rng)).collect();
        let c = x.iter().map(|&v| unit(&mut rng) < v).collect();
        (x, c)
    }

    /// The reference kit's fit as it is written: uncentred, every sum left to right.
    fn reference(x: &[f64], c: &[bool], max_iter: usize) -> (f64, f64) {
        let n_pos = c.iter().filter(|&&k| k).count();
        let n_neg = c.len() - n_pos;
        let hi = (n_pos as f64 + 1.0) / (n_pos as f64 + 2.0);
        let lo = 1.0 / (n_neg as f64 + 2.0);
        let (mut a, mut b) = (
            0.0,
            if n_neg > 0 {
                ((n_pos as f64 + 1.0) / (n_neg as f64 + 1.0)).ln()
            } else {
                0.0
            },
        );
        for _ in 0..max_iter {
            let (mut g0, mut g1, mut h00, mut h01, mut h11) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for (&v, &k) in x.iter().zip(c) {
                let z = a * v + b;
                let p = if z >= 0.0 {
                    1.0 / (1.0 + (-z).exp())
                } else {
                    z.exp() / (1.0 + z.exp())
                };
                let d = p - if k { hi } else { lo };
                let w = (p * (1.0 - p)).max(1e-12);
                g0 += d * v;
                g1 += d;
                h00 += w * v * v;
                h01 += w * v;
                h11 += w;
            }
            h00 += 1e-10;
            h11 += 1e-10;
            let det = h00 * h11 - h01 * h01;
            if det.abs() < 1e-18 {
                break;
            }
            let da = (h11 * g0 - h01 * g1) / det;
            let db = (h00 * g1 - h01 * g0) / det;
            a -= da;
            b -= db;
            if da.abs() < 1e-9 && db.abs() < 1e-9 {
                break;
            }
        }
        (a, b)
    }

    fn close(x: f64, y: f64, rel: f64) -> bool {
        (x - y).abs() <= rel * x.abs().max(y.abs()).max(1e-300)
    }

    #[test]
    fn agrees_with_the_reference_on_random_rows() {
        for (seed, n) in [
            (1, 1),
            (2, 2),
            (3, 7),
            (4, 8),
            (5, 20),
            (6, 129),
            (7, 2000),
            (8, 20_000),
        ] {
            let (x, c) = rows(seed, n);
            let fit = fit(&x, &c, 100).unwrap();
            let (a, b) = reference(&x, &c, 100);
            assert!(
                close(fit.a, a, 1e-9) && close(fit.b, b, 1e-9),
                "n={n}: {fit:?} vs {a}, {b}"
            );
            assert_eq!(
                (fit.rows, fit.positive),
                (n, c.iter().filter(|&&k| k).count())
            );
        }
    }

    #[test]
    fn starts_at_the_smoothed_log_odds() {
        let fit = fit(&[0.2, 0.7, 0.9], &[false, true, true], 0).unwrap();
        assert_eq!((fit.a, fit.b), (0.0, (3.0f64 / 2.0).ln()));
        let none = super::fit(&[], &[], 100).unwrap();
        assert_eq!((none.a, none.b, none.rows, none.positive), (0.0, 0.0, 0, 0));
        let all_correct = super::fit(&[0.5, 0.6], &[true, true], 0).unwrap();
        assert_eq!((all_correct.b, all_correct.positive), (0.0, 2));
    }

    #[test]
    fn rows_without_a_finite_score_are_left_out() {
        let (x, c) = rows(11, 50);
        let mut xs = x.clone();
        let mut cs = c.clone();
        for (at, v) in [(0, f64::NAN), (17, f64::INFINITY), (50, f64::NEG_INFINITY)] {
            xs.insert(at, v);
            cs.insert(at, at % 2 == 0);
        }
        let with = fit(&xs, &cs, 100).unwrap();
        let without = fit(&x, &c, 100).unwrap();
        assert_eq!((with.rows, with.positive), (without.rows, without.positive));
        assert!(close(with.a, without.a, 1e-12) && close(with.b, without.b, 1e-12));
        let only_nan = fit(&[f64::NAN], &[true], 100).unwrap();
        assert_eq!((only_nan.a, only_nan.b, only_nan.rows), (0.0, 0.0, 0));
    }

    #[test]
    fn the_sums_are_compensated() {
        // 1 + 1e-16 * k: every term below 1's last bit; a plain sum would lose them all.
        let mut sum = Sum::default();
        for _ in 0..1000 {
            sum.add(1.0);
            sum.add(1e-16);
        }
        assert_eq!(sum.value(), 1000.0 + 1e-13);
        let mut inf = Sum::default();
        inf.add(f64::MAX);
        inf.add(f64::MAX);
        assert_eq!(inf.value(), f64::INFINITY);
    }

    #[test]
    fn overflow_is_left_to_the_caller_and_lengths_must_match() {
        let huge = fit(&[1e300, -1e300, 1e300], &[true, false, false], 100).unwrap();
        assert!(!(huge.a.is_finite() && huge.b.is_finite()));
        assert!(fit(&[1.0], &[true, false], 100).is_err());
    }
}
