"""asv suite: the small end (issue #31, item 7) — every function of ``benches/bench_small_end.py``
(each public function of the reference kit that scorekit mirrors) at n = 1, 20, 2,000 and 20,000,
scorekit's call and the kit's side by side on the same input, so a fixed cost per call that makes
scorekit slower than the kit on small inputs shows up in the history. Rows above their size limit
(the kit's quadratic ROVER and call matching) are skipped."""

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_small_end import SIZES, rows

ROWS = {row.name: row for row in rows()}


class SmallEnd:
    params = [list(ROWS), list(SIZES)]
    param_names = ["function", "n"]
    timeout = 600

    def setup(self, function, n):
        row = ROWS[function]
        if n > row.limit:
            raise NotImplementedError(f"{function} runs up to n = {row.limit}")
        warnings.simplefilter("ignore")
        self.row, self.data = row, row.make(n)

    def time_scorekit(self, function, n):
        self.row.ours(self.data)

    def time_kit(self, function, n):
        self.row.kit(self.data)
