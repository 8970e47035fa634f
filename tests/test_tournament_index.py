"""index.html of a tournament's output folder: standings, every game, links to replay viewers."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.errors import UsageError
from arena.bench.tournament import bench_config
from arena.tournament.runner import run_tournament
from arena.tournament.index import write_index


@pytest.fixture(scope="module")
def output(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tour") / "out"
    cfg = replace(bench_config(out, concurrency=2, rounds=1), replays=True)
    summary = run_tournament(cfg, progress=False, echo=lambda _t: None)
    assert summary["played"] == 6
    (out / "bots.txt").write_text("\n".join(b.name for b in cfg.bots))
    return out


def test_index_lists_standings_and_every_game_with_links(output):
    path = write_index(output)
    assert path == output / "index.html"
    page = path.read_text()
    bots = (output / "bots.txt").read_text().split()
    assert len(bots) == 3
    for bot in bots:
        assert f'<tr data-bot="{bot}">' in page
    rows = re.findall(r'<tr class="[^"]*" data-key="([^"]+)">', page)
    assert len(rows) == 6
    links = re.findall(r'<a href="([^"]+)">', page)
    assert len(links) == 12  # a viewer and the JSON of every game
    for href in links:
        assert not href.startswith("/") and (output / href).is_file()
    views = [h for h in links if h.endswith(".html")]
    assert all("<script type=\"application/json\" id=\"replay-data\">" in (output / v).read_text() for v in views)
    assert "http" not in page


def test_index_is_rewritten_and_viewers_are_reused(output):
    write_index(output)
    viewer = next((output / "replays").glob("*.html"))
    before = viewer.stat().st_mtime_ns
    write_index(output)
    assert viewer.stat().st_mtime_ns == before


def test_index_without_viewers_links_the_json(output, tmp_path):
    write_index(output, viewers=False)
    links = re.findall(r'<a href="([^"]+)">', (output / "index.html").read_text())
    assert links and all(h.endswith(".json") for h in links)


def test_index_command(output):
    result = CliRunner().invoke(app, ["index", str(output)])
    assert result.exit_code == 0 and "index.html" in result.output


def test_folder_without_results_is_a_sentence(tmp_path):
    with pytest.raises(UsageError, match="no tournament results here"):
        write_index(tmp_path)
    result = CliRunner().invoke(app, ["index", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
