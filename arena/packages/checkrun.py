"""``python -m arena.packages.checkrun [--move-ms N] -- ARGV...``: the conformance check, as one JSON line.

The website starts this in the sandbox (:func:`arena.packages.build.check`) so that the bot
the checker starts is confined with it; the report is the last line of standard output.
"""

from __future__ import annotations

import json
import sys


def main(args: list[str]) -> int:
    """Run :func:`arena.process.check_bot.check_bot` and print its report as JSON."""
    from ..process.check_bot import check_bot

    move_ms = 2000
    if "--" not in args:
        print("usage: python -m arena.packages.checkrun [--move-ms N] -- ARGV...", file=sys.stderr)
        return 2
    head, argv = args[:args.index("--")], args[args.index("--") + 1:]
    if head[:1] == ["--move-ms"] and len(head) == 2:
        move_ms = int(head[1])
    report = check_bot(argv, move_ms=move_ms, sandbox="none")  # this process is the sandboxed one
    sys.stdout.write("\n" + json.dumps(report.to_json()) + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
