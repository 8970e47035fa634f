"""Tools for research on top of the environments: afterstates, expert labels, evaluation.

- :func:`afterstates`: for each legal index of the agent to move, the observation that
  agent has after taking it (the environment is searched with ``clone``/``restore`` and
  left as it was) — for afterstate value learning, or a one-step lookahead.
- :func:`expert_indices` and :func:`expert_index`: the move a built-in bot (or any
  policy with ``choose(game, rng)``) would play, as the index sequence the environments
  take — labels for imitation and DAgger.
- :func:`evaluate`: a policy against an opponent over seat-alternating games in-process,
  its win rate and points share with 95% Wilson intervals (``arena.rl.evaluate``).

Every function takes what the environments and the policy bot take: a policy is a bot
name, an ``obs, mask -> index`` function (``observation = "universal"`` honoured) or an
object with ``choose(game, rng)`` (:func:`arena.rl.selfplay.as_opponent`). Imports no
learning library.
"""

from __future__ import annotations

import math
import random

import numpy as np

from engine import Game

from .core import Table, rule_spec
from .selfplay import as_opponent, opponent_name

#: first deal of :func:`evaluate` (``bots.learned.train`` evaluates from the same deals)
EVAL_SEED = 900_000


def _table(env) -> Table:
    env = getattr(env, "unwrapped", env)
    return env if isinstance(env, Table) else env.table


def afterstates(env, indices=None) -> dict:
    """``{index: observation}`` for every legal index (or those of ``indices``) of the
    seat to move in ``env`` (a :class:`~arena.rl.aec.ProjectLEnv`,
    :class:`~arena.rl.gym.ProjectLGym` or :class:`~arena.rl.core.Table`): the
    observation (``{"observation", "action_mask"}``) that seat has right after the index
    is taken, before anyone else moves. A step inside a compound move (a placement of a
    master action) gives the position with the sequence under way. ``env`` is restored
    after each; its own random streams are not touched."""
    table = _table(env)
    game = table.game
    if game is None or game.is_over:
        return {}
    seat = game.to_move()
    snap = table.snapshot()
    if indices is None:
        indices = [int(i) for i in np.flatnonzero(table.mask())]
    out = {}
    try:
        for i in indices:
            table.restore(snap)
            table.play(int(i))
            out[int(i)] = table.observe(seat)
    finally:
        table.restore(snap)
    return out


def expert_indices(game, bot="planner-fast", rng: random.Random | None = None, table: Table | None = None) -> list[int]:
    """The index sequence of the move ``bot`` would play for the seat to move in
    ``game`` (its single action: one index; a master action, ghost action, level-up or
    finishing touches: the sequence, a final ``done`` left out when implied). Indices of
    ``table``'s action index (universal if it has one), else the rule set's own."""
    from .spaces import Chooser

    policy = as_opponent(bot)
    move = policy.choose(game, rng or random.Random(0))
    if table is not None:
        seq = Chooser(game, table.space).indices_of(move)
        return [int(table.universal.act_pos[i]) for i in seq] if table.universal is not None else seq
    return Chooser(game).indices_of(move)


def expert_index(env, bot="planner-fast", rng: random.Random | None = None) -> int:
    """The index ``bot`` would take now in ``env``. At the start of a decision it is the
    first index of the bot's move; inside a sequence already under way (a master action
    the learner began) it is the next index of the bot's sequence when what was chosen so
    far is its beginning, else ``done`` when legal, else the first legal index: the
    answer always respects the mask."""
    from .spaces import Chooser

    table = _table(env)
    game, chooser, space = table.game, table.chooser, table.space
    policy = as_opponent(bot)
    move = policy.choose(game, rng or random.Random(0))
    seq = Chooser(game, space).indices_of(move)
    replay = Chooser(game, space)
    here = _fingerprint(chooser)
    native = None
    for k, i in enumerate(seq):
        if _fingerprint(replay) == here:
            native = i
            break
        if replay.play(i) is not None:
            break
    mask = chooser.mask()
    if native is None or not mask[native]:
        native = space.DONE if mask[space.DONE] else int(np.flatnonzero(mask)[0])
    return int(table.universal.act_pos[native]) if table.universal is not None else int(native)


def _fingerprint(chooser) -> tuple:
    return (chooser.mode, tuple(chooser.chosen), tuple(chooser.steps), chooser.give, tuple(chooser.ghost_take),
            tuple(chooser.used))


def wilson(points: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of the share ``points / n``."""
    if n == 0:
        return 0.0, 1.0
    p = points / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / d
    return max(0.0, c - h), min(1.0, c + h)


def evaluate(policy, opponent="greedy", games: int = 100, rules="revised", players: int = 2,
             params: dict | None = None, seed: int = EVAL_SEED) -> dict:
    """``policy`` against ``opponent`` (every other seat) in ``games`` in-process games
    on deals ``seed``, ``seed + 1``, ..., the policy's seat rotating game by game.

    Returns ``games``, ``won``, ``tied``, ``lost`` (against every other seat: first place
    alone, shared, or not), ``win_rate`` and ``share`` (points: a win 1, a tie 1/2), each
    with its 95% Wilson interval (``win_low``/``win_high``, ``low``/``high``), and the
    mean score of each side. Deals from 900,000 are never dealt by the training scripts
    of this repository."""
    me_policy = as_opponent(policy)
    them = as_opponent(opponent)
    spec = rule_spec(rules, params)
    won = tied = 0
    mine = theirs = 0.0
    for g in range(games):
        game = Game.new(spec, players, seed + g)
        me = g % players
        rng = random.Random(seed + g)
        while not game.is_over:
            seat = game.to_move()
            game.apply((me_policy if seat == me else them).choose(game, rng))
        rank = game.result()["ranking"]
        scores = game.scores()
        others = [rank[s] for s in range(players) if s != me]
        won += all(rank[me] < r for r in others)
        tied += all(rank[me] <= r for r in others) and any(rank[me] == r for r in others)
        mine += scores[me]
        theirs += max(scores[s] for s in range(players) if s != me)
    points = won + tied / 2
    low, high = wilson(points, games)
    win_low, win_high = wilson(won, games)
    return {"policy": opponent_name(policy), "opponent": opponent_name(opponent), "rules": spec.label(),
            "games": games, "won": won, "tied": tied, "lost": games - won - tied,
            "win_rate": won / games if games else 0.0, "win_low": win_low, "win_high": win_high,
            "share": points / games if games else 0.0, "low": low, "high": high,
            "mean_score": mine / max(games, 1), "mean_best_other": theirs / max(games, 1)}
