"""docs/tournaments.md's side-by-side of cutechess-cli, fastchess and ``arena match``: every
option of a chess-engine tester's habit has its row, and the ``-recover`` row says what the
default already does."""

from __future__ import annotations

import re
from pathlib import Path

from cli_helpers import run

DOC = Path(__file__).resolve().parent.parent / "docs" / "tournaments.md"

NEW = ["--gauntlet", "--knockout", "--tie-pairs", "--anchor", "--noswap", "--deals-order", "--deals-start",
       "--games-out", "--log-protocol", "model=normalized"]


def _rows() -> list[tuple[str, str]]:
    """(cutechess-cli, arena match) of every row."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### From cutechess-cli and fastchess", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and not r.startswith("|---")]
    return [(cells[0].strip(), cells[2].strip()) for cells in (r.strip("|").split("|") for r in rows)
            if len(cells) >= 3]


def test_the_side_by_side_has_every_new_option_and_the_help_describes_it():
    ours = " ".join(arena for _, arena in _rows())
    for option in NEW:
        assert option in ours, option
    help_text = re.sub(r"\s+", " ", run("match", "--help").stdout)
    for option in NEW:
        assert option in help_text, option


def test_recover_is_the_default_not_random_moves():
    table = dict(_rows())
    recover = table["`-recover`"]
    assert not recover.startswith("`--fault-policy random`")
    assert "default" in recover and "match goes on" in recover
    assert "-pgnout" in " ".join(table) and "--games-out" in table["`-pgnout games.pgn`"]
