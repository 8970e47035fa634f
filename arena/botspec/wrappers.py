"""The grammar of a command line: wrappers in front of a program, a shell's ``-c`` string,
and the script an interpreter runs (see :mod:`arena.botspec.command`)."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

#: interpreters whose first file argument is the program (its folder is the program's)
INTERPRETER_RE = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php[0-9.]*|lua[0-9.]*|"
                            r"luajit|bash|sh|dash|zsh|ksh|fish|java|Rscript|julia|tclsh[0-9.]*|wish|guile|racket|"
                            r"ocaml|swipl|escript|elixir|dotnet|mono|sbcl|gawk|awk)$")
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"}
#: options of an interpreter after which the code is inline (no script file)
INLINE = {"-c", "-m", "-e", "-E", "--eval", "-p", "--print", "-r", "-"}
#: options of an interpreter that take the next word as their value
VALUED = {"python": {"-W", "-X", "-Q", "--check-hash-based-pycs"},
          "node": {"-r", "--require", "--import", "-C", "--conditions", "--loader", "--experimental-loader",
                   "--env-file", "--input-type", "--title", "--inspect-port"},
          "java": {"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-modules", "-d"},
          "ruby": {"-I", "-r", "-C", "-E"},
          "perl": {"-I", "-M", "-m"}}



def _base_name(word: str) -> str:
    return re.sub(r"[-.\d]+$", "", os.path.basename(word))  # python3.11 -> python, pypy3 -> pypy


# ---------------------------------------------------------------- wrappers
def _after_options(args: list[str], valued: set[str], long_valued: tuple = (), positional: int = 0) -> int | None:
    """Index in ``args`` of the wrapped command: past options (``valued`` take the next
    word unless glued: ``-n5``, ``--x=5``), ``--``, and ``positional`` plain words."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a.startswith("--"):
            name = a.split("=", 1)[0]
            i += 2 if name in long_valued and "=" not in a else 1
            continue
        if a.startswith("-") and len(a) > 1:
            flag = a[:2]
            i += 2 if flag in valued and len(a) == 2 else 1
            continue
        break
    i += positional
    return i if i < len(args) else None


def _env(args):
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-u", "-C", "--unset", "--chdir"):
            i += 2
        elif a == "-S" or a.startswith("--split-string"):
            return None  # a split string: left to env
        elif a.startswith("-") or "=" in a:
            i += 1
        else:
            return i
    return None


def _nice(args):
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-n":
            i += 2
        elif re.fullmatch(r"-n?-?\d+|--adjustment=-?\d+|--", a):
            i += 1
        else:
            return i
    return None


def _taskset(args):
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-p", "--pid"):
            return None  # changes a running process: starts nothing
        i += 1
    i += 1  # the mask, or the list of -c
    return i if i < len(args) else None


def _prlimit(args):
    if "--" in args:
        i = args.index("--") + 1
        return i if i < len(args) else None
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 1
    return i if i < len(args) else None


WRAPPERS = {
    "env": _env,
    "nice": _nice,
    "stdbuf": lambda a: _after_options(a, {"-i", "-o", "-e"}),
    "timeout": lambda a: _after_options(a, {"-s", "-k"}, ("--signal", "--kill-after"), positional=1),
    "taskset": _taskset,
    "ionice": lambda a: _after_options(a, {"-c", "-n", "-p", "-P", "-u"}, ("--class", "--classdata")),
    "chrt": lambda a: _after_options(a, {"-T", "-P", "-D"}, ("--sched-runtime", "--sched-period",
                                                               "--sched-deadline"), positional=1),
    "nohup": lambda a: 0 if a else None,
    "setsid": lambda a: _after_options(a, set()),
    "time": lambda a: _after_options(a, {"-o", "-f"}, ("--output", "--format")),
    "prlimit": _prlimit,
    "exec": lambda a: _after_options(a, {"-a"}),
}


def _shell_string(words: list[str]) -> int | None:
    """Index of the ``-c`` string of a shell command (``bash -lc "python bot.py"``), or None."""
    if os.path.basename(words[0]) not in SHELLS:
        return None
    for i, a in enumerate(words[1:], 1):
        if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            return i + 1 if i + 1 < len(words) else None
        if not a.startswith("-"):
            return None
    return None


#: a shell string resolved word by word: plain words and the operators ; && || | only
_PLAIN_SHELL = re.compile(r"""^[^'"`$*?\[\]{}\\~<>()]*$""")


@dataclass
class _Walk:
    """Where the parts of a command line are: wrapper words, the program, its arguments, and
    (for ``sh -c``) the inner commands."""

    wrappers: list[int] = field(default_factory=list)
    program: int = 0
    shell: int | None = None               # index of a shell's -c string
    inner: list[list[str]] | None = None   # its commands, when it is plain words


def _walk(words: list[str]) -> _Walk:
    w = _Walk()
    i = 0
    while i < len(words):
        name = os.path.basename(words[i])
        skip = WRAPPERS.get(name)
        if skip is None:
            break
        nxt = skip(words[i + 1:])
        if nxt is None:
            break
        w.wrappers.append(i)
        i = i + 1 + nxt
    w.program = min(i, len(words) - 1)
    rest = words[w.program:]
    s = _shell_string(rest)
    if s is not None:
        w.shell = w.program + s
        text = words[w.shell]
        if _PLAIN_SHELL.match(text):
            lex = shlex.shlex(text, posix=True, punctuation_chars=";&|")
            lex.whitespace_split = True
            parts, cur = [], []
            for tok in lex:
                if tok and set(tok) <= set(";&|"):
                    parts.append(cur)
                    parts.append([tok])
                    cur = []
                else:
                    cur.append(tok)
            parts.append(cur)
            w.inner = parts
    return w


def _join_inner(parts: list[list[str]]) -> str:
    out = []
    for p in parts:
        if len(p) == 1 and set(p[0]) <= set(";&|"):
            out.append(p[0])
        elif p:
            out.append(shlex.join(p))
    return " ".join(out)


def _is_operator(part: list[str]) -> bool:
    return len(part) == 1 and set(part[0]) <= set(";&|")


#: commands a shell runs itself that start no program (``cd mybot && exec python3 bot.py``)
SHELL_ONLY = {"cd", "export", "unset", "umask", "ulimit", "set", ":", "true"}


def _is_shell_only(part: list[str]) -> bool:
    return bool(part) and part[0] in SHELL_ONLY


def _commands(inner) -> list[list[str]]:
    """The commands of a shell string that start programs (not operators, not ``cd``)."""
    return [p for p in inner or () if p and not _is_operator(p) and not _is_shell_only(p)]


def _inner_bases(inner, base: str) -> list[str]:
    """The folder each part of a shell string runs in: ``base``, and after ``cd DIR`` that
    folder (relative to the one before), as far as it exists."""
    out = []
    for part in inner or ():
        out.append(base)
        if part and part[0] == "cd" and len(part) == 2 and not part[1].startswith("-"):
            nxt = os.path.normpath(os.path.join(base, os.path.expanduser(part[1])))
            if os.path.isdir(nxt):
                base = nxt
    return out


def script_of(argv) -> str | None:
    """The script an interpreter's command line runs (``python3 -u bot.py`` -> ``bot.py``),
    past wrappers; None for a program that is not an interpreter, ``-c``/``-m``/``-e`` code,
    a Java class, or a word that does not look like a file."""
    words = list(argv)
    if not words:
        return None
    w = _walk(words)
    words = words[w.program:]
    base = _base_name(words[0])
    if not INTERPRETER_RE.match(base) and not INTERPRETER_RE.match(os.path.basename(words[0])):
        # a link with a name of its own to an interpreter (``xpython -> python3.11``)
        real = _base_name(os.path.realpath(words[0])) if "/" in words[0] else ""
        if not (real and INTERPRETER_RE.match(real)):
            return None
        base = real
    args = words[1:]
    if base == "java":
        if "-jar" in args and args.index("-jar") + 1 < len(args):
            return args[args.index("-jar") + 1]
        return None
    if base == "deno" and args[:1] == ["run"]:
        args = args[1:]
    if base in SHELLS and _shell_string(words) is not None:
        return None
    valued = VALUED.get(base, set())
    i = 0
    while i < len(args):
        word = args[i]
        if word in INLINE:
            return None
        if word.startswith("-"):
            i += 2 if word in valued else 1
            continue
        if "/" in word or re.search(r"\.(py|pyc|pyz|js|mjs|cjs|ts|sh|bash|rb|pl|php|lua|R|jl|tcl|exs|jar)$", word) \
                or os.path.isfile(word):
            return word
        return None
    return None


