"""Interpreters' shims (pyenv's, asdf's ``python3``...): scripts that stand in for an
interpreter, and the real executable each one runs. Both reading a bot's command
(:mod:`arena.botspec.command`) and choosing what the sandbox shows (:mod:`arena.botspec.view`)
see through them."""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache

from .wrappers import _base_name


def is_script(path: str) -> bool:
    """Whether ``path`` starts with ``#!`` (a script an interpreter runs, such as a shim)."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


#: how to ask an interpreter which executable it is
ASK = {"python": ["-c", "import sys; print(sys.executable)"], "pypy": ["-c", "import sys; print(sys.executable)"],
        "node": ["-e", "console.log(process.execPath)"], "nodejs": ["-e", "console.log(process.execPath)"],
        "ruby": ["-e", "print RbConfig.ruby"], "perl": ["-e", "print $^X"]}


@lru_cache(maxsize=256)
def shim_target(path: str, cwd: str, path_var: str) -> str | None:
    """The interpreter a shim would run, asked in ``cwd`` (where the command was typed), or
    None when it does not answer with an executable file."""
    ask = ASK.get(_base_name(path))
    if ask is None:
        return None
    env = dict(os.environ, PATH=path_var)
    try:
        done = subprocess.run([path, *ask], cwd=cwd if os.path.isdir(cwd) else None, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    answer = done.stdout.strip().splitlines()[-1] if done.returncode == 0 and done.stdout.strip() else ""
    if answer and os.path.isabs(answer) and os.path.isfile(answer) and os.access(answer, os.X_OK) \
            and not is_script(answer):
        return answer
    return None
