"""What no bot is shown, wherever it lies in a folder a bot sees: the arena's output folders
(a tournament's, match's, experiment's or league's files, of this run or any earlier one)
and version-control metadata (``.git``, ``.hg``, ...).

An output folder is known by the marker the arena writes into it (:func:`mark_output`, a
file named :data:`MARKER` whose lines name what is the arena's: ``.`` the whole folder, or
a league file's name, which covers its companions ``NAME-wal``, ``NAME.lock``,
``NAME.bots``...), or, for folders written before the marker existed, by the files the
arena writes (:data:`RUN_FILES`; a league file by its companions). :func:`hidden_within`
finds them below the folders a bot is shown; the strict sandbox covers each with an empty
one.
"""

from __future__ import annotations

import os
import time

#: the file the arena writes into every output folder it creates
MARKER = ".arena-output"
#: files that make their folder a run's output folder (tournament, match, experiment)
RUN_FILES = ("results.sqlite", "experiment.sqlite", "games.jsonl", ".arena.lock")
#: what a run writes beside its files
RUN_FOLDERS = ("logs", "replays", "index.html", "tournament.log", "live")
#: a league file ``NAME`` is known by any of ``NAME`` + these beside it
LEAGUE_COMPANIONS = (".bots", ".replays", ".logs", ".live", ".lock")
#: version-control metadata: a folder (or a ``.git`` file of a worktree)
VCS_NAMES = (".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".pijul", ".fslckout", "_FOSSIL_", "CVS")
#: folders not searched for outputs (installed packages, caches: many files, none the arena's)
SKIP_NAMES = ("site-packages", "dist-packages", "node_modules", "__pycache__")
#: how many folders one search visits at most, and how long a search is reused
MAX_FOLDERS = 20000
CACHE_S = 5.0

_cache: dict[str, tuple[float, list[str]]] = {}


def mark_output(folder, name: str | None = None) -> None:
    """Mark ``folder`` as the arena's output, so no bot is shown it: the whole folder, or
    with ``name`` only that league file and its companions. Never fails a run."""
    entry = name or "."
    path = os.path.join(os.fspath(folder), MARKER)
    try:
        try:
            with open(path, encoding="utf-8") as f:
                if entry in f.read().splitlines():
                    return
        except FileNotFoundError:
            pass
        with open(path, "a", encoding="utf-8") as f:
            f.write(entry + "\n")
    except OSError:
        pass


def _league_names(names: set[str]) -> set[str]:
    return {n for n in names if any(n + c in names for c in LEAGUE_COMPANIONS)}


def _covered(names: set[str], leagues: set[str]) -> list[str]:
    """The entries of a folder that belong to the leagues ``leagues`` (file and companions)."""
    return sorted(n for n in names if any(n == lg or n.startswith((lg + ".", lg + "-")) for lg in leagues))


def _of_folder(folder: str, names: set[str]) -> list[str]:
    """What of ``folder`` is the arena's: ``[folder]`` and its run files for a run's folder,
    a league's files; [] for a folder of the author's own."""
    whole, leagues = False, _league_names(names)
    if MARKER in names:
        try:
            with open(os.path.join(folder, MARKER), encoding="utf-8") as f:
                lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
        except OSError:
            lines = ["."]
        whole = "." in lines or not lines
        leagues |= {ln for ln in lines if ln != "." and "/" not in ln}
    if any(n in names for n in RUN_FILES):
        whole = True
    out = [os.path.join(folder, n) for n in _covered(names, leagues)]
    if whole:
        # the folder itself, and the files a run writes one by one, for where the folder
        # must stay shown (a bot's own folder that a run wrote into)
        out = [folder] + [os.path.join(folder, n) for n in sorted(names)
                          if n.startswith(RUN_FILES) or n in RUN_FOLDERS or n == MARKER] + out
    elif out:
        out.append(os.path.join(folder, MARKER))
    return out


def _search(root: str) -> list[str]:
    found: list[str] = []
    stack, visited = [root], 0
    while stack and visited < MAX_FOLDERS:
        folder = stack.pop()
        visited += 1
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        names = {e.name for e in entries}
        mine = _of_folder(folder, names)
        found += mine
        # searched below even when hidden whole: where the folder must stay shown (it holds
        # the bot's own), what lies below is hidden piece by piece
        for e in entries:
            if e.name in VCS_NAMES:
                found.append(e.path)
            elif e.name not in SKIP_NAMES and e.is_dir(follow_symlinks=False) and e.path not in mine:
                stack.append(e.path)
    return found


def hidden_within(folders) -> list[str]:
    """Every output folder (or league file), and every VCS metadata folder, below ``folders``
    (real paths), themselves included: what the sandbox must cover. A search is reused for
    :data:`CACHE_S` seconds (a tournament starts many bots in the same folders)."""
    out: list[str] = []
    now = time.monotonic()
    for root in folders:
        if not os.path.isdir(root):
            continue
        hit = _cache.get(root)
        if hit is None or now - hit[0] > CACHE_S:
            hit = (now, _search(root))
            _cache[root] = hit
        out += [p for p in hit[1] if p not in out]
    return out
