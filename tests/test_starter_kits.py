"""The starter kits of ``bots/examples/packages/`` in C++, Rust, Java and Go, end to end.

Each kit whose toolchain this machine has is built from a copy of its folder with its own
``bot.toml`` build command, passes ``arena check-bot``, plays a whole game against greedy in
the strict tier, reads and writes the protocol's JSON exactly (escapes, nesting, numbers,
unknown fields and messages), and is packed, unpacked, built and checked as a league package
the way ``arena submit`` and the website do it (:mod:`arena.packages.build`, in the strict
build sandbox, with the ``PATH`` a system service gets). A kit whose toolchain is missing is skipped with the reason, except
under ``CI=true``, where ``.ci/run`` installs every one and a missing one is a failure.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.packages import build
from arena.packages.package import pack, parse_manifest, run_argv, unpack
from strict_check import require_strict

EXAMPLES = Path(__file__).resolve().parent.parent / "bots" / "examples" / "packages"
#: The programs each kit's build and run command need, and the Debian packages giving them.
KITS = {
    "cpp": (("c++",), "g++"),
    "rust": (("cargo", "rustc"), "cargo rustc"),
    "java": (("javac", "jar", "java"), "default-jdk-headless"),
    "go": (("go",), "golang-go"),
}
#: What a build leaves in a kit's folder (left out when the kit is copied from the checkout).
PRODUCTS = ("bot", "bot.jar", "classes", "target")
#: The PATH a system service gets (systemd's default): a league server's toolchains are the
#: system's, never one under its user's home (docs/leagues.md, Toolchains).
SERVER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: ``arena`` as typed: the one beside this Python (its virtual environment's), else the PATH's.
ARENA = [shutil.which("arena", path=os.path.dirname(sys.executable)) or shutil.which("arena") or "arena"]


def need_toolchain(kit: str, path: str | None = None) -> None:
    """Skip (or, with ``CI=true``, fail) unless the programs of ``kit`` are on ``path``."""
    programs, debian = KITS[kit]
    missing = [p for p in programs if shutil.which(p, path=path) is None]
    if missing:
        where = "the PATH" if path is None else f"the PATH {path}"
        why = f"the {kit} kit needs {', '.join(missing)}, not on {where} (Debian: apt-get install {debian})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must build every starter kit, but {why}")
        pytest.skip(why)


def fresh_copy(kit: str, dest: Path) -> Path:
    """A copy of the kit's folder, without what a build left in the checkout, readable by bots' users."""
    folder = dest / kit
    shutil.copytree(EXAMPLES / kit, folder, ignore=shutil.ignore_patterns(*PRODUCTS))
    for path in [dest, folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def manifest_of(folder: Path):
    return parse_manifest((folder / "bot.toml").read_text(), str(folder / "bot.toml"))


@pytest.fixture(scope="module", params=list(KITS))
def built(request, tmp_path_factory):
    """``(kit, folder, manifest)``: the kit built in a copy of its folder by its ``bot.toml`` build."""
    kit = request.param
    need_toolchain(kit)
    folder = fresh_copy(kit, tmp_path_factory.mktemp(kit))
    manifest = manifest_of(folder)
    done = subprocess.run(["sh", "-c", manifest.build], cwd=folder, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{kit}: `{manifest.build}` failed:\n{done.stdout}{done.stderr}"
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o555 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    return kit, folder, manifest


def test_each_kit_passes_check_bot_in_the_strict_tier(built):
    kit, folder, manifest = built
    require_strict()
    out = subprocess.run([*ARENA, "check-bot", "--sandbox", "strict", "--", *shlex.split(manifest.run)], cwd=folder,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    assert f"ready from {kit}-example 1.0 (asks for legal options)" in out.stdout
    assert "the bot conforms" in out.stdout and "FAIL" not in out.stdout


def test_each_kit_plays_a_whole_game_against_greedy_in_the_strict_tier(built):
    kit, folder, manifest = built
    require_strict()
    out = subprocess.run([*ARENA, "play", "greedy", "--cmd", manifest.run, "--sandbox", "strict", "--seed", "5",
                          "--json"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    game = json.loads(out.stdout)
    assert game["sandbox"]["tier"] == "strict"
    assert game["faults"] == [[], []] and game["forfeited"] == [False, False]
    assert not game["adjudicated"] and sorted(game["ranking"]) in ([1, 2], [1, 1])  # finished by the rules
    assert all(t["moves"] > 10 for t in game["times"])


# Each line the arena could send, the reply it must get (None: no reply). Strings with every
# kind of escape, raw UTF-8, numbers of every form, nesting and fields no kit knows; the id an
# integer a double cannot hold, and last in its object.
TRICKY = {"s": "q\"\\/\b\f\n\r\t\x01 é \u2028 \U0001F600", "n": [0, -0, 12, -7.25, 1.5e300, 3E-2],
          "deep": [[[{"a": [None, True, False, {}, []]}]]]}
PLACE = {"type": "place", "puzzle": "W\"30\\ é \U0001F600\n", "piece": "I2", "cells": [[1, 1], [1, 2]],
         "note": TRICKY}


def exchanges():
    big = 2 ** 53 + 1
    hello = {"type": "hello", "id": 1, "protocol": 1, "seat": 0, "players": 2, "future": TRICKY, "seed": 9,
             "options": {}}
    decision = {"type": "reward", "puzzle": "B07", "options": ["T4", "L4"]}
    return [
        (json.dumps(hello), {"type": "ready", "id": 1, "legal_actions": True}),
        ("", None),
        (json.dumps({"type": "news", "id": 2, "what": TRICKY}), None),  # a message of a later protocol
        (json.dumps({"type": "action", "observation": {"x": TRICKY}, "legal": [PLACE, {"type": "pass"}],
                     "id": big}, ensure_ascii=False), {"id": big, "action": PLACE}),
        (json.dumps({"type": "action", "id": big + 1, "legal": [PLACE]}, indent=None, ensure_ascii=True)
         .replace(", ", " ,\t"), {"id": big + 1, "action": PLACE}),
        # without a list of legal options: the answer that is always legal
        (json.dumps({"type": "action", "id": 5, "observation": {}}), {"id": 5, "action": {"type": "pass"}}),
        (json.dumps({"type": "reward", "id": 6, "observation": {"decision": decision}}),
         {"id": 6, "action": {"type": "reward", "take": "T4"}}),
        (json.dumps({"type": "level_up", "id": 7, "observation": {}}),
         {"id": 7, "action": {"type": "level_up", "steps": []}}),
        (json.dumps({"type": "finish", "id": 8, "observation": {}}),
         {"id": 8, "action": {"type": "finish", "placements": []}}),
        (json.dumps({"type": "game_over", "id": 9, "result": {"scores": [1, 2]}, "events": [TRICKY]}), None),
        (json.dumps({"type": "hello", "id": 10, "seat": 1, "players": 2}), {"type": "ready", "id": 10}),
    ]


def test_each_kit_reads_and_writes_the_protocols_json_exactly(built):
    kit, folder, manifest = built
    argv = run_argv(manifest, folder)
    proc = subprocess.Popen(argv, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        for line, want in exchanges():
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            if want is None:
                continue
            got = proc.stdout.readline().decode("utf-8")  # strict: a reply is UTF-8
            assert got.endswith("\n"), f"{kit}: no whole line after {line[:80]}: {got!r}"
            reply = json.loads(got)
            assert {k: reply.get(k) for k in want} == want, f"{kit}: after {line[:200]}\nreplied {got}"
            if reply.get("type") == "ready":
                assert reply["name"] == f"{kit}-example" and reply["version"] == "1.0"
        proc.stdin.write(json.dumps({"type": "quit", "id": 11}).encode() + b"\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
        assert proc.stdout.read() == b"", f"{kit}: replied to game_over, a message it does not know, or quit"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


@pytest.mark.parametrize("kit", list(KITS))
def test_each_kit_is_built_and_checked_as_a_league_package_in_the_strict_sandbox(kit, tmp_path, monkeypatch,
                                                                                  capsys):
    require_strict()
    need_toolchain(kit, SERVER_PATH)
    monkeypatch.setenv("PATH", SERVER_PATH)
    monkeypatch.setattr(build, "_runnable", {})  # a server started with this PATH probes anew
    data, _ = pack(fresh_copy(kit, tmp_path / "checkout"))  # as `arena submit` uploads it
    folder = unpack(data, tmp_path / "upload")  # as the website receives it
    manifest = manifest_of(folder)
    offered = build.runnable_toolchains("strict")
    assert set(manifest.toolchain) <= set(offered), f"{kit}: {manifest.toolchain} not among {sorted(offered)}"
    step = build.build(folder, manifest.build, timeout_s=300, tier="strict")
    assert step.ok, f"{kit}: the build failed in the sandbox:\n{step.log}"
    assert step.sandbox["tier"] == "strict" and "no_network" in step.sandbox["protections"]
    report, checked = build.check(run_argv(manifest, folder), timeout_s=300, tier="strict", program_dir=folder)
    assert report["ok"], f"{kit}: {json.dumps(report)[:2000]}"
    with capsys.disabled():
        print(f"\n{kit}: league build {step.seconds:.1f} s, check {checked.seconds:.1f} s", end="")
