"""Type stubs of the compiled core ``scorekit._core`` (built from ``rust/bindings``).

Batch layout: item ``k`` of a packed side is ``values[offsets[k]:offsets[k+1]]``; values are
``uint32`` code points (or token ids), offsets ``int64`` of length n + 1. ``threads=0`` uses all
cores. Every function releases the GIL while it computes (readers of Python objects, such as
``CallPacker``, hold it while they read).
"""

from collections.abc import Callable, Iterable
from typing import Any, final

import numpy as np
import numpy.typing as npt

__version__: str
__all__ = [
    "__version__",
    "graph_edit_distance_pair",
    "graph_edit_distance_batch",
    "AnlsBatch",
    "anls_assign",
    "levenshtein_distance_batch",
    "levenshtein_alignment_batch",
    "word_alignment_batch",
    "schwa_distance_batch",
    "levenshtein_editops",
    "best_substring_batch",
    "lcs_length_batch",
    "pack_texts",
    "pack_pairs",
    "pack_joined",
    "read_floats",
    "read_bools",
    "fuse_probabilities",
    "exact_floats",
    "tree_distance_batch",
    "tree_mapping",
    "flow_metrics_batch",
    "nw_table_align",
    "nw_calls_align",
    "nw_calls_distance_batch",
    "CallPacker",
    "rover_align_vote",
    "rover_mean_agreements",
    "rover_read_texts",
    "text_pair_counts",
    "GraphemePacker",
    "FIRST_CLUSTER_ID",
    "GRAPHEME_UNICODE_VERSION",
    "cases_record_matrix",
    "cases_record_ids",
    "cases_match_matrix",
    "cases_greedy_pairs",
    "cases_step_score",
    "bootstrap_means",
    "bootstrap_ratios",
    "float_sum",
    "cost_columns",
    "isotonic_fit",
    "conformal_fit",
    "kth_smallest",
    "listed_conformal_quantile",
    "listed_conformal_fit",
    "listed_bins",
    "listed_sorted_rows",
    "listed_risk_fit",
    "platt_fit",
    "platt_fit_listed",
    "fca_errors",
    "group_sums",
    "utf8_pair_counts",
    "utf8_normalize",
    "span_read_tags",
]

_U32 = npt.NDArray[np.uint32]
_I64 = npt.NDArray[np.int64]

def pack_texts(texts: list[str] | tuple[str, ...], name: str) -> tuple[_U32, _I64]:
    """Pack strings into (code points, offsets); TypeError/ValueError name ``name[k]``."""

def pack_pairs(cases: list[tuple[str, str] | list[str]]) -> tuple[tuple[_U32, _I64], tuple[_U32, _I64]]:
    """Pack the predictions and golds of ``(pred, gold, ...)`` cases; TypeError unless both are str."""

def pack_joined(items: list[object], name: str, joins_name: str) -> tuple[tuple[_U32, _I64], _I64, _I64]:
    """Pack ``str``/``JoinedText`` items: (values, offsets), join values, join offsets."""

def read_floats(values: list[object] | tuple[object, ...]) -> _F64 | None:
    """An exact list/tuple of floats, bools and 64-bit ints as float64; None for anything else."""

def read_bools(values: list[object] | tuple[object, ...]) -> npt.NDArray[np.bool_] | None:
    """An exact list/tuple of True and False as a bool array; None for anything else."""

def exact_floats(values: object) -> bool:
    """Whether values is an exact list/tuple of exact floats (NaN and ±inf included)."""

def fuse_probabilities(probs: object, minimum: bool) -> float | None:
    """The mean (or the first smallest) of an exact non-empty dict's values when every one is an
    exact float in [0, 1]; None for anything else."""

def text_pair_counts(reference: str, hypothesis: str, mode: str, unit: str = "char") -> tuple[int, int, int, int]:
    """(ref_len, substitutions, deletions, insertions) of one pair, ``mode`` "cer" or "wer"; takes the
    strings as they are and returns ints (no NumPy); a lone surrogate is a ValueError naming pred[0]/gold[0].
    ``unit="grapheme"`` (CER only) counts extended grapheme clusters, read as GraphemePacker reads them."""

#: Id of the first multi-code-point grapheme cluster of a GraphemePacker (0x110000).
FIRST_CLUSTER_ID: int
#: Unicode version of the grapheme segmentation tables (the unicode-segmentation crate).
GRAPHEME_UNICODE_VERSION: tuple[int, int, int]

@final
class GraphemePacker:
    """Compiled grapheme reader (twin: scorekit._graphemes.PythonGraphemePacker): strings → extended
    grapheme clusters interned to ids (a one-code-point cluster is its code point, others
    0x110000 + n), shared by everything one instance packs."""

    def __init__(self) -> None: ...
    def pack_texts(self, texts: list[str] | tuple[str, ...], name: str) -> tuple[_U32, _I64]: ...
    def pack_pairs(self, cases: list[tuple[str, str] | list[str]]) -> tuple[tuple[_U32, _I64], tuple[_U32, _I64]]: ...
    def pack_joined(self, items: list[object], name: str, joins_name: str) -> tuple[tuple[_U32, _I64], _I64, _I64]:
        """Joins are given in code points and returned as cluster boundaries (a join inside a
        cluster moves to that cluster's start)."""
    def ids(self, text: str, name: str) -> _U32: ...
    @property
    def distinct_clusters(self) -> int:
        """Number of distinct multi-code-point clusters interned so far."""

def levenshtein_distance_batch(a_values: _U32, a_offsets: _I64, b_values: _U32, b_offsets: _I64, threads: int) -> _I64:
    """Unit-cost Levenshtein distance of every pair; shape (n,)."""

def lcs_length_batch(a_values: _U32, a_offsets: _I64, b_values: _U32, b_offsets: _I64, threads: int) -> _I64:
    """Length of a longest common subsequence of every pair; shape (n,)."""

def levenshtein_alignment_batch(ref_values: _U32, ref_offsets: _I64, hyp_values: _U32, hyp_offsets: _I64, threads: int) -> _I64:
    """Columns hits, substitutions, deletions, insertions; shape (n, 4); ties broken as rapidfuzz's editops."""

def word_alignment_batch(ref_values: _U32, ref_offsets: _I64, hyp_values: _U32, hyp_offsets: _I64, threads: int) -> _I64:
    """Word-level columns hits, substitutions, deletions, insertions, ref_words, hyp_words; shape (n, 6)."""

def schwa_distance_batch(
    gt_values: _U32, gt_offsets: _I64, pred_values: _U32, pred_offsets: _I64,
    gt_join_values: _I64, gt_join_offsets: _I64, pred_join_values: _I64, pred_join_offsets: _I64,
    schwa_chars: _U32, threads: int,
) -> _I64:
    """Schwa-forgiving distance of every pair (docs/decisions.md#schwa-forgiving-distance); shape (n,)."""

def levenshtein_editops(reference: _U32, hypothesis: _U32) -> _I64:
    """Rows (op, ref_pos, hyp_pos) with op 1 substitute, 2 delete, 3 insert; shape (k, 3)."""

def best_substring_batch(
    pattern_values: _U32, pattern_offsets: _I64, text_values: _U32, text_offsets: _I64, threads: int,
) -> _I64:
    """Rows (d, start, end): the substring of each text closest to its whole pattern; shape (n, 3)."""

_F64 = npt.NDArray[np.float64]

def tree_distance_batch(
    labels1: _U32, lld1: _U32, offsets1: _I64, labels2: _U32, lld2: _U32, offsets2: _I64,
    delete_costs: _F64, insert_costs: _F64, rename_mode: int, rename_table: _F64, n_labels: int,
    text1_values: _U32, text1_offsets: _I64, text2_values: _U32, text2_offsets: _I64,
    label_mismatch: float, threads: int = 0,
) -> _F64:
    """Zhang–Shasha tree edit distance of every packed pair of post-order trees; shape (n,).
    Empty cost arrays mean unit cost; rename_mode 0 unit, 1 label table, 2 node texts
    (see ``scorekit._kernels.tree``)."""

def tree_mapping(
    labels1: _U32, lld1: _U32, labels2: _U32, lld2: _U32,
    delete_costs: _F64, insert_costs: _F64, rename_mode: int, rename_table: _F64, n_labels: int,
    text1_values: _U32, text1_offsets: _I64, text2_values: _U32, text2_offsets: _I64, label_mismatch: float,
) -> tuple[float, _I64]:
    """Distance and one optimal edit mapping of one pair: rows (a, b), -1 = no partner; shape (k, 2)."""

def flow_metrics_batch(preds: list[object], refs: list[object], max_nodes: int, threads: int = 0,
                       exact_triggers: bool = True) -> tuple[_F64, npt.NDArray[np.uint8]]:
    """FlowSim, TreeBLEU, Trigger Match, Component Match of parsed workflow pairs; shape (n, 4), plus a
    status per pair (bit 1 prediction, bit 2 reference not handled or above max_nodes: row is NaN,
    score it in Python). Trigger Match is Python's == on the triggers, or type equality when
    ``exact_triggers`` is false."""
# --- align (Needleman–Wunsch; layout in scorekit._kernels.align) ---------------------------------

def nw_table_align(a: _U32, b: _U32, table: _F64, del_: _F64, ins: _F64) -> tuple[float, _I64]:
    """Distance and alignment under a substitution table ``table[sa, sb]`` and per-element gap costs;
    ops rows (op, i, j): 0 aligned pair, 1 deletion of a[i], 2 insertion of b[j]; -1 = absent side."""

def nw_calls_align(
    tools: _U32, mass: _F64, arg_offsets: _I64, arg_names: _U32, arg_values: _U32, arg_weights: _F64,
    a_calls: _U32, b_calls: _U32,
) -> tuple[float, _I64]:
    """Trajectory distance and alignment of two call-id sequences into one call table."""

def nw_calls_distance_batch(
    tools: _U32, mass: _F64, arg_offsets: _I64, arg_names: _U32, arg_values: _U32, arg_weights: _F64,
    a_calls: _U32, a_offsets: _I64, b_calls: _U32, b_offsets: _I64, threads: int,
) -> _F64:
    """Trajectory distance of every pair of call-id sequences; shape (n,)."""

@final
class CallPacker:
    """Compiled call reader of scorekit.agents.trajectory (twin: trajectory._Preparer)."""

    def __new__(
        cls, step_type: type, calls_of: Callable[[Any], list], as_call: Callable[[Any], tuple],
        norm: Callable[[Any], Any], value_error: Callable[[BaseException, int, int, Any], BaseException],
        interner_type: type, canon: Callable[[str], Any] | None,
        ascii_steps: list[str] | None, tool_weight: Callable[[Any], float] | None,
        arg_weight: Callable[[Any, Any], float] | None, compensated: bool,
    ) -> CallPacker: ...
    def pack(self, trajectories: Iterable[Any]) -> tuple[_U32, _I64, list[float], list[int]]:
        """(call ids, offsets, total mass per trajectory, steps per trajectory)."""
    def score_pairs(
        self, preds: Iterable[Any], golds: Iterable[Any], name_key: Callable[[Any], Any], threads: int,
    ) -> tuple[list[float], list[float], list[int], list[float], list[int]]:
        """(distances, pred total mass, pred steps, gold total mass, gold steps); packs in chunks while
        other threads score them; leaves the packer empty."""
    def reset(self) -> None:
        """Forget everything packed so far."""
    def interned(self) -> tuple[list[Any], list[Any], list[Any]]:
        """(tools, names, values) in id order."""
    def table(self, name_key: Callable[[Any], Any]) -> tuple[_U32, _F64, _I64, _U32, _U32, _F64]:
        """The call table, arguments sorted by name rank under name_key."""

# --- rover (docs/decisions.md#rover; layout in scorekit._kernels.rover) -------------------------------
def rover_align_vote(
    tokens: _U32, confs: _F64, offsets: _I64, conf_weight: float, null_conf: float, max_tokens: int | None = None,
) -> tuple[_U32, _F64, _U32, _F64, _F64]:
    """(slot_tokens (S, N), slot_confs (S, N), winners (S,), scores (S,), vote_shares (S,)); NULL id = 2**32 - 1."""

def rover_mean_agreements(
    tokens: _U32, confs: _F64, engine_offsets: _I64, item_offsets: _I64, conf_weight: float, null_conf: float,
    max_tokens: int | None, compensated: bool, threads: int = 0,
) -> _F64:
    """Mean agreement of every item (item k: hypotheses item_offsets[k]:item_offsets[k+1], hypothesis h:
    tokens engine_offsets[h]:engine_offsets[h+1]); shape (n_items,). ``compensated``: CPython >= 3.12's
    ``sum``. ValueError names the first bad item."""

def rover_read_texts(
    items: list[Any], vocab: bool, first: list[Any] | None = None,
) -> tuple[_U32, _I64, _I64, list[str] | None] | None:
    """Items of plain-text hypotheses (lists of ``str``) → (token ids, engine_offsets, item_offsets, the word
    of each id if ``vocab``): words as ``str.split()`` finds them, interned in order of first appearance;
    with ``first`` (as long as ``items``), item k is ``[first[k], *items[k]]``; None, consuming nothing,
    unless every item is exactly a list of exact ``str`` without lone surrogates (twin: the unit reader
    of ``scorekit.qe.rover``)."""

def span_read_tags(
    sentences: list[Any], known: dict[str, int],
) -> tuple[npt.NDArray[np.uint8] | npt.NDArray[np.int32], list[str]] | None:
    """Tag sequences (lists or tuples of ``str``) → (the ids of all their tags one after the other,
    the tags not in ``known`` in order of first appearance, which take the ids ``len(known)`` on);
    ids ``uint8`` while the known and new tags number at most 256, else ``int32``. None, consuming
    nothing, unless ``sentences`` is exactly a list of exact lists or tuples of exact non-empty ``str``
    without lone surrogates, and so are the keys of ``known`` (twin: ``_TagTable.encode`` of
    ``scorekit.metrics.spans``). The GIL is held; no Python code runs."""

# --- ANLS* answer trees (rust/bindings/src/anls.rs; twin: the trees of scorekit.metrics.anls) ------
@final
class AnlsBatch:
    """A batch of (prediction, gold) answers read into one arena (``preds`` and ``golds`` exact
    lists or tuples of the same length). Exact dict/list/tuple/str/int/bool/float/None answers
    (dict keys exact str, 64-bit int, bool, non-NaN float or None; tuples only in the gold, not
    empty; nesting below ``max_depth``) are read; any other item is listed in ``fallback`` for the
    Python reader, which gives the same value or raises the same error. The GIL is held; no Python
    code runs while reading."""

    def __new__(cls, preds: Any, golds: Any, max_depth: int, max_cells: int) -> AnlsBatch: ...
    @property
    def raws(self) -> list[str]:
        """Raw id → ``str(leaf)`` (a ``str`` leaf by value, any other leaf by identity)."""
    @property
    def fallback(self) -> list[int]:
        """The batch indices of the items left to the Python reader, in order."""
    @property
    def compat(self) -> int:
        """Items read in the reference's compatibility mode (a ``str`` against a list of ``str``)."""
    def pairs(self) -> tuple[_I64, _I64]:
        """(gold raw ids, predicted raw ids) of the leaf pairs the scores compare."""
    def score(self, sims: npt.NDArray[np.float64], same: float,
              compensated: bool) -> tuple[npt.NDArray[np.float64], tuple[int, int, int] | None]:
        """(ANLS* of every item, NaN for ``fallback`` items; ``None`` or ``(item, gold items,
        predicted items)`` of the first list comparison beyond ``max_cells``, where scoring stopped)
        given the similarity of every pair and that of two equal texts (``same``); ``compensated``:
        ``sum`` of floats as CPython >= 3.12 adds them."""

def anls_assign(costs: npt.NDArray[np.float64]) -> list[tuple[int, int]]:
    """Minimum-cost (row, column) pairs of a 2-D cost matrix, sorted by row, ties broken as
    ``scorekit.metrics.anls.assign`` (its twin) breaks them."""

# --- ged (graph edit distance; layout in scorekit._kernels.ged) -----------------------------------
_GedProblem = tuple[_F64, _F64, _F64, _I64, _I64, _F64, _F64, _F64, bool]

def graph_edit_distance_pair(
    node_sub: _F64, node_del: _F64, node_ins: _F64, edges1: _I64, edges2: _I64,
    edge_sub: _F64, edge_del: _F64, edge_ins: _F64, directed: bool, budget: int | None,
) -> tuple[float, float, bool, int, _I64]:
    """Exact GED of one problem (layout in ``scorekit._kernels.ged``): distance, lower bound,
    exact, expanded states, mapping (graph-2 index per graph-1 node, -1 = deleted)."""

def graph_edit_distance_batch(
    problems: list[_GedProblem], budget: int | None, threads: int,
) -> tuple[_F64, _F64, npt.NDArray[np.bool_], npt.NDArray[np.uint64]]:
    """Exact GED of every problem: distance, lower_bound, exact, expanded; shape (n,) each."""

# --- bootstrap (resampling with CPython's random stream; contract in scorekit._kernels.bootstrap) --
def bootstrap_means(values: _F64, state: _U32, pos: int, resamples: int, compensated: bool) -> _F64:
    """Mean of every resample of ``values`` (resample order); the generator is CPython's MT19937 at
    ``state`` (624 words) and ``pos``; ``compensated``: CPython >= 3.12's ``sum``."""

def bootstrap_ratios(costs: _F64, wins: _F64, state: _U32, pos: int, resamples: int, compensated: bool) -> _F64:
    """``sum(costs) / sum(wins)`` of every resample of the pairs (``inf`` when the wins sum to <= 0)."""

def float_sum(values: _F64, compensated: bool) -> float:
    """``sum(values)`` as Python adds floats (plain, or Neumaier-compensated from CPython 3.12)."""

# --- isotonic (the isotonic calibrator's fit; contract in scorekit._kernels.isotonic) -------------
def isotonic_fit(scores: _F64, correct: npt.NDArray[np.bool_], threads: int = 0) -> tuple[_F64, _F64]:
    """(distinct scores ascending, pooled accuracy at each) of the pool-adjacent-violators fit."""

# --- platt (the Platt fit; contract in scorekit._kernels.platt) -----------------------------------
def platt_fit(scores: _F64, correct: npt.NDArray[np.bool_], max_iter: int) -> tuple[float, float, int, int]:
    """(a, b, rows with a finite score, correct ones) of the Platt fit."""

def platt_fit_listed(scores: object, correct: object, max_iter: int) -> tuple[float, float, int, int] | None:
    """platt_fit of plain lists or tuples read in the same call; None for any other input."""

# --- conformal (split-conformal fits; contract in scorekit._kernels.conformal) -------------------
def conformal_fit(probs: _F64, correct: npt.NDArray[np.bool_], alpha: float, threads: int = 0) -> tuple[float, _F64, int]:
    """(q, every row's 1 - p with NaN for rows left out, rows kept) of the split-conformal fit."""
def kth_smallest(values: _F64, k: int) -> float:
    """The k-th smallest (0-based) of the values other than NaN, by selection."""
def listed_conformal_quantile(scores: object, alpha: float) -> float | None:
    """The conformal quantile of an exact list/tuple of floats other than NaN, alpha in [0, 1];
    None for anything else."""
def listed_conformal_fit(probs: object, correct: object, alpha: float) -> tuple[float, list[float], int] | None:
    """conformal_fit of an exact list/tuple of floats and one of bools as long (scores in a list);
    None for anything else, a probability outside [0, 1] or alpha outside [0, 1]."""
def listed_bins(probs: object, correct: object, n_bins: int) -> tuple[list[int], list[float], list[float], int] | None:
    """(counts, sums, hits, n) per bin in use of an exact list/tuple of floats and one of bools as
    long; None for anything else."""
def listed_sorted_rows(probs: object, correct: object, limit: int) -> tuple[list[tuple[float, bool]], int] | None:
    """The finite rows as (p, wrong), ascending, and how many are wrong, of fewer than limit floats
    in [0, 1] (no -0.0) and as many bools; None for anything else."""
def listed_risk_fit(probs: object, correct: object, limit: int, bound: float, target: float) -> tuple[int, float] | None:
    """(n, lam) of the 0/1-loss risk-control fit over the rows listed_sorted_rows reads; None otherwise."""

# --- fca (the flexible character accuracy's greedy matching; contract in scorekit._kernels.fca) ---
def fca_errors(gt_values: _U32, gt_offsets: _I64, ocr_values: _U32, ocr_offsets: _I64, coefficients: _I64) -> int:
    """The fewest errors of the greedy line matching over the coefficient rows (int64, shape (n, 4))."""

# --- Arrow text path (rust/bindings/src/arrow_text.rs; contract in scorekit._kernels.utf8) --------
#: A UTF-8 column as Arrow lays it out: (data, int32 or int64 offsets, validity bitmap or None,
#: the validity bitmap's bit offset).
_Utf8Column = tuple[npt.NDArray[np.uint8], npt.NDArray[np.int32] | _I64, npt.NDArray[np.uint8] | None, int]
#: (fold keys, fold offsets, fold values, punctuation bitmap, unassigned bitmap) from
#: scorekit._kernels.utf8.unicode_tables().
_UnicodeTables = tuple[_U32, _I64, _U32, npt.NDArray[np.uint8], npt.NDArray[np.uint8]]

def utf8_pair_counts(
    pred: _Utf8Column, gold: _Utf8Column, mode: str, steps: list[str], tables: _UnicodeTables | None, threads: int,
) -> _I64:
    """Rows (ref_len, substitutions, deletions, insertions, status) of every pair, shape (n, 5); status
    0 counted, 1 left to the caller (a code point this Python leaves unassigned, under NFC/NFKC),
    2 prediction not UTF-8, 3 gold not UTF-8. ``steps``: built-in normalizer names."""

def utf8_normalize(
    column: _Utf8Column, steps: list[str], tables: _UnicodeTables | None,
) -> tuple[npt.NDArray[np.uint8], _I64, npt.NDArray[np.int8]]:
    """(data, int64 offsets, status) of every item through ``steps``: status 0 normalised, 1 left to
    the caller (text unchanged), 2 not UTF-8 (empty)."""

def group_sums(rows: _I64, codes: _I64 | None, groups: int) -> _I64:
    """Shape (groups + 1, w + 2) for ``rows`` of shape (n, w): the column sums of the rows of each code
    in ``0..groups``, then of every row, each followed by its row count and its first row (-1: none).
    Code -1 (or no ``codes``) is no group; another code outside ``0..groups`` is a ValueError."""

# --- case benchmarks' record lists (rust/bindings/src/records.rs) ---------------------------------
def cases_record_matrix(expected: list[Any], actual: list[Any]) -> tuple[_F64, _I64] | None:
    """The item score matrix of two record lists (``float64[len(expected), len(actual)]``) and the
    greedy pairing, or None when an item needs the Python reader."""
def cases_record_ids(expected: list[Any], actual: list[Any]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """The value ids ``read_records`` gives (for the tests that compare the two backends' kernels)."""
def cases_match_matrix(expected: npt.NDArray[np.int64], actual: npt.NDArray[np.int64]) -> _F64:
    """Item scores from value ids: ``float64[nE, nA]``."""
def cases_greedy_pairs(matrix: _F64) -> _I64:
    """Greedy pairing on a score matrix: the column of every row, or -1."""

# --- case benchmarks' step walker (rust/bindings/src/case_steps.rs) -------------------------------
def cases_step_score(actual: Any, expected: Any, step_name: str, classes: tuple[Any, Any, Any]) -> Any:
    """The StepScore of one step without comparators, greedy matching, made with ``classes``
    (StepScore, FieldScore, ListMatch), or None when a value needs the Python scorer."""

# --- episode reader of scorekit.agents.cost (rust/bindings/src/episodes.rs) -----------------------
def cost_columns(
    episodes: list[Any], cost_type: type, models: dict[Any, int] | None = None,
    exact: tuple[type, type] | None = None,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uintp], _I64, _F64, npt.NDArray[np.uint32]] | None:
    """(outcomes, costed indices, counts, latencies, model ids) of a cost report, or None when an
    episode needs the Python path; with ``exact=(episode_type, run_type)`` (and ``models``), also
    None for an episode, a costed episode's run or its model not exactly of its type (``str``)."""
