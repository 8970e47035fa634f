"""Interpreters' shims (pyenv's, asdf's ``python3``...): scripts that stand in for an
interpreter, and the real executable each one runs. Reading a bot's command
(:mod:`arena.botspec.command`), choosing what the sandbox shows (:mod:`arena.botspec.view`)
and the ``PATH`` a bot gets (:mod:`arena.botspec.bot_path`) see through them.

Running a shim is slow (pyenv's takes 70 ms to seconds), so a shim is run only when a
command needs the interpreter it stands for, and at most once per process for the same
shim, folder and ``PATH`` (:func:`shim_target` is cached; forked workers inherit what their
coordinator asked).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache

from .wrappers import _base_name

#: the names a program started by name most often looks for, resolved for a command that
#: may start any interpreter by name (see :mod:`arena.botspec.bot_path`)
COMMON_NAMES = ("python3", "python", "pypy3", "node", "nodejs", "ruby", "perl")


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


def is_shim(path: str) -> bool:
    """Whether ``path`` stands for an interpreter: a script named like one (``python3``,
    ``node``...), as pyenv's and asdf's shims are."""
    return _base_name(path) in ASK and is_script(path)


@lru_cache(maxsize=256)
def folder_shims(folder: str) -> tuple[str, ...]:
    """The names of the interpreters' shims in ``folder`` (listed once per process)."""
    try:
        names = os.listdir(folder) if os.path.isdir(folder) else []
    except OSError:
        return ()
    return tuple(n for n in sorted(names) if _base_name(n) in ASK and is_script(os.path.join(folder, n)))


def resolve_name(name: str, path_var: str | None, cwd: str | None = None) -> str | None:
    """The executable a program started as ``name`` runs, found on ``path_var``: a shim
    seen through (asked in ``cwd``, the current folder by default), else what the ``PATH``
    finds; None when nothing is found."""
    path_var = path_var or os.defpath
    found = shutil.which(name, path=path_var)
    if found is None or not is_shim(found):
        return found
    return shim_target(os.path.abspath(found), cwd or os.getcwd(), path_var) or found
