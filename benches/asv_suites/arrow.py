"""asv suite: the Arrow path (``evaluate_arrow``) against the Python-list ``evaluate`` on the same
pairs, from an in-memory table and from a Parquet file; ``track_*`` pins the corpus CER of a fixed
table so a behaviour drift shows up in the history."""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.parquet as pq

import scorekit as ek
from corpus import make_pairs
from scorekit.arrow import evaluate_arrow


class ArrowPath:
    params = [20_000, 200_000]
    param_names = ["pairs"]

    def setup(self, pairs):
        data = make_pairs(pairs, seed=3)
        self.cases = data
        self.table = pa.table({"pred": [p for p, _, _ in data], "gold": [g for _, g, _ in data],
                               "slice": [s for _, _, s in data]})
        self.folder = tempfile.TemporaryDirectory()
        self.path = Path(self.folder.name) / "pairs.parquet"
        pq.write_table(self.table, self.path, row_group_size=65_536)

    def teardown(self, pairs):
        self.folder.cleanup()

    def time_evaluate_arrow_table(self, pairs):
        evaluate_arrow(self.table, slice="slice")

    def time_evaluate_arrow_parquet(self, pairs):
        evaluate_arrow(self.path, slice="slice")

    def time_evaluate_arrow_normalized(self, pairs):
        evaluate_arrow(self.table, slice="slice", normalize=["nfkc", "lower", "collapse_whitespace"])

    def time_python_list_evaluate_from_parquet(self, pairs):
        table = pq.read_table(self.path)
        ek.evaluate(list(zip(*(table.column(c).to_pylist() for c in ("pred", "gold", "slice")))))

    def peakmem_evaluate_arrow_parquet(self, pairs):
        evaluate_arrow(self.path, slice="slice")


def track_arrow_cer_fixed_table():
    table = pa.table({"pred": ["hello wrld", "ct", "Straße"], "gold": ["hello world", "cat", "STRASSE"]})
    return evaluate_arrow(table, normalize="lower").aggregate
