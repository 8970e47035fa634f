"""The ``PATH`` a sandboxed bot (or build step) gets: interpreters' shims seen through,
each only when the command needs the interpreter it stands for.

A folder of shims (pyenv's, asdf's: scripts standing in for ``python3``, ``node``...) lies
under a home folder the sandbox hides, so a program the bot starts by name would find a
shim it cannot run. In front of each such folder the bot's ``PATH`` puts the folders of
the real interpreters its command needs, and asks no shim anything else:

1. **An interpreter the command starts as a file** -- its program once located (``python3
   bot.py`` runs ``~/.pyenv/versions/3.11.7/bin/python3``), the programs of its shell
   string, the interpreter a script's ``#!`` line names by its path -- puts its own folder
   in front of the shim folders of its kind (python, node...): a bot that starts
   ``python3`` again finds the interpreter it runs. No shim runs.
2. **An interpreter the command starts by name** -- a bare ``python3`` of a command not yet
   located, the ``python3`` of ``#!/usr/bin/env python3`` -- is asked of the shim the
   ``PATH`` finds for that name.
3. **A command with a program that is not an interpreter** -- a compiled bot, a shell
   script, ``make``, a build step -- may start any interpreter by name: the common names
   (:data:`~arena.botspec.shims.COMMON_NAMES`: ``python3``, ``python``, ``node``, ``ruby``,
   ``perl``...) are asked of the shims the ``PATH`` finds for them. So is a caller that
   gives no command (the toolchains a server offers).

So the arena's built-in bots (the arena's own interpreter running ``-m bots.run NAME``)
run no shim, and a ``python3 bot.py`` runs none besides the one its command was located
through. A shim is asked at most once per process, folder and ``PATH``
(:func:`~arena.botspec.shims.shim_target`), and a forked worker inherits what its
coordinator asked. The shim folder itself stays on the ``PATH``, behind those folders: a
name none of them holds still reaches its shim where the tier lets the bot run it
(``basic`` as the arena's own user), and is not found where the shim is hidden.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from functools import lru_cache

from .shims import ASK, COMMON_NAMES, folder_shims, is_shim, shim_target
from .installs import SYSTEM_DIRS, _link_chain, _prefix_of, _under
from .wrappers import _base_name, _commands, _walk


@dataclass(frozen=True)
class Needs:
    """What a command needs of the interpreters' shims: the interpreters it starts as files
    (rule 1), the names it starts by name (rule 2), and whether it may start any (rule 3)."""

    files: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    common: bool = False


#: what a caller that names no command gets: the common names (rule 3)
ANY_COMMAND = Needs(common=True)


def _interpreter_line(path: str) -> tuple[str, bool] | None:
    """The interpreter a script's ``#!`` line starts: ``(name, True)`` through ``/usr/bin/env
    NAME``, ``(path, False)`` when it names one by its path; None for no such line."""
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    words = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return (names[0], True) if names else None
    return words[0], False


def _program(word: str, path_var: str, files: list, names: list) -> bool:
    """Note what the program ``word`` starts (see :class:`Needs`); whether it is an
    interpreter (its program, or its script's ``#!`` line's, is one a shim may stand for)."""
    if "/" not in word:
        if _base_name(word) in ASK:
            names.append(word)
            return True
        found = shutil.which(word, path=path_var)
        if found is None:
            return False
        word = found
    exe = os.path.abspath(word)
    if _base_name(exe) in ASK and not is_shim(exe):
        files.append(exe)
        return True
    line = _interpreter_line(exe) if os.path.isfile(exe) else None
    if line is None or _base_name(line[0]) not in ASK:
        return False
    (names if line[1] else files).append(line[0])
    return True


@lru_cache(maxsize=256)
def command_needs(argv: tuple[str, ...], path_var: str) -> Needs:
    """What the command ``argv`` needs of the shims on ``path_var`` (see the module docstring)."""
    words = list(argv)
    if not words:
        return Needs()
    files: list[str] = []
    names: list[str] = []
    w = _walk(words)
    parts = _commands(w.inner) if w.shell is not None and w.inner is not None else []
    programs = [words[w.program:]] if not parts else []  # sh -c "...": the string's programs, not sh
    for part in parts:
        inner = _walk(part)
        programs.append(part[inner.program:])
    other = False
    for program in programs:
        if program and not _program(program[0], path_var, files, names):
            other = True
    return Needs(tuple(dict.fromkeys(files)), tuple(dict.fromkeys(names)), other)


def sandbox_path(path_var: str | None, cwd: str | None = None, argv=None) -> tuple[str, list[str]]:
    """The ``PATH`` a bot (or a build step) started by ``argv`` gets in its sandbox, and the
    folders that makes it need (the interpreters' installations): each folder of
    interpreters' shims preceded by the folders of the interpreters the command needs, so
    that a program the bot starts by name finds a real interpreter the sandbox shows, not a
    shim under a home folder it hides (see the module docstring). Shims are asked in
    ``cwd`` (the current folder by default); without ``argv``, for any command (rule 3)."""
    path_var = path_var or os.defpath
    needs = ANY_COMMAND if argv is None else command_needs(tuple(argv), path_var)
    return _bot_path(path_var, cwd or os.getcwd(), needs)


@lru_cache(maxsize=256)
def _bot_path(path_var: str, cwd: str, needs: Needs) -> tuple[str, list[str]]:
    entries = [e for e in path_var.split(os.pathsep) if e]
    front: dict[str, list[str]] = {}  # a shim folder -> the interpreters put in front of it
    for entry in entries:
        kinds = {_base_name(n) for n in folder_shims(entry)}
        if kinds:
            front.setdefault(os.path.normpath(entry), [exe for exe in needs.files if _base_name(exe) in kinds])
    for name in needs.names + (COMMON_NAMES if needs.common else ()):
        found = shutil.which(name, path=path_var)
        folder = os.path.normpath(os.path.dirname(found)) if found else ""
        if folder in front and is_shim(found):
            target = shim_target(os.path.abspath(found), cwd, path_var)
            if target is not None:
                front[folder].append(target)
    out: list[str] = []
    shown: list[str] = []
    for entry in entries:
        for exe in front.get(os.path.normpath(entry), ()):
            folder = os.path.dirname(exe)
            if folder not in out:
                out.append(folder)
            for p in _link_chain(exe):
                prefix = _prefix_of(p)
                if prefix not in shown and not _under(os.path.realpath(prefix), SYSTEM_DIRS):
                    shown.append(prefix)
        if entry not in out:
            out.append(entry)
    return os.pathsep.join(out), shown
