"""The simulated visitors of ``arena bench serve``: what they ask for, and the figures of a load.

A load is ``clients`` visitors, each on one keep-alive connection, asking for the pages of
a :class:`Pages` in turn for ``seconds``, each as soon as its last answer arrived (no
pause: the hardest case, a closed loop) or after a pause. Two mixes are measured:

- **light** (:data:`PAGES`): a dozen small pages, the same for every visitor (the
  leaderboard, bot pages, a game's page, the rules, the live list and their JSON), which
  the site's response cache answers from memory most of the time;
- **real-visitor** (:data:`VISITOR_PAGES`): what a visitor of the site really fetches. A
  game's page and its replay viewer (the page's frame: HTML and script of about 100 KB for
  most games, several times that for a long one), the game another for each visitor and
  each round, spread over every stored game, so most are rendered afresh (the more
  visitors for the games, the more often one is asked again within the 2 s the site keeps
  a page); a bot's page, its games and its JSON; and the live API as a spectator's browser
  asks it: the games in flight, then one of them (the visitor reads the list) followed:
  its page, its viewer so far and its state. With no game in flight (play off) the
  following is left out.

Figures (:func:`figures`): requests answered per second, megabytes of answers per second,
latency percentiles (p50, p95, p99, max) and errors (a 5xx answer, a broken connection or
no answer within ``timeout_s``), and the same per kind of page (:func:`kind_of`: replay
pages, game pages, bot pages, live pages, the live API, others) with the answers' size
(mean and median) and their statuses (a followed game that has ended answers 303, as it
sends a browser to the game's page; it is not followed further).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time

#: The light mix: the pages a simulated visitor asks for, in turn ({game} is a stored game's id).
PAGES = ("/", "/api/leaderboard", "/bot/greedy", "/game/{game}", "/bot/random/games", "/rules", "/live",
         "/api/bots/greedy", "/api/games/{game}", "/bot/greedy2", "/api/games/live", "/author/nobody")

#: The real-visitor mix, in turn: {game} is a stored game (one per visitor and round), {bot} an
#: entry's name, {live} ``GROUP/ROTATION`` of a game in flight, read from ``/api/games/live``.
VISITOR_PAGES = ("/game/{game}", "/game/{game}/replay", "/bot/{bot}", "/api/games/live", "/live/{live}",
                 "/live/{live}/replay", "/api/games/live/{live}", "/bot/{bot}/games", "/api/bots/{bot}",
                 "/api/games/live/{live}")

#: The list of games in flight, whose answer tells a visitor which game to follow.
LIVE_LIST = "/api/games/live"

#: Kinds of page, in the order they are reported, and how a report names them.
KINDS = {"replay": "replay pages", "game": "game pages", "bot": "bot pages", "live": "live pages",
         "live_api": "live API", "other": "other pages"}


def kind_of(path: str) -> str:
    """The kind of page ``path`` asks for (a key of :data:`KINDS`)."""
    path = path.split("?")[0]
    if re.fullmatch(r"/game/\d+/replay", path):
        return "replay"
    if re.fullmatch(r"/(api/)?games?/\d+", path):
        return "game"
    if path.startswith(("/bot/", "/api/bots/")):
        return "bot"
    if path.startswith("/api/games/live"):
        return "live_api"
    if path == "/live" or path.startswith("/live/"):
        return "live"
    return "other"


class Pages:
    """What each visitor asks for, in turn: ``templates`` filled in with a stored game of
    ``games`` (another for each visitor and each round through the templates), an entry of
    ``bots`` and the game in flight the visitor follows (a template naming {live} is left
    out while it follows none)."""

    def __init__(self, templates, games: tuple[int, ...] = (), bots: tuple[str, ...] = ()):
        self.templates = tuple(templates)
        self.games = tuple(games) or (1,)
        self.bots = tuple(bots) or ("greedy",)

    def at(self, visitor: int, i: int, live: str | None) -> str | None:
        """The ``i``-th path of ``visitor`` (None: a game in flight is needed and there is none)."""
        template = self.templates[i % len(self.templates)]
        if "{live}" in template and live is None:
            return None
        round_ = i // len(self.templates)
        # visitors far apart in the games, each moving on by one game a round
        game = self.games[(visitor * 31 + round_) % len(self.games)]
        bot = self.bots[(visitor + round_) % len(self.bots)]
        return template.format(game=game, bot=bot, live=live)


def followed_game(body: bytes, visitor: int) -> str | None:
    """``GROUP/ROTATION`` of the game in flight ``visitor`` follows, from the answer of
    :data:`LIVE_LIST` (the newest games first, one for each visitor in turn), or None."""
    try:
        games = json.loads(body)["games"]
        g = games[-1 - visitor % len(games)] if games else None
        return f"{int(g['group'])}/{int(g['rotation'])}" if g else None
    except (ValueError, KeyError, TypeError, IndexError):
        return None


async def _visitor(host: str, port: int, pages: Pages, visitor: int, until: float, think_s: float,
                   timeout_s: float, seen: list, errors: list, source: str | None = None) -> None:
    reader = writer = None
    i = visitor  # visitors start at different points of the list
    live = None
    local = (source, 0) if source else None
    while time.monotonic() < until:
        path = pages.at(visitor, i, live)
        i += 1
        if path is None:
            continue
        t0 = time.monotonic()
        try:
            if writer is None:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, local_addr=local),
                                                        timeout_s)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: */*\r\n\r\n".encode())
            status, close, body = await asyncio.wait_for(_read_response(reader), timeout_s)
            seen.append((kind_of(path), time.monotonic() - t0, len(body), status))
            if status >= 500:
                errors.append(f"{path}: {status}")
            if path == LIVE_LIST and status == 200:
                live = followed_game(body, visitor)
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


async def _read_response(reader) -> tuple[int, bool, bytes]:
    """Status, whether the server closes the connection, and the body of one answer."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    body = b""
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding") == "chunked":
        parts = []
        while True:
            size = int((await reader.readline()).strip(), 16)
            parts.append((await reader.readexactly(size + 2))[:size])
            if size == 0:
                break
        body = b"".join(parts)
    return status, headers.get("connection", "").lower() == "close", body


def _percentile(sorted_s: list[float], p: float) -> float:
    """The ``p``-th percentile of ``sorted_s`` (seconds), in milliseconds rounded to 0.1."""
    if not sorted_s:
        return float("nan")
    return round(sorted_s[min(len(sorted_s) - 1, int(p / 100 * len(sorted_s)))] * 1000, 1)


def figures(seen: list[tuple], errors: list[str], elapsed: float, clients: int) -> dict:
    """The figures of a load (see the module) from ``seen``, one ``(kind, seconds, bytes,
    status)`` per answer, the ``errors`` and the load's ``elapsed`` seconds."""
    lat = sorted(s for _, s, _, _ in seen)
    total = sum(b for _, _, b, _ in seen)
    kinds = {}
    for kind in KINDS:
        mine = [(s, b, st) for k, s, b, st in seen if k == kind]
        if not mine:
            continue
        times = sorted(s for s, _, _ in mine)
        statuses: dict[str, int] = {}
        for _, _, st in mine:
            statuses[str(st)] = statuses.get(str(st), 0) + 1
        sizes = sorted(b for _, b, _ in mine)
        kinds[kind] = {"requests": len(mine), "kb_per_answer": round(sum(sizes) / len(sizes) / 1000, 1),
                       "kb_median": round(sizes[len(sizes) // 2] / 1000, 1),
                       "p50_ms": _percentile(times, 50), "p95_ms": _percentile(times, 95),
                       "max_ms": round(times[-1] * 1000, 1), "statuses": statuses}
    return {"clients": clients, "seconds": round(elapsed, 2), "requests": len(lat),
            "requests_per_s": round(len(lat) / elapsed, 1) if elapsed else 0.0,
            "mb_per_s": round(total / elapsed / 1e6, 2) if elapsed else 0.0, "p50_ms": _percentile(lat, 50),
            "p95_ms": _percentile(lat, 95), "p99_ms": _percentile(lat, 99),
            "max_ms": round(lat[-1] * 1000, 1) if lat else None, "errors": len(errors),
            "error_examples": sorted(set(errors))[:5], "kinds": kinds}


def load(url: str, clients: int, seconds: float, paths, think_s: float = 0.0,
         timeout_s: float = 10.0, sources: tuple[str, ...] = ()) -> dict:
    """``clients`` visitors asking for ``paths`` (a :class:`Pages`, or paths asked as they
    are) for ``seconds``: the figures of :func:`figures`, with the machine's load average
    when the load began; ``sources``: the local addresses they connect from (of
    127.0.0.0/8), in turn."""
    pages = paths if isinstance(paths, Pages) else Pages(paths)
    host, port = url.split("//")[1].split(":")
    seen: list[tuple] = []
    errors: list[str] = []

    async def main():
        until = time.monotonic() + seconds
        await asyncio.gather(*(_visitor(host, int(port), pages, k, until, think_s, timeout_s, seen, errors,
                                        sources[k % len(sources)] if sources else None)
                               for k in range(clients)))

    load_avg = round(os.getloadavg()[0], 1)
    t0 = time.monotonic()
    asyncio.run(main())
    return dict(figures(seen, errors, time.monotonic() - t0, clients), load_avg=load_avg)
