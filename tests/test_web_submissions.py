"""The submission pipeline without a server: keeping the previous version, and resuming a
submission a stopped server left half-done."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from engine import RuleSpec

from arena.league import League
from arena.web import store
from arena.packages.package import pack
from arena.web.submissions import Pipeline, Settings, process, receive

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / "bots" / "examples" / "packages" / "python"
SETTINGS = Settings(build_timeout_s=30, check_timeout_s=120)


@pytest.fixture
def league(tmp_path):
    path = tmp_path / "l.db"
    League.create(path, RuleSpec(), 2, 0, {"move_ms": 200}, "basic").close()
    with store.open_league(path) as lg:
        yield lg


def version(tmp_path: Path, v: str) -> bytes:
    folder = tmp_path / f"py-{v}"
    shutil.copytree(PYTHON, folder)
    text = (folder / "bot.toml").read_text().replace('version = "1.0"', f'version = "{v}"')
    (folder / "bot.toml").write_text(text)
    return pack(folder)[0]


@pytest.mark.slow
def test_keep_previous_leaves_the_old_version_playing(league, tmp_path):
    first = receive(league, "examples", version(tmp_path, "1"), settings=SETTINGS)
    assert process(league, first["id"], SETTINGS)["status"] == "accepted"
    second = receive(league, "examples", version(tmp_path, "2"), keep_previous=True, settings=SETTINGS)
    done = process(league, second["id"], SETTINGS)
    assert done["status"] == "accepted" and "retired" not in done["verdict"]
    assert [e.name for e in league.entries(active_only=True)] == ["py-example@1", "py-example@2"]
    # the entry starts the package's own file, wherever the bot's working directory is
    assert league.entry("py-example@2").cmd[-1] == str(Path(done["folder"]) / "bot.py")


def test_a_submission_left_half_done_is_taken_up_again(league, tmp_path):
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "slow"\nversion = "1"\nauthor = "al"\nbuild = "echo building; exit 3"\n'
                                     'run = "./bot"\n')
    sub = receive(league, "al", pack(folder)[0], settings=SETTINGS)
    store.update_submission(league, sub["id"], status="building")  # as a server killed mid-build leaves it
    pipeline = Pipeline(league.path, SETTINGS)
    pipeline.start()
    try:
        deadline = time.monotonic() + 60
        while store.submission(league, sub["id"])["status"] in ("queued", "building", "checking"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        pipeline.stop()
        pipeline.thread.join(10)
    done = store.submission(league, sub["id"])
    assert done["status"] == "build failed" and "building" in done["build_log"] and "exit code 3" in done["build_log"]
