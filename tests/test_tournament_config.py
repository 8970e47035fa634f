"""Tournament files: every kind of mistake is an error naming the file, the line and the field."""

from __future__ import annotations

import textwrap

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.tournament.config import load_config
from arena.tournament.yamlsource import ConfigError

GOOD = """\
name: t
seats: 2
bots:
  - greedy
  - random
format: round-robin
rounds: 2
seed: 3
output: out
"""


def write(tmp_path, text: str):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def error_of(tmp_path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert info.value.exit_code == 2
    return message


def test_a_good_file_loads_with_defaults(tmp_path):
    cfg = load_config(write(tmp_path, GOOD))
    assert (cfg.name, cfg.seats, cfg.format, cfg.rounds, cfg.seed) == ("t", 2, "round-robin", 2, 3)
    assert [b.name for b in cfg.bots] == ["greedy", "random"]
    assert cfg.fault_policy == "forfeit" and cfg.sandbox == "auto" and cfg.executor == "local"
    assert cfg.time_control["move_ms"] == 1000


def test_unknown_top_level_key_names_line_and_field(tmp_path):
    msg = error_of(tmp_path, GOOD + "sede: 4\n")
    assert "line 10, field 'sede': unknown key" in msg


def test_unknown_nested_key_names_the_nested_field(tmp_path):
    msg = error_of(tmp_path, GOOD + "time_control:\n  move_ms: 100\n  moves_ms: 5\n")
    assert "line 12, field 'time_control.moves_ms': unknown key" in msg


def test_wrong_type_names_expected_type(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("rounds: 2", "rounds: two"))
    assert "line 7, field 'rounds': expected a whole number, got text ('two')" in msg


def test_wrong_type_in_a_bot_entry(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("  - random", "  - {bot: random, options: [1]}"))
    assert "line 5, field 'bots[1].options': expected a mapping" in msg


def test_missing_bot_executable(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("  - random", "  - {name: mine, cmd: ./no-such-bot --fast}"))
    assert "line 5, field 'bots[1].cmd'" in msg and "'./no-such-bot' was not found" in msg


def test_missing_program_on_the_path(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("  - random", "  - {cmd: [surely-not-a-program-xyz]}"))
    assert "field 'bots[1].cmd'" in msg and "not found on the PATH" in msg


def test_unknown_registered_bot(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("  - random", "  - randy"))
    assert "line 5, field 'bots[1].bot': unknown bot 'randy'" in msg


def test_unknown_variant_cites_r8(tmp_path):
    msg = error_of(tmp_path, GOOD + "rules:\n  variants: [revisited]\n")
    assert "line 11, field 'rules.variants': R8: unknown variant 'revisited'" in msg


def test_unknown_parameter_cites_r13(tmp_path):
    msg = error_of(tmp_path, GOOD + "rules:\n  params:\n    actions_per_trun: 4\n")
    assert "line 12, field 'rules.params.actions_per_trun': R13: unknown parameter" in msg


def test_impossible_parameter_value(tmp_path):
    msg = error_of(tmp_path, GOOD + "rules:\n  params:\n    actions_per_turn: 0\n")
    assert "field 'rules.params.actions_per_turn': R13:" in msg


def test_seat_count_above_four_cites_r1(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("seats: 2", "seats: 5"))
    assert "line 2, field 'seats': R1: a game has 1 to 4 seats, not 5" in msg


def test_more_seats_than_bots_in_a_round_robin(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("seats: 2", "seats: 3"))
    assert "field 'seats': 3 seats need at least 3 bots" in msg


def test_one_seat_without_the_solo_variant(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("seats: 2", "seats: 1"))
    assert "line 2, field 'seats'" in msg and "1 seat" in msg


def test_solo_variant_at_one_seat_is_valid(tmp_path):
    cfg = load_config(write(tmp_path, GOOD.replace("seats: 2", "seats: 1") + "rules: {variants: [solo]}\n"))
    assert cfg.seats == 1 and cfg.rules.variants == ("solo",)


def test_missing_name(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("name: t\n", ""))
    assert "field '(top level)': the field 'name' is missing" in msg


def test_duplicate_bot_names(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("  - random", "  - {name: greedy, bot: random}"))
    assert "line 5, field 'bots[1].name': two bots are named 'greedy'" in msg


def test_bad_choice_lists_the_choices(tmp_path):
    msg = error_of(tmp_path, GOOD + "fault_policy: forgive\n")
    assert "line 10, field 'fault_policy': 'forgive' is not one of forfeit, random" in msg


def test_unknown_format(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("format: round-robin", "format: ladder"))
    assert "line 6, field 'format.type': 'ladder' is not one of round-robin, gauntlet, sprt, swiss, knockout" in msg


def test_sprt_needs_two_bots_and_ordered_hypotheses(tmp_path):
    text = GOOD.replace("format: round-robin", "format: {type: sprt, elo0: 5, elo1: 0}").replace("rounds: 2", "games: 100")
    msg = error_of(tmp_path, text)
    assert "field 'format.elo1': elo1 (0.0) must be greater than elo0 (5.0)" in msg
    msg = error_of(tmp_path, GOOD.replace("format: round-robin", "format: sprt"))
    assert "field 'rounds': an sprt runs until the test decides" in msg


def test_yaml_syntax_error_names_the_line(tmp_path):
    msg = error_of(tmp_path, GOOD + "bots: [greedy\n")
    assert "line" in msg and "not valid YAML" in msg


def test_duplicate_key_is_an_error(tmp_path):
    msg = error_of(tmp_path, GOOD + "seed: 4\n")
    assert "line 10, field 'seed': the key is written twice" in msg


def test_dask_executor_needs_an_address(tmp_path):
    msg = error_of(tmp_path, GOOD + "executor: {type: dask}\n")
    assert "field 'executor': a dask executor needs 'address'" in msg


def test_inprocess_play_rejects_command_bots(tmp_path):
    text = GOOD.replace("  - random", "  - {name: sh, cmd: [sh, -c, 'true']}") + "executor: inprocess\n"
    msg = error_of(tmp_path, text)
    assert "field 'bots[1]': the inprocess executor plays built-in bots only" in msg


def test_cli_validate_exit_code_2_and_no_traceback(tmp_path):
    path = write(tmp_path, GOOD + "sede: 4\n")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "line 10, field 'sede': unknown key" in result.output
    assert "Traceback" not in result.output


def test_cli_validate_accepts_a_good_file(tmp_path):
    result = CliRunner().invoke(app, ["validate", str(write(tmp_path, GOOD))])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output and "4 games in 2 groups" in result.output


@pytest.mark.parametrize("name", ["demo.yaml", "round-robin-4p.yaml", "gauntlet.yaml", "sprt.yaml", "solo.yaml"])
def test_shipped_tournament_files_are_valid(name):
    from pathlib import Path
    cfg = load_config(Path(__file__).parent.parent / "tournaments" / name)
    assert cfg.name


def test_every_shipped_file_passes_arena_validate():
    from pathlib import Path
    for path in sorted((Path(__file__).parent.parent / "tournaments").glob("*.yaml")):
        result = CliRunner().invoke(app, ["validate", str(path)])
        assert result.exit_code == 0, (path.name, result.output)


def test_validate_checks_an_experiment_file_as_one(tmp_path):
    text = GOOD.replace("format: round-robin\nrounds: 2\n", "games: 4\n") + (
        "rule_sets:\n  - {name: base}\n  - {name: rev, variants: [revised]}\n")
    result = CliRunner().invoke(app, ["validate", str(write(tmp_path, text))])
    assert result.exit_code == 0, result.output
    assert "valid experiment" in result.output and "2 rule sets (base, rev)" in result.output
    bad = text.replace("variants: [revised]", "variants: [revisd]")
    result = CliRunner().invoke(app, ["validate", str(write(tmp_path, bad))])
    assert result.exit_code == 2 and "field 'rule_sets[1].variants'" in result.output


def test_a_tournament_file_with_rule_sets_points_to_arena_experiment(tmp_path):
    msg = error_of(tmp_path, GOOD + "rule_sets: []\n")
    assert "field 'rule_sets'" in msg and "arena experiment" in msg
