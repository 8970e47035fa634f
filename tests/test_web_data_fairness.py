"""Fair names and fair queues, without a server: house bots' names are reserved, a name belongs
to the author of its first accepted version, a failed submission reserves nothing, authors
are limited per hour and in flight, the build queue serves authors in turn, and only the
toolchains the build tier can really run are offered."""

from __future__ import annotations

import io
import json
import sys
import tarfile
import time
from pathlib import Path

import pytest

from engine import RuleSpec

from arena.league import League
from arena.packages import build
from arena.web import store
from arena.packages import package as package_mod
from arena.packages.package import PackageError
from arena.web.submissions import QuotaExceeded, Settings, next_submission, offered_toolchains, process, receive

ROOT = Path(__file__).resolve().parent.parent
BOT = (ROOT / "bots" / "examples" / "packages" / "python" / "bot.py").read_text()
FAST = Settings(tier="basic", build_timeout_s=30, check_timeout_s=120, submissions_per_hour=0, pending_per_author=0)


def tarball(name: str, author: str, version: str = "1", build_cmd: str | None = None, toolchain: str = "python3") -> bytes:
    toml = (f'name = "{name}"\nversion = "{version}"\nauthor = "{author}"\ntoolchain = ["{toolchain}"]\n'
            f'run = "python3 bot.py"\n' + (f"build = {json.dumps(build_cmd)}\n" if build_cmd else ""))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for fname, text in (("bot.toml", toml), ("bot.py", BOT)):
            data = text.encode()
            info = tarfile.TarInfo(fname)
            info.size, info.mode = len(data), 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def league(tmp_path):
    path = tmp_path / "l.db"
    with League.create(path, RuleSpec(), 2, 0, {"move_ms": 500}, "basic") as lg:
        lg.add("greedy", bot="greedy")
        lg.add("champion", bot="random")  # a house bot the operator named
    with store.open_league(path) as lg:
        yield lg


def test_house_bots_names_are_reserved(league):
    for name in ("greedy", "champion", "random", "Greedy"):
        with pytest.raises(PackageError, match="is a house bot"):
            receive(league, "mallory", tarball(name, "mallory"), settings=FAST)
    assert store.submissions(league) == []  # nothing was queued


@pytest.mark.slow
def test_a_name_belongs_to_its_first_accepted_author_and_a_failure_reserves_nothing(league):
    # bob's version fails its build: it reserves neither the name nor the entry
    failed = receive(league, "bob", tarball("bolt", "bob", build_cmd="exit 3"), settings=FAST)
    assert process(league, failed["id"], FAST)["status"] == "build failed"
    assert store.owner_of(league, "bolt") is None
    assert not (Path(f"{league.path}.bots") / "bolt@1").exists()  # its files are gone, its log is kept
    assert "exit code 3" in store.submission(league, failed["id"])["build_log"]
    # the first submission to arrive holds the name while it is queued: a later author's is
    # refused at once, whatever order the fair queue would build them in
    alice = receive(league, "alice", tarball("bolt", "alice"), settings=FAST)  # the very entry bob failed
    assert store.owner_of(league, "bolt") == "alice"
    with pytest.raises(PackageError, match="belongs to alice"):
        receive(league, "carol", tarball("bolt", "carol", version="2"), settings=FAST)
    with pytest.raises(PackageError, match="belongs to alice"):
        receive(league, "carol", tarball("Bolt", "carol", version="3"), settings=FAST)  # a look-alike
    assert process(league, alice["id"], FAST)["status"] == "accepted"
    assert "bolt@2" not in {e.name for e in league.entries()}
    with pytest.raises(PackageError, match="belongs to alice"):
        receive(league, "bob", tarball("bolt", "bob", version="9"), settings=FAST)
    again = receive(league, "alice", tarball("bolt", "alice", version="2"), settings=FAST)  # the owner goes on
    assert again["status"] == "queued"


def test_quotas_per_hour_and_in_flight(league):
    settings = Settings(tier="basic", submissions_per_hour=3, pending_per_author=2)
    receive(league, "alice", tarball("a", "alice", "1"), settings=settings)
    receive(league, "alice", tarball("a", "alice", "2"), settings=settings)
    with pytest.raises(QuotaExceeded, match="at most 2 at once") as exc:
        receive(league, "alice", tarball("a", "alice", "3"), settings=settings)
    assert exc.value.retry_after > 0
    receive(league, "bob", tarball("b", "bob"), settings=settings)  # another author is not held up
    for sub in store.submissions(league, "author = 'alice'"):  # as if built and refused
        store.update_submission(league, sub["id"], status="build failed", finished=time.time())
    receive(league, "alice", tarball("a", "alice", "3"), settings=settings)
    store.update_submission(league, store.submissions(league)[0]["id"], status="build failed")
    with pytest.raises(QuotaExceeded, match="3 submissions in the last hour") as exc:
        receive(league, "alice", tarball("a", "alice", "4"), settings=settings)
    assert 3000 < exc.value.retry_after <= 3601
    # a refused upload leaves nothing behind
    assert not [p for p in Path(f"{league.path}.bots").iterdir() if p.name.startswith("upload-")]


def test_the_build_queue_serves_authors_in_turn():
    waiting = [{"id": i, "author": "flood", "status": "queued"} for i in range(1, 7)]
    waiting.append({"id": 7, "author": "alice", "status": "queued"})
    waiting.append({"id": 8, "author": "bob", "status": "queued"})
    served: dict[str, float] = {}
    order = []
    clock = 0.0
    while waiting:
        pick = next_submission(waiting, served)
        order.append(pick["id"])
        clock += 1
        served[pick["author"]] = clock
        waiting.remove(pick)
    assert order == [1, 7, 8, 2, 3, 4, 5, 6]  # alice and bob wait for one of flood's six, not six
    # one a restart interrupted goes first
    assert next_submission([{"id": 3, "author": "a", "status": "queued"},
                            {"id": 5, "author": "b", "status": "building"}], {})["id"] == 5


def test_only_toolchains_the_build_tier_can_run_are_offered(league, monkeypatch):
    monkeypatch.setattr(build, "PROBES", {"python3": "python3 --version", "ghost": "no-such-program-here --version"})
    monkeypatch.setitem(package_mod.TOOLCHAINS, "ghost", ("sh",))  # "found" on the server, not runnable
    monkeypatch.setattr(build, "_runnable", {})
    assert package_mod.toolchain_program("ghost")
    offered = offered_toolchains(FAST)
    assert set(offered) == {"python3"}
    with pytest.raises(PackageError, match="no 'ghost' toolchain"):
        receive(league, "alice", tarball("g", "alice", toolchain="ghost"), settings=FAST)


@pytest.mark.skipif("rust" not in package_mod.available_toolchains(), reason="this machine has no rust toolchain")
def test_rust_under_the_server_users_home_is_not_offered_to_strict_builds():
    from strict_check import require_strict

    require_strict()
    if not package_mod.toolchain_program("rust").startswith(("/root/", "/home/")):
        pytest.skip("rust is installed system-wide here")
    assert "rust" not in build.runnable_toolchains("strict")
