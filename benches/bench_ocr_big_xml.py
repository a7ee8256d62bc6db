"""Reading big PAGE-XML and ALTO files with ``scorekit.ocr.read`` (issue #32): peak RSS and time.

Generates a PAGE-XML file (regions of lines of words, each with ``Coords`` and ``TextEquiv``, a
reading order first) and an ALTO file (blocks of lines of ``String``s with boxes and ``WC``) of about
the given sizes into a temporary folder, written piece by piece (nothing big is committed, the
generating process stays small). Each read runs in its own child process, which reports its wall
and CPU time, its peak RSS (``VmHWM``, its own: ``ru_maxrss`` would carry the parent's over) and a digest
of the whole document (text and every segment), so that two trees can be compared output for
output. With ``--before PATH`` (a checkout's ``python`` folder) each read also runs on that code,
interleaved with this tree's, round by round; its file-size bound is lifted in the child so the
whole-tree parse can be measured on files above it.

    PYTHONPATH=python .venv/bin/python benches/bench_ocr_big_xml.py --sizes 50 300 \\
        --before /tmp/old/python --rounds 2
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE_NS = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"
ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"
WORDS = ("Die", "Überschrift", "geht", "über", "zwei", "Zeilen", "ﬁnden", "daß", "Straße", "und", "—", "’s")

CHILD = r"""
import hashlib, json, os, sys, time
import scorekit.ocr.formats.model as model
path, level = sys.argv[1], sys.argv[2]
model.MAX_FILE_BYTES = max(model.MAX_FILE_BYTES, os.path.getsize(path))  # a bound lifted: the parse is measured
from scorekit.ocr import read
wall, cpu = time.perf_counter(), time.process_time()
try:
    document = read(path, level=level)
    error = None
except Exception as exc:  # the peak RSS of a read that fails is reported too
    error = f"{type(exc).__name__}: {exc}"[:80]
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
# VmHWM: this process's own peak (ru_maxrss would carry the forking parent's over across exec)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
out = {"wall": wall, "cpu": cpu, "rss_mb": peak / 1024, "error": error}
if error is None:
    digest = hashlib.sha256(repr((document.text, document.segments, document.version, document.omitted)).encode())
    out.update(chars=len(document.text), segments=len(document.segments), digest=digest.hexdigest()[:16])
print(json.dumps(out))
"""


def _line_xml(kind: str, number: int) -> str:
    words = [WORDS[(number * 7 + k) % len(WORDS)] for k in range(8)]
    y = number % 5000
    if kind == "alto":
        strings = "<SP/>".join(f'<String ID="s{number}_{k}" CONTENT="{w}" HPOS="{10 + 90 * k}" VPOS="{y}" WIDTH="80" '
                               f'HEIGHT="30" WC="0.{(number + k) % 90 + 10}"/>' for k, w in enumerate(words))
        return f'<TextLine ID="l{number}" HPOS="10" VPOS="{y}" WIDTH="800" HEIGHT="30">{strings}</TextLine>\n'
    word_xml = "".join(f'<Word id="w{number}_{k}"><Coords points="{10 + 90 * k},{y} {90 + 90 * k},{y} {90 + 90 * k},'
                       f'{y + 30} {10 + 90 * k},{y + 30}"/><TextEquiv conf="0.{(number + k) % 90 + 10}">'
                       f"<Unicode>{w}</Unicode></TextEquiv></Word>" for k, w in enumerate(words))
    return (f'<TextLine id="l{number}"><Coords points="10,{y} 800,{y} 800,{y + 30} 10,{y + 30}"/>{word_xml}'
            f'<TextEquiv><Unicode>{" ".join(words)}</Unicode></TextEquiv></TextLine>\n')


def generate(kind: str, megabytes: float, path: Path, lines_per_region: int = 20) -> None:
    """Writes a ``kind`` (``page`` or ``alto``) file of about ``megabytes`` MB to ``path``."""
    target = int(megabytes * 1_000_000)
    sample = len(_line_xml(kind, 1).encode("utf-8"))
    regions = max(1, target // (sample * lines_per_region))
    with open(path, "w", encoding="utf-8") as out:
        if kind == "alto":
            out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<alto xmlns="{ALTO_NS}"><Layout><Page ID="p1">'
                      "<PrintSpace>\n")
        else:
            refs = "".join(f'<RegionRefIndexed index="{r}" regionRef="r{regions - 1 - r}"/>' for r in range(regions))
            out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<PcGts xmlns="{PAGE_NS}"><Page imageFilename="p.png" '
                      f'imageWidth="1000" imageHeight="5000"><ReadingOrder><OrderedGroup id="ro">{refs}'
                      "</OrderedGroup></ReadingOrder>\n")
        for r in range(regions):
            lines = "".join(_line_xml(kind, r * lines_per_region + k) for k in range(lines_per_region))
            if kind == "alto":
                out.write(f'<TextBlock ID="b{r}">{lines}</TextBlock>\n')
            else:
                out.write(f'<TextRegion id="r{r}"><Coords points="0,0 1000,0 1000,5000 0,5000"/>{lines}'
                          f"<TextEquiv><Unicode>region {r}</Unicode></TextEquiv></TextRegion>\n")
        out.write("</PrintSpace></Page></Layout></alto>\n" if kind == "alto" else "</Page></PcGts>\n")


def run(python_folder: str, path: Path, level: str) -> dict:
    """One read of ``path`` at ``level`` in a child process, with ``python_folder`` as the package."""
    env = {**os.environ, "PYTHONPATH": python_folder}
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), level], env=env, capture_output=True, text=True)
    if done.returncode:  # killed, out of memory
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[50.0], help="file sizes in MB")
    parser.add_argument("--kinds", nargs="+", default=["page", "alto"])
    parser.add_argument("--level", default="word", help="the level read (its segments are built)")
    parser.add_argument("--before", help="the python folder of the code to compare with (e.g. main's)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    after = str(HERE.parent / "python")
    sides = {"after": after, **({"before": args.before} if args.before else {})}
    print(f"load: {os.getloadavg()}")
    print("| file | size | side | wall (median) | CPU (median) | peak RSS (max) | chars | segments | digest |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []
    with tempfile.TemporaryDirectory() as folder:
        for kind in args.kinds:
            for size in args.sizes:
                path = Path(folder) / f"{kind}-{size:g}.xml"
                generate(kind, size, path)
                results: dict[str, list[dict]] = {side: [] for side in sides}
                for _ in range(args.rounds):
                    for side, python_folder in sides.items():  # interleaved, round by round
                        results[side].append(run(python_folder, path, args.level))
                for side, found in results.items():
                    ok = [r for r in found if r["error"] is None]
                    if not ok:
                        rss = max((r["rss_mb"] for r in found if "rss_mb" in r), default=math.nan)
                        print(f"| {kind} | {path.stat().st_size / 1e6:.0f} MB | {side} | "
                              f"{statistics.median(r.get('wall', math.nan) for r in found):.2f} s | "
                              f"{statistics.median(r.get('cpu', math.nan) for r in found):.2f} s | {rss:.0f} MB | "
                              f"failed: {found[0]['error']} |")
                        continue
                    print(f"| {kind} | {path.stat().st_size / 1e6:.0f} MB | {side} | "
                          f"{statistics.median(r['wall'] for r in ok):.2f} s | "
                          f"{statistics.median(r['cpu'] for r in ok):.2f} s | "
                          f"{max(r['rss_mb'] for r in ok):.0f} MB | {ok[0]['chars']:,} | {ok[0]['segments']:,} | "
                          f"{ok[0]['digest']} |")
                if "before" in results:  # CPU after / before, round by round (both reads done)
                    pairs = [(a, b) for a, b in zip(results["after"], results["before"])
                             if a["error"] is None and b["error"] is None]
                    if pairs:
                        found = sorted(a["cpu"] / b["cpu"] for a, b in pairs)
                        ratios.append(f"{kind} {path.stat().st_size / 1e6:.0f} MB: CPU after/before per round "
                                      f"best {found[0]:.2f}, median {statistics.median(found):.2f}")
                path.unlink()
    print("\n".join(ratios))
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
