"""Small holes a stranger could find in the league's site, each read through the app itself
(no server): a path number too long for ``int()``, paths that a ``file:`` URL or a label
hid from :func:`scrub`, bot names that pass for a house bot's or another author's, a client
that hangs up while its upload is read, and build logs that only their author may read."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402
from arena.packages.package import Manifest  # noqa: E402
from arena.web import store  # noqa: E402
from arena.web.app import create_app  # noqa: E402
from arena.web.security import scrub  # noqa: E402
from arena.web.submissions import Settings  # noqa: E402

BUILD_SECRET = "compiling with private flags -DSECRET_SAUCE"


def call(app, method: str, path: str, headers: dict | None = None, body=b"") -> tuple[int, bytes]:
    """One request through the app, without a server: ``body`` is bytes, or a list of ASGI
    messages ``receive`` hands out in turn (then ``http.disconnect`` for ever)."""
    sent: list[dict] = []
    messages = list(body) if isinstance(body, list) else [{"type": "http.request", "body": body,
                                                            "more_body": False}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": raw, "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
             "root_path": "", "http_version": "1.1", "asgi": {"version": "3.0"}}
    asyncio.run(app(scope, receive, send))
    start = next((m for m in sent if m["type"] == "http.response.start"), None)
    return (start["status"] if start else None), b"".join(m.get("body", b"") for m in sent
                                                          if m["type"] == "http.response.body")


@pytest.fixture
def site(tmp_path: Path):
    """A league with a house bot, an author's accepted submission with its build log, and the author's token."""
    league = tmp_path / "league.db"
    with League.create(league, RuleSpec(), 2, 0, {"move_ms": 1000}, "basic") as lg:
        lg.add("random", bot="random")
        lg.add("dreamer@1", bot="greedy")
    folder = tmp_path / "league.db.bots" / "dreamer@1"
    folder.mkdir(parents=True)
    with store.open_league(league) as lg:
        token = store.new_token(lg, "alice")
        manifest = Manifest(name="dreamer", version="1", author="alice", run="python3 bot.py", toolchain=("python3",))
        sid = store.add_submission(lg, "alice", manifest, folder, False)
        store.update_submission(lg, sid, status="accepted", finished=time.time(), verdict="passed every check",
                                entry="dreamer@1", build_log=f"$ make\n{BUILD_SECRET}\n")
    return league, token, sid


def _numbered_routes(app) -> list[str]:
    """Every route path of ``app`` with a number in it (``{gid:...}``, ``{group:...}``)."""
    return [r.path for r in app.routes if re.search(r"\{\w+:(int|id)\}", getattr(r, "path", ""))]


def test_a_path_number_too_long_for_int_is_not_found_not_a_server_error(site, caplog):
    league, _, _ = site
    app = create_app(league, play=False)
    paths = _numbered_routes(app)
    assert len(paths) >= 8, paths
    huge = "9" * 4301  # over Python's limit for converting a decimal string to int
    caplog.set_level(logging.INFO)
    for path in paths:
        url = re.sub(r"\{\w+:\w+\}", huge, path)
        status, body = call(app, "GET", url)
        assert status == 404, (path, status, body[:200])
        if path.startswith("/api/"):
            assert "error" in json.loads(body)
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.exc_info], caplog.text[-2000:]
    status, _ = call(app, "GET", "/game/" + "9" * 19)
    assert status == 404, "a number of 19 digits still reaches its route (and names nothing)"


@pytest.mark.parametrize("shown, kept", [
    ("Error [ERR_MODULE_NOT_FOUND]: Cannot find module 'file:///srv/league/league.db.bots/x@1/lib.mjs'",
     "file://lib.mjs"),
    ("node:internal/errors:496 at file:///home/op/leagues/main/bot.mjs:12:3", "file://bot.mjs:12:3"),
    ("spawn failed cwd:/srv/league/league.db.bots/x@1", "cwd:x@1"),
    ("not found in path:/srv/league/bin/tool", "path:tool"),
])
def test_scrub_cuts_the_paths_of_file_urls_and_labels(shown, kept):
    out = scrub(shown)
    assert kept in out and "/srv" not in out and "/home" not in out, out
    assert scrub("see https://example.org/a/b and 1/2/3 and and/or at 12:30") == \
        "see https://example.org/a/b and 1/2/3 and and/or at 12:30"


@pytest.mark.parametrize("name, like", [("py-exarnple", "py-example"), ("greecly", "greedy"),
                                        ("ranclorn", "random"),
                                        ("vvinner", "winner")])
def test_names_that_pass_for_another_fold_alike(name, like):
    assert store.fold(name) == store.fold(like)


def test_a_house_bots_look_alike_is_refused(site):
    league, _, _ = site
    with store.open_league(league) as lg:
        assert "too like 'greedy'" in store.name_refusal(lg, "greecly", "bob")
        assert "too like 'random'" in store.name_refusal(lg, "ranclorn", "bob")
        assert "belongs to alice" in store.name_refusal(lg, "dreamer", "bob")
        assert "belongs to alice" in store.name_refusal(lg, "clrearner", "bob")
        assert store.name_refusal(lg, "modern", "bob") is None


def test_a_client_that_hangs_up_during_an_upload_is_one_line_of_the_log(site, caplog):
    league, token, _ = site
    app = create_app(league, Settings(tier="basic", game_tier="basic"), play=False)
    caplog.set_level(logging.INFO)
    half = [{"type": "http.request", "body": b"\x1f\x8b" + b"x" * 1000, "more_body": True}]
    status, _ = call(app, "POST", "/api/submissions", {"Authorization": f"Bearer {token}",
                                                       "Content-Length": "100000"}, half)
    assert status is None, "nobody is left to answer"
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], caplog.text[-2000:]
    assert "disconnected" in caplog.text
    boundary = "b0undary"
    form = [{"type": "http.request", "body": f"--{boundary}\r\nContent-Disposition: form-data; "
             f"name=\"token\"\r\n\r\n{token}\r\n".encode(), "more_body": True}]
    call(app, "POST", "/submit", {"Content-Type": f"multipart/form-data; boundary={boundary}"}, form)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], caplog.text[-2000:]


def test_build_logs_are_their_authors_unless_the_operator_opts_in(site):
    league, token, sid = site
    app = create_app(league, play=False)
    for path in (f"/submission/{sid}", f"/api/submissions/{sid}", "/api/bots/dreamer", "/bot/dreamer"):
        status, body = call(app, "GET", path)
        assert status == 200 and BUILD_SECRET.encode() not in body, path
    page = call(app, "GET", f"/submission/{sid}")[1].decode()
    assert 'id="build-log-private"' in page and "passed every check" in page
    status, body = call(app, "GET", f"/api/submissions/{sid}", {"Authorization": f"Bearer {token}"})
    assert status == 200 and BUILD_SECRET in json.loads(body)["build_log"], "its author reads it"
    status, body = call(app, "GET", "/api/me", {"Authorization": f"Bearer {token}"})
    assert status == 200 and BUILD_SECRET.encode() in body
    opened = create_app(league, Settings(public_build_logs=True), play=False)
    assert BUILD_SECRET.encode() in call(opened, "GET", f"/submission/{sid}")[1]
    assert BUILD_SECRET in json.loads(call(opened, "GET", f"/api/submissions/{sid}")[1])["build_log"]
