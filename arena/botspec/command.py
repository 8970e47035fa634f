"""A bot's command line: the words its author typed, resolved once, the same way everywhere.

Three steps, each usable alone:

1. :func:`anchor` -- relative paths made absolute against the folder the command was typed
   in (``base``: the current folder on the command line, a YAML file's folder in a
   tournament file): the program (``./bot``, ``v1/bot``), the files an argument names
   (``bot.py``, ``../bots/x.js``), inside wrappers and a shell's ``-c`` string too. Words
   found on the ``PATH`` (``python3``, ``node``) stay as typed. The anchored words are the
   *portable* form: what a cluster worker receives, with the program folders as bundles.
2. :func:`locate` -- on the machine that runs the bot: each bare program word looked up on
   that machine's ``PATH``, and an interpreter that is a *shim* (a script standing in for
   the interpreter: pyenv, asdf, rbenv, nodenv) replaced by the interpreter it would run,
   asked in the folder the command was typed in (a ``.python-version`` there counts).
   Errors are sentences (:class:`CommandError`).
3. :func:`needed_paths` -- what the started program must see: its interpreter's
   installation (a venv and the installation it links to), its program's folder (the
   script's, the executable's, or the ``program_dir`` a bot declares), the folders it
   declares read-only, the packages of a ``python -m`` module, ``PYTHONPATH``, and, for a
   Python whose environment holds editable installs (the arena's own, installed with
   ``pip install -e``), the folders those installs import from. Never the folder of a mere
   argument, never a whole home folder or ``/tmp`` (a loose script there brings itself).

A *wrapper* is a program that starts another one: ``env [NAME=VALUE]... CMD``, ``nice -n 5
CMD``, ``stdbuf -oL CMD``, ``timeout 300 CMD``, ``taskset -c 0 CMD``, ``ionice``, ``chrt``,
``nohup``, ``setsid``, ``time``, ``prlimit ... --``, and ``sh|bash|dash|zsh -c "CMD"``
(whose string is resolved too when it is plain words; a string with quoting, variables or
globs is left to the shell). The program past the wrappers is what the sandbox shows and a
cluster bundles.
"""

from __future__ import annotations

import os
import shlex
import shutil

from ..errors import UsageError
from .shims import ASK, is_script, shim_target
from .view import PATH_VARS
from .wrappers import _base_name, _inner_bases, _is_operator, _is_shell_only, _join_inner, _walk, script_of

class CommandError(UsageError):
    """A bot's command line that cannot run as typed: a sentence naming the word at fault."""


def split(cmd) -> list[str]:
    """The words of a command: a string split as a POSIX shell would (quotes, escapes), or a
    list of strings as given."""
    if isinstance(cmd, str):
        try:
            words = shlex.split(cmd)
        except ValueError as exc:
            raise CommandError(f"cannot split the command line {cmd!r} ({exc})") from None
    elif isinstance(cmd, (list, tuple)) and all(isinstance(w, str) for w in cmd):
        words = list(cmd)
    else:
        raise CommandError(f"a command line is text or a list of words, got {cmd!r}")
    if not words:
        raise CommandError("the command line is empty")
    return words


# ---------------------------------------------------------------- 1. anchor
def _anchor_arg(word: str, base: str) -> str:
    if not word or word.startswith("-"):
        if word.startswith("--") and "=" in word:
            name, value = word.split("=", 1)
            if "/" in value and not os.path.isabs(value) and os.path.exists(os.path.join(base, value)):
                return f"{name}={os.path.normpath(os.path.join(base, value))}"
        return word
    if os.path.isabs(word):
        return word
    path = os.path.join(base, word)
    if os.path.isfile(path) or ("/" in word and os.path.exists(path)):
        return os.path.normpath(path)
    return word


def _anchor_part(part: list[str], base: str) -> list[str]:
    """One command of a shell string anchored; ``cd DIR`` gets its folder made absolute."""
    if _is_shell_only(part):
        if part[0] == "cd" and len(part) == 2 and not part[1].startswith("-"):
            path = os.path.normpath(os.path.join(base, os.path.expanduser(part[1])))
            return ["cd", path] if os.path.isdir(path) else part
        return part
    return anchor(part, base)


def anchor(cmd, base: str | None = None) -> list[str]:
    """The words of ``cmd`` with every relative path made absolute against ``base`` (the
    folder it was typed in; the current folder by default): the program when it names a
    path, and each argument that names an existing file (or, with a ``/`` in it, folder).
    Bare program names stay as typed: :func:`locate` finds them where the bot runs."""
    words = split(cmd)
    base = os.path.abspath(base or os.getcwd())
    w = _walk(words)
    out = list(words)
    for i in w.wrappers:
        if "/" in out[i] and not os.path.isabs(out[i]):
            out[i] = os.path.normpath(os.path.join(base, out[i]))
    for i in range(w.program):  # env PYTHONPATH=lib: the folders a wrapper sets, anchored
        name, eq, value = out[i].partition("=")
        if eq and name in PATH_VARS and i not in w.wrappers:
            out[i] = f"{name}=" + os.pathsep.join(
                os.path.normpath(os.path.join(base, v)) if v and not os.path.isabs(v)
                and os.path.exists(os.path.join(base, v)) else v for v in value.split(os.pathsep))
    p = w.program
    if "/" in out[p] and not os.path.isabs(out[p]):
        out[p] = os.path.normpath(os.path.join(base, out[p]))
    inline = None  # the index of a module's name or inline code: not a path
    for i in range(p + 1, len(out)):
        if i == w.shell:
            if w.inner is not None:
                out[i] = _join_inner([part if _is_operator(part) or not part else _anchor_part(part, here)
                                      for part, here in zip(w.inner, _inner_bases(w.inner, base))])
            continue
        if inline is None and out[i - 1] in ("-m", "-c", "-e", "--eval") and _base_name(out[p]) not in ("java",):
            inline = i  # ``-m pkg`` / ``-c CODE``: the words after it are the bot's arguments again
            continue
        out[i] = _anchor_arg(out[i], base)
    return out


# ---------------------------------------------------------------- 2. locate
def _which(word: str, path_var: str | None) -> str | None:
    return shutil.which(word, path=path_var)


#: words a shell runs itself: kept as typed inside a ``-c`` string
SHELL_BUILTINS = {"exec", "time", "command", "builtin", "nohup"}


def _locate_program(word: str, base: str, path_var: str, role: str) -> str:
    if role == "inner wrapper" and word in SHELL_BUILTINS and _which(word, path_var) is None:
        return word
    role = role.replace("inner ", "")
    if "/" in word:
        path = word if os.path.isabs(word) else os.path.normpath(os.path.join(base, word))
        if not os.path.exists(path):
            where = "" if os.path.isabs(word) else f" in {base}"
            raise CommandError(f"the {role} {word!r} was not found{where}")
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise CommandError(f"the {role} {word!r} is not an executable file (chmod +x {word})")
        found = path
    else:
        found = _which(word, path_var)
        if found is None:
            raise CommandError(f"the {role} {word!r} was not found on the PATH")
        found = os.path.abspath(found)  # not realpath: a venv's python is a link to the base one
    if role == "program" and _base_name(found) in ASK and is_script(found):
        target = shim_target(found, base, path_var)
        if target is not None:
            return target
    return found


def locate(words, base: str | None = None, env: dict | None = None, check_script: bool = True,
           _inner: bool = False) -> list[str]:
    """The argv that starts the bot here: anchored words (see :func:`anchor`) with each
    program word found on this machine's ``PATH`` (``env``'s, else the arena's), a shim
    replaced by the interpreter it runs, and the script checked to exist.
    :class:`CommandError` says which word cannot run."""
    base = os.path.abspath(base or os.getcwd())
    typed = split(words)
    out = anchor(typed, base)
    path_var = (env or os.environ).get("PATH") or os.defpath
    w = _walk(typed)
    for i in w.wrappers:
        out[i] = _locate_program(typed[i], base, path_var, "inner wrapper" if _inner else "wrapper")
    out[w.program] = _locate_program(typed[w.program], base, path_var, "program")
    if w.shell is not None and w.inner is not None:
        parts = []
        for part, here in zip(w.inner, _inner_bases(w.inner, base)):
            if _is_operator(part) or not part:
                parts.append(part)
            elif _is_shell_only(part):
                if part[0] == "cd" and len(part) == 2 and not part[1].startswith("-") and \
                        not os.path.isdir(os.path.join(here, os.path.expanduser(part[1]))):
                    raise CommandError(f"the folder {part[1]!r} of 'cd {part[1]}' was not found in {here}")
                parts.append(_anchor_part(part, here))
            else:
                parts.append(locate(part, here, env, check_script, _inner=True))
        out[w.shell] = _join_inner(parts)
    if check_script:
        script = script_of(typed[w.program:])
        if script is not None and not os.path.exists(script if os.path.isabs(script) else os.path.join(base, script)):
            where = "" if os.path.isabs(script) else f" (looked for it in {base})"
            raise CommandError(f"the bot's script {script!r} does not exist{where}")
    return out
