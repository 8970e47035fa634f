"""``arena serve``'s sandbox options: strict unless a weaker tier is asked for by an option
named "unsafe", and a machine that cannot run strict is refused with a sentence."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from engine import RuleSpec

from arena.cli import app
from arena.league import League

runner = CliRunner()


@pytest.fixture
def league(tmp_path):
    path = tmp_path / "l.db"
    League.create(path, RuleSpec(), 2).close()
    return path


def test_a_weaker_tier_needs_an_unsafe_option(league):
    res = runner.invoke(app, ["serve", str(league), "--build-sandbox", "basic"])
    assert res.exit_code == 2 and "--unsafe-build-sandbox basic" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["serve", str(league), "--unsafe-sandbox", "lax"])
    assert res.exit_code == 2 and "--unsafe-sandbox 'lax': give one of none, basic, strict" in res.output
    res = runner.invoke(app, ["serve", "--help"])
    assert "--unsafe-sandbox" in res.output and "--unsafe-build-sandbox" in res.output and "--pace" in res.output


def test_without_bubblewrap_serve_refuses_unless_told_to_be_unsafe(league, tmp_path):
    env = dict(os.environ, PATH=str(tmp_path / "empty"))  # no bwrap to be found
    out = subprocess.run([sys.executable, "-m", "arena.cli", "serve", str(league), "--port", "1"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "the strict sandbox cannot run on this machine" in out.stderr and "bubblewrap" in out.stderr
    assert "--unsafe-sandbox basic --unsafe-build-sandbox basic" in out.stderr
    assert "Traceback" not in out.stderr
