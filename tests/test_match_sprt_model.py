"""``arena match --sprt ... model=normalized`` (fastchess's nElo bounds), and the match
saying why a logistic SPRT needs about a hundred pairs on lopsided pairs."""

from __future__ import annotations

import json
import math
import re

import pytest
from scipy.optimize import brentq

from cli_helpers import run

from arena.tournament.sprt import SPRT

BASE = ("random", "greedy", "-j", 2, "--inprocess", "--no-replays", "--report-every", 40)


def test_lopsided_pairs_are_explained_and_the_normalized_model_decides_sooner(tmp_path):
    r = run("match", *BASE, "--output", tmp_path / "l", "--sprt", "elo0=0", "elo1=10")
    assert re.search(r"lopsided pairs \((\d+) of \1 scored 0\)", r.stdout), r.stdout
    assert "a pair moves the LLR by -0.029, about 101 pairs to decide; model=normalized (nElo bounds) moves " \
           "-0.042 a pair, about 71" in r.stdout
    logistic = json.loads(run("standings", tmp_path / "l", "--json").stdout)["sprt"]
    assert logistic["decision"] == "H0" and logistic["groups"] == 101 and logistic["model"] == "logistic"

    r = run("match", *BASE, "--output", tmp_path / "n", "--sprt", "elo0=0", "elo1=10", "model=normalized")
    assert "model normalized: elo0 and elo1 in nElo" in r.stdout and "lopsided pairs (" not in r.stdout
    normalized = json.loads(run("standings", tmp_path / "n", "--json").stdout)["sprt"]
    assert normalized["decision"] == "H0" and normalized["groups"] == 71 and normalized["model"] == "normalized"
    assert "model normalized (nElo)" in r.stdout  # the standings say which model decided

    bad = run("match", *BASE, "--output", tmp_path / "x", "--sprt", "model=bayesian", ok=False)
    assert "the model is logistic or normalized" in bad.stderr


def test_a_file_names_the_model_and_the_logistic_default_keeps_the_fingerprint(tmp_path):
    from arena.tournament.config import load_config

    path = tmp_path / "s.yaml"
    path.write_text("name: s\nbots: [greedy, random]\nformat: {type: sprt, model: normalized}\n", encoding="utf-8")
    assert load_config(path).format_options["model"] == "normalized"
    path.write_text("name: s\nbots: [greedy, random]\nformat: {type: sprt, model: logistic}\n", encoding="utf-8")
    assert "model" not in load_config(path).format_options
    path.write_text("name: s\nbots: [greedy, random]\nformat: {type: sprt, model: exact}\n", encoding="utf-8")
    assert "field 'format.model': 'exact' is not one of logistic, normalized" in run("validate", path, ok=False).stderr


# ---------------------------------------------------------------- single games (--noswap)
# fishtest's server/fishtest/stats/LLRcalc.py (official-stockfish/fishtest), transcribed: the
# reference the product's SPRT is checked against, never imported by it. ``results`` is
# [L, D, W] (single games) or [LL, LD, DD+WL, WD, WW] (pairs).
NELO_DIVIDED_BY_NT = 800 / math.log(10)


def _stats(pdf):
    s = sum(p * a for a, p in pdf)
    return s, sum(p * (a - s) ** 2 for a, p in pdf)


def _secular(pdf):
    values = [a for a, p in pdf]
    v, w = min(values), max(values)
    return brentq(lambda x: sum(p * a / (1 + x * a) for a, p in pdf), -1 / w + 1e-9, -1 / v - 1e-9)


def _mle_expected(pdfhat, s):
    x = _secular([(a - s, p) for a, p in pdfhat])
    return [(a, p / (1 + x * (a - s))) for a, p in pdfhat]


def _mle_t_value(pdfhat, ref, s):
    n = len(pdfhat)
    pdf_mle = [(a, 1 / n) for a, p in pdfhat]
    for _ in range(10):
        previous = pdf_mle
        mu_, var = _stats(pdf_mle)
        sigma = var ** 0.5
        pdf1 = [(a - ref - s * sigma * (1 + ((mu_ - a) / sigma) ** 2) / 2, p) for a, p in pdfhat]
        x = _secular(pdf1)
        pdf_mle = [(pdfhat[i][0], pdfhat[i][1] / (1 + x * pdf1[i][0])) for i in range(n)]
        if max(abs(previous[i][1] - pdf_mle[i][1]) for i in range(n)) < 1e-9:
            break
    return pdf_mle


def _results_to_pdf(results):
    results = [r if r else 1e-3 for r in results]
    total = sum(results)
    return total, [(i / (len(results) - 1), r / total) for i, r in enumerate(results)]


def _llr(pdf, s0, s1, ref=None, statistic="expectation"):
    if statistic == "expectation":
        pdf0, pdf1 = _mle_expected(pdf, s0), _mle_expected(pdf, s1)
    else:
        pdf0, pdf1 = _mle_t_value(pdf, ref, s0), _mle_t_value(pdf, ref, s1)
    return sum(pdf[i][1] * (math.log(pdf1[i][1]) - math.log(pdf0[i][1])) for i in range(len(pdf)))


def fishtest_llr_normalized(nelo0, nelo1, results):
    nt0, nt1 = nelo0 / NELO_DIVIDED_BY_NT, nelo1 / NELO_DIVIDED_BY_NT
    t0, t1 = (nt0, nt1) if len(results) == 3 else (nt0 * 2 ** 0.5, nt1 * 2 ** 0.5)
    total, pdf = _results_to_pdf(results)
    return total * _llr(pdf, t0, t1, ref=1 / 2, statistic="t_value")


def fishtest_llr_logistic(elo0, elo1, results):
    s0, s1 = [1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1)]
    total, pdf = _results_to_pdf(results)
    return total * _llr(pdf, s0, s1)


def single_games(losses: int, draws: int, wins: int) -> list[float]:
    return [0.0] * losses + [0.5] * draws + [1.0] * wins


@pytest.mark.parametrize("ldw", [(20, 20, 60), (30, 45, 25), (0, 0, 50), (7, 0, 3), (250, 400, 270)])
@pytest.mark.parametrize("model", ["normalized", "logistic"])
def test_single_games_take_the_trinomial_as_fishtest_does(ldw, model):
    """A --noswap game is its own group: its scores 0, 1/2, 1 are fishtest's [L, D, W], and
    in nElo its hypotheses are t = nElo / (800 / ln 10), a game's spread, not a pair's."""
    test = SPRT.of({"elo0": 0, "elo1": 10, "alpha": 0.05, "beta": 0.05, "model": model}, rotations=1)
    reference = fishtest_llr_normalized if model == "normalized" else fishtest_llr_logistic
    assert test.llr(single_games(*ldw)) == pytest.approx(reference(0, 10, list(ldw)), abs=2e-3)


def test_sixty_twenty_twenty_and_a_clean_sweep_read_as_fastchess_and_fishtest():
    test = SPRT(0, 10, model="normalized", single=True)
    assert test.llr(single_games(20, 20, 60)) == pytest.approx(1.246, abs=1e-3)   # the pair formula gave 1.738
    sweep = next(n for n in range(1, 300) if test.status([1.0] * n)["decision"] == "H1")
    assert sweep == next(n for n in range(1, 300) if fishtest_llr_normalized(0, 10, [0, 0, n]) >= test.bounds[1])
    assert sweep == 104
    # fastchess's own cases (app/tests/sprt_test.cpp, "normalized pentanomial 3" and "normalized
    # trinomial 3": 5550 pairs won twice, 4250 games won; its fits stop at 1e-4, hence 0.03):
    # pairs keep the pentanomial and the sqrt(2), single games take neither
    pairs = SPRT(0, 5, model="normalized").llr([1.0] * 5550)
    assert pairs == pytest.approx(111.82, abs=0.03) and pairs == pytest.approx(
        fishtest_llr_normalized(0, 5, [0, 0, 0, 0, 5550]), abs=1e-6)
    games = SPRT(0, 10, model="normalized", single=True).llr([1.0] * 4250)
    assert games == pytest.approx(120.56, abs=0.03) and games == pytest.approx(
        fishtest_llr_normalized(0, 10, [0, 0, 4250]), abs=1e-6)


def test_a_noswap_match_decides_and_prints_on_single_games(tmp_path):
    r = run("match", "random", "greedy", "--noswap", "-j", 2, "--inprocess", "--no-replays", "--report-every", 40,
            "--output", tmp_path / "g", "--sprt", "elo0=0", "elo1=10", "model=normalized")
    s = json.loads(run("standings", tmp_path / "g", "--json").stdout)["sprt"]
    assert s["decision"] == "H0" and s["single"]
    losses, draws, wins = s["pentanomial"][0], s["pentanomial"][2], s["pentanomial"][4]
    assert losses + draws + wins == s["groups"]
    assert s["llr"] == pytest.approx(fishtest_llr_normalized(0, 10, [losses, draws, wins]), abs=2e-3)
    assert "model normalized (nElo)" in r.stdout and "lopsided" not in r.stdout
