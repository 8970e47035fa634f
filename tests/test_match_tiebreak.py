"""A game that equal scores left to the R7.2 tie-break says so: in ``arena match``'s live
line and in ``games.jsonl`` (``{tie-break: puzzles; ...}``), naming the criterion."""

from __future__ import annotations

import json

import pytest

from arena.tournament.gamelines import end_of, tie_break
from cli_helpers import run


@pytest.mark.parametrize("result, criterion", [
    # R7.2: higher score decides, no tie-break
    ({"scores": [17, 12], "ranking": [1, 2], "completed": [3, 3], "forfeited": [False, False]}, None),
    # equal scores, more completed puzzles
    ({"scores": [17, 17], "ranking": [1, 2], "completed": [4, 3], "forfeited": [False, False]}, "puzzles"),
    # equal scores and puzzles: more pieces owned
    ({"scores": [17, 17], "ranking": [2, 1], "completed": [3, 3], "forfeited": [False, False]}, "pieces"),
    # a shared place: nothing decided
    ({"scores": [17, 17], "ranking": [1, 1], "completed": [3, 3], "forfeited": [False, False]}, None),
    # R7.3: the forfeit decided, not the tie-break
    ({"scores": [17, 17], "ranking": [2, 1], "completed": [3, 2], "forfeited": [True, False]}, None),
    # three seats, both criteria used
    ({"scores": [9, 9, 9], "ranking": [1, 2, 3], "completed": [3, 2, 2], "forfeited": [False] * 3},
     "puzzles, pieces"),
])
def test_the_criterion_that_decided(result, criterion):
    assert tie_break(result) == criterion
    end = end_of(["a", "b", "c"][:len(result["scores"])], {"result": {**result, "rounds": 14}})
    assert end["tie_break"] == criterion
    if criterion:
        assert end["reason"] == f"tie-break: {criterion}; game over after 14 rounds"
    else:
        assert "tie-break" not in end["reason"]


def test_live_lines_and_games_jsonl_mark_a_tie_break_win(tmp_path):
    out = tmp_path / "m"
    r = run("match", "random", "--engine", "name=r2 bot=random", "--games", 10, "-j", 1, "--inprocess",
            "--no-replays", "--output", out)
    marked = [x for x in r.stdout.splitlines() if x.startswith("Finished game") and "{tie-break: " in x]
    assert marked and all(" 1/2-1/2 " not in x for x in marked), r.stdout
    lines = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    decided = [g for g in lines if g["tie_break"]]
    assert len(decided) == len(marked)
    for g in decided:
        assert g["scores"][0] == g["scores"][1] and g["ranking"][0] != g["ranking"][1]
        assert g["reason"].startswith(f"tie-break: {g['tie_break']}; ")
    assert all(g["tie_break"] is None for g in lines if g["scores"][0] != g["scores"][1])
