"""``index.html`` for a tournament's output folder: the standings and every game, linked to its replay.

:func:`write_index` reads the results database (``results.sqlite``) through the
tournament's own store and standings, writes an HTML viewer (:mod:`arena.replay.html`)
beside each replay file that has none or an older one, and writes ``index.html`` -- one
self-contained page (inline CSS, no script, no network) whose links are relative, so the
folder can be copied or served as it is. The runner can call it after a run; ``arena index
OUTPUT`` does it by hand.
"""

from __future__ import annotations

import html
import sqlite3
from pathlib import Path

from ..errors import ArenaError, UsageError
from .standings import report
from .store import Store

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 20px; background: #f4f1ea; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 18px 0 6px; }
table { border-collapse: collapse; background: #fff; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e2dccd; text-align: right; }
th:first-child, td:first-child, td.left, th.left { text-align: left; }
tr.adjudicated td { color: #8a5a00; } .fault { color: #b00020; font-weight: 600; } .muted { color: #777; }
"""


FAULT_ATTR = ' class="fault"'


def _replay_paths(store: Store, output: Path) -> dict[str, Path]:
    """Each game's replay file by key (the path stored with the game, or the runner's naming)."""
    out: dict[str, Path] = {}
    try:
        rows = store.conn.execute("SELECT key, grp, rotation, replay_path FROM games").fetchall()
    except sqlite3.Error:
        rows = []
    for key, grp, rot, stored in rows:
        candidates = [Path(stored)] if stored else []
        candidates.append(output / "replays" / f"{grp:06d}-{rot}.json")
        for c in candidates:
            if not c.is_absolute():
                c = output / c
            if c.is_file():
                out[key] = c
                break
    return out


def _viewer(replay: Path) -> Path | None:
    """The HTML viewer beside ``replay`` (written if missing or stale); None if it cannot be made."""
    from ..replay.html import write_html

    target = replay.with_suffix(".html")
    try:
        if not target.exists() or target.stat().st_mtime < replay.stat().st_mtime:
            write_html(replay, target)
        return target
    except ArenaError:
        return None


def _rel(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_uri()


def render_index(rep: dict, games: list[dict], links: dict[str, list[tuple[str, str]]]) -> str:
    """The page: heading, standings with ratings, then one row per game with its links."""
    e = html.escape
    rules = rep.get("rules") or {}
    label = "+".join(rules.get("variants") or []) or "base"
    if rules.get("params"):
        label += " " + ", ".join(f"{k}={v}" for k, v in rules["params"].items())
    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             f"<title>{e(str(rep.get('tournament')))} - results</title><style>{CSS}</style></head><body>",
             f"<h1>{e(str(rep.get('tournament')))}</h1>",
             f"<div class=\"muted\">{e(str(rep.get('format')))}, {e(str(rep.get('seats')))} seats, rules {e(label)}; "
             f"{rep['games_stored']} of {rep.get('games_scheduled')} games stored</div>",
             "<h2>Standings</h2>", "<table id=\"standings\"><tr><th>#</th><th class=\"left\">bot</th><th>games</th>"
             "<th>pts/game</th><th>mean score</th><th>mean rank</th><th>wins</th><th>faults</th><th>elo</th>"
             "<th>95% interval</th></tr>"]
    for i, r in enumerate(rep["standings"], 1):
        elo = f"{r['elo']:+.1f}" if "elo" in r else "-"
        ci = f"[{r['elo_ci'][0]:+.1f}, {r['elo_ci'][1]:+.1f}]" if "elo_ci" in r else "-"
        parts.append(f"<tr data-bot=\"{e(r['bot'])}\"><td>{i}</td><td class=\"left\">{e(r.get('label', r['bot']))}</td><td>{r['games']}</td>"
                     f"<td>{r['points_per_game']:.3f}</td><td>{r['mean_score']:.2f}</td><td>{r['mean_rank']:.2f}</td>"
                     f"<td>{r['wins']}</td><td{FAULT_ATTR if r['faults'] else ''}>{r['faults']}</td>"
                     f"<td>{elo}</td><td>{ci}</td></tr>")
    parts.append("</table>")
    if rep.get("ratings"):
        parts.append(f"<p class=\"muted\">ratings: {e(rep['ratings']['method'])}, anchor "
                     f"{e(rep['ratings']['anchor'])} = 0</p>")
    if rep.get("sprt"):
        s = rep["sprt"]
        parts.append(f"<p>sprt {e(str(s.get('candidate')))} vs {e(str(s.get('baseline')))}: "
                     f"{e(str(s.get('decision') or 'undecided'))}, LLR {s.get('llr', 0):.2f}</p>")
    parts += ["<h2>Games</h2>", "<table id=\"games\"><tr><th>group</th><th>rotation</th><th>seed</th>"
              "<th class=\"left\">seats (score, rank)</th><th>faults</th><th class=\"left\">replay</th></tr>"]
    for g in sorted(games, key=lambda g: (g["group"], g["rotation"])):
        seats = "; ".join(f"{e(x['bot'])} {x['score']} (#{x['rank']}){' forfeited' if x['forfeited'] else ''}"
                          for x in g["seats"])
        faults = sum(x["faults"] for x in g["seats"])
        link = " ".join(f"<a href=\"{e(href)}\">{e(text)}</a>" for text, href in links.get(g["key"], [])) or \
            "<span class=\"muted\">none</span>"
        parts.append(f"<tr class=\"{'adjudicated' if g['adjudicated'] else ''}\" data-key=\"{e(g['key'])}\">"
                     f"<td>{g['group']}</td><td>{g['rotation']}</td><td>{g['seed']}</td><td class=\"left\">{seats}</td>"
                     f"<td{FAULT_ATTR if faults else ''}>{faults}</td><td class=\"left\">{link}</td></tr>")
    parts += ["</table>", "</body></html>", ""]
    return "\n".join(parts)


def write_index(output_dir, viewers: bool = True, max_viewers: int | None = 2000) -> Path:
    """Write ``index.html`` (and replay viewers) in a tournament output folder; returns its path.

    ``viewers``: write an HTML viewer next to each replay (at most ``max_viewers``; games
    beyond link to the replay JSON).
    """
    output = Path(output_dir)
    store = Store.open(output, create=False)
    try:
        rep = report(store)
        games = store.games()
        replays = _replay_paths(store, output)
    finally:
        store.close()
    links: dict[str, list[tuple[str, str]]] = {}
    made = 0
    for g in sorted(games, key=lambda g: (g["group"], g["rotation"])):
        replay = replays.get(g["key"])
        if replay is None:
            continue
        items = []
        if viewers and (max_viewers is None or made < max_viewers):
            page = _viewer(replay)
            if page is not None:
                made += 1
                items.append(("view", _rel(page, output)))
        items.append(("json", _rel(replay, output)))
        links[g["key"]] = items
    path = output / "index.html"
    try:
        path.write_text(render_index(rep, games, links), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    return path
