"""Small things a new user meets first: readable ``--help`` value names, a missing replay
file said as such, and the README's command list one command per line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["play"], ["match"], ["check-bot"], ["league", "new"], ["run"],
                                     ["standings"], ["bench", "engine"], ["solo"], ["deals", "make"]])
def test_help_has_no_type_names_in_angle_brackets(command):
    out = CliRunner().invoke(app, [*command, "--help"]).output
    assert "Usage:" in out
    assert not re.search(r"<(int|str|path|list|float)[^>]*>", out), out


def test_a_missing_replay_file_is_said_to_be_missing(tmp_path):
    r = CliRunner().invoke(app, ["replay", str(tmp_path / "missing.json")])
    assert r.exit_code == 2 and "missing.json: the replay file does not exist" in r.stderr


def test_the_readme_lists_one_command_per_line():
    text = (ROOT / "README.md").read_text()
    block = text.split("## Using it", 1)[1].split("```", 2)[1]
    for line in block.splitlines():
        command = line.split("#", 1)[0]
        assert "| arena" not in command, f"two commands on one line: {line}"
