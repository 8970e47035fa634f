"""``arena deals make`` and ``arena deals check``: deal books, the opening books of Project L.

A deal book is a file of explicit deals, one JSON object per line
(``{"white": [ids, top first], "black": [ids, top first]}``, see ``engine/deal.py``).
``deals: book.jsonl`` in a tournament, experiment or league file, or ``--deals`` on the
command line, makes group ``i`` play deal ``i`` (seat-rotated as always; the book is cycled
when there are more groups than deals). Every deal must hold the full decks the rules deal
(R1.1-R1.2), unless the book marks itself as a test book with a ``# test-book`` line
before its first deal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from .app import app, guarded
from .options import parse_rules

deals_app = typer.Typer(help="Deal books (JSON lines of explicit deals) for tournaments, experiments and leagues.",
                        no_args_is_help=True)
app.add_typer(deals_app, name="deals")


@deals_app.command("make")
@guarded
def deals_make_cmd(
    count: int = typer.Option(100, "--count", "-n", min=1, metavar="N", help="How many deals."),
    seed: int = typer.Option(0, "--seed", min=0, metavar="N",
                             help="Deal i is the one the engine shuffles from seed N+i (R1.1)."),
    rules: str = typer.Option("", "--rules", metavar="VARIANTS", help="Variants whose card pool to deal, e.g. ghost."),
    param: List[str] = typer.Option([], "--param", metavar="NAME=VALUE", help="A rule parameter (repeatable)."),
    players: int = typer.Option(2, "--players", "--seats", min=2, max=4, metavar="N",
                                help="Seats (the black deck's size depends on it)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", metavar="FILE", help="Write here instead of stdout."),
) -> None:
    """Write a deal book: N explicit deals shuffled as the rules shuffle them, one JSON object per line."""
    from engine import compile_rules
    from engine.deal import make_book

    book = make_book(compile_rules(parse_rules(rules, param), players), count, seed)
    text = "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in book)
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {count} deals to {out}", err=True)


@deals_app.command("check")
@guarded
def deals_check_cmd(
    book: Path = typer.Argument(..., metavar="BOOK", help="A deal book (JSON lines)."),
    rules: str = typer.Option("", "--rules", metavar="VARIANTS", help="Variants to check the cards against."),
    param: List[str] = typer.Option([], "--param", metavar="NAME=VALUE", help="A rule parameter (repeatable)."),
    players: int = typer.Option(2, "--players", "--seats", min=1, max=4, metavar="N", help="Seats."),
) -> None:
    """Check every deal of a book against the rules; a bad deal is named by its line.

    Each deal must hold the full decks the rules deal (R1.1-R1.2): every white puzzle and
    black_deck_size black ones. A book of short decks (for tests) says so with a
    `# test-book` line before its first deal."""
    from engine import compile_rules
    from engine.deal import is_test_book, load_book

    deals = load_book(book, compile_rules(parse_rules(rules, param), players))
    try:
        test = is_test_book(book.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        test = False
    typer.echo(f"{book}: {len(deals)} deals, all valid for rules {parse_rules(rules, param).label()}"
               + (" (a test book: its decks may be short)" if test else ", full decks"))
