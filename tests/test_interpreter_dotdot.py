"""A command whose paths go through ``..`` starts in every tier.

An interpreter started as ``../venv/bin/python`` (a virtual environment beside the checkout,
not activated) has ``sys.executable`` spelled with its ``..``: ``/home/me/proj/../venv/bin/python``.
The kernel walks that path through ``/home/me/proj``, a folder the strict tier does not show,
so the bot could not start there (exit 127) while the folder the path reaches was shown.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from arena.process.sandbox import Sandbox
from arena.process.transport import LineTransport
from strict_check import require_strict


def through_unseen_folder(folder: Path, path: str) -> str:
    """``path`` (absolute) spelled from ``folder`` with as many ``..`` as it is deep: the way
    ``folder/../../venv/bin/python`` reads when the interpreter was started from there."""
    assert os.path.isabs(path)
    depth = len(folder.parts) - 1
    return str(folder) + "/.." * depth + path


def first_line(launch) -> bytes:
    t = LineTransport(launch.argv, cwd=launch.cwd, env=launch.env, preexec_fn=launch.preexec_fn,
                      on_kill=launch.kill_extra)
    t.start()
    try:
        return t.read_line(time.perf_counter() + 60)[0]
    finally:
        t.close()
        launch.cleanup()


@pytest.mark.parametrize("tier", ["none", "basic", "strict"])
def test_an_interpreter_path_with_dotdot_starts_its_bot(tier, tmp_path):
    if tier == "strict":
        require_strict()
    unseen = tmp_path / "checkout"  # under /tmp: the strict tier's /tmp is a private one
    unseen.mkdir()
    python = through_unseen_folder(unseen, os.path.abspath(sys.executable))
    assert os.path.samefile(python, sys.executable) and "/../" in python
    script = tmp_path / "bots" / "hello.py"
    script.parent.mkdir()
    script.write_text("print('hello', flush=True)\n")
    launch = Sandbox(tier).prepare([python, str(unseen) + "/../bots/hello.py"], label="dotdot")
    assert first_line(launch) == b"hello"
