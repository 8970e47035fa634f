"""The lifetime of a served league: its background work started and stopped with the app
(:func:`lifespan`), and what a server left behind when it was killed, found and ended before
a new one starts (:func:`end_leftovers`).

While the app runs, the ratings are refitted (:class:`.ratings.RatingsKeeper`),
submissions are built and checked (:class:`.submissions.Pipeline`) and league games are
played (:class:`.player.Player`), each in a thread of its own; when it stops, each is asked
to stop, and the player's thread is waited for a few seconds (games in flight are dropped,
never half-stored). A stop signal asks them all at once first
(:meth:`.state.SiteState.stop_now`).

A game worker dies with the server that forked it (:mod:`arena.execution.local`), but a
server of an older version, or one killed while it forked, may leave processes behind: they
hold the league's files, its play lock, even the listening socket, and a new server could
neither play nor listen. :func:`end_leftovers` finds them before the new server opens the
league file, so nothing it does (closing its last connection deletes SQLite's ``-wal``
and ``-shm`` files) touches files such a process still holds.

A leftover is a process that holds one of the league's files open (the league file, its
``-wal``, ``-shm`` or ``.lock``) and belongs to the process group or session of the server
named in the lock file, which is no longer alive. A live server, an ``arena league play``,
a backup or any other program using the file is never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path


#: Seconds the player's thread is waited for when the app stops.
PLAYER_STOP_S = 8.0


@contextlib.asynccontextmanager
async def lifespan(app):
    """The app's lifespan: the background work of ``app.state.site`` runs while the app does."""
    from starlette.concurrency import run_in_threadpool

    site = app.state.site
    site.start()
    try:
        yield
    finally:
        site.pipeline.stop()
        site.keeper.stop(wait_s=0)
        if site.player is not None:
            await run_in_threadpool(site.player.stop, PLAYER_STOP_S)


def _alive(pid: int) -> bool:
    from ..process.cgroups import pid_running

    return pid_running(pid)  # a zombie is not alive


def _group_and_session(pid: int) -> tuple[int, int] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rpartition(")")[2].split()
        return int(fields[2]), int(fields[3])
    except (OSError, ValueError, IndexError):
        return None


def lock_holder(league_path: Path) -> int | None:
    """The pid the league's lock file names (the last server or ``league play`` that held it)."""
    try:
        info = json.loads(Path(f"{league_path}.lock").read_text(encoding="utf-8") or "{}")
        return int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def league_files(league_path: Path) -> set[str]:
    """The files of the league a server holds open."""
    base = os.path.realpath(league_path)
    return {base, base + "-wal", base + "-shm", base + ".lock"}


def holders(files: set[str]) -> dict[int, set[str]]:
    """Processes (other than this one) holding any of ``files`` open: ``{pid: files}``."""
    out: dict[int, set[str]] = {}
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            fds = os.listdir(f"/proc/{name}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{name}/fd/{fd}")
            except OSError:
                continue
            if target.removesuffix(" (deleted)") in files:
                out.setdefault(int(name), set()).add(target)
    return out


def leftovers(league_path: Path) -> list[int]:
    """The processes a dead server of ``league_path`` left holding its files (see the module)."""
    dead = lock_holder(league_path)
    if dead is None or dead == os.getpid() or _alive(dead):
        return []
    found = []
    for pid in holders(league_files(league_path)):
        ids = _group_and_session(pid)
        if ids is not None and dead in ids:
            found.append(pid)
    return sorted(found)


def end_leftovers(league_path: Path, grace_s: float = 3.0) -> list[int]:
    """End what a dead server of ``league_path`` left (SIGTERM, then SIGKILL after
    ``grace_s``); the pids ended. Call it before opening the league file."""
    pids = leftovers(Path(league_path))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            if _alive(pid):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.05)
    return pids
