"""What a bot must see: its interpreter's installation, its program's folder, the
packages of its environment's editable installs, what it declared (see
:mod:`arena.botspec.command`, step 3)."""

from __future__ import annotations

import ast
import glob
import os
import shutil
import sys
import tempfile

from .bot_path import sandbox_path  # noqa: F401  (the PATH a bot gets: imported from here by its callers)
from .installs import SYSTEM_DIRS, _link_chain, _prefix_of, _under
from .shims import resolve_name
from .wrappers import INTERPRETER_RE, _base_name, _commands, _is_operator, _walk, script_of

#: programs that run an author's recipe (``make run``), which starts its interpreter by name
RUNNERS = ("make", "gmake", "just")


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
        first = next(iter(_commands(w.inner)), None)
        if first:
            return program_files(first, env)
    words = words[w.program:]
    exe = words[0] if "/" in words[0] else shutil.which(words[0], path=path_var)
    exe = os.path.realpath(exe) if exe and os.path.exists(exe) else None
    script = script_of(words)
    if script is not None and os.path.isfile(script):
        return exe, os.path.realpath(script)
    return exe, None


def loose_folders() -> set[str]:
    """Folders whose files are not one program's: the arena user's home, ``/tmp``, ``/``."""
    out = {"/", "/tmp", "/var/tmp", "/home", "/root", os.path.realpath(tempfile.gettempdir())}
    for home in (os.environ.get("HOME"), os.path.expanduser("~")):
        if home and home != "/":
            out.add(os.path.realpath(home))
    return out


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
                if isinstance(target, ast.Name) and target.id in ("MAPPING", "NAMESPACES") and node.value is not None:
                    try:
                        mapping = ast.literal_eval(node.value)
                    except ValueError:
                        continue
                    for value in mapping.values() if isinstance(mapping, dict) else ():
                        # MAPPING: a package's folder or a module's file; NAMESPACES: a
                        # namespace package's folders
                        out += [value] if isinstance(value, str) else [p for p in value if isinstance(p, str)] \
                            if isinstance(value, list) else []
        for pth in glob.glob(os.path.join(site, "*.pth")):
            try:
                lines = open(pth, encoding="utf-8").read().splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ")) or not os.path.isabs(line) or not os.path.isdir(line):
                    continue
                # another environment's site-packages is shown whole (vendored libraries beside
                # the packages, e.g. numpy.libs); a project's folder only by its packages
                out += [line] if os.path.basename(line.rstrip("/")) in ("site-packages", "dist-packages") \
                    else _packages_in(line, namespaces=True)
    seen: list[str] = []
    for p in out:
        p = os.path.realpath(p)
        if os.path.exists(p) and p not in seen:
            seen.append(p)
    return seen


def _packages_in(folder: str, namespaces: bool = False) -> list[str]:
    """The top-level packages (folders with ``__init__.py``), modules and distributions'
    metadata (``*.dist-info``: their entry points) of a path entry; with ``namespaces``
    (an editable install's path entry) its namespace packages too."""
    out = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        d = os.path.join(folder, name)
        if os.path.isfile(os.path.join(d, "__init__.py")) or (name.endswith((".py", ".so")) and os.path.isfile(d)) \
                or (name.endswith((".dist-info", ".egg-info", ".libs")) and os.path.isdir(d)) \
                or (namespaces and _namespace_package(d)):
            out.append(d)
    return out


def _namespace_package(folder: str) -> bool:
    """A folder Python imports as a namespace package (no ``__init__.py``, PEP 420): a
    name that is an identifier, holding modules or packages."""
    if not os.path.basename(folder).isidentifier() or not os.path.isdir(folder):
        return False
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(n.endswith((".py", ".so")) or os.path.isfile(os.path.join(folder, n, "__init__.py")) for n in names)


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
            if _base_name(exe) in RUNNERS:
                # ``make run``: its recipe starts the interpreter the PATH names, with its packages
                python = resolve_name("python3", path_var)
                if python:
                    for seen in _link_chain(os.path.abspath(python)):
                        add_prefix(seen)
                        for p in editable_paths(_prefix_of(seen)):
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
    for part in _commands(w.inner):
        program(part)
    for part in w.inner or ():
        if part and part[0] == "cd" and len(part) == 2 and os.path.isabs(part[1]) and os.path.isdir(part[1]):
            add(part[1])  # the folder a shell string goes to before it starts the bot
    if program_dir:
        add(program_dir)
    for extra in read_only or ():
        add(extra)
    for entry in (env.get("PYTHONPATH") or "").split(os.pathsep) + env_paths(argv):
        if entry and os.path.isabs(entry) and os.path.isdir(entry):
            add(entry)
    return paths


#: variables that list folders a program imports from: set with ``env NAME=VALUE`` in front
#: of a bot, their folders are anchored (:func:`arena.botspec.anchor`) and shown
PATH_VARS = ("PYTHONPATH", "NODE_PATH", "RUBYLIB", "PERL5LIB", "CLASSPATH")


def env_paths(argv) -> list[str]:
    """The entries of the :data:`PATH_VARS` that the wrappers of ``argv`` set (``env
    PYTHONPATH=lib python3 bot.py``), as written."""
    words = list(argv)
    out: list[str] = []
    for word in words[:_walk(words).program]:
        name, eq, value = word.partition("=")
        if eq and name in PATH_VARS:
            out += [v for v in value.split(os.pathsep) if v]
    return out


def path_links(path: str) -> list[tuple[str, str]]:
    """The symbolic links on the way to ``path`` (each folder of it, and the file), as
    ``(link, target)`` pairs, links inside their targets too: a sandbox that shows what they
    point at makes them anew, so that the path as typed leads there."""
    out: list[tuple[str, str]] = []
    todo, seen = [os.path.abspath(path)], set()
    while todo and len(seen) < 40:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        real = "/"
        for part in [p for p in current.split("/") if p]:
            nxt = os.path.join(real, part)
            if os.path.islink(nxt):
                try:
                    target = os.readlink(nxt)
                except OSError:
                    break
                if (nxt, target) not in out:
                    out.append((nxt, target))
                todo.append(os.path.normpath(os.path.join(real, target)))
                real = os.path.realpath(nxt)
            else:
                real = nxt
    return out


def needed_links(argv: list[str], env: dict | None = None, program_dir: str | None = None,
                 read_only=()) -> list[tuple[str, str]]:
    """The symbolic links on the way to every path a bot's command names as typed (its
    program, its script, its named files), to its folders and to its ``PYTHONPATH``:
    see :func:`path_links`."""
    env = env if env is not None else dict(os.environ)
    words = [w for w in argv if isinstance(w, str)]
    w = _walk(words)
    for part in w.inner or ():
        if part and not _is_operator(part):
            words += part
    paths = [p for p in words if os.path.isabs(p)] + [p.split("=", 1)[1] for p in words if "=" in p]
    paths += [p for p in (program_dir, *(read_only or ())) if p]
    paths += (env.get("PYTHONPATH") or "").split(os.pathsep) + env_paths(words)
    out: list[tuple[str, str]] = []
    for p in paths:
        if p and os.path.isabs(p) and os.path.lexists(p):
            out += [pair for pair in path_links(p) if pair not in out]
    return out


def _is_system(exe: str) -> bool:
    """An executable of the system or of the arena's Python installation."""
    real = os.path.realpath(exe)
    roots = [d + "/" for d in SYSTEM_DIRS] + [os.path.realpath(sys.prefix) + "/", os.path.realpath(sys.base_prefix) + "/"]
    return any(real.startswith(r) or os.path.abspath(exe).startswith(r) for r in roots)
