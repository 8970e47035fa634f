"""A whole game end to end through the public API (the detailed rule tests are per module)."""

from arena.plugins import policy
from conftest import play_out


def test_greedy_game_ends_with_scores(new_game):
    game = play_out(new_game(players=2, seed=7), [policy("greedy"), policy("greedy")])
    res = game.result()
    assert game.is_over and not res["adjudicated"]
    assert sorted(res["ranking"]) in ([1, 2], [1, 1])
    assert max(res["scores"]) > 0
