"""``arena bench serve``: requests per second and page latency of a real ``arena serve``.

A league of four built-in bots is made in a scratch folder (:func:`make_league`) and
played a little, each game's replay kept as ``arena league play`` keeps it, so pages have
games, replays and ratings to show; those games are played in-process, in seconds, and
then the bots' second versions, the same bots as bot processes (``python -m bots.run
NAME``), take their place, so that the games the server plays go through bot processes,
as a league of submitted bots plays them, each followed live move by move. ``arena serve``
is started on it on 127.0.0.1, with the league playing in the background at full pace
(``--pace 0``) or not at all (``--no-play``); then simulated visitors ask for the pages of
each mix (:mod:`.serve_load`: the light pages, and what visitors really fetch: replay
pages, bot pages and the live API) for ``seconds``. With ``hog`` sockets, the mixes are
measured once more while a single client (:class:`Hog`, its own process, from 127.0.0.2)
keeps that many connections open, half of them idle and half trickling a request head a
byte a second, reopening each a second after the server closed it; each visitor comes
from an address of its own in 127.0.1.0/24 (all of 127.0.0.0/8 is loopback, and none of
these is a trusted proxy). Everything runs on this machine, over loopback only, and every
process started is ended before the function returns.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .serve_load import PAGES, VISITOR_PAGES, Pages, load

__all__ = ["MIXES", "PAGES", "VISITOR_PAGES", "Hog", "Pages", "Server", "bench_serve", "load", "load_beside_hog",
           "loads_beside_hog", "make_league", "mix_pages", "stored_games"]

#: The mixes :func:`bench_serve` measures (see :mod:`.serve_load`).
MIXES = ("light", "real-visitor")

#: The league's bots: entry name and built-in bot.
BOTS = (("greedy", "greedy"), ("random", "random"), ("greedy2", "greedy"), ("random2", "random"))


def make_league(folder: Path, games: int = 200, processes: bool = False) -> Path:
    """A league of four built-in bots in ``folder`` with ``games`` games played in-process,
    each with its replay (``LEAGUE.db.replays/``, where ``arena serve`` shows it); its path.
    With ``processes``, each bot is then retired for a second version of itself played as a
    bot process (``greedy@2``: ``python -m bots.run greedy``), so the server's games go
    through bot processes while the games played here took seconds."""
    from engine import RuleSpec

    from ..league import League
    from ..league.play import play_league

    path = folder / "bench.db"
    with League.create(path, RuleSpec.make(["revised"]), 2, 0, {"move_ms": 1000}, "basic") as league:
        for name, bot in BOTS:
            league.add(name, bot=bot)
        if games:
            play_league(league, games, concurrency=2, replays=Path(f"{path}.replays"))
        if processes:
            for name, bot in BOTS:
                league.retire(name)
                league.add(f"{name}@2", cmd=[sys.executable, "-m", "bots.run", bot])
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``arena serve`` on 127.0.0.1 in a session of its own; :meth:`stop` ends it and all it started."""

    def __init__(self, league: Path, play: bool, extra: tuple[str, ...] = ()):
        self.league = league
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = ["--pace", "0"] if play else ["--no-play"]
        self.log = league.parent / f"serve-{'play' if play else 'noplay'}.log"
        self.games_at_start = stored_games(league)
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "arena.cli", "serve", str(league), "--port", str(self.port), *args,
                 "--unsafe-sandbox", "basic", "--unsafe-build-sandbox", "basic", *extra],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=league.parent)

    def wait_ready(self, timeout_s: float = 60) -> None:
        """Wait until the leaderboard answers."""
        import urllib.request

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"arena serve exited: {self.log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/api/leaderboard", timeout=5) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("arena serve did not answer in time")

    def wait_playing(self, timeout_s: float = 90) -> None:
        """Wait until the server has stored a game since it started: its workers and their
        bot processes are at work (the first games take seconds more than the next)."""
        deadline = time.monotonic() + timeout_s
        while stored_games(self.league) <= self.games_at_start:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"arena serve stored no game in {timeout_s:g} s: "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)

    def wait_in_flight(self, timeout_s: float = 10) -> bool:
        """Wait until the live list names a game in flight (the real visitors follow one), at
        most ``timeout_s``; whether one was seen. Games follow each other with short gaps, and
        a load of a few seconds that began in a gap could miss them all."""
        import urllib.request

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/api/games/live", timeout=5) as answer:
                    if json.loads(answer.read()).get("games"):
                        return True
            except (OSError, ValueError, AttributeError):
                pass
            time.sleep(0.05)
        return False

    def stop(self) -> float:
        """SIGINT, as an operator's Ctrl-C; the seconds it took to exit (SIGKILL after 30 s)."""
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
        took = time.monotonic() - t0
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # whatever is left of its session
        except OSError:
            pass
        self.proc.wait()
        return took


#: Where the hog and the visitors of the hog's load connect from (loopback, none trusted).
HOG_SOURCE = "127.0.0.2"
VISITOR_SOURCES = tuple(f"127.0.1.{i}" for i in range(1, 255))


async def _hold(host: str, port: int, source: str, trickle: bool, until: float, st: dict) -> None:
    """One of the hog's sockets: kept open (idle, or trickling a request head a byte a
    second) until the server closes it, then opened again a second later."""
    while time.monotonic() < until:
        t0 = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, local_addr=(source, 0)), 5)
        except (OSError, asyncio.TimeoutError):
            st["connect_failed"] += 1
            await asyncio.sleep(1)
            continue
        st["opened"] += 1
        st["held"] += 1
        read = asyncio.ensure_future(reader.read(4096))
        try:
            if trickle:
                writer.write(b"GET / HTTP/1.1\r\nHost: hog\r\nX-Slow: ")
            while not read.done() and time.monotonic() < until:
                await asyncio.wait([read], timeout=min(1.0, max(0.01, until - time.monotonic())))
                if trickle and not read.done():
                    writer.write(b"a")
        except OSError:
            pass
        finally:
            st["held"] -= 1
        if read.done():  # the server closed it, with or without a word
            data = b"" if read.cancelled() or read.exception() else read.result()
            lasted = time.monotonic() - t0
            if data[:12] in (b"HTTP/1.1 429", b"HTTP/1.1 503") or (not data and lasted < 0.5):
                st["refused"] += 1
            else:
                st["shed"] += 1
                st["shed_after"].append(lasted)
        else:
            read.cancel()
        writer.close()
        await asyncio.sleep(1.0)


async def _hog(host: str, port: int, source: str, sockets: int, seconds: float, trickle_share: float) -> dict:
    st = {"opened": 0, "held": 0, "refused": 0, "shed": 0, "shed_after": [], "connect_failed": 0}
    until = time.monotonic() + seconds
    # the trickling ones spread among the silent ones, so that those the server admits are of both kinds
    kinds = [int((k + 1) * trickle_share) > int(k * trickle_share) for k in range(sockets)]
    trickling = sum(kinds)
    holders = [asyncio.ensure_future(_hold(host, port, source, kinds[k], until, st)) for k in range(sockets)]
    samples = []
    while time.monotonic() < until:
        await asyncio.sleep(0.25)
        samples.append(st["held"])
    await asyncio.gather(*holders, return_exceptions=True)
    samples.sort()
    shed_after = sorted(st.pop("shed_after"))
    del st["held"]
    return {**st, "sockets": sockets, "trickling": trickling, "seconds": seconds,
            "held_median": samples[len(samples) // 2] if samples else 0, "held_max": samples[-1] if samples else 0,
            "shed_after_median_s": round(shed_after[len(shed_after) // 2], 1) if shed_after else None}


def _hog_main() -> None:
    """The hog's process: arguments and figures as JSON on argv[1] and stdout."""
    import resource

    args = json.loads(sys.argv[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args["sockets"] + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
    print(json.dumps(asyncio.run(_hog(**args))))


class Hog:
    """One client in a process of its own keeping ``sockets`` connections to ``url`` open
    for ``seconds`` (see the module); :meth:`result` waits for it and gives its figures:
    sockets opened, refused at once (429/503), shed later by the server (and the median
    time they were held), and how many it held at once (median and most, sampled)."""

    def __init__(self, url: str, sockets: int, seconds: float, source: str = HOG_SOURCE,
                 trickle_share: float = 0.5):
        host, port = url.split("//")[1].split(":")
        args = {"host": host, "port": int(port), "source": source, "sockets": sockets, "seconds": seconds,
                "trickle_share": trickle_share}
        self.proc = subprocess.Popen([sys.executable, "-c", "from arena.bench.serve import _hog_main; _hog_main()",
                                      json.dumps(args)], stdout=subprocess.PIPE, start_new_session=True)
        self.seconds = seconds

    def result(self) -> dict:
        """Wait for the hog to finish; its figures (see the class)."""
        try:
            out, _ = self.proc.communicate(timeout=self.seconds + 60)
        except subprocess.TimeoutExpired:
            self.stop()
            raise RuntimeError("the hog did not finish in time") from None
        if self.proc.returncode:
            raise RuntimeError(f"the hog failed (exit {self.proc.returncode})")
        return json.loads(out)

    def stop(self) -> None:
        """End the hog's process now, if it still runs."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def load_beside_hog(url: str, clients: int, seconds: float, paths, sockets: int,
                    think_s: float = 0.0, head_start_s: float = 2.0) -> dict:
    """The figures of :func:`load` (visitors from :data:`VISITOR_SOURCES`) while a :class:`Hog`
    of ``sockets`` holds what it can, having started ``head_start_s`` earlier; its figures
    are the result's ``hog``."""
    return loads_beside_hog(url, clients, seconds, {"": paths}, sockets, think_s, head_start_s)[""]


def loads_beside_hog(url: str, clients: int, seconds: float, mixes: dict, sockets: int,
                     think_s: float = 0.0, head_start_s: float = 2.0) -> dict:
    """For each mix of ``mixes`` (name: its pages) in turn, the figures of :func:`load`
    (visitors from :data:`VISITOR_SOURCES`) while one :class:`Hog` of ``sockets`` holds what
    it can, having started ``head_start_s`` before the first; each result's ``hog`` is the
    hog's figures, over all the loads."""
    hog = Hog(url, sockets, head_start_s + seconds * len(mixes) + 1)
    try:
        time.sleep(head_start_s)
        out = {name: load(url, clients, seconds, pages, think_s, sources=VISITOR_SOURCES)
               for name, pages in mixes.items()}
        held = hog.result()
    finally:
        hog.stop()
    for figures in out.values():
        figures["hog"] = held
    return out


def _read(league: Path, sql: str) -> list[tuple]:
    import sqlite3

    conn = sqlite3.connect(f"{league.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def stored_games(league: Path) -> int:
    """How many games the league file holds (read-only)."""
    return _read(league, "SELECT COUNT(*) FROM games")[0][0]


def mix_pages(mix: str, league: Path) -> Pages:
    """The pages of ``mix`` (see :data:`MIXES`) for the league as it is now: the light pages
    with its middle game, or the real-visitor pages over all its stored games and its bots."""
    if mix == "light":
        return Pages(p.format(game=max(1, stored_games(league) // 2)) for p in PAGES)
    games = tuple(r[0] for r in _read(league, "SELECT id FROM games ORDER BY id"))
    bots = tuple(sorted({r[0].split("@")[0] for r in _read(league, "SELECT name FROM entries")}))
    return Pages(VISITOR_PAGES, games, bots)


def bench_serve(clients: tuple[int, ...] = (20, 100), seconds: float = 5.0, plays: tuple[bool, ...] = (True, False),
                think_s: float = 0.0, games: int = 200, warmup_s: float = 2.0, hog: int = 520,
                mixes: tuple[str, ...] = MIXES) -> list[dict]:
    """For each of ``plays`` (background play through bot processes on, or off), each
    number of ``clients`` and each of ``mixes``, the figures of :func:`load` against a fresh
    ``arena serve`` of one league (:func:`make_league`, ``games`` games played first), with
    the mix's name, the games the server stored meanwhile and how long its stop took (with
    play on, the loads begin once the server has stored a game of its own); with
    ``hog``, each mix once more with the fewest ``clients`` beside one hog of ``hog``
    sockets (:func:`loads_beside_hog`) for each of ``plays``."""
    unknown = [m for m in mixes if m not in MIXES]
    if unknown or not mixes:
        raise ValueError(f"mixes are {', '.join(MIXES)}, not {', '.join(unknown) or 'none'}")
    if "real-visitor" in mixes and not games:
        raise ValueError("the real-visitor mix fetches the replays of stored games: play some first (games > 0)")
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-serve-"))
    results = []
    try:
        league = make_league(folder, games, processes=True)
        for play in plays:
            server = Server(league, play)
            rows = []
            try:
                server.wait_ready()
                for mix in mixes:
                    load(server.url, 4, warmup_s / len(mixes), mix_pages(mix, league))
                if play:
                    server.wait_playing()
                for n in clients:
                    for mix in mixes:
                        if play and mix == "real-visitor":
                            server.wait_in_flight()
                        before = stored_games(league)
                        figures = load(server.url, n, seconds, mix_pages(mix, league), think_s)
                        rows.append(dict(figures, mix=mix, play=play, games_played=stored_games(league) - before))
                if hog:
                    before = stored_games(league)
                    pages = {mix: mix_pages(mix, league) for mix in mixes}
                    if play and "real-visitor" in mixes:
                        server.wait_in_flight()
                    beside = loads_beside_hog(server.url, min(clients), seconds, pages, hog, think_s)
                    played = stored_games(league) - before
                    rows += [dict(beside[mix], mix=mix, play=play, games_played=played) for mix in mixes]
            finally:
                took = server.stop()
            results += [dict(r, stop_s=round(took, 2)) for r in rows]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results
