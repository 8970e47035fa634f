"""Reading a game from a replay file or from a line of a JSON-lines file of games.

``arena match --games-out FILE`` (and ``arena run --games-out``) writes one game per line:
its replay with its result under ``game``. :func:`load_game` reads a replay file as
:func:`engine.replay.load_replay` does, and a JSON-lines file as the game on line ``n``
(the first by default; blank lines and ``#`` comments are skipped), so ``arena replay``
and ``arena replay --html`` show a game of such a file.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.errors import ReplayMismatch
from engine.replay import FORMAT, load_replay

from ..errors import UsageError


class NoSuchGame(UsageError):
    """``--game N`` beyond the games a file holds: bad input, not a replay that fails."""


def is_json_lines(path) -> bool:
    """Whether ``path`` holds more than one JSON value, one a line (a games file)."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
            rest = f.read(1 << 16).strip()
    except OSError:
        return False
    if not rest or not first.strip():
        return False
    try:
        json.loads(first)
    except ValueError:
        return False
    return True


def game_lines(path) -> list[str]:
    """The lines of a games file that hold a game (blank lines and ``#`` comments skipped)."""
    text = Path(path).read_text(encoding="utf-8")
    return [x for x in text.splitlines() if x.strip() and not x.lstrip().startswith("#")]


def load_game(path, game: int | None = None) -> tuple[dict, str]:
    """The replay record of ``path`` and a label for messages: the file itself, or its game
    ``game`` (1-based; default the first) when it is a JSON-lines file of games."""
    if game is None and not is_json_lines(path):
        return load_replay(path), str(path)
    try:
        lines = game_lines(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplayMismatch(f"{path}: cannot read the games ({exc})") from None
    n = game or 1
    if not 1 <= n <= len(lines):
        raise NoSuchGame(f"--game {n}: {path} holds {len(lines)} game{'s' if len(lines) != 1 else ''}, so there is "
                         f"no game {n} (give --game from 1 to {len(lines)})")
    where = f"{path}, game {n} of {len(lines)}"
    try:
        record = json.loads(lines[n - 1])
    except ValueError as exc:
        raise ReplayMismatch(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        why = record.get("replay_error") if isinstance(record, dict) else None
        raise ReplayMismatch(f"{where}: not a Project L replay" + (f" ({why})" if why else ""))
    for key in ("rules", "players", "seed", "actions"):
        if key not in record:
            raise ReplayMismatch(f"{where}: the replay has no field '{key}'")
    return record, where
