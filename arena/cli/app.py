"""The ``arena`` Typer application and what every command shares.

The commands themselves live in the sibling modules, one per command group; they import
this module and :func:`command` registers them on :data:`app`. Every command turns the arena's and the engine's errors into one sentence on stderr and a
non-zero exit code (2 for bad input), never a traceback.
"""

from __future__ import annotations

import functools
import json
import typer

from engine import EngineError

from ..errors import ArenaError

def _readable_metavars() -> None:
    """Typer 0.2x writes value types into ``--help`` as ``<int range>``, ``<str>``, ``<path>``,
    ``<list[str]>``; a manual writes ``N``, ``TEXT``, ``PATH``. Options with a ``metavar``
    keep theirs; an argument's name already says what it is, so it gets no type at all."""
    core = getattr(typer, "core", None)
    param = getattr(core, "_TyperParameter", None)
    if param is None or not hasattr(param, "display_type"):
        return
    base = param.display_type
    words = {"int": "N", "int range": "N", "float": "X", "float range": "X", "str": "TEXT", "path": "PATH",
             "file": "FILE", "directory": "DIR", "bool": "BOOL"}

    def display_type(self, ctx):
        label = base(self, ctx)
        if isinstance(self, core.TyperArgument):
            return ""
        inner = label[1:-1] if label.startswith("<") and label.endswith(">") else label
        if inner.startswith("list[") and inner.endswith("]"):
            inner = inner[5:-1]
        return words.get(inner, inner)

    param.display_type = display_type


_readable_metavars()

app = typer.Typer(
    name="arena",
    help=(
        "Project L bot arena: bots written in any language play Project L through a JSON "
        "protocol on stdin/stdout, each in its own sandboxed process under a clock.\n\n"
        "Tournaments come from YAML files (`arena validate`, `arena run`, `arena standings`); "
        "Elo ladders live in `arena league`; `arena experiment` plays the same deals under "
        "several rule sets to test house rules at scale; `arena replay` and `arena index` show "
        "what happened. Bots are named (see `arena bots`) or given as commands; rules are the "
        "base game plus variants (see `arena variants`). Every command prints a sentence and "
        "exits non-zero on bad input.\n\n"
        "Start with: arena run tournaments/demo.yaml"
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(help="Benchmarks that print measured figures.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


def fail(message: str, code: int = 1) -> None:
    """Print ``message`` on stderr and exit with ``code``."""
    typer.echo(f"arena: {message}", err=True)
    raise typer.Exit(code)


def stdout_closed(wait_s: float = 0.0) -> bool:
    """Whether standard output is a pipe whose reader has left, waiting up to ``wait_s``
    seconds for it to go."""
    import os
    import select
    import stat
    import sys

    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, 0)  # errors only: POLLERR once the read end is closed
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(wait_s * 1000))
    except (OSError, ValueError, AttributeError):
        return False


def stdout_gone() -> None:
    """Standard output's reader has left (``arena ... | head -3``): point file descriptor 1
    at ``/dev/null``, so what is still buffered, and the interpreter's flush at exit, go
    nowhere instead of raising ``BrokenPipeError`` again."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def guarded(fn):
    """Turn the arena's and the engine's errors into a sentence and an exit code; a closed
    standard output ends the command quietly with 141, as SIGPIPE ends a C program."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ArenaError as exc:
            fail(str(exc), exc.exit_code)
        except EngineError as exc:
            fail(str(exc), 2)
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except BrokenPipeError:
            if not stdout_closed():
                raise  # a pipe of the command's own: a bug to show, not a reader that left
            stdout_gone()
            raise typer.Exit(141) from None

    return wrapper


def command(*args, **kwargs):
    """``@app.command`` with :func:`guarded` error handling."""

    def deco(fn):
        return app.command(*args, **kwargs)(guarded(fn))

    return deco


def seats_note(result: dict) -> str:
    """`` (1 seat)`` for a benchmark that did not play the usual two seats (solo rules)."""
    n = result.get("players", 2)
    return "" if n == 2 else f" ({n} seat{'s' if n != 1 else ''})"


def emit_json(obj) -> None:
    """Print ``obj`` as one line of JSON with sorted keys."""
    typer.echo(json.dumps(obj, sort_keys=True))
