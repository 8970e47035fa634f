"""``--output-format fastchess|cutechess``: the lines those programs print, read by parsers
written from their format (the regular expressions of fishtest's worker, ``worker/games.py``,
and the lines of cutechess-cli's ``enginematch.cpp``), and their figures checked against
the programs' own examples and tests."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from arena.tournament.output_formats import CutechessElo, EngineOutput, FastchessElo, Stats
from cli_helpers import run

# fishtest's worker (worker/games.py) reads fastchess's block with these two
FISHTEST_WLD = re.compile(r"Games: ([0-9]+), Wins: ([0-9]+), Losses: ([0-9]+), Draws: ([0-9]+), Points: ([0-9.]+) \(")
FISHTEST_PTNML = re.compile(r"Ptnml\(0-2\): \[([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+)\]")
NUM = r"(-?[0-9.]+|-?inf|nan)"
STARTED = re.compile(r"^Started game (\d+) of (\d+) \((.+) vs (.+)\)$")
FINISHED = re.compile(r"^Finished game (\d+) \((.+) vs (.+)\): (1-0|0-1|1/2-1/2|\*) \{(.*)\}$")
LLR = re.compile(rf"^LLR: {NUM} \({NUM}%\) \({NUM}, {NUM}\) \[{NUM}, {NUM}\]$")
SCORE_OF = re.compile(r"^Score of (.+) vs (.+): (\d+) - (\d+) - (\d+)  \[([0-9.]+)\] (\d+)$")
ELO_DIFF = re.compile(rf"^Elo difference: {NUM} \+/- {NUM}, LOS: {NUM} %, DrawRatio: {NUM} %$")
CUTE_SPRT = re.compile(rf"^SPRT: llr {NUM} \({NUM}%\), lbound {NUM}, ubound {NUM}( - H[01] was accepted)?$")


def parse_fastchess(text: str) -> dict:
    """What a fastchess log parser takes from a run: fishtest's loop over the lines, with its
    own consistency checks, plus the game lines and the LLR."""
    out = {"started": [], "finished": [], "blocks": [], "llr": []}
    wld = ptnml = None
    for line in text.splitlines():
        if m := STARTED.match(line):
            out["started"].append(m.groups())
        if m := FINISHED.match(line):
            out["finished"].append(m.groups())
        if m := LLR.match(line):
            out["llr"].append(float(m.group(1)))
        if m := FISHTEST_WLD.search(line):
            wld = {"games": int(m.group(1)), "wins": int(m.group(2)), "losses": int(m.group(3)),
                   "draws": int(m.group(4)), "points": float(m.group(5))}
        if m := FISHTEST_PTNML.search(line):
            ptnml = [int(m.group(i)) for i in range(1, 6)]
        if wld is not None and ptnml is not None:
            # fishtest's own assertions on every block it reads
            assert 2 * sum(ptnml) == wld["wins"] + wld["losses"] + wld["draws"]
            assert wld["games"] == 2 * sum(ptnml)
            out["blocks"].append((wld, ptnml))
            wld = ptnml = None
    return out


def _stored_pairs(folder) -> tuple[dict, list]:
    """W/L/D of the first bot over finished pairs, and each game's result, from games.jsonl."""
    lines = [json.loads(x) for x in (folder / "games.jsonl").read_text().splitlines()]
    return lines


def test_a_fastchess_log_parser_reads_a_match(tmp_path):
    out = tmp_path / "m"
    r = run("match", "planner-fast", "learned", "--games", 8, "-j", 2, "--inprocess", "--no-replays", "-o", out,
            "--report-every", 2, "--output-format", "fastchess", "--sprt", "elo0=0", "elo1=10")
    parsed = parse_fastchess(r.stdout)
    games = _stored_pairs(out)
    assert len(parsed["started"]) == 8 and len(parsed["finished"]) == 8
    assert sorted(int(x[0]) for x in parsed["finished"]) == list(range(1, 9))
    assert {x[1] for x in parsed["started"]} == {"8"}
    # the last block is the whole match (4 finished pairs), and agrees with the store
    wld, ptnml = parsed["blocks"][-1]
    wins = sum(1 for g in games if g["ranking"][g["bots"].index("planner-fast")] < g["ranking"][g["bots"].index("learned")])
    losses = sum(1 for g in games if g["ranking"][g["bots"].index("planner-fast")] > g["ranking"][g["bots"].index("learned")])
    assert (wld["games"], wld["wins"], wld["losses"], wld["draws"]) == (8, wins, losses, 8 - wins - losses)
    assert sum(ptnml) == 4 and len(parsed["blocks"]) == 2  # after pairs 2 and 4
    assert len(parsed["llr"]) == 2
    assert r.stdout.splitlines()[-1] in ("Tournament finished",) or "completed -" in r.stdout.splitlines()[-1]
    # nothing of ours on stdout: every line is one of fastchess's
    known = (STARTED, FINISHED, LLR)
    for line in r.stdout.splitlines():
        assert (any(p.match(line) for p in known) or line == "-" * 50 or line.startswith(
            ("Results of ", "Elo: ", "LOS: ", "Games: ", "Ptnml(0-2): ", "Tournament finished", "SPRT ("))), line
    assert "games played" in r.stderr  # our summary went to stderr


def test_a_cutechess_log_parser_reads_a_match(tmp_path):
    out = tmp_path / "m"
    r = run("match", "planner-fast", "learned", "--games", 6, "-j", 1, "--inprocess", "--no-replays", "-o", out,
            "--report-every", 4, "--output-format", "cutechess", "--sprt", "elo0=0", "elo1=10")
    lines = r.stdout.splitlines()
    scores = [SCORE_OF.match(x).groups() for x in lines if SCORE_OF.match(x)]
    assert len(scores) == 6 and [int(s[6]) for s in scores] == [1, 2, 3, 4, 5, 6]
    a, b, w, l, d, score, n = scores[-1]
    games = _stored_pairs(out)
    wins = sum(1 for g in games if g["ranking"][g["bots"].index("planner-fast")] < g["ranking"][g["bots"].index("learned")])
    assert (a, b, int(w), int(n)) == ("planner-fast", "learned", wins, 6)
    assert float(score) == pytest.approx((int(w) + 0.5 * int(d)) / 6, abs=5e-4)
    elo = [ELO_DIFF.match(x) for x in lines if ELO_DIFF.match(x)]
    assert len(elo) == 2  # after game 4 and at the end
    assert len([x for x in lines if CUTE_SPRT.match(x)]) == 2
    assert lines[-1] == "Finished match"


def test_a_bad_output_format_is_a_sentence(tmp_path):
    r = run("match", "greedy", "random", "--inprocess", "-o", tmp_path / "m", "--output-format", "pgn",
            ok=False, one_line=True)
    assert "--output-format 'pgn': the formats are arena, fastchess, cutechess" in r.stderr
    r = run("match", "greedy", "random", "--inprocess", "-o", tmp_path / "m", "--output-format", "fastchess",
            "--json", ok=False, one_line=True)
    assert "give --json or --output-format, not both" in r.stderr


def _cfg(names, options=None, tc=None, deals_path=None, fmt="round-robin", rotations=2):
    bots = [SimpleNamespace(name=n, options=(options or {}), time_control=None) for n in names]
    return SimpleNamespace(bots=bots, seats=2, rotations=rotations, format=fmt, format_options={},
                           time_control=tc or {"move_ms": 1000}, deals_path=deals_path)


def _pair_games(a, b, counts: dict) -> list[dict]:
    """Finished pairs of ``a`` against ``b``: ``counts`` by kind (WW, WD, WL, DD, LD, LL)."""
    rank = {"W": (1, 2), "L": (2, 1), "D": (1, 1)}
    games, group = [], 0
    for kind, n in counts.items():
        for _ in range(n):
            for rotation, r in enumerate(kind):
                x, y = rank[r]
                seats = [{"bot": a, "rank": x}, {"bot": b, "rank": y}]
                games.append({"group": group, "rotation": rotation, "seats": seats if rotation == 0 else seats[::-1]})
            group += 1
    return games


def test_the_fastchess_block_is_fastchess_own_example_to_the_character():
    # the block quoted in fishtest's worker (worker/games.py), from a fastchess run:
    # Ptnml [43, 61, 144, 55, 37] with WL/DD 4.76 is 119 WL and 25 DD pairs
    games = _pair_games("New-e443b2459e", "Base-e443b2459e",
                        {"WW": 37, "WD": 55, "WL": 119, "DD": 25, "LD": 61, "LL": 43})
    cfg = _cfg(["New-e443b2459e", "Base-e443b2459e"], options={"Threads": 1, "Hash": 16},
               tc={"move_ms": 1000, "game_ms": 601, "increment_ms": 6}, deals_path="/books/UHO_Lichess_4852_v1.epd")
    block = EngineOutput(cfg, "fastchess", games).interval()
    assert block == [
        "-" * 50,
        "Results of New-e443b2459e vs Base-e443b2459e (0.601+0.006, 1t, 16MB, UHO_Lichess_4852_v1.epd):",
        "Elo: -9.20 +/- 20.93, nElo: -11.50 +/- 26.11",
        "LOS: 19.41 %, DrawRatio: 42.35 %, PairsRatio: 0.88",
        "Games: 680, Wins: 248, Losses: 266, Draws: 166, Points: 331.0 (48.68 %)",
        "Ptnml(0-2): [43, 61, 144, 55, 37], WL/DD Ratio: 4.76",
        "-" * 50,
    ]


@pytest.mark.parametrize("wld, diff, error, nelo, nelo_error, los", [
    # fastchess's app/tests/elo_test.cpp: Stats(wins, losses, draws)
    ((136, 96, 111), 40.70, 30.43, 49.77, 36.77, "99.60 %"),
    ((76, 89, 123), None, None, -20.76, 40.13, "15.53 %"),
])
def test_fastchess_wdl_elo_is_fastchess_elo(wld, diff, error, nelo, nelo_error, los):
    s = Stats()
    s.wins, s.losses, s.draws = wld
    e = FastchessElo(s, penta=False)
    if diff is not None:
        assert float(e.diff) == pytest.approx(diff, rel=0.01) and float(e.error) == pytest.approx(error, rel=0.01)
    assert float(e.nelo) == pytest.approx(nelo, rel=0.01) and float(e.nelo_error) == pytest.approx(nelo_error, rel=0.01)
    assert e.los_text() == los


@pytest.mark.parametrize("penta, diff, error, nelo, nelo_error, los", [
    # fastchess's app/tests/elo_test.cpp: Stats(ll, ld, wl, dd, wd, ww)
    ((34, 54, 31, 32, 64, 75), 55.58, 27.65, 57.94, 28.28, "100.00 %"),
    ((332, 433, 457, 41, 333, 334), -8.64, 10.33, -9.17, 10.96, "5.05 %"),
])
def test_fastchess_pentanomial_elo_is_fastchess_elo(penta, diff, error, nelo, nelo_error, los):
    s = Stats()
    s.ll, s.ld, s.wl, s.dd, s.wd, s.ww = penta
    e = FastchessElo(s, penta=True)
    assert float(e.diff) == pytest.approx(diff, rel=0.01) and float(e.error) == pytest.approx(error, rel=0.01)
    assert float(e.nelo) == pytest.approx(nelo, rel=0.01) and float(e.nelo_error) == pytest.approx(nelo_error, rel=0.01)
    assert e.los_text() == los


def test_the_cutechess_lines_follow_cutechess_cli():
    # 10 wins, 5 losses, 5 draws: mu 0.625, Elo -400 log10(0.6) = 88.7; LOS from W - L
    e = CutechessElo(10, 5, 5)
    assert f"{e.diff():.1f}" == "88.7" and f"{e.los():.1f}" == "90.2"
    games = _pair_games("A", "B", {"WW": 3, "WD": 2, "DD": 1, "WL": 1, "LL": 1, "LD": 1})
    out = EngineOutput(_cfg(["A", "B"]), "cutechess", [])
    task = SimpleNamespace(group=0, rotation=0, bots=("A", "B"))
    assert out.finished(task, {**games[0], "reason": "game over after 9 rounds"}) == [
        "Finished game 1 (A vs B): 1-0 {game over after 9 rounds}", "Score of A vs B: 1 - 0 - 0  [1.000] 1"]
    out = EngineOutput(_cfg(["A", "B"]), "cutechess", games)
    block = out.interval()
    assert block[-1].startswith("Elo difference: ") and ELO_DIFF.match(block[-1])
    assert block[0].startswith("...      A playing White: ") and block[2].startswith("...      White vs Black: ")


def test_a_fault_is_said_in_cutechess_words_so_scripts_count_it():
    # fishtest counts time losses by "on time" and crashes by "disconnect" in these lines
    out = EngineOutput(_cfg(["A", "B"]), "fastchess", [])
    task = SimpleNamespace(group=0, rotation=1, bots=("B", "A"))
    game = {"group": 0, "rotation": 1, "seats": [{"bot": "B", "rank": 2}, {"bot": "A", "rank": 1}],
            "faults": [{"bot": "B", "verdict": "timeout", "move": 12}]}
    assert out.finished(task, game) == ["Finished game 2 (B vs A): 0-1 {B loses on time}"]
    game["faults"] = [{"bot": "B", "verdict": "crash", "move": 3}]
    assert out.finished(task, game)[0].endswith("0-1 {B disconnects}")


def test_arena_run_speaks_cutechess_too(tmp_path):
    (tmp_path / "t.yaml").write_text(f"name: t\nbots: [greedy, random]\ngames: 4\nexecutor: inprocess\n"
                                     f"replays: false\noutput: {tmp_path / 'out'}\n")
    r = run("run", tmp_path / "t.yaml", "--output-format", "cutechess", "--report-every", 2)
    lines = r.stdout.splitlines()
    assert [SCORE_OF.match(x).group(7) for x in lines if SCORE_OF.match(x)] == ["1", "2", "3", "4"]
    assert len([x for x in lines if ELO_DIFF.match(x)]) == 2 and lines[-1] == "Finished match"
