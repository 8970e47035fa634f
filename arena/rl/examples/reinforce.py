"""Train a linear softmax policy with REINFORCE, numpy only, against the random bot.

::

    python -m arena.rl.examples.reinforce --episodes 2000 --out policy.npz
    python -m arena.rl.policy_bot arena.rl.examples.reinforce:load_policy policy.npz   # as a bot

The policy scores each legal index ``a`` as ``W[a] · x + b[a]``, where ``x`` is the
observation array squashed by ``tanh(obs / 8)``, and picks by softmax over the legal
indices (the mask). After each episode of the Gymnasium environment
(:mod:`arena.rl.gym`, base rules, two seats, the learner's seat alternating) every choice
is pushed toward or away by its final margin (its score minus the opponent's, in tens of
points; ``--reward outcome`` uses +1 won / -1 lost) minus a running baseline. Only
the rows of legal indices are touched, so a step costs a few hundred thousand
multiply-adds. Progress and a final in-process evaluation against random are printed;
the weights are saved as ``.npz`` (``W``, ``b``). A few minutes on one core beat random
in most games (``docs/learning.md``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np


def features(obs: np.ndarray) -> np.ndarray:
    """The policy's input: the observation squashed into (-1, 1)."""
    return np.tanh(obs / 8.0)


class LinearPolicy:
    """Softmax over the legal indices of ``W @ x + b``."""

    def __init__(self, actions: int, size: int, rng: np.random.Generator | None = None):
        self.W = np.zeros((actions, size), np.float32)
        self.b = np.zeros(actions, np.float32)
        self.rng = rng or np.random.default_rng(0)

    def probabilities(self, x: np.ndarray, legal: np.ndarray) -> np.ndarray:
        logits = self.W[legal] @ x + self.b[legal]
        logits -= logits.max()
        p = np.exp(logits)
        return p / p.sum()

    def sample(self, obs: np.ndarray, mask: np.ndarray):
        """(index, x, legal, probabilities) of a sampled choice."""
        legal = np.flatnonzero(mask)
        x = features(obs)
        p = self.probabilities(x, legal)
        k = int(self.rng.choice(len(legal), p=p))
        return int(legal[k]), x, legal, p, k

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The most probable legal index (how the trained policy plays)."""
        legal = np.flatnonzero(mask)
        logits = self.W[legal] @ features(obs) + self.b[legal]
        return int(legal[int(np.argmax(logits))])

    def update(self, trajectory, advantage: float, lr: float) -> None:
        """One REINFORCE step: raise (or lower) the log-probability of every choice made."""
        for x, legal, p, k in trajectory:
            g = -p * advantage
            g[k] += advantage
            self.W[legal] += lr * g[:, None] * x[None, :]
            self.b[legal] += lr * g

    def save(self, path: str) -> None:
        np.savez_compressed(path, W=self.W, b=self.b)

    @classmethod
    def load(cls, path: str) -> "LinearPolicy":
        data = np.load(path)
        policy = cls(*data["W"].shape)
        policy.W[:] = data["W"]
        policy.b[:] = data["b"]
        return policy


def load_policy(path: str) -> LinearPolicy:
    """The factory ``python -m arena.rl.policy_bot`` calls: the saved policy at ``path``."""
    return LinearPolicy.load(path)


def evaluate(policy, games: int = 100, opponent: str = "random", seed: int = 100_000) -> dict:
    """In-process games against ``opponent`` (seats alternating): wins, ties, losses."""
    from arena.plugins import policy as builtin
    from engine import Game, RuleSpec

    from ..policy_bot import InProcessPolicy

    me = InProcessPolicy(policy)
    out = {"games": games, "won": 0, "tied": 0, "lost": 0}
    for g in range(games):
        game = Game.new(RuleSpec(), 2, seed + g)
        seat = g % 2
        bots = {seat: me, 1 - seat: builtin(opponent)}
        rng = random.Random(seed + g)
        while not game.is_over:
            game.apply(bots[game.to_move()].choose(game, rng))
        rank = game.ranking()
        out["won" if rank[seat] < rank[1 - seat] else "tied" if rank[seat] == rank[1 - seat] else "lost"] += 1
    return out


def train(episodes: int = 2000, lr: float = 0.02, seed: int = 0, report: int = 250, log=print,
          reward_kind: str = "margin") -> LinearPolicy:
    """REINFORCE against the random bot under the base rules; returns the policy."""
    from ..gym import ProjectLGym

    env = ProjectLGym("random", rules="", players=2, seat="rotate", json_obs=False, reward=reward_kind)
    policy = LinearPolicy(env.action_space.n, env.observation_space["observation"].shape[0], np.random.default_rng(seed))
    baseline = 0.0
    wins = []
    t0 = time.perf_counter()
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed * 1_000_003 + episode)
        trajectory = []
        while True:
            index, x, legal, p, k = policy.sample(obs["observation"], obs["action_mask"])
            trajectory.append((x, legal, p, k))
            obs, reward, terminated, truncated, _ = env.step(index)
            if terminated or truncated:
                break
        if reward_kind != "outcome":
            reward /= 10.0  # points: keep the steps of the same size as with +-1
        policy.update(trajectory, reward - baseline, lr / max(1, len(trajectory)) ** 0.5)
        baseline += 0.02 * (reward - baseline)
        rank = env.table.game.ranking()
        wins.append(rank[env.seat] == 1 and rank.count(1) == 1)
        if report and (episode + 1) % report == 0:
            log(f"episode {episode + 1}: won {np.mean(wins[-report:]):.0%} of the last {report} against random "
                f"({time.perf_counter() - t0:.0f} s)")
    return policy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train a linear softmax policy with REINFORCE against random.")
    parser.add_argument("--episodes", type=int, default=2000, help="training games (default 2000)")
    parser.add_argument("--reward", default="margin", choices=["margin", "outcome"],
                        help="margin (score minus the opponent's) or outcome (+1/-1)")
    parser.add_argument("--lr", type=float, default=0.02, help="learning rate (default 0.02)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the sampling")
    parser.add_argument("--eval", type=int, default=100, help="evaluation games against random (default 100)")
    parser.add_argument("--out", default="policy.npz", help="where to save the weights (default policy.npz)")
    args = parser.parse_args(argv)
    policy = train(args.episodes, args.lr, args.seed, reward_kind=args.reward)
    policy.save(args.out)
    print(f"weights saved to {args.out}")
    if args.eval:
        res = evaluate(policy, args.eval)
        print(f"against random, {res['games']} games: won {res['won']}, tied {res['tied']}, lost {res['lost']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
