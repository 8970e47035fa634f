"""Invoking ``arena`` in-process for the CLI tests."""

from __future__ import annotations

from typer.testing import CliRunner

from arena.cli import app


def run(*args, ok: bool = True, usage: bool = False, one_line: bool = False):
    """Invoke ``arena ARGS``; check the exit status and that no traceback escaped.

    A failure must say so on stderr, prefixed with the program's name (``usage`` also lets
    Typer's own usage errors through); ``one_line`` asks that it be a single line."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if ok:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code != 0, result.output
        assert result.stderr.startswith("arena: ") or (usage and "Error" in result.stderr), result.stderr
        if one_line:
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result
