"""`arena league play` keeps each stored game's replay where `arena serve` shows it, and keeps
only the newest N when the league says so."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from arena.cli import app


def test_league_play_stores_a_replay_per_game_and_keeps_the_newest_n(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke
    assert run(app, ["league", "new", "l.db", "--rules", "revised"]).exit_code == 0
    for bot in ("greedy", "random"):
        assert run(app, ["league", "add", "l.db", bot, "--bot", bot]).exit_code == 0
    out = run(app, ["league", "play", "l.db", "--games", "6", "--no-progress", "-q"])
    assert out.exit_code == 0, out.output
    files = sorted(p.name for p in (tmp_path / "l.db.replays").glob("*.json"))
    assert files == ["0-0.json", "0-1.json", "1-0.json", "1-1.json", "2-0.json", "2-1.json"]
    assert json.loads((tmp_path / "l.db.replays" / "2-1.json").read_text())
    assert not list((tmp_path / "l.db.replays" / ".pending").iterdir())
    out = run(app, ["league", "play", "l.db", "--games", "6", "--no-progress", "-q", "--keep-replays", "4"])
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in (tmp_path / "l.db.replays").glob("*.json")) == [
        "4-0.json", "4-1.json", "5-0.json", "5-1.json"]
