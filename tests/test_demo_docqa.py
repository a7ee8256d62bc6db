"""The demo's document-QA and entity sample, against the independent implementations: every
answer's ANLS* equals anls_star's, the entity F1s equal seqeval's and nervaluate's, and the demo
prints them and puts their sections on the page."""

from __future__ import annotations

import json
import warnings

import pytest
from anls_star import anls_score
from nervaluate import Evaluator
from seqeval.metrics import f1_score

from scorekit.cli import main
from scorekit.demo_report import DOCQA_SAMPLE, score_docqa_sample


@pytest.fixture(scope="module")
def docqa():
    return score_docqa_sample()


def test_anls_of_every_answer_equals_anls_star(docqa):
    lines = (DOCQA_SAMPLE / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(docqa["answers"]) == len(lines) == 20
    for line, ours in zip(lines, docqa["answers"]):
        a = json.loads(line)
        gold = tuple(a["gold"]) if a["kind"] == "answer" else a["gold"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert ours["anls"] == anls_score(gold, a["pred"]), a["question"]
    assert docqa["anls"] == pytest.approx(sum(a["anls"] for a in docqa["answers"]) / 20, abs=1e-15)
    assert 0.5 < docqa["anls"] < 1.0   # the sample holds slips, a missing answer and a hallucinated key


def test_entity_f1_equals_seqeval_and_nervaluate(docqa):
    rows = [json.loads(line) for line in (DOCQA_SAMPLE / "entities.jsonl").read_text(encoding="utf-8").splitlines()]
    assert docqa["entities"]["seqeval_conll"].aggregate == pytest.approx(
        f1_score([r["gold"] for r in rows], [r["pred"] for r in rows]), abs=1e-12)
    overall = Evaluator([r["gold_spans"] for r in rows], [r["pred_spans"] for r in rows],
                        tags=["PER", "ORG", "LOC", "DATE"]).evaluate()["overall"]
    for scheme, key in (("strict", "strict"), ("partial", "partial")):
        assert docqa["entities"][scheme].aggregate == pytest.approx(overall[key].f1, abs=1e-12), scheme
    assert docqa["entities"]["partial"].aggregate > docqa["entities"]["strict"].aggregate


def test_the_demo_shows_the_sample(capsys, tmp_path):
    out = tmp_path / "demo.html"
    assert main(["demo", "--repeat", "1", "--html", str(out)]) == 0
    assert "Document QA and entities: 20 answers, ANLS* 0.800" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert "Document QA and entities · Answers" in page and "Application for Residence Perrnit" in page
