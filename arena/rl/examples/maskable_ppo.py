"""Train MaskablePPO (sb3-contrib) with self-play and shaped rewards; play the result as a bot.

::

    pip install '.[learn]'                       # sb3-contrib, stable-baselines3, a CPU torch
    python -m arena.rl.examples.maskable_ppo --imitate 1000 --lr 1e-4 --steps 200000 --out run
    arena match greedy --cmd "python -m arena.rl.policy_bot arena.rl.examples.maskable_ppo:load_policy run/final.zip" \\
        -n 20 --startup-ms 60000

The learner plays the Gymnasium environment (:mod:`arena.rl.gym`: base rules, two seats,
the seat rotating) with the universal observation and action index
(:mod:`arena.rl.universal`: values in [-1, 1], so no normalisation layer is needed, and
the policy plays any rule set), the ``outcome`` reward at the end and
``shaping="progress"`` during the game (``--scale`` times each gain of its score plus the
covered share of each unfinished puzzle's points, so every placement counts; over a game
they sum to ``--scale`` times its final score). Its opponents are drawn at every episode from an
:class:`~arena.rl.selfplay.OpponentPool`: ``greedy`` (``--builtins``) half the time and,
once taken, frozen snapshots of the learner itself (one every ``--snapshot-every`` steps,
the last ``--pool`` kept). An episode is cut after 200 learner steps (truncated): two
players who only pass would otherwise play to the rules' round limit.

With ``--imitate N`` the policy is first fitted to the moves of ``greedy`` in ``N``
greedy-against-greedy games (cross-entropy on the masked distribution, both seats
recorded through :meth:`~arena.rl.spaces.Chooser.indices_of`), so that PPO starts from a
policy that completes puzzles; without it, PPO from scratch did not win a game against
``greedy`` within 150,000 steps (``docs/learning.md``).

Every ``--eval-every`` steps the policy is saved (``OUT/step_N.zip``) and played,
sampling its legal indices as in training, against ``random``, ``greedy`` and ``planner-fast`` (``--eval-games``
games each, seats alternating, in-process); the rows go to ``OUT/curve.csv`` with the
process CPU time spent training so far (evaluation excluded). ``load_policy`` is the
factory the policy bot calls.
"""

from __future__ import annotations

import argparse
import copy
import csv
import random
import sys
import time
from pathlib import Path

import numpy as np

OPPONENTS = ("random", "greedy", "planner-fast")


def _torch_quiet(threads: int = 1) -> None:
    import torch
    torch.set_num_threads(threads)


class TorchPolicy:
    """A MaskablePPO policy as an ``obs, mask -> index`` function on universal arrays."""

    observation = "universal"

    def __init__(self, policy, deterministic: bool = True, name: str = "maskable-ppo"):
        self.policy = policy
        self.deterministic = deterministic
        self.name = name

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:
        action, _ = self.policy.predict(obs, action_masks=mask.astype(bool), deterministic=self.deterministic)
        return int(action)


def load_policy(path: str, play: str = "sample") -> TorchPolicy:
    """The factory ``python -m arena.rl.policy_bot`` calls: the MaskablePPO model saved at
    ``path``, sampling its legal indices (``play="argmax"``: the most probable one).

    Sampling is how the policy was trained and evaluated: its probability is spread over
    hundreds of placement indices, so the single most probable index is often ``pass``."""
    if play not in ("sample", "argmax"):
        raise ValueError(f"play must be sample or argmax, got {play!r}")
    _torch_quiet()
    from sb3_contrib import MaskablePPO
    model = MaskablePPO.load(path, device="cpu")
    return TorchPolicy(model.policy, deterministic=play == "argmax", name=Path(path).stem)


def make_env(pool, seed: int, scale: float, shaping: str = "progress", max_steps: int = 200):
    """The training environment: the observation array alone (the mask goes by ``action_masks``)."""
    import gymnasium as gym

    from ..gym import ProjectLGym

    class ArrayObservation(gym.ObservationWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.observation_space = env.observation_space["observation"]

        def observation(self, obs):
            return obs["observation"]

        def action_masks(self):
            return self.env.action_masks()

    env = ProjectLGym(opponents=pool, rules="", players=2, seat="rotate", json_obs=False, obs="universal",
                      shaping=shaping, shaping_scale=scale)
    env.reset(seed=seed)
    # a game of two passing players runs to the rules' round limit: cut such an episode
    # short (truncated, so PPO bootstraps its value) rather than fill rollouts with passes
    return gym.wrappers.TimeLimit(ArrayObservation(env), max_episode_steps=max_steps)


def evaluate(policy, opponent: str, games: int, seed: int = 900_000, rules: str = "", players: int = 2) -> dict:
    """In-process games of ``policy`` against ``opponent`` (seats alternating): won, tied, lost."""
    from arena.plugins import policy as builtin
    from engine import Game, RuleSpec

    from ..core import rule_spec
    from ..policy_bot import InProcessPolicy

    me = InProcessPolicy(policy)
    spec = rule_spec(rules) if rules else RuleSpec()
    out = {"games": games, "won": 0, "tied": 0, "lost": 0}
    for g in range(games):
        game = Game.new(spec, players, seed + g)
        seat = g % players
        bots = {s: (me if s == seat else builtin(opponent)) for s in range(players)}
        rng = random.Random(seed + g)
        while not game.is_over:
            game.apply(bots[game.to_move()].choose(game, rng))
        rank = game.ranking()
        best = min(r for s, r in enumerate(rank) if s != seat)
        out["won" if rank[seat] < best else "tied" if rank[seat] == best else "lost"] += 1
    return out


def imitation_data(games: int, teacher: str = "greedy", seed: int = 500_000, learner=None, mix: float = 0.5):
    """Universal observations, masks and the teacher's indices from ``games`` games of the
    teacher against itself (base rules, two seats; both seats recorded).

    With a ``learner`` (an ``obs, mask -> index`` policy), each move is the learner's
    with probability ``mix`` (not recorded) and the teacher's otherwise, so the teacher
    labels the states the learner's own mistakes lead to (DAgger)."""
    from arena.plugins import policy as builtin

    from ..core import Table
    from ..policy_bot import InProcessPolicy

    table = Table("", 2, json_obs=False, obs="universal")
    to_universal = table.universal.act_pos
    bot = builtin(teacher)
    student = InProcessPolicy(learner) if learner is not None else None
    xs, masks, ys = [], [], []
    for g in range(games):
        table.deal(seed + g)
        game = table.game
        rng = random.Random(seed + g)
        while not game.is_over:
            seat = game.to_move()
            if student is not None and rng.random() < mix:
                for native in table.chooser.indices_of(student.choose(game, rng)):
                    table.play(int(to_universal[native]))
                continue
            for native in table.chooser.indices_of(bot.choose(game, rng)):
                obs = table.observe(seat)
                index = int(to_universal[native])
                xs.append(obs["observation"])
                masks.append(obs["action_mask"].astype(bool))
                ys.append(index)
                table.play(index)
    return np.array(xs), np.array(masks), np.array(ys)


def imitate(model, data, epochs: int = 3, batch: int = 256, lr: float = 1e-3, log=print) -> None:
    """Fit the policy's masked action distribution to the teacher's indices (cross-entropy)."""
    import torch

    xs, masks, ys = data
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    rng = np.random.default_rng(0)
    for epoch in range(epochs):
        order = rng.permutation(len(ys))
        total = 0.0
        for at in range(0, len(order), batch):
            k = order[at:at + batch]
            obs = torch.as_tensor(xs[k])
            dist = policy.get_distribution(obs)
            dist.apply_masking(masks[k])
            loss = -dist.log_prob(torch.as_tensor(ys[k])).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(k)
        log(f"imitation epoch {epoch + 1}: cross-entropy {total / len(ys):.3f} over {len(ys)} decisions")
    with torch.no_grad():  # the distribution the policy keeps must hold no graph (snapshots deep-copy it)
        policy.get_distribution(torch.as_tensor(xs[:1]))


def train(steps: int, out: Path, eval_every: int, eval_games: int, snapshot_every: int, pool_size: int,
          scale: float, seed: int, opponents=OPPONENTS, log=print, n_steps: int = 1024, batch_size: int = 256,
          shaping: str = "progress", builtins=("greedy",), imitation_games: int = 0,
          learning_rate: float = 3e-4, imitation_epochs: int = 10, dagger: int = 0,
          eval_play: tuple[str, ...] = ("sample",), init: Path | None = None) -> Path:
    """Train, evaluate at checkpoints into ``out/curve.csv``; the final model's path.

    ``eval_play`` names how the evaluated policy picks its index, ``sample`` and/or
    ``argmax``: each gives its own columns (``argmax`` ones are prefixed ``argmax_``).
    ``init``: start from the policy of a model saved before (a checkpoint of another run,
    an imitation fit) instead of a fresh one."""
    _torch_quiet()
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    from ..selfplay import OpponentPool

    out.mkdir(parents=True, exist_ok=True)
    pool = OpponentPool(builtins=builtins, size=pool_size, builtin_share=0.5, latest_share=0.3)
    venv = DummyVecEnv([lambda: make_env(pool, seed, scale, shaping)])
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=batch_size, n_epochs=10, learning_rate=learning_rate,
                        gamma=0.99, gae_lambda=0.95, ent_coef=0.01, seed=seed, device="cpu",
                        policy_kwargs={"net_arch": [256, 256]}, verbose=0)
    if init is not None:
        model.policy.load_state_dict(MaskablePPO.load(init, device="cpu").policy.state_dict())
    curve = out / "curve.csv"
    fields = ["steps", "train_cpu_s", "wall_s"] + [f"{'' if play == 'sample' else play + '_'}{o}_{k}"
                                                   for play in eval_play for o in opponents
                                                   for k in ("won", "tied", "lost")]
    with curve.open("w", newline="") as f:
        csv.writer(f).writerow(fields)
    clock = {"eval_cpu": 0.0, "cpu0": time.process_time(), "wall0": time.time()}

    def checkpoint(n: int) -> None:
        c0 = time.process_time()
        path = out / f"step_{n}.zip"
        model.save(path)
        row = [n, round(c0 - clock["cpu0"] - clock["eval_cpu"], 1), round(time.time() - clock["wall0"], 1)]
        text = []
        for play in eval_play:
            frozen = TorchPolicy(copy.deepcopy(model.policy), deterministic=play == "argmax")
            for opp in opponents:
                r = evaluate(frozen, opp, eval_games)
                row += [r["won"], r["tied"], r["lost"]]
                text.append(f"{opp} {r['won']}-{r['tied']}-{r['lost']}" + (f" ({play})" if len(eval_play) > 1 else ""))
        with curve.open("a", newline="") as f:
            csv.writer(f).writerow(row)
        clock["eval_cpu"] += time.process_time() - c0
        log(f"step {n}: train CPU {row[1]:.0f} s; against " + ", ".join(text) + f"; pool draws {pool.draws}")

    class SelfPlay(BaseCallback):
        def _on_step(self) -> bool:
            n = self.num_timesteps
            if n % snapshot_every == 0:
                pool.add(TorchPolicy(copy.deepcopy(self.model.policy), deterministic=False), name=f"self@{n}")
            if n % eval_every == 0:
                checkpoint(n)
            return True

    if imitation_games:
        c0 = time.process_time()
        data = imitation_data(imitation_games)
        imitate(model, data, epochs=imitation_epochs, log=log)
        for k in range(dagger):  # the teacher labels the states the learner reaches
            more = imitation_data(imitation_games // 2, seed=600_000 + k * imitation_games,
                                  learner=TorchPolicy(model.policy, deterministic=False))
            data = tuple(np.concatenate([a, b]) for a, b in zip(data, more))
            imitate(model, data, epochs=max(1, imitation_epochs // 2), log=log)
        del data
        log(f"imitation of greedy: {imitation_games} games, {time.process_time() - c0:.0f} s CPU")
    checkpoint(0)
    model.learn(total_timesteps=steps, callback=SelfPlay())
    final = out / "final.zip"
    model.save(final)
    if steps % eval_every:
        checkpoint(steps)
    return final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train MaskablePPO with self-play and shaped rewards.")
    parser.add_argument("--steps", type=int, default=200_000, help="learner steps (default 200000)")
    parser.add_argument("--out", default="ppo-run", help="directory for checkpoints and curve.csv")
    parser.add_argument("--eval-every", type=int, default=20_000, help="steps between evaluations")
    parser.add_argument("--eval-games", type=int, default=40, help="games per opponent at each evaluation")
    parser.add_argument("--snapshot-every", type=int, default=10_000, help="steps between snapshots for the pool")
    parser.add_argument("--pool", type=int, default=5, help="snapshots kept in the pool")
    parser.add_argument("--scale", type=float, default=0.1, help="shaping scale: reward per point scored")
    parser.add_argument("--shaping", default="progress", choices=["progress", "score", "margin"],
                        help="the potential the shaped rewards follow (default progress)")
    parser.add_argument("--builtins", default="greedy",
                        help="built-in bots in the opponent pool, comma-separated (default greedy)")
    parser.add_argument("--imitate", type=int, default=0, metavar="GAMES",
                        help="first fit the policy to greedy's moves in this many greedy-vs-greedy games")
    parser.add_argument("--imitate-epochs", type=int, default=10, help="passes over the imitation data")
    parser.add_argument("--dagger", type=int, default=0, metavar="ROUNDS",
                        help="then ROUNDS times: half as many games where the policy makes half the moves, "
                             "greedy labelling the rest; refit on everything")
    parser.add_argument("--eval-play", default="sample", choices=["sample", "argmax", "both"],
                        help="how evaluated policies pick their index: sample (as in training), argmax, or both")
    parser.add_argument("--init", type=Path, default=None, metavar="MODEL",
                        help="start from the policy of a saved model (a checkpoint, e.g. another run's step_0.zip)")
    parser.add_argument("--lr", type=float, default=3e-4, help="PPO's learning rate (default 3e-4)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        print("this example needs the learn extra: pip install '.[learn]'", file=sys.stderr)
        return 2
    final = train(args.steps, Path(args.out), args.eval_every, args.eval_games, args.snapshot_every, args.pool,
                  args.scale, args.seed, shaping=args.shaping, builtins=tuple(args.builtins.split(",")),
                  imitation_games=args.imitate, learning_rate=args.lr,
                  imitation_epochs=args.imitate_epochs, dagger=args.dagger,
                  eval_play=("sample", "argmax") if args.eval_play == "both" else (args.eval_play,),
                  init=args.init)
    print(f"saved {final}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
