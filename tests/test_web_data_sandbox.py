"""Submitted code against the league's secrets, on a real ``arena serve``: a build and a bot that
try to read the league file (tokens, every author's data), its log, another author's package,
the replays and the server's log, and to reach the network. Strict (the default) refuses
all of it; the unsafe basic tier, as root, still keeps every file out of reach (bots run as
uids of their own, and the league's files are the server's alone). A build over its memory
cap fails; the rules' data says what the records say was in force."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402
from arena.web import store  # noqa: E402

from strict_check import require_strict  # noqa: E402
from web_data_server import Serve  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_BOT = (ROOT / "bots" / "examples" / "packages" / "python" / "bot.py").read_text()
SECRET = "SECRET-SOURCE-OF-ALICE-7f3a"

PROBE = '''
import os, socket
DB, PKG, LOG, PORT = {db!r}, {pkg!r}, {log!r}, {port}

def attempt(fn):
    try:
        return "YES" if fn() is not False else "no"
    except Exception:
        return "no"

def others():
    # its own package may show (the sandbox mounts it); any other one is a leak
    return bool([n for n in os.listdir(DB + ".bots") if not n.startswith("probe")])

def probe():
    checks = {{
        "db": lambda: open(DB, "rb").read(100),
        "wal": lambda: open(DB + "-wal", "rb").read(100),
        "bots": others,
        "pkg": lambda: open(PKG).read(),
        "replays": lambda: os.listdir(DB + ".replays"),
        "log": lambda: open(LOG).read(),
        "net": lambda: socket.create_connection(("127.0.0.1", PORT), timeout=3).close(),
    }}
    return ",".join(f"{{k}}={{attempt(f)}}" for k, f in checks.items())

if __name__ == "__main__":
    print("PROBE " + probe())
'''


def tarball(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def manifest(name: str, author: str, build: str | None = None) -> str:
    text = f'name = "{name}"\nversion = "1"\nauthor = "{author}"\ntoolchain = ["python3"]\nrun = "python3 bot.py"\n'
    return text + (f"build = {json.dumps(build)}\n" if build else "")


def probe_results(text: str) -> dict[str, str]:
    line = text[text.lower().index("probe ") + 6:].split()[0]
    return dict(item.split("=") for item in line.split(","))


@pytest.fixture
def league_dir():
    # a folder others may enter, as /srv/arena would be: the league's own files must protect themselves
    folder = Path(tempfile.mkdtemp(prefix="arena-league-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run_attack(folder: Path, *options: str) -> tuple[Serve, dict, dict, dict]:
    db = folder / "ladder.db"
    with League.create(db, RuleSpec(), 2, 0, {"move_ms": 1000}, "basic") as league:
        league.add("greedy", bot="greedy")
        league.add("random", bot="random")
    with store.open_league(db) as league:
        tokens = {a: store.new_token(league, a) for a in ("alice", "mallory")}
    server = Serve(db, "--pace", "0", "--concurrency", "1", "--build-timeout", "120", "--check-timeout", "180",
                   *options).start()
    victim = EXAMPLE_BOT.replace("import json", f"# {SECRET}\nimport json", 1).replace('"py-example"', '"victim"')
    status, sub = server.api("POST", "/api/submissions", tarball({"bot.toml": manifest("victim", "alice"),
                                                                  "bot.py": victim}), tokens["alice"])
    assert status == 202, sub
    assert server.wait_submission(sub["id"])["status"] == "accepted", server.output()[-3000:]
    probe = PROBE.format(db=str(db), pkg=f"{db}.bots/victim@1/bot.py", log=str(server.log), port=server.port)
    bot = EXAMPLE_BOT.replace('NAME, VERSION = "py-example", "1.0"',
                              'from probe import probe\nNAME, VERSION = "probe " + probe(), "1"')
    status, sub = server.api("POST", "/api/submissions",
                             tarball({"bot.toml": manifest("probe", "mallory", "python3 probe.py"), "probe.py": probe,
                                      "bot.py": bot}), tokens["mallory"])
    assert status == 202, sub
    done = server.wait_submission(sub["id"])
    assert done["status"] == "accepted", (done, server.output()[-3000:])
    done = server.api("GET", f"/api/submissions/{sub['id']}", token=tokens["mallory"])[1]  # the log is its author's
    build = probe_results(done["build_log"])
    replay = None
    deadline = time.monotonic() + 180
    while replay is None and time.monotonic() < deadline:
        for path in sorted(Path(f"{db}.replays").glob("*.json")):
            record = json.loads(path.read_text())
            names = [r.get("name", "") for r in record.get("ready") or [] if isinstance(r, dict)]
            names += [r for r in record.get("ready") or [] if isinstance(r, str)]
            found = [n for n in names if n.startswith("probe ")]
            if found:
                replay = found[0]
                break
        time.sleep(0.5)
    assert replay is not None, f"no game of the probe bot: {server.output()[-3000:]}"
    bot_view = probe_results(replay)
    return server, tokens, build, bot_view


def assert_no_secret_anywhere(server: Serve, tokens: dict) -> None:
    for path in ("/api/leaderboard", "/bot/probe", "/api/bots/probe", "/rules", "/api/rules", "/"):
        status, body = server.request("GET", path)
        text = body.decode(errors="replace")
        assert SECRET not in text and "SQLite format" not in text
        assert not any(t in text for t in tokens.values())
    for sid in (1, 2):
        status, sub = server.api("GET", f"/api/submissions/{sid}")
        assert SECRET not in json.dumps(sub)


def test_strict_default_refuses_files_tokens_other_packages_and_the_network(league_dir):
    require_strict()
    server, tokens, build, bot = run_attack(league_dir)
    try:
        everything = {"db": "no", "wal": "no", "bots": "no", "pkg": "no", "replays": "no", "log": "no", "net": "no"}
        assert build == everything, build
        assert bot == everything, bot
        assert_no_secret_anywhere(server, tokens)
        status, sub = server.api("GET", "/api/submissions/2")
        assert sub["sandbox"]["build"]["tier"] == "strict" and sub["sandbox"]["check"]["tier"] == "strict"
        # the league's files are the server's alone
        db = server.league
        assert stat.S_IMODE(os.stat(db).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(f"{db}.bots").st_mode) == 0o700
        assert stat.S_IMODE(os.stat(f"{db}.replays").st_mode) == 0o700
        with League.open(db, read_only=True) as league:
            conn = league.conn
            rows = conn.execute("SELECT sandbox FROM games WHERE sandbox IS NOT NULL").fetchall()
        assert rows and all(json.loads(r[0])["tier"] == "strict" for r in rows)
        with store.open_league(db) as league:
            force = store.sandbox_in_force(league)
        assert force["games"]["tier"] == "strict" and force["builds"]["tier"] == "strict"
        assert force["games"]["network"] is False and force["builds"]["network"] is False
    finally:
        assert server.stop() == 0, server.output()[-3000:]


@pytest.mark.skipif(os.geteuid() != 0, reason="bots run as uids of their own only when the server runs as root")
def test_unsafe_basic_as_root_still_keeps_every_file_out_of_reach(league_dir):
    server, tokens, build, bot = run_attack(league_dir, "--unsafe-sandbox", "basic", "--unsafe-build-sandbox", "basic")
    try:
        files = {k: "no" for k in ("db", "wal", "bots", "pkg", "replays")}
        assert {k: build[k] for k in files} == files, build
        assert {k: bot[k] for k in files} == files, bot
        assert_no_secret_anywhere(server, tokens)
        with store.open_league(server.league) as league:
            force = store.sandbox_in_force(league)
        # the records say what was really in force: basic, with the network
        assert force["games"]["tier"] == "basic" and force["builds"]["tier"] == "basic"
        assert force["games"]["network"] is True
        assert "warning" in server.output() and "--unsafe-sandbox basic" in server.output()
    finally:
        assert server.stop() == 0, server.output()[-3000:]


def test_a_build_over_its_memory_cap_fails_and_one_under_it_passes(tmp_path):
    require_strict()
    from arena.packages.build import build

    (tmp_path / "bot.toml").write_text("")
    hog = build(tmp_path, "python3 -c 'x = bytearray(400 << 20); print(len(x))'", 60, "strict", memory_mb=128)
    assert not hog.ok and "419430400" not in hog.log, hog.log
    assert {"cgroup_memory", "rss_polling"} & set(hog.sandbox["protections"]), hog.sandbox
    small = build(tmp_path, "python3 -c 'x = bytearray(16 << 20); print(len(x))'", 60, "strict", memory_mb=128)
    assert small.ok and "16777216" in small.log, small.log
