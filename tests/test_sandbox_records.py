"""The sandbox in records and configuration: ``arena play --json`` says which tier ran and
what was in force; strict refuses with a sentence where it cannot run, or falls back to
the tier a tournament file or ``--sandbox-fallback`` names."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.process import sandbox
from arena.tournament.config import ConfigError, load_config
from proc_check import misbehaving
from strict_check import require_strict

runner = CliRunner()
GOOD = " ".join(misbehaving("good"))
MISSING = "bubblewrap is not installed (the strict tier needs it: apt-get install bubblewrap)"


def play(*args):
    return runner.invoke(app, ["play", "--cmd", GOOD, "--cmd", GOOD, "--param", "max_rounds=2", *args])


def test_play_json_records_the_strict_tier_and_its_protections():
    require_strict()
    res = play("--json", "--sandbox", "strict")
    assert res.exit_code == 0, res.output
    record = json.loads(res.output.splitlines()[-1])["sandbox"]
    assert record["tier"] == "strict" and "requested" not in record
    from arena.process.cgroups import cgroup_layout

    # caps from cgroups where this user may make them (root, a delegated scope), else the
    # stand-ins an ordinary user gets (docs/protocol.md's tier table)
    caps = ({"cgroup_memory", "cgroup_pids", "cgroup_cpu"} if cgroup_layout()[0]
            else {"rss_polling", "rlimit_nproc", "cpu_throttle"})
    assert {"bubblewrap", "pid_namespace", "no_network", "private_tmp", "read_only_view", "cpu_accounting_tree",
            "freezer", "tree_kill"} | caps <= set(record["protections"]), record


@pytest.fixture
def no_bwrap(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_status", lambda: (None, MISSING))


def test_strict_without_bubblewrap_refuses_with_one_sentence(no_bwrap):
    res = play("--sandbox", "strict")
    assert res.exit_code == 2
    assert "the strict sandbox cannot run: bubblewrap is not installed" in res.output
    assert "apt-get install bubblewrap" in res.output and "Traceback" not in res.output


def test_strict_falls_back_to_the_named_tier_and_the_record_says_why(no_bwrap):
    res = play("--json", "--sandbox", "strict", "--sandbox-fallback", "basic")
    assert res.exit_code == 0, res.output
    record = json.loads(res.output.splitlines()[-1])["sandbox"]
    assert record["tier"] == "basic" and record["requested"] == "strict"
    assert record["fallback_reason"] == MISSING
    assert "bubblewrap" not in record["protections"] and "scrubbed_env" in record["protections"]


def write(tmp_path, sandbox_yaml: str):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: t
        bots:
          - random
          - greedy
        sandbox: {sandbox_yaml}
        """))
    return path


def test_a_tournament_file_may_name_a_fallback_tier(tmp_path):
    assert load_config(write(tmp_path, "{tier: strict, fallback: basic}")).sandbox == {"tier": "strict",
                                                                                      "fallback": "basic"}
    assert load_config(write(tmp_path, "{tier: strict}")).sandbox == "strict"
    assert load_config(write(tmp_path, "strict")).sandbox == "strict"
    with pytest.raises(ConfigError, match="fallback.*'iron' is not one of none, basic, strict"):
        load_config(write(tmp_path, "{tier: strict, fallback: iron}"))
    with pytest.raises(ConfigError, match="needs 'tier'"):
        load_config(write(tmp_path, "{fallback: basic}"))
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(write(tmp_path, "{tier: strict, fallbak: basic}"))


# ------------------------------------------------------------------ no tier named: auto
def test_with_no_tier_named_a_game_runs_in_strict_and_says_so_in_one_line(monkeypatch):
    from arena.cli import game

    require_strict()
    monkeypatch.setattr(game, "_warned", set())  # said once per process: this test's process is shared
    res = play("--json")
    assert res.exit_code == 0, res.output
    record = json.loads(res.output.splitlines()[-1])["sandbox"]
    assert record["tier"] == "strict" and record["requested"] == "auto" and "fallback_reason" not in record
    said = [line for line in res.output.splitlines() if line.startswith("arena: sandbox:")]
    assert len(said) == 1 and said[0].startswith("arena: sandbox: strict (the strongest tier here")


def test_without_bubblewrap_root_falls_back_to_basic_and_the_record_says_why(no_bwrap):
    res = play("--json")
    if sandbox.os.geteuid() != 0:  # an ordinary user's command bots are refused instead
        assert res.exit_code != 0 and "no sandbox tier that keeps bots away" in res.output
        return
    assert res.exit_code == 0, res.output
    record = json.loads(res.output.splitlines()[-1])["sandbox"]
    assert record["tier"] == "basic" and record["requested"] == "auto" and record["fallback_reason"] == MISSING
    if sandbox.os.geteuid() == 0:
        assert "unprivileged_user" in record["protections"]


def test_an_ordinary_user_without_bubblewrap_gets_a_sentence_not_a_weak_tier(no_bwrap, monkeypatch):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    with pytest.raises(sandbox.SandboxError) as err:
        sandbox.Sandbox()
    text = str(err.value)
    assert "no sandbox tier that keeps bots away from the arena can run here" in text
    assert "apt-get install bubblewrap" in text and "--sandbox basic" in text
    monkeypatch.undo()
    assert sandbox.Sandbox("basic").tier == "basic", "a weaker tier named by the user is still given"


def test_a_tournament_file_with_no_sandbox_gets_auto(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("name: t\nbots: [random, greedy]\n")
    assert load_config(path).sandbox == "auto"
    assert load_config(write(tmp_path, "auto")).sandbox == "auto"
    with pytest.raises(ConfigError, match="fallback.*'auto' is not one of none, basic, strict"):
        load_config(write(tmp_path, "{tier: strict, fallback: auto}"))
