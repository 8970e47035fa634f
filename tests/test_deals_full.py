"""Deal books hold the full decks the rules deal (R1.1-R1.2), unless they say they are test
books: a truncated book is refused by ``arena deals check`` and by every command that
reads a book, naming its line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from arena.cli import app
from engine import DealError, RuleSpec, compile_rules
from engine.deal import TEST_BOOK, is_test_book, load_book, make_book

SHORT = '{"white":["W01"],"black":[]}\n'


def run(*args, ok=True):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output
    assert (result.exit_code == 0) == ok, result.output
    return result


@pytest.fixture
def books(tmp_path):
    rules = compile_rules(RuleSpec(), 2)
    full = tmp_path / "full.jsonl"
    full.write_text("".join(json.dumps(d) + "\n" for d in make_book(rules, 3, 9)))
    short = tmp_path / "short.jsonl"
    short.write_text(full.read_text().splitlines()[0] + "\n" + SHORT)
    test = tmp_path / "test.jsonl"
    test.write_text(f"{TEST_BOOK}: a one-card white deck\n" + SHORT)
    return full, short, test


def test_deals_check_refuses_a_truncated_book_naming_the_line(books):
    full, short, test = books
    assert "3 deals, all valid for rules base, full decks" in run("deals", "check", full).stdout
    r = run("deals", "check", short, ok=False)
    assert r.stderr.startswith("arena: ") and "short.jsonl, line 2: the decks are not full" in r.stderr
    assert "white has 1 of 32 puzzles and black 0 of 12" in r.stderr and "# test-book" in r.stderr
    assert "a test book" in run("deals", "check", test).stdout


def test_every_command_that_reads_a_book_refuses_a_truncated_one(books, tmp_path):
    full, short, test = books
    r = run("match", "greedy", "random", "--inprocess", "--games", 2, "--deals", short, "-o", tmp_path / "m", ok=False)
    assert "line 2: the decks are not full" in r.stderr and not (tmp_path / "m").exists()
    yaml = tmp_path / "t.yaml"
    yaml.write_text(f"name: t\nbots: [greedy, random]\ndeals: {short}\noutput: {tmp_path / 'o'}\n")
    assert "the decks are not full" in run("validate", yaml, ok=False).stderr
    assert "the decks are not full" in run("run", yaml, "--inprocess", "--no-progress", ok=False).stderr
    assert "the decks are not full" in run("league", "new", tmp_path / "l.db", "--deals", short, ok=False).stderr
    # a test book plays as it is: two-round games on one white card
    run("match", "greedy", "random", "--inprocess", "--games", 2, "--deals", test, "-o", tmp_path / "t",
        "--no-replays", "--quiet")


def test_the_full_decks_follow_the_rules_and_seats():
    for variants, seats, sizes in (([], 2, (32, 12)), ([], 4, (32, 16)), (["ghost"], 3, None), (["solo"], 1, (15, 10))):
        rules = compile_rules(RuleSpec.make(variants), seats)
        if sizes is not None:
            assert rules.deck_sizes == sizes
        if seats > 1:
            deal = make_book(rules, 1, 4)[0]
            assert (len(deal["white"]), len(deal["black"])) == rules.deck_sizes


def test_the_marker_must_come_before_the_first_deal(tmp_path):
    assert is_test_book("# test-book\n" + SHORT) and is_test_book("\n#  Test-Book: why\n" + SHORT)
    assert not is_test_book(SHORT + "# test-book\n") and not is_test_book("# a comment\n" + SHORT)
    book = tmp_path / "late.jsonl"
    book.write_text(SHORT + TEST_BOOK + "\n")
    with pytest.raises(DealError, match="line 1: the decks are not full"):
        load_book(book, compile_rules(RuleSpec(), 2))
    assert load_book(book) == [{"white": ["W01"], "black": []}]  # without rules, only read
