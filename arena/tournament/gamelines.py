"""What a finished game leaves besides the store: how it ended, in the live line's braces
and in ``games.jsonl`` (:func:`end_of`: faults, adjudication, the R7.2 tie-break), and the
line of ``--games-out`` (:func:`game_line`: its replay with its result).

The store is the record; these files follow it. A game is stored first and its lines are
written after, so a run stopped in between (kill -9, a lost machine) leaves a file that
lags: :func:`catch_up` appends, from the database, the line of every stored game a file
lacks (and cuts a line left half-written), when a run starts and when it stops."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .schedule import GameTask


def game_faults(bots, outcome: dict) -> list[dict]:
    """Every fault of a finished game, in seat order: ``{seat, bot, verdict, detail, move}``
    (``move`` is None for a fault at the start of the game)."""
    out = []
    for s, seat in enumerate(outcome.get("seats") or []):
        if not isinstance(seat, dict):
            continue
        for f in seat.get("faults") or []:
            out.append({"seat": s, "bot": bots[s] if s < len(bots) else seat.get("name"),
                        "verdict": f.get("verdict"), "detail": f.get("detail"), "move": f.get("move")})
    return out


def tie_break(result: dict) -> str | None:
    """The R7.2 criterion that separated two seats of equal score, or None: ``puzzles`` (more
    completed puzzles) or ``pieces`` (more pieces owned), both when one game needed both
    (three or four seats). Seats a forfeit placed (R7.3) are not compared: a fault decided."""
    ranks, scores = result.get("ranking") or [], result.get("scores") or []
    completed = result.get("completed")
    forfeited = result.get("forfeited") or [False] * len(ranks)
    used: list[str] = []
    for i in range(len(ranks)):
        for j in range(i + 1, len(ranks)):
            if ranks[i] == ranks[j] or scores[i] != scores[j] or forfeited[i] != forfeited[j]:
                continue
            if completed is None:
                how = "puzzles or pieces"
            else:
                how = "puzzles" if completed[i] != completed[j] else "pieces"
            if how not in used:
                used.append(how)
    return ", ".join(sorted(used, key=["puzzles", "pieces", "puzzles or pieces"].index)) or None


def end_of(bots, outcome: dict) -> dict:
    """How a game ended: ``{"end": "normal" | "adjudicated" | "fault", "reason": text,
    "tie_break": criterion or None}``.

    The reason names each seat's first fault (``random: timeout at move 12``), else an
    adjudication (R5.3, ``adjudicated after 100 rounds``), else the ordinary end
    (``game over after 9 rounds``), as cutechess prints the reason in braces; a game that
    equal scores left to R7.2 says which criterion decided first (``tie-break: puzzles;
    game over after 14 rounds``)."""
    res = outcome.get("result") or {}
    out = _end_of(bots, outcome, res)
    out["tie_break"] = tie_break(res)
    if out["tie_break"]:
        out["reason"] = f"tie-break: {out['tie_break']}; {out['reason']}"
    return out


def _end_of(bots, outcome: dict, res: dict) -> dict:
    faults = game_faults(bots, outcome)
    if faults:
        first: dict[int, dict] = {}
        for f in faults:
            first.setdefault(f["seat"], f)
        parts = [f"{f['bot']}: {f['verdict']} " + ("at the start" if f["move"] is None else f"at move {f['move']}")
                 for f in first.values()]
        return {"end": "fault", "reason": "; ".join(parts)}
    rounds = res.get("rounds")
    after = f" after {rounds} round{'s' if rounds != 1 else ''}" if rounds is not None else ""
    if res.get("adjudicated"):
        return {"end": "adjudicated", "reason": f"adjudicated{after}"}
    return {"end": "normal", "reason": f"game over{after}"}


def append_line(path: Path, task: GameTask, outcome: dict) -> None:
    """``games.jsonl``: one line per stored game, appended as it is stored, for tools that
    follow a run (``tail -f``); the database stays the record. Each line says how the game
    ended (``end``, ``reason``) and carries every fault."""
    res = outcome["result"]
    line = {"key": task.key, "group": task.group, "rotation": task.rotation, "seed": task.seed,
            "bots": list(task.bots), "ranking": res.get("ranking"), "scores": res.get("scores"),
            "rounds": res.get("rounds"), "adjudicated": bool(res.get("adjudicated")),
            "forfeited": [bool(x) for x in (res.get("forfeited") or [False] * len(task.bots))],
            "faults": game_faults(task.bots, outcome), **end_of(task.bots, outcome),
            "duration_s": outcome.get("duration_s"), "replay": outcome.get("replay_path")}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line, sort_keys=True) + "\n")


def game_line(task: GameTask, outcome: dict) -> dict:
    """A line of ``--games-out`` (cutechess-cli's ``-pgnout``): the game's replay -- so
    ``arena replay`` reads it -- with ``game``: its key, group, rotation, bots, ranking,
    scores, how it ended and its faults. A replay that cannot be read leaves ``actions``
    out and says why in ``replay_error``."""
    res = outcome["result"]
    game = {"key": task.key, "group": task.group, "rotation": task.rotation, "bots": list(task.bots),
            "ranking": res.get("ranking"), "scores": res.get("scores"), "faults": game_faults(task.bots, outcome),
            **end_of(task.bots, outcome)}
    path = outcome.get("replay_path")
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8")) if path else None
    except (OSError, ValueError) as exc:
        record, error = None, f"cannot read the replay {path}: {exc}"
    else:
        error = outcome.get("replay_error") or (None if record else "no replay was written")
    if not isinstance(record, dict):
        return {"game": game, "replay_error": error}
    return {**record, "game": game}


def stored_task(task: dict) -> GameTask:
    """The :class:`GameTask` of a stored game (:meth:`arena.tournament.store.Store.outcomes`)."""
    return GameTask(task["key"], task["group"], task["rotation"], task["seed"], tuple(task["bots"]))


def keys_in(path: Path, key_of) -> set[str]:
    """The game keys of the complete lines of the JSON-lines file ``path`` (``key_of(line)``
    reads one); a last line cut short is removed from the file. A missing file has none."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return set()
    end = data.rfind(b"\n") + 1
    if end < len(data):  # a line cut short by a kill: it is written again whole
        with open(path, "r+b") as f:
            f.truncate(end)
    keys = set()
    for raw in data[:end].splitlines():
        try:
            key = key_of(json.loads(raw))
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
        if isinstance(key, str):
            keys.add(key)
    return keys


def games_jsonl_key(line: dict):
    """The game key of a line of ``games.jsonl``."""
    return line["key"]


def games_out_key(line: dict):
    """The game key of a line of ``--games-out``."""
    return line["game"]["key"]


def append_game_line(path: Path, task: GameTask, outcome: dict) -> None:
    """Append the ``--games-out`` line of a game (:func:`game_line`)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(game_line(task, outcome), separators=(",", ":")) + "\n")


def catch_up(store, games_jsonl: Path, games_out: Path | None = None,
             known: dict | None = None) -> dict[str, int]:
    """Append to ``games.jsonl`` (and to ``games_out``) the line of every game of ``store``
    the file lacks, rebuilt from the database, in the order stored; returns how many lines
    each file got. ``known`` maps a file to the keys it is known to hold (read from the file
    when missing, and kept up to date by the caller as it appends)."""
    known = {} if known is None else known
    files = [(Path(games_jsonl), games_jsonl_key, append_line)]
    if games_out is not None:
        files.append((Path(games_out), games_out_key, append_game_line))
    stored = store.keys()
    added = {}
    for path, key_of, write in files:
        if path not in known:
            known[path] = keys_in(path, key_of)
        missing = stored - known[path]
        added[str(path)] = 0
        if not missing:
            continue
        for task, outcome in store.outcomes(missing):
            write(path, stored_task(task), outcome)
            known[path].add(task["key"])
            added[str(path)] += 1
    return added
