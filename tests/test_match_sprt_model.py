"""``arena match --sprt ... model=normalized`` (fastchess's nElo bounds), and the match
saying why a logistic SPRT needs about a hundred pairs on lopsided pairs."""

from __future__ import annotations

import json
import re

from cli_helpers import run

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
