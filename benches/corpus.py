"""Deterministic synthetic OCR-like corpora for the demo and the benchmarks.

Reference lines are drawn from Latin, Armenian and CJK vocabularies (words built from each
script's letters, with punctuation and digits); predictions are the references after OCR-like
noise: confusable substitutions, dropped and doubled characters, lost or extra spaces, and the
occasional hyphenated line break. ``python benches/corpus.py`` rewrites the packaged sample.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

LATIN = "abcdefghijklmnopqrstuvwxyz"
LATIN_CONFUSABLE = {"l": "1", "o": "0", "e": "c", "m": "rn", "i": "l", "s": "5", "b": "h", "u": "v"}
ARMENIAN = "աբգդեզէըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆ"
ARMENIAN_CONFUSABLE = {"ո": "օ", "ս": "ծ", "ն": "ս", "հ": "Տ", "ը": "", "և": "եւ", "ր": "ը"}
CJK = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质"  # noqa: E501
LATIN_PUNCT = ",.;:!?'\"()-"


def _word(rng: random.Random, letters: str, lo: int, hi: int) -> str:
    return "".join(rng.choice(letters) for _ in range(rng.randint(lo, hi)))


def reference_line(rng: random.Random, script: str) -> str:
    if script == "cjk":
        parts = [_word(rng, CJK, 4, 14) for _ in range(rng.randint(1, 3))]
        return "，".join(parts) + rng.choice(["。", "", "！"])
    letters = LATIN if script == "latin" else ARMENIAN
    words = []
    for _ in range(rng.randint(3, 11)):
        w = _word(rng, letters, 1, 10)
        if script == "latin" and rng.random() < 0.15:
            w = w.capitalize()
        if rng.random() < 0.08:
            w = str(rng.randint(1, 2025))
        words.append(w)
    line = " ".join(words)
    if rng.random() < 0.5:
        line += rng.choice(LATIN_PUNCT[:6] if script == "latin" else "։,՝՞")
    return line


def ocr_noise(rng: random.Random, text: str, script: str, rate: float) -> str:
    confusable = {"latin": LATIN_CONFUSABLE, "armenian": ARMENIAN_CONFUSABLE}.get(script, {})
    letters = {"latin": LATIN, "armenian": ARMENIAN, "cjk": CJK}[script]
    out = []
    for ch in text:
        r = rng.random()
        if r < rate * 0.35:
            out.append(confusable.get(ch, rng.choice(letters)))
        elif r < rate * 0.55:
            continue  # dropped character
        elif r < rate * 0.70:
            out.append(ch + ch)
        elif r < rate * 0.80 and ch == " ":
            continue  # lost space
        elif r < rate * 0.85:
            out.append(ch + " ")
        else:
            out.append(ch)
    return "".join(out)


def make_pairs(n: int, seed: int = 0) -> list[tuple[str, str, str]]:
    """``n`` (prediction, reference, slice) triples over the three scripts; slices name the script."""
    rng = random.Random(seed)
    scripts = ["latin", "armenian", "cjk"]
    pairs = []
    for k in range(n):
        script = scripts[k % 3]
        ref = reference_line(rng, script)
        rate = rng.choice([0.0, 0.01, 0.03, 0.05, 0.1, 0.2])
        pairs.append((ocr_noise(rng, ref, script, rate), ref, script))
    return pairs


def main() -> None:
    target = Path(__file__).resolve().parents[1] / "python" / "scorekit" / "data" / "sample_corpus.jsonl"
    with target.open("w", encoding="utf-8") as f:
        for pred, ref, label in make_pairs(3000, seed=2026):
            f.write(json.dumps({"prediction": pred, "reference": ref, "slice": label}, ensure_ascii=False) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
