"""``arena serve`` end to end: a real server on 127.0.0.1, submissions through the API, the
upload form and ``arena submit``, the background league, and the pages in headless Chromium."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402
from arena.web import store  # noqa: E402
from arena.packages.package import pack  # noqa: E402
from web_data_server import Serve  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "bots" / "examples" / "packages"
MAX_UPLOAD_KIB = 256


def package(files: dict[str, str], mode: int = 0o644) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def manifest(name: str, run: str, build: str | None = None, toolchain: str = "python3", author: str = "alice",
             version: str = "1") -> str:
    text = f'name = "{name}"\nversion = "{version}"\nauthor = "{author}"\ntoolchain = ["{toolchain}"]\nrun = "{run}"\n'
    return text + (f'build = "{build}"\n' if build else "")


class Server(Serve):
    """``arena serve`` of the site tests: one game at a time, short build and check limits, a
    small upload cap (or the options given); requests answer ``(status, body, headers)``."""

    def __init__(self, root: Path, *args: str):
        super().__init__(root / "league.db", *(args or ("--concurrency", "1", "--build-timeout", "60",
                                                         "--check-timeout", "120", "--max-upload-kib", str(MAX_UPLOAD_KIB))))
        self.root = root

    def start(self, timeout: float = 60) -> "Server":
        return super().start(timeout)

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None):
        return self.exchange(method, path, data, headers)

    def get(self, path: str):
        status, body, _ = self.request("GET", path)
        return status, json.loads(body) if path.startswith("/api") else body.decode()

    def submit(self, data: bytes, token: str, query: str = "") -> tuple[int, dict]:
        status, body, _ = self.request("POST", f"/api/submissions{query}", data,
                                       {"Authorization": f"Bearer {token}"})
        return status, json.loads(body)

    def wait(self, sid: int, timeout: float = 180, token: str | None = None) -> dict:
        """The submission once it is finished (with its build log when asked with its author's ``token``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status, body, _ = self.request("GET", f"/api/submissions/{sid}", None,
                                           {"Authorization": f"Bearer {token}"} if token else None)
            sub = json.loads(body)
            assert status == 200
            if sub["status"] not in ("queued", "building", "checking"):
                return sub
            time.sleep(0.5)
        raise AssertionError(f"submission {sid} did not finish: {sub}")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    server = Server(root)
    with League.create(server.league, RuleSpec(), 2, 0, {"move_ms": 500}, "basic") as league:
        league.add("random", bot="random")
        league.add("greedy", bot="greedy")
    with store.open_league(server.league) as league:
        server.tokens = {"alice": store.new_token(league, "alice"), "examples": store.new_token(league, "examples")}
    server.start()
    yield server
    assert server.stop() == 0, server.log.read_text()[-3000:]


def test_wrong_token_is_refused(site):
    data, _ = pack(EXAMPLES / "python")
    status, out = site.submit(data, "not-a-token")
    assert status == 401 and "unknown token" in out["error"]
    status, out = site.submit(data, "")
    assert status == 401


def test_archive_with_parent_paths_is_refused(site):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in (("bot.toml", manifest("evil", "python3 bot.py")), ("../../escaped.py", "x")):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tf.addfile(info, io.BytesIO(text.encode()))
    status, out = site.submit(buf.getvalue(), site.tokens["alice"])
    assert status == 400 and "'..'" in out["error"]
    assert not list(site.root.rglob("escaped.py"))


def test_oversized_archive_is_refused_before_it_is_read(site):
    status, out = site.submit(os.urandom((MAX_UPLOAD_KIB + 8) << 10), site.tokens["alice"])
    assert status == 413 and f"{MAX_UPLOAD_KIB} KiB" in out["error"]


def test_manifest_problems_are_named(site):
    token = site.tokens["alice"]
    status, out = site.submit(package({"bot.toml": manifest("x", "python3 bot.py", author="bob")}), token)
    assert status == 400 and "the token belongs to alice" in out["error"]
    status, out = site.submit(package({"bot.toml": manifest("x", "cobc bot.cob", toolchain="cobol")}), token)
    assert status == 400 and "no 'cobol' toolchain" in out["error"]
    status, out = site.submit(package({"bot.py": "print()"}), token)
    assert status == 400 and "no bot.toml" in out["error"]


def test_a_build_that_fails_is_shown_with_its_log(site):
    data = package({"bot.toml": manifest("broken-build", "./bot", build="cc -o bot missing.c", toolchain="cc")})
    status, out = site.submit(data, site.tokens["alice"])
    assert status == 202 and out["status"] == "queued"
    sub = site.wait(out["id"], token=site.tokens["alice"])
    assert sub["status"] == "build failed"
    assert "missing.c" in sub["build_log"] and "exited with code" in sub["verdict"]
    assert sub["sandbox"]["build"]["tier"] == "strict"
    page = site.get(f"/submission/{out['id']}")[1]  # the build log is its author's
    assert "build failed" in page and 'id="build-log"' not in page and 'id="build-log-private"' in page
    assert "broken-build@1" not in [r["name"] for r in site.get("/api/leaderboard")[1]["table"]]


def test_a_bot_that_fails_the_check_does_not_enter(site):
    bot = "import sys\nfor line in sys.stdin:\n    print('hello, not json', flush=True)\n"
    data = package({"bot.toml": manifest("chatty", "python3 bot.py"), "bot.py": bot})
    status, out = site.submit(data, site.tokens["alice"])
    assert status == 202
    sub = site.wait(out["id"])
    assert sub["status"] == "check failed"
    assert "handshake" in sub["verdict"] and not sub["check_report"]["ok"]
    assert "chatty@1" not in [r["name"] for r in site.get("/api/leaderboard")[1]["table"]]


def test_arena_submit_and_the_upload_form_enter_good_bots(site):
    out = subprocess.run([sys.executable, "-m", "arena.cli", "submit", str(EXAMPLES / "python"), "--server", site.url,
                          "--token", site.tokens["examples"], "--wait"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    watch = re.search(r"watch it at (\S+)", out.stdout).group(1)
    assert watch.startswith(f"{site.url}/submission/")
    assert "accepted: passed every check" in out.stdout
    # the C example through the upload form (multipart), built on the server
    data, name = pack(EXAMPLES / "c")
    boundary = "----arena-test-boundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\n{site.tokens['examples']}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"package\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/gzip\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(site.url + "/submit", data=body, method="POST",
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=60) as resp:  # follows the 303 to the submission's page
        assert resp.status == 200 and "/submission/" in resp.url
        sid = int(resp.url.rsplit("/", 1)[1])
    sub = site.wait(sid, token=site.tokens["examples"])
    assert sub["status"] == "accepted", sub
    assert "$ cc -O2" in sub["build_log"]
    rows = {r["name"]: r for r in site.get("/api/leaderboard")[1]["table"]}
    assert rows["py-example@1.0"]["status"] == rows["c-example@1.0"]["status"] == "active"
    assert rows["c-example@1.0"]["author"] == "examples"
    # the same version twice is refused
    status, again = site.submit(pack(EXAMPLES / "python")[0], site.tokens["examples"])
    assert status == 400 and "already submitted" in again["error"]


def test_a_new_version_retires_the_previous_one_unless_kept(site):
    folder = site.root / "py2"
    shutil.copytree(EXAMPLES / "python", folder)
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(toml.replace('version = "1.0"', 'version = "1.1"'))
    status, out = site.submit(pack(folder)[0], site.tokens["examples"])
    assert status == 202
    sub = site.wait(out["id"])
    assert sub["status"] == "accepted" and "retired py-example@1.0" in sub["verdict"]
    rows = {r["name"]: r for r in site.get("/api/leaderboard")[1]["table"]}
    assert rows["py-example@1.0"]["status"] == "retired" and rows["py-example@1.1"]["status"] == "active"
    # another author cannot take the name
    status, out = site.submit(package({"bot.toml": manifest("py-example", "python3 bot.py", version="9")}),
                              site.tokens["alice"])
    assert status == 400 and "belongs to examples" in out["error"]


def test_the_league_plays_the_new_bot_in_the_background(site):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        rows = {r["name"]: r for r in site.get("/api/leaderboard")[1]["table"]}
        if rows["py-example@1.1"]["games"] >= 2:
            break
        time.sleep(1)
    assert rows["py-example@1.1"]["games"] >= 2
    assert rows["py-example@1.1"]["elo"] is not None


def chromium_dom(url: str) -> str:
    """The page's DOM after its scripts ran, from headless Chromium."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (apt-get install -y chromium)")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    out = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-dev-shm-usage", "--virtual-time-budget=2000", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_chromium_shows_the_bot_on_the_leaderboard_its_page_and_a_replay(site):
    dom = chromium_dom(site.url + "/")
    assert 'id="leaderboard"' in dom and "py-example" in dom and "c-example" in dom
    bot = chromium_dom(site.url + "/bot/py-example")
    assert "py-example@1.1" in bot and "<svg" in bot and "Rating over time" in bot
    gid = int(re.search(r'href="/game/(\d+)"', bot).group(1))
    status, game = site.get(f"/game/{gid}")
    assert status == 200 and "py-example@1." in game and f'src="/game/{gid}/replay"' in game
    replay = chromium_dom(f"{site.url}/game/{gid}/replay")
    # the viewer's script ran: it wrote the final scores into the page
    assert "py-example@1." in replay and "final scores" in replay
    status, rules = site.get("/rules")
    assert status == 200 and "Toolchains on this server" in rules and "python3" in rules
