"""An author's private page on a real ``arena serve`` (127.0.0.1): their bots, submissions with
build logs and check reports, their bots' stderr in recent games, their quota; the token
only in a header or a form's body, never cached, nothing of another author's; and the
names of submissions in progress kept from everyone but their author."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.parse

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402
from arena.web import store  # noqa: E402
from web_data_server import Serve  # noqa: E402

pytestmark = pytest.mark.slow  # a real server, and a bot built and checked before the first test

#: A bot that plays a random legal option after the seconds its first argument says and writes a line naming
#: a server-like path to stderr for each request (which its author sees, the path cut).
SLOW_BOT = """\
import json, random, sys, time
DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
rng = random.Random(7)
n = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "ready", "id": msg["id"], "name": "slowpy", "version": "1", "legal_actions": True}),
              flush=True)
    elif msg["type"] == "quit":
        break
    elif "legal" in msg:
        n += 1
        print(f"thinking about move {n} in /srv/private/place/notes.txt", file=sys.stderr, flush=True)
        time.sleep(DELAY)
        print(json.dumps({"id": msg["id"], "action": rng.choice(msg["legal"])}), flush=True)
"""


def package(name: str, version: str, bot: str = SLOW_BOT, author: str = "alice", delay: str = "0",
            build: str | None = None) -> bytes:
    """A ``.tar.gz`` bot package: ``bot.toml`` and ``bot.py``."""
    toml = (f'name = "{name}"\nversion = "{version}"\nauthor = "{author}"\ntoolchain = ["python3"]\n'
            f'run = "python3 bot.py {delay}"\n' + (f'build = "{build}"\n' if build else ""))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for fname, text in (("bot.toml", toml), ("bot.py", bot)):
            data = text.encode()
            info = tarfile.TarInfo(fname)
            info.size, info.mode = len(data), 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def browse(url: str, *extra: str) -> str:
    """Headless Chromium's output for ``url`` (``--dump-dom``, ``--screenshot=FILE``)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (apt-get install -y chromium)")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="arena-chromium-") as profile:
        out = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--virtual-time-budget=4000",
                              *extra, url], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("author")
    server = Serve(root / "league.db", "--concurrency", "1", "--pace", "0", "--unsafe-sandbox", "basic",
                   "--unsafe-build-sandbox", "basic", "--check-timeout", "120", "--submissions-per-hour", "5")
    with League.create(server.league, RuleSpec(), 2, 0, {"move_ms": 2000}, "basic") as league:
        league.add("greedy", bot="greedy")
        league.add("random", bot="random")
    with store.open_league(server.league) as league:
        server.tokens = {a: store.new_token(league, a) for a in ("alice", "bob", "carol")}
    server.start()
    status, sub = server.api("POST", "/api/submissions", package("alicebot", "1"), server.tokens["alice"])
    assert status == 202, sub
    server.alice_sid = sub["id"]
    assert server.wait_submission(sub["id"])["status"] == "accepted", server.output()[-3000:]
    yield server
    assert server.stop() == 0, server.output()[-3000:]


def me(site, token: str) -> tuple[int, str, dict]:
    body = urllib.parse.urlencode({"token": token}).encode()
    status, page, headers = site.exchange("POST", "/me", body, {"Content-Type": "application/x-www-form-urlencoded"})
    return status, page.decode(), headers


def test_a_wrong_or_missing_token_is_refused_and_nothing_is_kept(site):
    assert site.api("GET", "/api/me")[0] == 401
    assert site.api("GET", "/api/me", token="not-a-token")[0] == 401
    status, page, headers = me(site, "not-a-token")
    assert status == 401 and "Unknown token" in page and "alicebot" not in page
    assert headers["Cache-Control"] == "no-store"
    status, form, headers = site.exchange("GET", "/me")
    assert status == 200 and b'method="post" action="/me"' in form and b'type="password"' in form
    assert headers["Cache-Control"] == "no-store"
    # the token is never read from the address
    assert b"alicebot" not in site.exchange("GET", f"/me?token={site.tokens['alice']}")[1]


@pytest.mark.slow
def test_the_author_sees_their_bots_submissions_logs_and_quota(site):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status, data = site.api("GET", "/api/me", token=site.tokens["alice"])
        assert status == 200
        logs = [g for b in data["bots"] for g in b["logs"] if g["kept"]]
        if logs:
            break
        time.sleep(0.5)
    assert data["author"] == "alice" and [b["entry"] for b in data["bots"]] == ["alicebot@1"]
    sub = data["submissions"][0]
    assert sub["entry"] == "alicebot@1" and sub["status"] == "accepted" and sub["check_report"]["ok"]
    assert "folder" not in sub and "argv" not in sub
    assert re.search(r"thinking about move \d+ in notes\.txt\n", logs[0]["text"]), "the bot's stderr, its paths cut"
    assert "/srv/private" not in json.dumps(data) and str(site.league.parent) not in json.dumps(data)
    q = data["quota"]
    assert (q["last_hour"], q["hourly_limit"], q["hourly_left"]) == (1, 5, 4)
    assert (q["pending"], q["pending_limit"], q["pending_left"]) == (0, 2, 2) and q["next_free"] is None
    status, page, headers = me(site, site.tokens["alice"])
    assert status == 200 and headers["Cache-Control"] == "no-store"
    assert 'id="my-bots"' in page and "alicebot@1" in page and re.search(r"thinking about move \d+ in notes\.txt", page)
    assert 'id="quota"' in page and "1 of 5 (4 left)" in page and "Build log" in page and "PASS" in page
    assert site.tokens["alice"] not in page
    # another author sees none of it
    status, other = site.api("GET", "/api/me", token=site.tokens["carol"])
    assert status == 200 and other["bots"] == [] and other["submissions"] == []
    assert "alicebot" not in me(site, site.tokens["carol"])[1]


@pytest.mark.slow
def test_a_submission_in_progress_shows_its_name_to_its_author_only(site):
    # alice's build takes a while, so bob's submission waits in the queue behind it
    status, slow = site.api("POST", "/api/submissions", package("alicebot", "2", build="sleep 4"), site.tokens["alice"])
    assert status == 202, slow
    status, queued = site.api("POST", "/api/submissions", package("secretname", "1", author="bob"), site.tokens["bob"])
    assert status == 202 and queued["status"] == "queued"
    sid = queued["id"]
    status, shown = site.api("GET", f"/api/submissions/{sid}")
    assert status == 200 and shown["status"] in store.PENDING and "secretname" not in json.dumps(shown)
    status, page, headers = site.exchange("GET", f"/submission/{sid}")
    assert status == 200 and b"secretname" not in page and b'href="/me"' in page
    assert site.api("GET", f"/api/submissions/{sid}", token=site.tokens["alice"])[1].get("entry") is None
    status, mine = site.api("GET", f"/api/submissions/{sid}", token=site.tokens["bob"])
    if mine["status"] in store.PENDING:
        assert mine["entry"] == "secretname@1"
    for path in ("/", "/live", "/author/bob", "/api/authors/bob", "/api/leaderboard"):
        assert b"secretname" not in site.exchange("GET", path)[1], path
    for path in ("/bot/secretname", "/api/bots/secretname"):  # as for a name no one submitted
        assert site.exchange("GET", path)[0] == 404
    status, private = site.api("GET", "/api/me", token=site.tokens["bob"])
    assert [s["entry"] for s in private["submissions"]] == ["secretname@1"]
    assert private["quota"]["last_hour"] == 1
    done = site.wait_submission(sid)
    assert done["status"] == "accepted"
    assert b"secretname@1" in site.exchange("GET", f"/submission/{sid}")[1]  # finished: public as before
    site.wait_submission(slow["id"])


def test_chromium_shows_the_sign_in_form(site):
    dom = browse(site.url + "/me", "--dump-dom")
    assert 'id="sign-in"' in dom and re.search(r'<input type="password" name="token"', dom)
