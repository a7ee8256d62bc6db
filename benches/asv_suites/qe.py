"""asv suite: quality estimation without gold (``scorekit.qe``) — calibrator fits (Platt, isotonic on
continuous and on rounded scores), the decision gates and the risk-coverage curve on the
calibration sets of ``benches/bench_calibrate.py`` and ``benches/bench_decide.py``, the isotonic
kernel alone, and ``estimate_quality_batch`` on the corpus of ``benches/bench_estimate.py``;
``peakmem_*`` shows that an isotonic fit holds no per-row Python objects; ``track_*`` pins the fitted
conformal threshold of a fixed set."""

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scorekit as sk  # noqa: E402
from bench_calibrate import dataset  # noqa: E402
from bench_decide import calibration_set  # noqa: E402
from bench_estimate import corpus  # noqa: E402
from scorekit._kernels.isotonic import isotonic_fit  # noqa: E402
from scorekit.qe import decide  # noqa: E402
from scorekit.qe import calibrate  # noqa: E402


class Calibrators:
    params = [100_000, 1_000_000]
    param_names = ["rows"]

    def setup(self, rows):
        self.x, self.c = dataset(rows)
        self.rounded, _ = dataset(rows, decimals=3)
        warnings.simplefilter("ignore", decide.SmallCalibrationWarning)

    def time_platt_fit(self, rows):
        calibrate.PlattCalibrator().fit(self.x, self.c)

    def time_isotonic_fit(self, rows):
        calibrate.IsotonicCalibrator().fit(self.x, self.c)

    def time_isotonic_fit_rounded_scores(self, rows):
        calibrate.IsotonicCalibrator().fit(self.rounded, self.c)

    def time_isotonic_kernel(self, rows):
        isotonic_fit(self.x, self.c)

    def peakmem_isotonic_fit(self, rows):
        calibrate.IsotonicCalibrator().fit(self.x, self.c)


class Gates:
    params = [100_000, 1_000_000]
    param_names = ["items"]

    def setup(self, items):
        self.p, self.c = calibration_set(items)

    def time_conformal_fit(self, items):
        decide.ConformalGate(alpha=0.1).fit(self.p, self.c)

    def time_conformal_fit_and_first_p_value(self, items):
        # the first p-value sorts the calibration scores, which the fit leaves unsorted
        decide.ConformalGate(alpha=0.1).fit(self.p, self.c).p_value(0.5)

    def time_risk_control_fit(self, items):
        decide.RiskControlGate(target=0.05).fit(self.p, self.c)

    def time_risk_coverage_curve(self, items):
        decide.risk_coverage_curve(self.p, self.c)

    def track_conformal_threshold(self, items):
        return decide.ConformalGate(alpha=0.1).fit(self.p, self.c).q


class EstimateBatch:
    params = [10_000, 100_000]
    param_names = ["fields"]
    timeout = 300

    def setup(self, fields):
        self.values, self.sources = corpus(fields)

    def time_estimate_quality_batch(self, fields):
        sk.estimate_quality_batch(self.values, sources=self.sources)
