"""``arena bench serve``: requests per second and page latency of a real ``arena serve``.

A league of built-in bots is made in a scratch folder and played a little (so pages have
games and ratings to show); ``arena serve`` is started on it on 127.0.0.1, with the
league playing in the background at full pace (``--pace 0``) or not at all (``--no-play``);
then ``clients`` simulated visitors, each on one keep-alive connection, ask for the site's
pages in turn (the leaderboard, bot pages, a bot's games, a game, the rules, live games and
their JSON) for ``seconds``, each as soon as its last answer arrived (``think_s`` 0: the
hardest case, a closed loop) or after a pause. Figures: requests answered per second,
latency percentiles (p50, p95, p99, max) and errors (a 5xx answer, a broken connection or
no answer within ``timeout_s``). With ``hog`` sockets, one more load runs while a single
client (:class:`Hog`, its own process, from 127.0.0.2) keeps that many connections open,
half of them idle and half trickling a request head a byte a second, reopening each a
second after the server closed it; each visitor comes from an address of its own in
127.0.1.0/24 (all of 127.0.0.0/8 is loopback, and none of these is a trusted proxy). Everything runs on this machine,
over loopback only, and every process started is ended before the function returns.
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

#: The pages a simulated visitor asks for, in turn ({game} is a stored game's id).
PAGES = ("/", "/api/leaderboard", "/bot/greedy", "/game/{game}", "/bot/random/games", "/rules", "/live",
         "/api/bots/greedy", "/api/games/{game}", "/bot/greedy2", "/api/games/live", "/author/nobody")


def make_league(folder: Path, games: int = 200) -> Path:
    """A league of four built-in bots in ``folder`` with ``games`` games played; its path."""
    from engine import RuleSpec

    from ..league import League
    from ..league.play import play_league

    path = folder / "bench.db"
    with League.create(path, RuleSpec.make(["revised"]), 2, 0, {"move_ms": 1000}, "basic") as league:
        for name, bot in (("greedy", "greedy"), ("random", "random"), ("greedy2", "greedy"), ("random2", "random")):
            league.add(name, bot=bot)
        if games:
            play_league(league, games, concurrency=2)
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


async def _visitor(host: str, port: int, paths: list[str], start: int, until: float, think_s: float,
                   timeout_s: float, lat: list, errors: list, source: str | None = None) -> None:
    reader = writer = None
    i = start
    local = (source, 0) if source else None
    while time.monotonic() < until:
        path = paths[i % len(paths)]
        i += 1
        t0 = time.monotonic()
        try:
            if writer is None:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, local_addr=local),
                                                        timeout_s)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: */*\r\n\r\n".encode())
            status, close = await asyncio.wait_for(_read_response(reader), timeout_s)
            lat.append(time.monotonic() - t0)
            if status >= 500:
                errors.append(f"{path}: {status}")
            if close:
                writer.close()
                writer = None
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as exc:
            errors.append(f"{path}: {type(exc).__name__}")
            if writer is not None:
                writer.close()
            writer = None
        if think_s:
            await asyncio.sleep(think_s)
    if writer is not None:
        writer.close()


async def _read_response(reader) -> tuple[int, bool]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding") == "chunked":
        while True:
            size = int((await reader.readline()).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    return status, headers.get("connection", "").lower() == "close"


def load(url: str, clients: int, seconds: float, paths: list[str], think_s: float = 0.0,
         timeout_s: float = 10.0, sources: tuple[str, ...] = ()) -> dict:
    """``clients`` visitors asking for ``paths`` for ``seconds``: the figures (see the module);
    ``sources``: the local addresses they connect from (of 127.0.0.0/8), in turn."""
    host, port = url.split("//")[1].split(":")
    lat: list[float] = []
    errors: list[str] = []

    async def main():
        until = time.monotonic() + seconds
        await asyncio.gather(*(_visitor(host, int(port), paths, k, until, think_s, timeout_s, lat, errors,
                                        sources[k % len(sources)] if sources else None)
                               for k in range(clients)))

    t0 = time.monotonic()
    asyncio.run(main())
    elapsed = time.monotonic() - t0
    lat.sort()

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p / 100 * len(lat)))] * 1000 if lat else float("nan")

    return {"clients": clients, "seconds": round(elapsed, 2), "requests": len(lat),
            "requests_per_s": round(len(lat) / elapsed, 1) if elapsed else 0.0, "p50_ms": round(pct(50), 1),
            "p95_ms": round(pct(95), 1), "p99_ms": round(pct(99), 1),
            "max_ms": round(lat[-1] * 1000, 1) if lat else None, "errors": len(errors),
            "error_examples": sorted(set(errors))[:5]}


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


def load_beside_hog(url: str, clients: int, seconds: float, paths: list[str], sockets: int,
                    think_s: float = 0.0, head_start_s: float = 2.0) -> dict:
    """The figures of :func:`load` (visitors from :data:`VISITOR_SOURCES`) while a :class:`Hog`
    of ``sockets`` holds what it can, having started ``head_start_s`` earlier; its figures
    are the result's ``hog``."""
    hog = Hog(url, sockets, head_start_s + seconds + 1)
    try:
        time.sleep(head_start_s)
        figures = load(url, clients, seconds, paths, think_s, sources=VISITOR_SOURCES)
        figures["hog"] = hog.result()
    finally:
        hog.stop()
    return figures


def stored_games(league: Path) -> int:
    """How many games the league file holds (read-only)."""
    import sqlite3

    conn = sqlite3.connect(f"{league.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    finally:
        conn.close()


def bench_serve(clients: tuple[int, ...] = (20, 100), seconds: float = 15.0, plays: tuple[bool, ...] = (True, False),
                think_s: float = 0.0, games: int = 200, warmup_s: float = 3.0, hog: int = 520) -> list[dict]:
    """For each of ``plays`` (background play on or off) and each number of ``clients``, the
    figures of :func:`load` against a fresh ``arena serve`` of one league (made in a scratch
    folder, ``games`` games played first), with the games it played meanwhile and how long
    its stop took; with ``hog``, one more load of the fewest ``clients`` beside a hog of
    ``hog`` sockets (:func:`load_beside_hog`) for each of ``plays``."""
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-serve-"))
    results = []
    try:
        league = make_league(folder, games)
        for play in plays:
            server = Server(league, play)
            try:
                server.wait_ready()
                paths = [p.format(game=max(1, stored_games(league) // 2)) for p in PAGES]
                load(server.url, 4, warmup_s, paths)
                for n in clients:
                    before = stored_games(league)
                    figures = load(server.url, n, seconds, paths, think_s)
                    figures.update(play=play, games_played=stored_games(league) - before)
                    results.append(figures)
                if hog:
                    before = stored_games(league)
                    figures = load_beside_hog(server.url, min(clients), seconds, paths, hog, think_s)
                    figures.update(play=play, games_played=stored_games(league) - before)
                    results.append(figures)
            finally:
                took = server.stop()
            for r in results:
                if r["play"] == play:
                    r["stop_s"] = round(took, 2)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results
