"""The head-to-head matrix of ``arena standings``: W/D/L and points at two seats, pairwise
places at three and four, as text, JSON and CSV."""

from __future__ import annotations

import csv
import io

from arena.tournament.standings import head_to_head, render_head_to_head, render_head_to_head_csv


def game(*seats):
    return {"group": 0, "seats": [{"bot": b, "rank": r} for b, r in seats]}


def test_two_seats_give_wins_draws_losses_and_points():
    games = [game(("a", 1), ("b", 2)), game(("b", 1), ("a", 1)), game(("b", 1), ("a", 2)),
             game(("a", 1), ("c", 2))]
    cells = {(c["bot"], c["opponent"]): c for c in head_to_head(games)}
    ab, ba = cells[("a", "b")], cells[("b", "a")]
    assert (ab["wins"], ab["draws"], ab["losses"], ab["points"], ab["meetings"]) == (1, 1, 1, 1.5, 3)
    assert (ba["wins"], ba["draws"], ba["losses"]) == (1, 1, 1) and ("b", "c") not in cells
    text = "\n".join(render_head_to_head(list(cells.values()), ["a", "b", "c"], 2))
    assert "wins-draws-losses" in text and "1-1-1 0.50" in text and "1-0-0 1.00" in text


def test_more_seats_count_every_two_seats_of_a_game_and_the_mean_rank():
    games = [game(("a", 1), ("b", 2), ("c", 3)), game(("c", 1), ("a", 2), ("b", 2))]
    cells = {(c["bot"], c["opponent"]): c for c in head_to_head(games)}
    assert (cells[("a", "b")]["wins"], cells[("a", "b")]["draws"]) == (1, 1)
    assert cells[("a", "c")]["wins"] == 1 and cells[("a", "c")]["losses"] == 1
    assert cells[("a", "c")]["mean_rank"] == 1.5
    rows = list(csv.DictReader(io.StringIO(render_head_to_head_csv(head_to_head(games)))))
    assert len(rows) == 6 and {r["bot"] for r in rows} == {"a", "b", "c"}
