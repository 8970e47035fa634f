"""The store guards itself: one writer per folder, only our own whole database, read-only readers.

The lock is tested against a real holder process (alive, then killed with SIGKILL); bad
databases are real files (empty, truncated, damaged, another program's SQLite, text);
read-only folders are real: a read-only bind mount in a private mount namespace when
this runs as root (root ignores file modes), ``chmod`` otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.league import League, LeagueError
from arena.tournament.schedule import GameTask
from arena.tournament.store import DB_NAME, LOCK_NAME, Store, StoreBusy, StoreError
from engine import RuleSpec

runner = CliRunner()
FINGERPRINT = {"name": "t"}


def outcome(i: int) -> dict:
    return {"result": {"scores": [10, i % 7], "ranking": [1, 2], "completed": [3, 2], "rounds": 9,
                       "adjudicated": False, "forfeited": [False, False]},
            "seats": [{"name": "a", "faults": [{"verdict": "timeout", "detail": "x" * 2000, "move": 3}], "moves": 30},
                      {"name": "b", "faults": [], "moves": 30}],
            "duration_s": 0.25, "replay_path": None, "sandbox": {"tier": "none"}, "rules": {}}


def filled(folder: Path, games: int = 40) -> Path:
    """A closed results database in ``folder`` with ``games`` games; returns its path."""
    store = Store.open(folder, FINGERPRINT)
    store.set_meta("config", json.dumps({"name": "t", "bots": ["a", "b"], "seats": 2, "format": "round-robin",
                                         "anchor": "b", "scheduled": games}))
    for i in range(games):
        store.record_game(GameTask(f"t:{i}:0:1", i, 0, 1, ("a", "b")), outcome(i))
    store.close()
    return folder / DB_NAME


def arena(*args) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


HOLDER = textwrap.dedent("""\
    import os, sys, time
    from arena.tournament.schedule import GameTask
    from arena.tournament.store import Store
    store = Store.open(sys.argv[1], {"name": "t"})
    for i in range(int(sys.argv[2])):
        store.record_game(GameTask(f"t:{i}:0:1", i, 0, 1, ("a", "b")),
                          {"result": {"scores": [1, 0], "ranking": [1, 2]}, "seats": [{}, {}]})
    print("locked", flush=True)
    time.sleep(120)
    """)


def hold(folder: Path, games: int = 0) -> subprocess.Popen:
    """A process that opens the store for writing (and stores ``games`` games), then waits."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), str(games)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def kill9(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


# ---------------------------------------------------------------- one coordinator per folder
def test_a_second_writer_is_refused_with_who_holds_the_folder_and_the_lock_dies_with_the_holder(tmp_path):
    folder = tmp_path / "out"
    proc = hold(folder)
    try:
        with pytest.raises(StoreBusy) as info:
            Store.open(folder, FINGERPRINT)
        message = str(info.value)
        assert f"pid {proc.pid} on host {socket.gethostname()}, since 20" in message, message
        assert "a tournament run" in message and "is in use" in message
        reader = Store.open(folder, create=False)  # readers are never locked out
        reader.close()
    finally:
        kill9(proc)
    Store.open(folder, FINGERPRINT).close()  # the kernel dropped the lock with the killed holder


def test_arena_run_on_a_folder_in_use_exits_non_zero_naming_the_holder_then_runs_once_it_is_killed(tmp_path):
    out = tmp_path / "out"
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nbots: [greedy, random]\nrounds: 1\nexecutor: inprocess\nreplays: false\noutput: {out}\n")
    out.mkdir()
    lock = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT)  # the same lock another coordinator would hold
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""\
        from arena.tournament.store import FolderLock
        import time
        lock = FolderLock.acquire({str(out / LOCK_NAME)!r}, "a tournament run")
        print("locked", flush=True)
        time.sleep(120)
        """)], stdout=subprocess.PIPE, text=True)
    os.close(lock)
    try:
        assert proc.stdout.readline().strip() == "locked"
        code, output = arena("run", path, "--no-progress")
        assert code == 2 and f"pid {proc.pid} on host" in output, output
        assert not (out / DB_NAME).exists(), "the refused run touched nothing"
    finally:
        kill9(proc)
    code, output = arena("run", path, "--no-progress")
    assert code == 0 and "2 games played" in output, output


def test_the_lock_file_names_its_holder_and_is_released_on_close(tmp_path):
    store = Store.open(tmp_path, FINGERPRINT)
    info = json.loads((tmp_path / LOCK_NAME).read_text())
    assert info["pid"] == os.getpid() and info["host"] == socket.gethostname() and info["since"] <= time.time()
    with pytest.raises(StoreBusy, match=f"pid {os.getpid()}"):
        Store.open(tmp_path, FINGERPRINT)  # even within one process
    store.close()
    Store.open(tmp_path, FINGERPRINT).close()


# ---------------------------------------------------------------- only our own, whole database
def _text(path: Path) -> None:
    path.write_text("name,score\ngreedy,12\n")


def _foreign(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    con.commit()
    con.close()


def _empty_sqlite(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 7")
    con.close()


def _league(path: Path) -> None:
    League.create(path, RuleSpec(), 2).close()


@pytest.mark.parametrize("make, words", [
    (lambda p: p.write_bytes(b""), "is empty (0 bytes)"),
    (_text, "is not an SQLite file"),
    (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x10\x00"), "shorter than an SQLite header"),
    (_foreign, "is an SQLite database but not tournament results (its tables: photos)"),
    (_empty_sqlite, "not tournament results (its tables: none)"),
    (_league, "not tournament results (its tables: entries, games, meta, seats)"),
])
def test_a_database_that_is_not_ours_is_refused_and_left_untouched(tmp_path, make, words):
    folder = tmp_path / "out"
    folder.mkdir()
    db = folder / DB_NAME
    make(db)
    before = db.read_bytes()
    for create in (True, False):
        with pytest.raises(StoreError) as info:
            Store.open(folder, FINGERPRINT, create=create)
        assert words in str(info.value), str(info.value)
    assert db.read_bytes() == before, "a refused database is never rewritten"
    code, output = arena("standings", folder)
    assert code == 2 and words in output, output


def test_a_truncated_database_is_refused(tmp_path):
    db = filled(tmp_path / "out")
    data = db.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    assert len(data) >= 8 * page, "the database needs a few pages for this test"
    for size in (len(data) // page // 2 * page, len(data) - page, len(data) - 100, 4096 + 7):
        db.write_bytes(data[:size])
        with pytest.raises(StoreError, match="is truncated: it has") as info:
            Store.open(tmp_path / "out", FINGERPRINT)
        assert "restore it from a copy, or move it away" in str(info.value)
        assert db.stat().st_size == size
    db.write_bytes(data)
    Store.open(tmp_path / "out", FINGERPRINT).close()


def test_a_damaged_database_is_refused(tmp_path):
    db = filled(tmp_path / "out")
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[2 * page:len(data)] = bytes(range(256)) * ((len(data) - 2 * page) // 256) + b"\xff" * ((len(data) - 2 * page) % 256)
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="is damaged"):
        Store.open(tmp_path / "out", FINGERPRINT)
    code, output = arena("standings", tmp_path / "out")
    assert code == 2 and "is damaged" in output


def test_a_missing_database_starts_a_new_tournament_made_whole(tmp_path):
    store = Store.open(tmp_path / "new", FINGERPRINT)
    try:
        assert store.meta("format") == "arena-results" and store.count() == 0
        assert not list((tmp_path / "new").glob(".results.sqlite.new-*")), "the temporary database is gone"
    finally:
        store.close()


def test_a_reader_never_writes(tmp_path):
    db = filled(tmp_path / "out", games=3)
    before = db.read_bytes()
    store = Store.open(tmp_path / "out", create=False)
    try:
        assert store.count() == 3
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.conn.execute("DELETE FROM games")
    finally:
        store.close()
    assert db.read_bytes() == before


# ---------------------------------------------------------------- read-only folders
DRIVER = textwrap.dedent("""\
    import json, sys
    from typer.testing import CliRunner
    from arena.cli import app
    results = [CliRunner().invoke(app, args) for args in json.loads(sys.argv[1])]
    print(json.dumps([[r.exit_code, r.output] for r in results]))
    """)


def run_read_only(folder: Path, *commands: list[str]) -> list[tuple[int, str]]:
    """Run the ``arena`` commands (one process, one import) with ``folder`` read-only: a
    read-only bind mount of the folder on itself in a private mount namespace, or
    ``chattr +i``, as root (root ignores file modes); ``chmod a-w`` as any other user.
    Fails if the folder can still be written from inside. Returns ``(exit code, output)``s."""
    done = _read_only(folder, [sys.executable, "-c", DRIVER, json.dumps([[str(a) for a in c] for c in commands])])
    assert done.returncode == 0, done.stdout + done.stderr
    return [tuple(r) for r in json.loads(done.stdout.splitlines()[-1])]


def _read_only(folder: Path, cmd: list[str]) -> subprocess.CompletedProcess:
    probe = ('test ! -e "$0/.probe" && ! touch "$0/.probe" 2>/dev/null || { echo "the folder is writable"; exit 97; }; '
             'exec "$@"')
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
        for p in modes:
            p.chmod(modes[p] & ~0o222)
        try:
            return subprocess.run(["sh", "-c", probe, str(folder), *cmd], capture_output=True, text=True, timeout=120)
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
    unshare, chattr = shutil.which("unshare"), shutil.which("chattr")
    if unshare and subprocess.run([unshare, "--mount", "true"], capture_output=True).returncode == 0:
        script = f'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && {probe}'
        return subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-c", script, str(folder), *cmd],
                              capture_output=True, text=True, timeout=120)
    if chattr and subprocess.run([chattr, "-R", "+i", str(folder)], capture_output=True).returncode == 0:
        try:  # immutable: not even root may write
            return subprocess.run(["sh", "-c", probe, str(folder), *cmd], capture_output=True, text=True, timeout=120)
        finally:
            subprocess.run([chattr, "-R", "-i", str(folder)], check=True)
    pytest.skip("running as root where neither a private read-only mount (unshare --mount) nor chattr +i is "
                "allowed: no way to make a folder read-only for root (the os.access test covers the logic)")


@pytest.mark.slow
def test_standings_and_index_work_on_a_read_only_folder(tmp_path):
    folder = tmp_path / "results"
    filled(folder, games=20)
    site = tmp_path / "site"
    standings, index, index_out = run_read_only(folder, ["standings", folder, "--json"], ["index", folder],
                                                ["index", folder, "--out", site])
    assert standings[0] == 0, standings[1]
    rows = {r["bot"]: r for r in json.loads(standings[1])["standings"]}
    assert rows["a"]["games"] == 20 and rows["a"]["faults"] == 20
    assert index[0] == 2 and "is read-only" in index[1] and "give --out DIR" in index[1], index[1]
    assert index_out[0] == 0, index_out[1]
    assert "data-bot=\"a\"" in (site / "index.html").read_text()
    assert sorted(p.name for p in folder.iterdir()) == [".arena-output", LOCK_NAME, DB_NAME], "nothing was written into the folder"


def test_without_write_access_a_reader_opens_immutable_or_reads_a_copy_of_a_left_log(tmp_path, monkeypatch):
    clean = filled(tmp_path / "clean", games=5).parent
    killed = tmp_path / "killed"
    kill9(hold(killed, games=7))
    assert (killed / (DB_NAME + "-wal")).stat().st_size > 0
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if mode == os.W_OK else real_access(path, mode))
    for folder, games in ((clean, 5), (killed, 7)):
        before = {p.name: p.read_bytes() for p in folder.iterdir()}
        store = Store.open(folder, create=False)
        try:
            assert store.count() == games
            assert (store.scratch is not None) == (folder == killed), "a copy is read only when a log is left"
        finally:
            store.close()
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
        assert store.scratch is None or not Path(store.scratch).exists(), "the copy is removed"


@pytest.mark.slow
def test_a_read_only_folder_left_by_a_killed_run_shows_every_committed_game(tmp_path):
    folder = tmp_path / "results"
    kill9(hold(folder, games=12))  # committed in the write-ahead log, never checkpointed
    assert (folder / (DB_NAME + "-wal")).stat().st_size > 0
    [(code, output)] = run_read_only(folder, ["standings", folder, "--json"])
    assert code == 0, output
    assert json.loads(output)["games_stored"] == 12


# ---------------------------------------------------------------- league files
@pytest.fixture
def league_file(tmp_path) -> Path:
    path = tmp_path / "ladder.db"
    assert arena("league", "new", path, "--rules", "revised")[0] == 0
    for name in ("greedy", "random"):
        assert arena("league", "add", path, name, "--bot", name)[0] == 0
    return path


@pytest.mark.parametrize("make, words", [
    (lambda p: p.write_bytes(b""), "is empty (0 bytes), not a league file"),
    (_text, "is not a league file: it is not an SQLite file"),
    (_foreign, "is not a league file (create one"),
])
def test_a_league_file_that_is_not_ours_is_refused(tmp_path, make, words):
    path = tmp_path / "ladder.db"
    make(path)
    before = path.read_bytes()
    with pytest.raises(LeagueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        League.open(path)
    for args in (("table", path), ("play", path, "--games", 2), ("add", path, "x", "--bot", "greedy")):
        code, output = arena("league", *args)
        assert code == 2 and words in output, output
    assert path.read_bytes() == before


def test_a_truncated_league_file_is_refused(league_file):
    assert arena("league", "play", league_file, "--games", 40, "-q")[0] == 0
    data = league_file.read_bytes()
    league_file.write_bytes(data[: len(data) // 2])
    code, output = arena("league", "table", league_file)
    assert code == 2 and "is truncated" in output, output


def test_two_league_plays_never_run_at_once(league_file):
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""\
        import time
        from arena.league import League
        league = League.open({str(league_file)!r}, exclusive=True)
        print("locked", flush=True)
        time.sleep(120)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        code, output = arena("league", "play", league_file, "--games", 2)
        assert code == 2 and f"a league play (pid {proc.pid}" in output, output
        assert arena("league", "table", league_file)[0] == 0, "reading is never locked out"
    finally:
        kill9(proc)
    assert arena("league", "play", league_file, "--games", 2, "-q")[0] == 0


@pytest.mark.slow
def test_league_table_works_on_a_read_only_folder(league_file):
    assert arena("league", "play", league_file, "--games", 4, "-q")[0] == 0
    [(code, output)] = run_read_only(league_file.parent, ["league", "table", league_file, "--json"])
    assert code == 0, output
    assert {r["name"] for r in json.loads(output)["table"]} >= {"greedy", "random"}
