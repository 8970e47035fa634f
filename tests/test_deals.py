"""Deal books: ``arena deals make``, reading and checking books (errors name the line), the
empty deal refused, and tournaments and matches that play a book's deals in order."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from arena.cli import app
from engine import Game, RuleSpec, compile_rules
from engine.deal import check_deal, load_book, make_book
from engine.errors import DealError


def run(*args, ok=True):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output
    if ok:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code != 0 and result.stderr.startswith("arena: "), result.output
    return result


def test_deal_i_of_a_book_is_the_deal_the_engine_shuffles_from_seed_plus_i():
    rules = compile_rules(RuleSpec(), 3)
    book = make_book(rules, 3, 40)
    for i, deal in enumerate(book):
        assert len(deal["white"]) == 32 and len(deal["black"]) == 14  # R1.1 at three players
        seeded, dealt = Game.new(rules, 3, 40 + i), Game.new(rules, 3, 999, deal)
        assert seeded.rows == dealt.rows and seeded.decks == dealt.decks
    assert book[0] != book[1]


def test_an_empty_deal_is_refused_with_a_sentence(tmp_path):
    with pytest.raises(DealError, match="both decks are empty; a deal needs at least one puzzle"):
        check_deal(compile_rules(RuleSpec(), 2), {"white": [], "black": []})
    deal = tmp_path / "empty.json"
    deal.write_text('{"white": [], "black": []}')
    assert "both decks are empty" in run("play", "greedy", "random", "--deal", deal, ok=False).stderr


def test_the_cli_writes_and_checks_a_book(tmp_path):
    out = run("deals", "make", "--count", 5, "--seed", 2, "--rules", "ghost").stdout.splitlines()
    assert len(out) == 5 and all("GW" in line or "W" in line for line in out)
    book = tmp_path / "book.jsonl"
    run("deals", "make", "--count", 4, "--out", book)
    assert len(load_book(book, compile_rules(RuleSpec(), 2))) == 4
    assert "4 deals, all valid" in run("deals", "check", book).stdout


@pytest.mark.parametrize("lines,words", [
    (['{"white": ["W01"], "black": ["B01"]}', "", "not json"], "line 3: not a JSON object"),
    (['# a comment', '[1, 2]'], "line 2: a deal must be an object"),
    (['{"white": ["W01"], "black": ["B01"]}', '{"white": [], "black": []}'], "line 2: deal: both decks are empty"),
    (['{"white": ["W99"], "black": []}'], "line 1: deal: 'white' names 'W99'"),
    ([], "holds no deal"),
])
def test_a_bad_book_is_a_sentence_with_the_line(tmp_path, lines, words):
    book = tmp_path / "bad.jsonl"
    book.write_text("\n".join(lines) + "\n")
    with pytest.raises(DealError, match=words):
        load_book(book, compile_rules(RuleSpec(), 2))
    assert words in run("deals", "check", book, ok=False).stderr


def test_a_match_plays_the_book_in_order_seat_rotated(tmp_path):
    book = tmp_path / "book.jsonl"
    deals = make_book(compile_rules(RuleSpec(), 2), 2, 500)
    book.write_text("".join(json.dumps(d) + "\n" for d in deals))
    out = tmp_path / "m"
    run("match", "greedy", "random", "--games", 6, "--inprocess", "-j", 1, "--deals", book, "--output", out,
        "--quiet")
    replays = sorted((out / "replays").glob("*.json"))
    assert len(replays) == 6
    for path in replays:
        group = int(path.stem.split("-")[0])
        assert json.loads(path.read_text())["deal"] == deals[group % 2]  # group i plays deal i, cycled


def test_a_tournament_file_names_its_book_and_bad_books_name_the_line(tmp_path):
    from arena.tournament.config import load_config
    from arena.tournament.yamlsource import ConfigError

    (tmp_path / "book.jsonl").write_text('{"white": ["W01", "W02"], "black": ["B01", "B02"]}\n{"white": ["B03"], "black": []}\n')
    (tmp_path / "t.yaml").write_text("name: t\nbots: [greedy, random]\ndeals: book.jsonl\n")
    with pytest.raises(ConfigError, match=r"t.yaml, line 3, field 'deals': .*book.jsonl, line 2: deal: B03 is a black"):
        load_config(tmp_path / "t.yaml")
    (tmp_path / "book.jsonl").write_text('# test-book: two short decks\n{"white": ["W01", "W02"], "black": ["B01", "B02"]}\n')
    cfg = load_config(tmp_path / "t.yaml")
    assert cfg.deal_for(0) == cfg.deal_for(7) == {"white": ["W01", "W02"], "black": ["B01", "B02"]}
    assert "deals" in cfg.fingerprint()
    (tmp_path / "t.yaml").write_text("name: t\nbots: [greedy, random]\ndeals: nothere.jsonl\n")
    with pytest.raises(ConfigError, match="the deal book 'nothere.jsonl' was not found"):
        load_config(tmp_path / "t.yaml")
