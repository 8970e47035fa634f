"""The cgroup v2 branch against a simulated ``/sys/fs/cgroup``.

This machine mounts the v1 ``memory`` and ``pids`` hierarchies, so the v2 code never runs
here for real; these tests pin its file protocol (which files it reads and writes, with
which values) on a plain directory tree laid out like a delegated v2 subtree.
"""

from __future__ import annotations

import os

import pytest

from arena.process import cgroups
from arena.process.sandbox import Limits


@pytest.fixture
def v2_root(tmp_path, monkeypatch):
    root = tmp_path / "cgroup"
    own = root / "arena.slice"
    own.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (own / "cgroup.subtree_control").write_text("memory pids\n")
    monkeypatch.setattr(cgroups, "CGROUP_ROOT", root)
    monkeypatch.setattr(cgroups, "_own_cgroup", lambda controller: "/arena.slice" if controller == "" else "/")
    cgroups.cgroup_layout.cache_clear()
    yield own
    cgroups.cgroup_layout.cache_clear()


def test_a_delegated_v2_subtree_with_memory_and_pids_is_used(v2_root):
    assert cgroups.cgroup_layout() == ({"v2": v2_root}, "")


def test_a_v2_subtree_without_the_pids_controller_is_refused_with_a_reason(v2_root):
    (v2_root / "cgroup.subtree_control").write_text("memory\n")
    layout, reason = cgroups.cgroup_layout()
    assert layout == {} and "no delegated memory and pids controllers" in reason


def test_a_v2_bot_cgroup_gets_its_caps_and_reports_oom_and_the_limit(v2_root):
    cg = cgroups.Cgroup({"v2": v2_root}, Limits(memory_mb=300, pids=40), "bot-1")
    d = v2_root / "bot-1"
    assert cg.v2 and cg.memory and cg.pids and cg.dirs == [d]
    assert (d / "memory.max").read_text() == str(300 << 20)
    assert (d / "memory.swap.max").read_text() == "0"
    assert (d / "pids.max").read_text() == "40"
    assert cg.procs_paths == [str(d / "cgroup.procs").encode()]
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
    assert not cg.oom_killed() and not cg.hit_limit()
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert cg.oom_killed() and cg.hit_limit()


def test_kill_all_removes_an_empty_v2_cgroup(v2_root):
    cg = cgroups.Cgroup({"v2": v2_root}, Limits(), "bot-2")
    for f in (v2_root / "bot-2").iterdir():  # a real cgroupfs directory has no removable files
        f.unlink()
    cg.kill_all()
    assert not (v2_root / "bot-2").exists()


def test_a_delegated_scope_holding_only_the_arena_is_turned_into_a_parent_of_bot_cgroups(v2_root):
    """``systemd-run --user --scope -p Delegate=yes arena …``: the scope offers memory, pids
    and cpu but enables none, and holds the arena itself; the arena moves into a leaf of its
    own and enables the controllers below."""
    (v2_root / "cgroup.subtree_control").write_text("")
    (v2_root / "cgroup.controllers").write_text("cpu memory pids\n")
    (v2_root / "cgroup.procs").write_text(f"{os.getpid()}\n")
    assert cgroups.cgroup_layout() == ({"v2": v2_root}, "")
    leaf = v2_root / f"arena-{os.getpid()}-main"
    assert (leaf / "cgroup.procs").read_text() == str(os.getpid())
    assert (v2_root / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"


def test_a_delegated_cgroup_shared_with_other_programs_is_left_alone(v2_root):
    (v2_root / "cgroup.subtree_control").write_text("")
    (v2_root / "cgroup.controllers").write_text("cpu memory pids\n")
    (v2_root / "cgroup.procs").write_text(f"{os.getpid()}\n1\n")  # init is not the arena's
    layout, reason = cgroups.cgroup_layout()
    assert layout == {} and "no delegated memory and pids controllers" in reason
    assert (v2_root / "cgroup.subtree_control").read_text() == ""
    assert not (v2_root / f"arena-{os.getpid()}-main").exists()
