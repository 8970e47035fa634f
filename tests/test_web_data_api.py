"""``arena submit`` and ``arena withdraw`` against a real server: every refusal (413, 401, 429,
403, 404, 409) in one sentence, a version withdrawn by its author, and background play at
the operator's pace."""

from __future__ import annotations

import io
import os
import sqlite3
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402
from arena.web import store  # noqa: E402

from web_data_server import Serve  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
BOT = (ROOT / "bots" / "examples" / "packages" / "python" / "bot.py").read_text()


def folder(tmp_path: Path, name: str, author: str, version: str = "1", build: str | None = None,
           big: int = 0) -> Path:
    pkg = tmp_path / f"{name}-{version}"
    pkg.mkdir()
    (pkg / "bot.toml").write_text(f'name = "{name}"\nversion = "{version}"\nauthor = "{author}"\n'
                                  f'toolchain = ["python3"]\nrun = "python3 bot.py"\n'
                                  + (f'build = "{build}"\n' if build else ""))
    (pkg / "bot.py").write_text(BOT)
    if big:
        (pkg / "noise.bin").write_bytes(os.urandom(big))  # does not compress
    return pkg


def arena(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def games(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("api")
    db = root / "ladder.db"
    with League.create(db, RuleSpec(), 2, 0, {"move_ms": 500}, "basic") as league:
        league.add("greedy", bot="greedy")
        league.add("random", bot="random")
    with store.open_league(db) as league:
        tokens = {a: store.new_token(league, a) for a in ("alice", "bob")}
    server = Serve(db, "--pace", "60", "-j", "1", "--max-upload-kib", "64", "--pending-per-author", "1",
                   "--build-timeout", "60", "--check-timeout", "120").start()
    server.tokens = tokens
    server.root = root
    yield server
    assert server.stop() == 0, server.output()[-3000:]


def refused(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    text = out.stdout + out.stderr
    assert "Traceback" not in text and "Connection reset" not in text and len(text.strip().splitlines()) == 1, text
    return text


def test_every_refusal_of_arena_submit_is_one_sentence(site):
    text = refused(arena("submit", folder(site.root, "huge", "alice", big=200 << 10), "--server", site.url,
                         "--token", site.tokens["alice"]))
    assert "(HTTP 413)" in text and "over the 64 KiB limit" in text, text
    text = refused(arena("submit", folder(site.root, "x", "alice"), "--server", site.url, "--token", "wrong"))
    assert "(HTTP 401)" in text and "unknown token" in text, text
    slow = arena("submit", folder(site.root, "slow", "bob", build="sleep 6"), "--server", site.url,
                 "--token", site.tokens["bob"])
    assert slow.returncode == 0, slow.stderr
    text = refused(arena("submit", folder(site.root, "slow", "bob", version="2"), "--server", site.url,
                         "--token", site.tokens["bob"]))
    assert "(HTTP 429)" in text and "at most 1 at once" in text, text


def test_an_author_withdraws_their_version(site):
    out = arena("submit", folder(site.root, "quitter", "alice"), "--server", site.url, "--token",
                site.tokens["alice"], "--wait")
    assert out.returncode == 0 and "accepted" in out.stdout, (out.stdout, out.stderr)
    text = refused(arena("withdraw", "quitter@1", "--server", site.url, "--token", site.tokens["bob"]))
    assert "(HTTP 403)" in text and "belongs to alice" in text
    text = refused(arena("withdraw", "nobody@1", "--server", site.url, "--token", site.tokens["alice"]))
    assert "(HTTP 404)" in text
    text = refused(arena("withdraw", "quitter@1", "--server", site.url, "--token", "wrong"))
    assert "(HTTP 401)" in text
    done = arena("withdraw", "quitter@1", "--server", site.url, "--token", site.tokens["alice"])
    assert done.returncode == 0 and "withdrew quitter@1" in done.stdout, done.stderr
    text = refused(arena("withdraw", "quitter@1", "--server", site.url, "--token", site.tokens["alice"]))
    assert "(HTTP 409)" in text and "already withdrawn" in text
    with League.open(site.league, read_only=True) as league:
        entry = league.entry("quitter@1")
    assert not entry.active  # no longer matched; its games stay
    status, body = site.api("GET", "/api/leaderboard")
    assert status == 200 and "quitter@1" in {r["name"] for r in body["table"]}
    status, body = site.api("POST", "/api/withdraw", b"not json", site.tokens["alice"])
    assert status == 400 and "entry" in body["error"]


def test_background_play_keeps_the_operators_pace(site):
    # 60 games a minute: about one a second, whatever the workers could do (house bots play
    # hundreds a minute in-process)
    time.sleep(5)
    start, t0 = games(site.league), time.monotonic()
    time.sleep(20)
    played, seconds = games(site.league) - start, time.monotonic() - t0
    assert 5 <= played <= seconds * 60 / 60 + 4, (played, seconds)
