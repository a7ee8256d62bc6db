//! The small-input arithmetic of the calibration measures and gates (`scorekit.qe.calibrate`,
//! `scorekit.qe.decide`), each the same integer counts and float operations, in the same order,
//! as the Python path it mirrors: the bins of `expected_calibration_error` and
//! `reliability_curve`, the sorted rows of the risk-coverage curve and of the risk-control fit,
//! and that fit's threshold.

use std::collections::BTreeMap;

/// Per bin in use, ascending: row counts, sums of probabilities, numbers correct; and the rows.
pub type Bins = (Vec<u64>, Vec<f64>, Vec<f64>, u64);

/// Calibration rows as `(p, wrong)`, ascending, and how many are wrong.
pub type SortedRows = (Vec<(f64, bool)>, usize);

/// `_binned`'s bins (`n_bins` from 1 to 2**53): non-finite probabilities are skipped, the others
/// clamped into `[0, 1]`; a row's bin is `min(int(p * n_bins), n_bins - 1)`, and each bin's
/// probabilities and outcomes are added in row order onto `0.0`, as `np.bincount` adds them.
pub fn bins(probs: &[f64], correct: &[bool], n_bins: u64) -> Bins {
    let mut bins: BTreeMap<u64, (u64, f64, f64)> = BTreeMap::new();
    let mut n = 0;
    for (&x, &ok) in probs.iter().zip(correct) {
        if !x.is_finite() {
            continue;
        }
        let x = x.clamp(0.0, 1.0); // -0.0 stays -0.0, as in the Python path
        let bin = ((x * n_bins as f64) as u64).min(n_bins - 1);
        let (count, sum, hits) = bins.entry(bin).or_insert((0, 0.0, 0.0));
        *count += 1;
        *sum += x;
        *hits += if ok { 1.0 } else { 0.0 };
        n += 1;
    }
    let mut out = (Vec::new(), Vec::new(), Vec::new(), n);
    for (count, sum, hits) in bins.into_values() {
        out.0.push(count);
        out.1.push(sum);
        out.2.push(hits);
    }
    out
}

/// The finite rows as `(p, wrong)`, ascending (as Python sorts the tuples), and how many are
/// wrong; `None` when a finite probability lies outside `[0, 1]` or one is `-0.0` (whose place
/// among equal zeros NumPy's sort decides): the caller's NumPy path reads those.
pub fn sorted_rows(probs: &[f64], correct: &[bool]) -> Option<SortedRows> {
    let mut rows = Vec::with_capacity(probs.len());
    rows.extend(
        probs
            .iter()
            .zip(correct)
            .filter(|(x, _)| x.is_finite())
            .map(|(&x, &ok)| (x, !ok)),
    );
    let odd =
        |&(x, _): &(f64, bool)| !(0.0..=1.0).contains(&x) || (x == 0.0 && x.is_sign_negative());
    if rows.iter().any(odd) {
        return None;
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let wrong = rows.iter().filter(|row| row.1).count();
    Some((rows, wrong))
}

/// `RiskControlGate.lam` when no threshold meets the target (`decide._ACCEPT_NOTHING`).
pub const ACCEPT_NOTHING: f64 = 1.0 + 1e-9;

/// The risk-control threshold for the 0/1 loss over [`sorted_rows`] (`wrong` of them wrong), as
/// `_small_risk_threshold` and `_empty_fit_threshold` count it: `0.0` first, then each distinct
/// probability ascending, the first whose bound `(n * (wrong / n) + bound) / (n + 1)` (the wrong
/// rows at or above it) is at most `target`; [`ACCEPT_NOTHING`] when none is.
pub fn risk_threshold(rows: &[(f64, bool)], mut wrong: usize, bound: f64, target: f64) -> f64 {
    let n = rows.len();
    if n == 0 {
        return if bound <= target { 0.0 } else { ACCEPT_NOTHING };
    }
    let within =
        |wrong: usize| (n as f64 * (wrong as f64 / n as f64) + bound) / (n + 1) as f64 <= target;
    if within(wrong) {
        return 0.0;
    }
    let mut last = None;
    for &(lam, w) in rows {
        if last != Some(lam) {
            if within(wrong) {
                return lam;
            }
            last = Some(lam);
        }
        wrong -= usize::from(w);
    }
    ACCEPT_NOTHING
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_add_in_row_order_and_clamp() {
        let probs = [0.05, 1.5, -0.25, 0.15, f64::NAN, 0.95, 1.0, -0.0];
        let correct = [true, false, true, true, true, false, true, false];
        let (counts, sums, hits, n) = bins(&probs, &correct, 10);
        assert_eq!(n, 7); // the NaN row skipped
        assert_eq!(counts, vec![3, 1, 3]); // bin 0: 0.05, 0.0 (clamped), -0.0; bin 1: 0.15; bin 9: 1.0 (clamped), 0.95, 1.0
        assert_eq!(sums, vec![0.05 + 0.0 + -0.0, 0.15, 1.0 + 0.95 + 1.0]);
        assert_eq!(hits, vec![1.0 + 1.0, 1.0, 0.0 + 0.0 + 1.0]);
        assert_eq!(bins(&[0.5], &[true], 1 << 53).0, vec![1]);
    }

    #[test]
    fn rows_sorted_as_tuples_and_odd_ones_refused() {
        let (rows, wrong) = sorted_rows(
            &[0.5, 0.25, 0.5, f64::INFINITY],
            &[true, false, false, true],
        )
        .unwrap();
        assert_eq!(rows, vec![(0.25, true), (0.5, false), (0.5, true)]);
        assert_eq!(wrong, 2);
        assert_eq!(sorted_rows(&[0.5, -0.0], &[true, true]), None);
        assert_eq!(sorted_rows(&[1.5], &[true]), None);
        assert_eq!(
            sorted_rows(&[f64::NAN, -f64::INFINITY], &[true, true]),
            Some((vec![], 0))
        );
    }

    #[test]
    fn risk_threshold_counts_as_the_reference() {
        // by hand: at 0.6, (5 * 0/5 + 1) / 6 = 0.167 <= 0.3; at 0.4, (5 * 1/5 + 1) / 6 = 0.333 > 0.3
        let (rows, wrong) = sorted_rows(
            &[0.2, 0.4, 0.6, 0.8, 0.9],
            &[false, false, true, true, true],
        )
        .unwrap();
        assert_eq!(risk_threshold(&rows, wrong, 1.0, 0.3), 0.6);
        assert_eq!(risk_threshold(&rows, wrong, 1.0, 0.9), 0.0);
        assert_eq!(risk_threshold(&rows, wrong, 1.0, 0.1), ACCEPT_NOTHING);
        assert_eq!(risk_threshold(&[], 0, 1.0, 1.0), 0.0);
        assert_eq!(risk_threshold(&[], 0, 1.0, 0.5), ACCEPT_NOTHING);
    }
}
