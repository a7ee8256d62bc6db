"""``scorekit ocr-eval`` against the ``dinglehopper`` command (issue #32), whole process to whole process.

The data are generated here into a temporary folder (nothing big is committed): Latin PAGE-XML
pages (regions of lines, with a reading order) and a poor OCR of each as PAGE-XML (the
confusable-character noise of ``corpus.ocr_noise``). Cases:

- ``big``: one page of about 67,000 characters against an OCR at CER ≈ 0.5;
- ``folder``: 40 ordinary pages (≈ 4,700 characters, CER ≈ 0.05), one ``scorekit ocr-eval GT/ OCR/``
  against ``dinglehopper`` run page by page (one process per page; its folder mode, one process
  writing one report per page, is shown too);
- ``many``: 10,000 such pages (``--many N`` to change), scorekit only, its peak RSS (the child's
  ``ru_maxrss``) against the same run on 1,000 pages (bounded memory: the two peaks are equal);
- ``fca``: the flexible character accuracy of a 5,000-character page in-process;
- ``fca-noise``: fca on pages of 5,000 to 67,000 characters at CER 0.05 and 0.5, one child process
  each (CPU time, peak RSS); pages above fca's size guard show its refusal.

Every scorekit run is checked to give dinglehopper's CER, WER, ``n_characters`` and ``n_words``
(``big`` and every folder page). Each time is the median of ``--repeats`` runs, wall time and CPU
time (user + system of the child processes: on a shared machine the fairer of the two). Prints a
Markdown report for benches/RESULTS.md.

    .venv/bin/python benches/bench_ocr_eval.py                 # big, folder, fca (a few minutes)
    .venv/bin/python benches/bench_ocr_eval.py --many 10000    # and the 10,000-page memory run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from corpus import ocr_noise, reference_line  # noqa: E402
from tests.ocr_eval_files import page_xml  # noqa: E402

PYTHON = sys.executable
DINGLEHOPPER = str(Path(sys.executable).with_name("dinglehopper"))
SCOREKIT = [PYTHON, "-m", "scorekit", "ocr-eval"]
LINES_PER_REGION = 12


def page_pair(rng: random.Random, n_chars: int, rate: float) -> tuple[str, str]:
    """A PAGE-XML ground truth of about ``n_chars`` characters and its OCR at error ``rate``."""
    regions_gt, regions_ocr, lines, total = [], [], [], 0
    while total < n_chars:
        line = reference_line(rng, "latin")
        lines.append(line)
        total += len(line) + 1
    for k in range(0, len(lines), LINES_PER_REGION):
        chunk = lines[k:k + LINES_PER_REGION]
        regions_gt.append((f"r{k}", chunk))
        regions_ocr.append((f"r{k}", [ocr_noise(rng, line, "latin", rate) for line in chunk]))
    return page_xml(regions_gt), page_xml(regions_ocr)


def write_pages(folder: Path, n: int, n_chars: int, rate: float, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    gt, ocr = folder / "gt", folder / "ocr"
    gt.mkdir(parents=True, exist_ok=True)
    ocr.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        g, o = page_pair(rng, n_chars, rate)
        (gt / f"{k:05d}.xml").write_text(g, encoding="utf-8")
        (ocr / f"{k:05d}.xml").write_text(o, encoding="utf-8")
    return gt, ocr


#: Children may cache their bytecode, as an installed package does.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one child process."""
    start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, env=ENV)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed: {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)


def median(fn, repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``repeats`` calls of ``fn`` (which returns both)."""
    runs = [fn() for _ in range(repeats)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def runs(argvs: list[list[str]]) -> tuple[float, float]:
    wall = cpu = 0.0
    for argv in argvs:
        w, c = run(argv)
        wall, cpu = wall + w, cpu + c
    return wall, cpu


def shared(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: data[k] for k in ("cer", "wer", "n_characters", "n_words")}


def child_peak_mb(argv: list[str]) -> float:
    """Peak RSS of one child, measured alone (a fresh process reads its own children's maximum)."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([PYTHON, "-c", code, *argv], capture_output=True, text=True, check=True, env=ENV)
    return int(done.stdout) / 1024


def row(label: str, t: tuple[float, float], base: tuple[float, float]) -> str:
    return f"| {label} | {t[0]:.2f} s | {t[1]:.2f} s | {base[0] / t[0]:.1f}× | {base[1] / t[1]:.1f}× |"


HEADER = ["| command | wall time | CPU time | dinglehopper / scorekit (wall) | (CPU) |", "|---|---|---|---|---|"]


def bench_big(work: Path, repeats: int) -> list[str]:
    g, o = page_pair(random.Random(7), 67_000, 0.7)
    gt, ocr = work / "big_gt.xml", work / "big_ocr.xml"
    gt.write_text(g, encoding="utf-8")
    ocr.write_text(o, encoding="utf-8")
    out = work / "big.json"
    base = median(lambda: run([DINGLEHOPPER, str(gt), str(ocr), "dh_big", str(work)]), repeats)
    expected = shared(work / "dh_big.json")
    rows = [row("dinglehopper GT OCR (its HTML and JSON)", base, base)]
    for label, extra in (("--json", []), ("--json --html", ["--html", str(work / "big.html")])):
        t = median(lambda: run([*SCOREKIT, str(gt), str(ocr), "--json", str(out), "--progress", "never", *extra]),
                   repeats)
        assert shared(out) == expected, (shared(out), expected)
        rows.append(row(f"scorekit ocr-eval GT OCR {label}", t, base))
    return [f"One page: {expected['n_characters']:,} characters (grapheme clusters), CER {expected['cer']:.3f}, "
            f"WER {expected['wer']:.3f}; scorekit's CER, WER, n_characters, n_words checked equal to dinglehopper's. "
            f"Median of {repeats} runs each.", "", *HEADER, *rows]


def bench_folder(work: Path, repeats: int, pages: int = 40) -> list[str]:
    gt, ocr = write_pages(work / "folder", pages, 4_700, 0.05, seed=11)
    out = work / "folder.json"
    names = sorted(p.name for p in gt.iterdir())
    per_page = [[DINGLEHOPPER, str(gt / n), str(ocr / n), f"dh_{n}", str(work / "dh_pages")] for n in names]
    base = median(lambda: runs(per_page), 1)
    in_one = median(lambda: run([DINGLEHOPPER, str(gt), str(ocr), "dh", str(work / "dh_dir")]), 1)
    t = median(lambda: run([*SCOREKIT, str(gt), str(ocr), "--json", str(out), "--progress", "never"]), repeats)
    t_html = median(lambda: run([*SCOREKIT, str(gt), str(ocr), "--json", str(out), "--progress", "never",
                                 "--html", str(work / "folder.html")]), repeats)
    data = json.loads(out.read_text(encoding="utf-8"))
    for page in data["pages"]:
        theirs = shared(work / "dh_pages" / f"dh_{page['name']}.json")
        assert {k: page[k] for k in theirs} == theirs, (page, theirs)
    chars = sum(p["n_characters"] for p in data["pages"])
    return [f"{pages} pages, {chars:,} characters in all (≈ {chars // pages:,} per page), CER {data['cer']:.3f}; "
            f"every page's CER, WER, n_characters, n_words checked equal to dinglehopper's. scorekit: median of "
            f"{repeats} runs; dinglehopper: one run. The ratios are dinglehopper page by page / scorekit; in "
            f"brackets, dinglehopper's folder mode / scorekit.", "", *HEADER,
            row(f"dinglehopper page by page ({pages} processes)", base, base),
            row("dinglehopper GT/ OCR/ (its folder mode: one process, one report per page)", in_one, in_one),
            *(f"{row(label, r, base)[:-2]} ({in_one[0] / r[0]:.1f}× wall, {in_one[1] / r[1]:.1f}× CPU) |"
              for label, r in (("scorekit ocr-eval GT/ OCR/ --json", t),
                               ("scorekit ocr-eval GT/ OCR/ --json --html", t_html)))]


def bench_many(work: Path, pages: int) -> list[str]:
    rows = ["| pages | wall time | pages/s | peak RSS |", "|---|---|---|---|"]
    for n in sorted({min(1000, pages), pages}):
        gt, ocr = write_pages(work / f"many{n}", n, 4_700, 0.05, seed=13)
        argv = [*SCOREKIT, str(gt), str(ocr), "--json", str(work / f"many{n}.json"), "--progress", "never"]
        start = time.perf_counter()
        peak = child_peak_mb(argv)
        seconds = time.perf_counter() - start
        assert json.loads((work / f"many{n}.json").read_text(encoding="utf-8"))["pages"][-1]["name"] == f"{n - 1:05d}.xml"
        rows.append(f"| {n:,} | {seconds:.1f} s | {n / seconds:.0f} | {peak:.0f} MB |")
    return rows


def bench_fca(repeats: int) -> list[str]:
    from scorekit.ocr.metrics import compare_texts

    rng = random.Random(5)
    lines, total = [], 0
    while total < 5_000:
        lines.append(reference_line(rng, "latin"))
        total += len(lines[-1]) + 1
    gt = "\n".join(lines)
    rows = ["| OCR | characters | fca | time (median of {}) |".format(repeats), "|---|---|---|---|"]
    for label, ocr in (("noisy (5 %)", "\n".join(ocr_noise(rng, line, "latin", 0.05) for line in lines)),
                       ("lines shuffled", "\n".join(random.Random(1).sample(lines, len(lines))))):
        compare_texts(gt, ocr, metrics=("fca",))  # load the kernels
        result = compare_texts(gt, ocr, metrics=("fca",))

        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            compare_texts(gt, ocr, metrics=("fca",))
            times.append(time.perf_counter() - start)
        rows.append(f"| {label} | {result.n_characters:,} | {result.fca:.4f} | {statistics.median(times):.3f} s |")
    return rows


#: One noisy page in a child process: the issue #32 case (``random.Random(0)``, lines of
#: ``corpus.reference_line`` and their ``ocr_noise``), its fca, CPU time and peak RSS as JSON.
FCA_CHILD = """
import json, random, resource, sys, time
sys.path.insert(0, sys.argv[3])
from corpus import ocr_noise, reference_line
from scorekit.errors import InputTooLargeError
from scorekit.ocr import flexible_character_accuracy
n, rate, rng, gt, ocr, total = int(sys.argv[1]), float(sys.argv[2]), random.Random(0), [], [], 0
while total < n:
    line = reference_line(rng, "latin"); gt.append(line); ocr.append(ocr_noise(rng, line, "latin", rate)); total += len(line) + 1
start, cpu = time.perf_counter(), time.process_time()
try:
    value = flexible_character_accuracy("\\n".join(gt), "\\n".join(ocr))
except InputTooLargeError as exc:
    value = str(exc)
print(json.dumps({"lines": len(gt), "fca": value, "wall": time.perf_counter() - start,
                  "cpu": time.process_time() - cpu, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def bench_fca_noise(cases: list[tuple[int, float]]) -> list[str]:
    rows = ["| characters | CER | lines | fca | CPU time | wall time | peak RSS |", "|---|---|---|---|---|---|---|"]
    for n, rate in cases:
        run = subprocess.run([sys.executable, "-c", FCA_CHILD, str(n), str(rate), str(HERE)], check=True,
                             capture_output=True, text=True)
        r = json.loads(run.stdout)
        refused = isinstance(r["fca"], str)
        value = "refused (" + r["fca"].split(" = ")[1].split(", above")[0] + ")" if refused else f"{r['fca']:.4f}"
        rows.append(f"| {n:,} | {rate} | {r['lines']:,} | {value} | {r['cpu']:.2f} s | {r['wall']:.2f} s | {r['rss']:.0f} MB |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--many", type=int, default=0, help="also run the bounded-memory case on this many pages")
    parser.add_argument("--only", choices=("big", "folder", "fca", "fca-noise", "many"), default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_ocr_eval_") as tmp:
        work = Path(tmp)
        sections = []
        if args.only in (None, "big"):
            sections += ["### One 67k-character page", "", *bench_big(work, args.repeats), ""]
        if args.only in (None, "folder"):
            sections += ["### A folder of 40 ordinary pages", "", *bench_folder(work, args.repeats), ""]
        if args.only in (None, "fca"):
            sections += ["### fca on a 5,000-character page", "", *bench_fca(args.repeats), ""]
        if args.only in (None, "fca-noise"):
            sections += ["### fca on noisy pages", "",
                         *bench_fca_noise([(5_000, 0.05), (5_000, 0.5), (10_000, 0.5), (20_000, 0.5), (67_000, 0.5)]), ""]
        if args.many or args.only == "many":
            sections += [f"### {args.many or 10000:,} pages in bounded memory", "",
                         *bench_many(work, args.many or 10000), ""]
    print(f"Machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end; Python {sys.version.split()[0]}.\n")
    print("\n".join(sections))


if __name__ == "__main__":
    main()
