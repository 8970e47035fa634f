"""The ``arena`` commands the README and the docs show, as a user would type them.

:func:`doc_commands` reads ``README.md`` and ``docs/*.md`` and returns every command in
page order, each a :class:`DocCommand` (page, line, text):

- **In code blocks**: every line that starts with ``arena `` (or ``$ arena ``, a prompt
  before output), its ``\\`` continuation lines joined and a trailing ``# comment``
  dropped, and every line that chains an ``arena`` command after another with ``&&``
  (``pip install . && arena run tournaments/demo.yaml``). Lines that start with
  ``arena:`` are the arena's own messages, not commands.
- **In prose**: a backticked span that starts with ``arena `` (it may run over a line
  break) counts when it is a whole command a user could type as it stands: it holds no
  placeholder (a word in capitals such as ``FILE``, ``DIR``, ``NAME@VERSION`` or ``N``, an
  ellipsis, ``|`` between alternatives, ``[...]`` around optional parts), the command
  line parser accepts it with every required argument given, and a command that plays
  bots names at least one (a bot name or ``--cmd``). ``arena run`` or ``arena play
  --pause-idle`` in a sentence name a command or an option; ``arena play greedy --cmd
  "python lucky.py"`` is one.

Other programs the docs show (``python -m bots.planner_eval ...``, ``dask worker ...``,
``gcc ...``) are not collected; the test runs those a page's ``arena`` commands need
first, as that page's setup.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent

#: Words that stand for something the reader fills in, and other marks of a synopsis.
PLACEHOLDER = re.compile(r"\.\.\.|…|\||\[|\]|(?<![A-Za-z0-9_/-])(?:[A-Z][A-Z0-9_]+|N)(?![a-z0-9])"
                         r"|(?<=[/:.@])[A-Z][A-Z0-9_]+")


@dataclass(frozen=True)
class DocCommand:
    """One command shown by a page: ``page`` relative to the project, its 1-based ``line``,
    ``text`` as shown (continuations joined, comment dropped), and whether it stood in a
    code ``block`` or in prose."""

    page: str
    line: int
    text: str
    block: bool


def pages() -> list[Path]:
    """The pages whose commands are collected: the README and every page of ``docs/``."""
    return [PROJECT / "README.md"] + sorted((PROJECT / "docs").glob("*.md"))


def strip_comment(line: str) -> str:
    """``line`` without a trailing shell comment (a ``#`` after a blank, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def block_commands(page: str, lines: list[str]) -> list[DocCommand]:
    """The commands of the code blocks of a page (``lines`` is the whole page)."""
    found = []
    fence = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fence = None if fence else line.strip()[3:] or "text"
            i += 1
            continue
        start = i
        if fence and fence not in {"python", "toml", "yaml", "json"}:
            text = line.strip()
            if text.startswith("$ "):
                text = text[2:]
            if text.startswith("arena ") or re.search(r"&&\s*arena ", text):
                parts = [strip_comment(text)]
                while parts[-1].endswith("\\") and i + 1 < len(lines):
                    i += 1
                    parts[-1] = parts[-1][:-1].rstrip()
                    parts.append(strip_comment(lines[i].strip()))
                found.append(DocCommand(page, start + 1, " ".join(parts), True))
        i += 1
    return found


def prose_commands(page: str, lines: list[str]) -> list[DocCommand]:
    """The whole commands in backticks in the prose of a page."""
    text = []
    fence = False
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
            text.append("")
        else:
            text.append("" if fence else line)
    joined = "\n".join(text)
    found = []
    for m in re.finditer(r"`(arena [^`]+)`", joined):
        span = " ".join(m.group(1).split())
        if is_whole_command(span):
            found.append(DocCommand(page, joined.count("\n", 0, m.start()) + 1, span, False))
    return found


def is_whole_command(span: str) -> bool:
    """Whether a backticked ``arena …`` span is a command a user could type as it stands."""
    import typer

    from arena.cli import app

    if PLACEHOLDER.search(span):
        return False
    try:
        args = shlex.split(span)[1:]
    except ValueError:
        return False
    group = typer.main.get_command(app)
    with contextlib.redirect_stdout(io.StringIO()):  # --help prints
        return _parses(group, args)


def _parses(group, args: list[str]) -> bool:
    """Whether ``arena ARGS`` is a whole command to the command line parser."""
    import typer

    try:
        ctx = group.make_context("arena", list(args))
        command, rest = group, ctx._protected_args + ctx.args
        while hasattr(command, "commands") and rest and not rest[0].startswith("-"):
            sub = command.get_command(ctx, rest[0])
            if sub is None:
                return False
            name, rest = rest[0], rest[1:]
            ctx = sub.make_context(name, list(rest), parent=ctx)
            command = sub
            rest = ctx._protected_args + ctx.args if hasattr(command, "commands") else []
    except typer.Exit:
        return True  # --help
    except typer.TyperException:
        return False
    if hasattr(command, "commands"):
        return not rest
    if "bots" in {p.name for p in command.params}:
        return any(ctx.params.get(name) for name in ("bots", "cmd", "engine"))
    return True


def doc_commands() -> list[DocCommand]:
    """Every command of the README and the docs, page by page, in page order."""
    found = []
    for path in pages():
        page = str(path.relative_to(PROJECT))
        lines = path.read_text().splitlines()
        commands = block_commands(page, lines) + prose_commands(page, lines)
        found += sorted(commands, key=lambda c: c.line)
    return found


def code_block(page: str, after: str, lang: str = "python") -> str:
    """The first code block of ``lang`` after the text ``after`` on ``page``."""
    text = (PROJECT / page).read_text()
    start = text.index(after)
    m = re.compile(rf"^```{lang}\n(.*?)^```", re.S | re.M).search(text, start)
    return m.group(1)


if __name__ == "__main__":
    for c in doc_commands():
        print(f"{c.page}:{c.line}: {'block' if c.block else 'prose'}: {c.text}")
