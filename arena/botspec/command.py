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

import ast
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache

from ..errors import UsageError

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
#: where a system's programs live: never shown as the bot's own, never bundled
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")


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
    p = w.program
    if "/" in out[p] and not os.path.isabs(out[p]):
        out[p] = os.path.normpath(os.path.join(base, out[p]))
    for i in range(p + 1, len(out)):
        if i == w.shell:
            if w.inner is not None:
                out[i] = _join_inner([part if _is_operator(part) or not part else anchor(part, base)
                                      for part in w.inner])
            continue
        if i > p and out[i - 1] in ("-m", "-c", "-e", "--eval") and _base_name(out[p]) not in ("java",):
            break  # inline code or a module: nothing past it is the bot's file
        out[i] = _anchor_arg(out[i], base)
    return out


# ---------------------------------------------------------------- 2. locate
def _which(word: str, path_var: str | None) -> str | None:
    return shutil.which(word, path=path_var)


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


#: how to ask an interpreter which executable it is
_ASK = {"python": ["-c", "import sys; print(sys.executable)"], "pypy": ["-c", "import sys; print(sys.executable)"],
        "node": ["-e", "console.log(process.execPath)"], "nodejs": ["-e", "console.log(process.execPath)"],
        "ruby": ["-e", "print RbConfig.ruby"], "perl": ["-e", "print $^X"]}


@lru_cache(maxsize=256)
def _shim_target(path: str, cwd: str, path_var: str) -> str | None:
    """The interpreter a shim would run, asked in ``cwd`` (where the command was typed), or
    None when it does not answer with an executable file."""
    ask = _ASK.get(_base_name(path))
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
            and not _is_script(answer):
        return answer
    return None


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
    if role == "program" and _base_name(found) in _ASK and _is_script(found):
        target = _shim_target(found, base, path_var)
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
        out[w.shell] = _join_inner([part if _is_operator(part) or not part
                                    else locate(part, base, env, check_script, _inner=True) for part in w.inner])
    if check_script:
        script = script_of(typed[w.program:])
        if script is not None and not os.path.exists(script if os.path.isabs(script) else os.path.join(base, script)):
            where = "" if os.path.isabs(script) else f" (looked for it in {base})"
            raise CommandError(f"the bot's script {script!r} does not exist{where}")
    return out


def resolve(cmd, base: str | None = None, env: dict | None = None) -> list[str]:
    """:func:`anchor` then :func:`locate`: the local argv of a command typed in ``base``."""
    return locate(anchor(cmd, base), base, env)


# ---------------------------------------------------------------- what the program is
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


def _shebang(exe: str, path_var: str | None) -> str | None:
    """The interpreter a script names on its ``#!`` line (through ``/usr/bin/env NAME``)."""
    try:
        with open(exe, "rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        names = [w for w in words[1:] if not w.startswith("-")]
        return shutil.which(names[0], path=path_var) if names else None
    return words[0] if os.path.exists(words[0]) else None


def program_files(argv: list[str], env: dict | None = None) -> tuple[str | None, str | None]:
    """``(executable, script)`` of a bot's command line past its wrappers, real paths: the
    script is the first file argument of an interpreter (``python bot.py``, ``node bot.js``),
    never an argument of a program (``./bot --db results.sqlite`` names no script)."""
    path_var = (env or os.environ).get("PATH")
    words = list(argv)
    w = _walk(words)
    if w.shell is not None and w.inner:
        first = next((p for p in w.inner if p and not _is_operator(p)), None)
        if first:
            return program_files(first, env)
    words = words[w.program:]
    exe = words[0] if "/" in words[0] else shutil.which(words[0], path=path_var)
    exe = os.path.realpath(exe) if exe and os.path.exists(exe) else None
    script = script_of(words)
    if script is not None and os.path.isfile(script):
        return exe, os.path.realpath(script)
    return exe, None


def describe_program(argv: list[str], env: dict | None = None) -> dict:
    """What runs, for messages and records: ``{"program", "interpreter", "script"}``."""
    exe, script = program_files(argv, env)
    shebang = _shebang(exe, (env or os.environ).get("PATH")) if exe else None
    return {"program": exe, "interpreter": shebang or (exe if script else None), "script": script}


def loose_folders() -> set[str]:
    """Folders whose files are not one program's: the arena user's home, ``/tmp``, ``/``."""
    out = {"/", "/tmp", "/var/tmp", "/home", "/root", os.path.realpath(tempfile.gettempdir())}
    for home in (os.environ.get("HOME"), os.path.expanduser("~")):
        if home and home != "/":
            out.add(os.path.realpath(home))
    return out


def _under(path: str, dirs) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _prefix_of(exe: str) -> str:
    folder = os.path.dirname(exe)
    return os.path.dirname(folder) if os.path.basename(folder) in ("bin", "Scripts") else folder


def editable_paths(prefix: str) -> list[str]:
    """The folders a Python environment at ``prefix`` imports from outside itself: the
    packages of its editable installs (setuptools' ``__editable__`` finders and path files,
    other ``.pth`` files' folders), each package's folder rather than a whole project."""
    out: list[str] = []
    for site in glob.glob(os.path.join(prefix, "lib", "python*", "site-packages")) + \
            glob.glob(os.path.join(prefix, "lib", "site-packages")):
        for finder in glob.glob(os.path.join(site, "__editable___*finder.py")):
            try:
                tree = ast.parse(open(finder, encoding="utf-8").read())
            except (OSError, SyntaxError, ValueError):
                continue
            for node in tree.body:
                target = node.target if isinstance(node, ast.AnnAssign) else \
                    (node.targets[0] if isinstance(node, ast.Assign) and node.targets else None)
                if isinstance(target, ast.Name) and target.id == "MAPPING" and node.value is not None:
                    try:
                        mapping = ast.literal_eval(node.value)
                    except ValueError:
                        continue
                    out += [p for p in mapping.values() if isinstance(p, str)]
        for pth in glob.glob(os.path.join(site, "*.pth")):
            try:
                lines = open(pth, encoding="utf-8").read().splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ")) or not os.path.isabs(line) or not os.path.isdir(line):
                    continue
                out += _packages_in(line)
    seen: list[str] = []
    for p in out:
        p = os.path.realpath(p)
        if os.path.exists(p) and p not in seen:
            seen.append(p)
    return seen


def _packages_in(folder: str) -> list[str]:
    """The top-level packages (folders with ``__init__.py``), modules and distributions'
    metadata (``*.dist-info``: their entry points) of a path entry."""
    out = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        d = os.path.join(folder, name)
        if os.path.isfile(os.path.join(d, "__init__.py")) or (name.endswith(".py") and os.path.isfile(d)) \
                or (name.endswith((".dist-info", ".egg-info")) and os.path.isdir(d)):
            out.append(d)
    return out


def _package_dirs(module: str, exe: str | None) -> list[str]:
    """The folders of the top-level packages beside ``module``'s, for the arena's own
    interpreter (a project's code, not its data)."""
    if not exe or os.path.realpath(exe) != os.path.realpath(sys.executable):
        return []
    import importlib.util
    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    top = os.path.realpath(list(spec.submodule_search_locations)[0])
    parent = os.path.dirname(top)
    return [d for d in _packages_in(parent) if os.path.isdir(d) and not _under(d, SYSTEM_DIRS)]


def needed_paths(argv: list[str], env: dict | None = None, program_dir: str | None = None,
                 read_only=()) -> list[str]:
    """What a bot started by ``argv`` must see, read-only, as real paths outside the system
    folders: see the module docstring. Never the folder of a mere argument."""
    env = env if env is not None else dict(os.environ)
    path_var = env.get("PATH")
    paths: list[str] = []
    loose = loose_folders()

    def add(p: str) -> None:
        p = os.path.realpath(p) if p and os.path.exists(p) else ""
        if p and p != "/" and not _under(p, SYSTEM_DIRS) and p not in paths:
            paths.append(p)

    def add_prefix(exe: str) -> None:
        prefix = _prefix_of(exe)
        add(exe if os.path.realpath(prefix) in loose else prefix)

    def program(words: list[str]) -> None:
        w = _walk(words)
        for i in w.wrappers:
            exe = words[i] if "/" in words[i] else shutil.which(words[i], path=path_var)
            if exe:
                add_prefix(os.path.abspath(exe))
        words = words[w.program:]
        exe = words[0] if "/" in words[0] else shutil.which(words[0], path=path_var)
        if exe:
            for seen in _link_chain(os.path.abspath(exe)):
                add_prefix(seen)  # a venv's folder (its pyvenv.cfg, site-packages), the real installation
                if _base_name(seen).startswith(("python", "pypy")):
                    for p in editable_paths(_prefix_of(seen)):
                        add(p)
            interpreter = _shebang(exe, path_var)
            if interpreter:  # ./bot.py with "#!/usr/bin/env python3": the interpreter's installation too
                add_prefix(os.path.abspath(interpreter))
                add_prefix(os.path.realpath(interpreter))
                for p in editable_paths(_prefix_of(os.path.abspath(interpreter))):
                    add(p)
            if not INTERPRETER_RE.match(_base_name(exe)) and not _is_system(exe):
                folder = os.path.dirname(os.path.realpath(exe))
                add(os.path.realpath(exe) if folder in loose else folder)
        script = script_of(words)
        if script is not None and os.path.isfile(script):
            real = os.path.realpath(script)
            folder = os.path.dirname(real)
            # a script lying loose in a home folder or in /tmp brings itself, not its folder
            # (whose dotfiles, keys and other programs' files are not the bot's business)
            add(real if folder in loose else folder)
        for i, arg in enumerate(words[1:], 1):
            if words[i - 1] == "-m":
                for p in _package_dirs(arg, exe):
                    add(p)

    program(list(argv))
    w = _walk(list(argv))
    if w.inner:
        for part in w.inner:
            if part and not _is_operator(part):
                program(part)
    if program_dir:
        add(program_dir)
    for extra in read_only or ():
        add(extra)
    for entry in (env.get("PYTHONPATH") or "").split(os.pathsep):
        if entry and os.path.isdir(entry):
            add(entry)
    return paths


def _link_chain(path: str) -> list[str]:
    """``path`` and every path its symbolic links go through to the real file (a link to a
    venv's ``python``, itself a link to the base installation's): each must be seen."""
    out = [path]
    for _ in range(40):
        try:
            target = os.readlink(out[-1])
        except OSError:
            break
        nxt = os.path.normpath(os.path.join(os.path.dirname(out[-1]), target))
        if nxt in out:
            break
        out.append(nxt)
    real = os.path.realpath(path)
    if real not in out:
        out.append(real)
    return out


def _is_system(exe: str) -> bool:
    """An executable of the system or of the arena's Python installation."""
    real = os.path.realpath(exe)
    roots = [d + "/" for d in SYSTEM_DIRS] + [os.path.realpath(sys.prefix) + "/", os.path.realpath(sys.base_prefix) + "/"]
    return any(real.startswith(r) or os.path.abspath(exe).startswith(r) for r in roots)
