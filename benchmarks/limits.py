"""Hot paths against their limits (issue #26's table), ours and the limit interleaved in one run.

    python benchmarks/limits.py [--rows bandit,...,process_cpu,crafter] [--repeats 5] [--envs ..] [--agents ..] [--json out.json]

Each row times our path and its limit (the same computation as plain numpy, or the
reference library) alternately, ``--repeats`` times, and reports the ratio
ours / limit of each repeat as min / median / max (lower is better; 1.0 is the
limit). The load average is read before and after each row, since the machine is
shared. Rows:

- ``bandit``: Bandit-v0 through ``icmlgym.runner.execute`` against a plain numpy
  loop with the same agent logic and the same random streams (random, UCB1,
  Thompson), and against a Gymnasium loop of the same agent (``gym.make`` env).
- ``batched``: 64 seeds of an entry as 64 single runs (in process) against one
  batched run (``batch_seeds``); a throughput ratio, not a limit. Entries: Bandit,
  RepeatedGameVsFTRL, FairLinearBandit, the six cognitive task envs (``random``) and
  SketchAttack (every attacker). ``--clock cpu`` times both by the process's CPU time instead of
  the wall clock (steadier on a shared machine).
- ``batched_trained``: the cognitive envs' agents that train (RNN policy, SB3 PPO), run
  singly: the share of a run its evaluation takes, the most a batched evaluation could
  save; and whether a stacked RNN step equals N single ones bit for bit.
- ``hedge``: Hedge on a 3-player, 10-action game, RepeatedGame-v0 with
  ``games-hedge`` through the runner (episode time; the rounds alone, the episode
  minus its end-of-episode metrics; and the whole run with the env's construction)
  against plain numpy Hedge.
- ``games_metrics``: RepeatedGame-v0's end-of-episode metrics of one run (``PlayStatistics.metrics``,
  16 ``games-hedge`` episodes, the smoke game and 3x10) against the limit, HiGHS's own solve of
  each episode's CCE-distance LP (the model linprog builds, passed to a kept HiGHS object; no
  checks, no conversions); the same LP through ``scipy.optimize.linprog`` in the note.
- ``sketch``: ``BernoulliSketch.update_many`` (splitmix64 hash, threshold, counts of the
  sampled keys) against a plain numpy threshold sampler with a multiplicative hash.
- ``fairlin``: FairLin-UCB, FairLin-PE and LinNash per round through the runner
  against plain incremental LinUCB on the same instance and noise.
- ``process``: 200 short runs on the process executor (1 and 2 workers) against the same
  runs in a plain in-process loop: overhead per run.
- ``process_min``: one tiny run at a time through the process executor and in process,
  interleaved; min(pool) - min(in process) is the per-run overhead with the load filtered out.
- ``process_cpu``: the CPU time (not wall) the process executor adds per run: driver, fork
  server and workers of a sweep in a fresh interpreter, minus the same runs in process.
- ``crafter``: the Crafter backend against raw ``crafter.Env`` stepping (extra [craft]).

Not re-measured here (paths this issue does not touch; their own scripts measure
them): enumeration + fingerprints (``benchmarks/screening_perf.py``) and the
10^6-row leaderboard (``benchmarks/leaderboard_scoring.py``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import time
from typing import Callable

import numpy as np

ROW_NAMES = ("bandit", "batched", "batched_trained", "hedge", "games_metrics", "sketch", "fairlin", "process", "process_min", "process_cpu", "crafter")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Seconds(float):
    """What a timed function returns when it measured its own time (e.g. an episode's wall time)."""


def interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Seconds of each function per repeat; the functions alternate (order flipped every repeat).
    A function that returns :class:`Seconds` is timed by that value, any other by the clock."""
    out: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for r in range(repeats):
        for k in names if r % 2 == 0 else names[::-1]:
            t0 = time.perf_counter()
            got = fns[k]()
            elapsed = time.perf_counter() - t0
            out[k].append(float(got) if isinstance(got, Seconds) else elapsed)
    return out


def ratio_stats(ours: list[float], limit: list[float]) -> dict[str, float]:
    r = [a / b for a, b in zip(ours, limit)]
    return {"min": min(r), "median": statistics.median(r), "max": max(r)}


# ------------------------------------------------------------------------------------- bandit
def _plain_beta_blocks(rng: np.random.Generator, k: int, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thompson's block of Marsaglia-Tsang candidates (two per Gamma variate per step), as the agent draws it."""
    x = rng.standard_normal((steps, 2 * k, 2))
    u = rng.random((steps, 2 * k, 2))
    return x, u, u < 1.0 - 0.0331 * (x * x) ** 2


def _plain_gamma(rng: np.random.Generator, d: float, c: float) -> float:
    while True:
        x = float(rng.standard_normal())
        t = 1.0 + c * x
        if t <= 0.0:
            continue
        v = t * t * t
        u = float(rng.random())
        if u < 1.0 - 0.0331 * (x * x) * (x * x) or math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return d * v


def _plain_bandit(agent: str, means: np.ndarray, horizon: int, env_seed: int, agent_seed: int) -> float:
    """A plain numpy Bernoulli bandit loop with the agent's logic and its random streams."""
    from gymnasium.utils import seeding

    k = len(means)
    env_rng, _ = seeding.np_random(env_seed)
    rng = np.random.default_rng(agent_seed)
    counts = np.zeros(k)
    sums = np.zeros(k)
    regret = 0.0
    best = means.max()
    if agent == "random":
        space_rng = np.random.default_rng(int(rng.integers(2**31 - 1)))
    ties: list[float] = []  # UCB1's tie-break uniforms, 256 at a time
    steps = max(1, 4096 // (4 * k))  # Thompson's block: the steps per refill the agent uses
    d = np.full(2 * k, 2.0 / 3.0)  # Marsaglia-Tsang's d = shape - 1/3 and c = 1 / sqrt(9 d), Beta(1, 1) priors
    c = 1.0 / np.sqrt(9.0 * d)
    pos = steps
    for t in range(horizon):
        if agent == "random":
            a = int(space_rng.integers(k))
        elif agent == "ucb1":
            if t < k:
                a = t
            else:
                v = sums / counts + np.sqrt(2.0 * np.log(t) / counts)
                a = int(v.argmax())
                if not ties:  # one tie-break uniform per decision, tie or not, 256 at a time, as the agent
                    ties = rng.random(256).tolist()[::-1]
                u = ties.pop()
                if np.count_nonzero(v == v[a]) > 1:
                    tied = np.flatnonzero(v == v[a])
                    a = int(tied[int(u * len(tied))])
        else:  # bandit-thompson: Beta samples from blocks of Marsaglia-Tsang candidates
            if pos == steps:
                xs, us, sq = _plain_beta_blocks(rng, k, steps)
                pos = 0
            x, u = xs[pos], us[pos]
            tt = 1.0 + c[:, None] * x
            v = tt * tt * tt
            with np.errstate(invalid="ignore"):
                ok = (tt > 0) & (sq[pos] | (np.log(u) < 0.5 * x * x + d[:, None] * (1.0 - v + np.log(v))))
            pos += 1
            g = d * np.where(ok[:, 0], v[:, 0], v[:, 1])
            for j in np.flatnonzero(~(ok[:, 0] | ok[:, 1])):
                g[j] = _plain_gamma(rng, d[j], c[j])
            a = int(np.argmax(g[:k] / (g[:k] + g[k:])))
        r = float(env_rng.random() < means[a])
        counts[a] += 1
        sums[a] += r
        if agent == "bandit-thompson":
            for j, s in ((a, 1.0 + sums[a]), (a + k, 1.0 + counts[a] - sums[a])):
                d[j] = s - 1.0 / 3.0
                c[j] = 1.0 / math.sqrt(9.0 * d[j])
        regret += best - means[a]
    return regret


def row_bandit(args) -> list[dict]:
    import gymnasium as gym

    import icmlgym
    from icmlgym.agents import AgentSpec, load_agent
    from icmlgym.runner import RunTask, execute, episode_seed

    horizon = args.horizon
    means = icmlgym.make("icmlgym/Bandit-v0").unwrapped.means
    rows = []
    for agent in ("random", "ucb1", "bandit-thompson"):
        task = RunTask("icmlgym/Bandit-v0", agent, 0, "smoke", {"horizon": horizon}, episodes=1)
        execute(task)  # warm caches once, as a sweep would

        def ours() -> float:
            rec = execute(task)
            assert rec.status == "ok", rec.error
            return Seconds(rec.episodes[0].wall_time)

        def plain() -> None:
            _plain_bandit(agent, means, horizon, episode_seed(0, 0, "env"), episode_seed(0, 0, "agent"))

        env = gym.make("icmlgym/Bandit-v0", horizon=horizon)
        loaded = load_agent(agent)

        def gym_loop() -> None:
            a = loaded()
            a.reset(episode_seed(0, 0, "agent"), AgentSpec("icmlgym/Bandit-v0", env.observation_space, env.action_space))
            obs, info = env.reset(seed=episode_seed(0, 0, "env"))
            done = False
            while not done:
                act = a.act(obs, info)
                nxt, r, term, trunc, info = env.step(act)
                a.update(obs, act, r, nxt, term, trunc, info)
                obs, done = nxt, term or trunc

        # the plain loop plays exactly the runner's episode (same regret) for UCB1 and Thompson
        rec = execute(task)
        if agent != "random":
            same = _plain_bandit(agent, means, horizon, episode_seed(0, 0, "env"), episode_seed(0, 0, "agent"))
            assert abs(same - rec.episodes[0].metrics["pseudo_regret"]) < 1e-6, (agent, same)
        before = load()
        t = interleaved({"ours": ours, "plain": plain, "gym": gym_loop}, args.repeats)
        after = load()
        us = {k: 1e6 * min(v) / horizon for k, v in t.items()}
        rows.append({"row": f"runner vs plain numpy loop, {agent} (Bandit-v0, us/step)", "ours": us["ours"], "limit": us["plain"],
                     **ratio_stats(t["ours"], t["plain"]), "load": f"{before} -> {after}"})
        rows.append({"row": f"runner vs gym loop of the same agent, {agent}", "ours": us["ours"], "limit": us["gym"],
                     **ratio_stats(t["ours"], t["gym"]), "load": f"{before} -> {after}"})
    return rows


# ------------------------------------------------------------------------------------- batched
def _cpu_seconds(f: Callable[[], object]) -> Callable[[], Seconds]:
    """``f`` timed by this process's CPU time (all its threads) instead of the wall clock: on a loaded
    machine the wall clock also counts the time other processes held the cores."""
    def timed() -> Seconds:
        c0 = time.process_time()
        f()
        return Seconds(time.process_time() - c0)
    return timed


def row_batched(args) -> list[dict]:
    from icmlgym.runner import execute
    from icmlgym.runner.api import make_tasks
    from icmlgym.runner.batched import execute_batch

    previous_thompson = _previous_thompson()
    rows = []
    entries = [("icmlgym/Bandit-v0", a) for a in ("random", "ucb1", "bandit-thompson")]
    entries += [("icmlgym/RepeatedGameVsFTRL-v0", a) for a in ("games-exp3", "ucb1", "random")]
    entries += [("icmlgym/FairLinearBandit-v0", a) for a in
                ("fairbandit-fairlin-ucb", "fairbandit-linucb", "fairbandit-etc", "fairbandit-fairlin-pe", "fairbandit-linnash", "random")]
    entries += [("icmlgym/StabilityPrediction-v0", a) for a in ("games-sink-predictor", "games-nash-predictor", "random")]
    from icmlgym.envs.cognitive import TASK_ENVS

    entries += [(f"icmlgym/{name}-v0", "random") for name in TASK_ENVS]  # ragged ends: trials end at the agent's answer
    from icmlgym.envs.sketch import ATTACKERS

    entries += [("icmlgym/SketchAttack-v0", a) for a in ATTACKERS]  # ragged ends: success or a spent budget
    entries += [("icmlgym/RepeatedGame-v0", a) for a in ("games-hedge", "games-ftrl-euclidean")]  # multi-agent, full information
    entries = [(e, a, {}) for e, a in entries]
    # the smoke game at the standard tier's horizon: the rounds, not the end-of-episode metrics, dominate a run
    entries += [("icmlgym/RepeatedGame-v0", "games-hedge", {"horizon": 5000})]
    if args.agents:
        entries = [(e, a, k) for e, a, k in entries if a in args.agents.split(",")]
    if args.envs:
        entries = [(e, a, k) for e, a, k in entries if e.split("/")[1] in args.envs.split(",")]
    for env_id, agent, env_kwargs in entries:
        tasks = make_tasks(env_id, agent, seeds=64, tier="smoke", env_kwargs=env_kwargs)
        execute_batch(tasks[:2])
        fns = {"single": lambda: [execute(x) for x in tasks], "batched": lambda: execute_batch(tasks)}
        if agent == "bandit-thompson":  # also the agent as it was: one Generator.beta call per step (no batched form)
            previous = make_tasks(env_id, previous_thompson, seeds=64, tier="smoke")
            fns["previous single"] = lambda: [execute(x) for x in previous]
        if args.clock == "cpu":
            fns = {k: _cpu_seconds(f) for k, f in fns.items()}
        before = load()
        t = interleaved(fns, max(2, args.repeats // 2))
        after = load()
        where = f"{env_id.split('/')[1]} smoke" + "".join(f", {k}={v}" for k, v in env_kwargs.items())
        unit = "runs per CPU-s" if args.clock == "cpu" else "runs/s"
        rows.append({"row": f"64 seeds batched vs 64 single runs in process, {agent} ({where}; {unit})",
                     "ours": 64 / min(t["batched"]), "limit": 64 / min(t["single"]),
                     **ratio_stats(t["batched"], t["single"]), "load": f"{before} -> {after}",
                     "note": f"throughput x{min(t['single']) / min(t['batched']):.1f}"})
        if "previous single" in t:
            rows.append({"row": f"  the same batch vs 64 single runs of the previous {agent} (Generator.beta per step)",
                         "ours": 64 / min(t["batched"]), "limit": 64 / min(t["previous single"]),
                         **ratio_stats(t["batched"], t["previous single"]), "load": f"{before} -> {after}",
                         "note": f"throughput x{min(t['previous single']) / min(t['batched']):.1f}; "
                                 f"single runs now / before x{min(t['single']) / min(t['previous single']):.2f} time"})
    return rows


def row_batched_trained(args) -> list[dict]:
    """The cognitive envs' two agents that train, run singly: the share of a run its evaluation episodes take.

    The batched runner excludes agents that train; a twin that trained each seed as its single run does
    and then played the N trained policies in lock step could save at most this share (the evaluation
    in zero time), so the row reads as an upper bound on that gain. Also checked: whether one step of N
    rate RNNs computed stacked equals N single steps bit for bit (numpy ``matmul`` / ``einsum``, torch
    ``bmm``; log-normal signed weights of the policy's size, 32 units)."""
    from icmlgym.runner import execute
    from icmlgym.runner.api import make_tasks

    rows = []
    envs = ["icmlgym/CogPerceptualDecision-v0", "icmlgym/CogIntervalTiming-v0"]
    if args.envs:
        envs = [e for e in envs if e.split("/")[1] in args.envs.split(",")]
    for agent in ("cognitive-rnn-policy", "sb3-ppo"):
        if args.agents and agent not in args.agents.split(","):
            continue
        for env_id in envs:
            before = load()
            runs = [execute(t) for t in make_tasks(env_id, agent, seeds=args.trained_seeds, tier="smoke")]
            after = load()
            bad = [r.error for r in runs if r.status != "ok"]
            if bad:
                raise RuntimeError(f"{agent} on {env_id}: {bad[0]}")
            total = [r.wall_time for r in runs]
            evals = [sum(e.wall_time for e in r.episodes) for r in runs]
            share = statistics.median(e / t for e, t in zip(evals, total))
            rows.append({"row": f"evaluation share of a single run, {agent} ({env_id.split('/')[1]} smoke, {len(runs)} seeds; s per run)",
                         "ours": statistics.median(evals), "limit": statistics.median(total), **ratio_stats(evals, total),
                         "load": f"{before} -> {after}",
                         "note": f"a lock-step evaluation saves at most {100 * share:.1f}% (x{1 / (1 - share):.3f} throughput)"})
    rng = np.random.default_rng(0)
    n, h, d = 64, 32, 3
    w = rng.lognormal(size=(n, h, h)) * rng.choice([-1.0, 1.0], size=(n, h, h))
    r = rng.random((n, h))
    single = np.stack([w[i] @ r[i] for i in range(n)])
    stacked = {"np.matmul": (w @ r[:, :, None])[:, :, 0], "np.einsum": np.einsum("nij,nj->ni", w, r)}
    try:
        import torch

        stacked["torch.bmm"] = torch.bmm(torch.as_tensor(w), torch.as_tensor(r)[:, :, None])[:, :, 0].numpy()
    except ImportError:
        pass
    diff = ", ".join(f"{k} {np.count_nonzero(v != single)}" for k, v in stacked.items())
    rows.append({"row": f"stacked RNN step vs {n} single matvecs ({h} units): entries that differ of {single.size}",
                 "ours": float(np.count_nonzero(stacked["np.einsum"] != single)), "limit": 0.0,
                 "min": 0.0, "median": 0.0, "max": 0.0, "load": load(), "note": diff})
    return rows


def _previous_thompson():
    from icmlgym.baselines.generic import DiscreteValueAgent

    class GeneratorBetaThompson(DiscreteValueAgent):
        """Bandit-v0's Thompson agent before its Beta samples moved to blocks: one ``Generator.beta`` call per step."""

        name = "bandit-thompson-generator-beta"

        def act(self, obs, info):
            return self.start + int(np.argmax(self.np_random.beta(1.0 + self.sums, 1.0 + (self.counts - self.sums))))

    return GeneratorBetaThompson


# ------------------------------------------------------------------------------------- hedge
def plain_numpy_hedge(payoffs: np.ndarray, x0: list[np.ndarray], rounds: int, eta: float = 0.1) -> list[np.ndarray]:
    scores = [np.log(x) / eta for x in x0]
    subs = ["abc,b,c->a", "abc,a,c->b", "abc,a,b->c"]
    xs = list(x0)
    for t in range(rounds):
        if t > 0:
            xs = []
            for s in scores:
                w = np.exp(eta * (s - s.max()))
                xs.append(w / w.sum())
        us = [
            np.einsum(subs[0], payoffs[0], xs[1], xs[2]),
            np.einsum(subs[1], payoffs[1], xs[0], xs[2]),
            np.einsum(subs[2], payoffs[2], xs[0], xs[1]),
        ]
        scores = [s + u for s, u in zip(scores, us)]
    return xs


def row_hedge(args) -> list[dict]:
    import icmlgym
    from icmlgym.envs.games.metrics import PlayStatistics
    from icmlgym.envs.games.normal_form import random_game

    T = args.rounds
    game = random_game(10, 3, seed=0)
    x0 = [np.full(10, 0.1) for _ in range(3)]
    kw = {"n_players": 3, "n_actions": 10, "horizon": T}
    holder: dict[str, float] = {}
    # the episode's end-of-play metrics (HiGHS's CCE-distance LP over the 1,000 profiles, the tail support,
    # closure and leak) are timed apart, so that the rounds alone can be set against plain Hedge's rounds
    metrics = PlayStatistics.metrics

    def timed_metrics(self):
        t0 = time.perf_counter()
        try:
            return metrics(self)
        finally:
            holder["metrics"] = holder.get("metrics", 0.0) + time.perf_counter() - t0

    def env_run() -> float:
        holder["metrics"] = 0.0
        t0 = time.perf_counter()
        (rec,) = icmlgym.run("icmlgym/RepeatedGame-v0", "games-hedge", seeds=1, env_kwargs=kw)
        assert rec.status == "ok", rec.error
        holder["whole"] = time.perf_counter() - t0
        return Seconds(rec.episodes[0].wall_time)

    whole: list[float] = []
    rounds: list[float] = []

    def env_episode() -> float:
        ep = env_run()
        whole.append(holder["whole"])
        rounds.append(ep - holder["metrics"])
        return ep

    before = load()
    PlayStatistics.metrics = timed_metrics
    try:
        t = interleaved({"ours": env_episode, "plain": lambda: plain_numpy_hedge(np.asarray(game.payoffs), x0, T)}, args.repeats)
    finally:
        PlayStatistics.metrics = metrics
    after = load()
    us = {k: 1e6 * min(v) / T for k, v in t.items()}
    return [
        {"row": "Hedge 3x10 round through RepeatedGame-v0 + runner vs plain numpy Hedge (us/round, episode)", "ours": us["ours"],
         "limit": us["plain"], **ratio_stats(t["ours"], t["plain"]), "load": f"{before} -> {after}"},
        {"row": "  the same, rounds only (episode minus its end-of-episode metrics)", "ours": 1e6 * min(rounds) / T,
         "limit": us["plain"], **ratio_stats(rounds, t["plain"]), "load": f"{before} -> {after}",
         "note": f"metrics {1e3 * min(e - r for e, r in zip(t['ours'], rounds)):.0f} ms per episode"},
        {"row": "  the same, whole run (env construction, preference graph, record)", "ours": 1e6 * min(whole) / T,
         "limit": us["plain"], **ratio_stats(whole, t["plain"]), "load": f"{before} -> {after}"},
    ]


# ------------------------------------------------------------------------------------- games_metrics
def _bare_highs_cce(G: np.ndarray) -> Callable[[np.ndarray], float]:
    """The limit of a CCE-distance LP: HiGHS's own solve of the model linprog builds (kept object, no checks)."""
    from scipy import sparse
    from scipy.optimize._highspy import _core as h

    from icmlgym.envs.games.metrics import cce_program

    a_ub, a_eq, c = cce_program(G)
    a = sparse.csc_array(sparse.vstack((sparse.coo_array(a_ub), sparse.coo_array(a_eq))))
    lp = h.HighsLp()
    lp.num_col_ = lp.a_matrix_.num_col_ = len(c)
    lp.num_row_ = lp.a_matrix_.num_row_ = a.shape[0]
    lp.a_matrix_.format_ = h.MatrixFormat.kColwise
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = c, np.zeros(len(c)), np.full(len(c), h.kHighsInf)
    lp.row_lower_ = np.concatenate([np.full(a.shape[0] - 1, -h.kHighsInf), [1.0]])
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = a.indptr, a.indices, a.data
    opts = h.HighsOptions()
    opts.presolve, opts.output_flag, opts.log_to_console = "on", False, False
    opts.simplex_strategy = h.simplex_constants.SimplexStrategy.kSimplexStrategyDual
    solver = h._Highs()
    solver.passOptions(opts)

    def solve(sigma: np.ndarray) -> float:
        lp.row_upper_ = np.concatenate([-sigma, sigma, np.zeros(G.shape[0]), [1.0]])
        solver.passModel(lp)
        solver.run()
        return solver.getInfo().objective_function_value

    return solve


def row_games_metrics(args) -> list[dict]:
    import icmlgym
    from scipy.optimize import linprog

    from icmlgym.envs.games.metrics import PlayStatistics, cce_program

    rows = []
    for kw in ({"n_players": 3, "n_actions": 3, "horizon": 300}, {"n_players": 3, "n_actions": 10, "horizon": 300}):
        played: list = []
        metrics = PlayStatistics.metrics
        PlayStatistics.metrics = lambda self: played.append(self) or metrics(self)  # the env's statistics keep their sums
        try:
            icmlgym.run("icmlgym/RepeatedGame-v0", "games-hedge", seeds=16, env_kwargs=kw)
        finally:
            PlayStatistics.metrics = metrics
        sigmas = [st.total / st.t for st in played]
        G = played[0].G
        bare, program = _bare_highs_cce(G), cce_program(G)
        a_ub, a_eq, c = program

        def via_linprog() -> None:
            for s in sigmas:
                linprog(c, A_ub=a_ub, b_ub=np.concatenate([-s, s, np.zeros(G.shape[0])]), A_eq=a_eq, b_eq=[1.0],
                        bounds=[(0, None)] * len(c), method="highs")

        before = load()
        t = interleaved({"ours": lambda: [st.metrics() for st in played], "limit": lambda: [bare(s) for s in sigmas],
                         "linprog": via_linprog}, args.repeats)
        after = load()
        ms = {k: 1e3 * min(v) / len(played) for k, v in t.items()}
        rows.append({"row": f"RepeatedGame-v0 end-of-episode metrics, {kw['n_players']}x{kw['n_actions']} (ms per episode) "
                            "vs the LP's bare HiGHS solve", "ours": ms["ours"], "limit": ms["limit"],
                     **ratio_stats(t["ours"], t["limit"]), "load": f"{before} -> {after}",
                     "note": f"the LP through linprog {ms['linprog']:.2f} ms"})
    return rows


# ------------------------------------------------------------------------------------- sketch
_MULT = np.uint64(0x9E3779B97F4A7C15)


def plain_threshold_sampler(keys: np.ndarray, p: float, held: dict) -> None:
    """The limit: a multiplicative hash, the threshold ``u < p``, the sampled keys' counts into a dict."""
    u = ((keys.view(np.uint64) * _MULT) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    uk, counts = np.unique(keys[u < p], return_counts=True)
    old = np.fromiter((held.get(x, 0) for x in uk.tolist()), dtype=np.int64, count=len(uk))
    held.update(zip(uk.tolist(), (old + counts).tolist()))


def row_sketch(args) -> list[dict]:
    from icmlgym.envs.sketch.sketches import BernoulliSketch

    keys = np.random.default_rng(0).integers(0, 2**40, args.sketch_n, dtype=np.int64)
    p = 0.01

    def ours() -> None:
        BernoulliSketch("cardinality", p=p, seed=1).update_many(keys)

    before = load()
    t = interleaved({"ours": ours, "plain": lambda: plain_threshold_sampler(keys, p, {})}, args.repeats)
    after = load()
    rate = {k: len(keys) / min(v) / 1e6 for k, v in t.items()}
    return [{"row": "sketch update_many (Bernoulli threshold sampling, p=0.01) vs plain numpy threshold sampler, "
                    "multiplicative hash (M updates/s)", "ours": rate["ours"],
             "limit": rate["plain"], **ratio_stats(t["ours"], t["plain"]), "load": f"{before} -> {after}"}]


# ------------------------------------------------------------------------------------- fairlin
def _radius(t: int, d: int, sd: float, arm_norm: float, delta: float) -> float:
    return sd * math.sqrt(2 * math.log(1 / delta) + d * math.log(1 + t * arm_norm**2 / d)) + 1.0


def plain_incremental_linucb(X: np.ndarray, means: np.ndarray, noise: np.ndarray) -> float:
    T, d = len(noise), X.shape[1]
    sd, delta = math.sqrt(0.5), 1.0 / T
    arm_norm = float(np.sqrt((X**2).sum(axis=1).max()))
    Vinv = np.eye(d)
    b = np.zeros(d)
    w = np.einsum("ij,ij->i", X, X)
    for t in range(T):
        theta = Vinv @ b
        a = int(np.argmax(X @ theta + _radius(t, d, sd, arm_norm, delta) * np.sqrt(np.maximum(w, 0.0))))
        r = means[a] + noise[t]
        x = X[a]
        u = Vinv @ x
        denom = 1.0 + x @ u
        Vinv -= np.outer(u, u) / denom
        xu = X @ u
        w -= xu * xu / denom
        b += r * x
    return 0.0


def row_fairlin(args) -> list[dict]:
    import icmlgym
    from icmlgym.envs.fairbandit.fair_linear_bandit import FairLinearBanditEnv

    kw = {"horizon": args.fair_T, "n_arms": 1000, "dim": 10}
    env = FairLinearBanditEnv(**kw)
    env.reset(seed=0)
    X, means, noise = env.arms, env.means, env._draws.copy()
    rows = []
    for agent in ("fairbandit-fairlin-ucb", "fairbandit-fairlin-pe", "fairbandit-linnash"):
        def ours() -> float:
            (rec,) = icmlgym.run("icmlgym/FairLinearBandit-v0", agent, seeds=[0], env_kwargs=kw)
            assert rec.status == "ok", rec.error
            return Seconds(rec.episodes[0].wall_time)

        before = load()
        t = interleaved({"ours": ours, "plain": lambda: plain_incremental_linucb(X, means, noise)}, args.repeats)
        after = load()
        us = {k: 1e6 * min(v) / args.fair_T for k, v in t.items()}
        rows.append({"row": f"{agent} vs plain incremental LinUCB (us/round, K=1000, d=10)", "ours": us["ours"], "limit": us["plain"],
                     **ratio_stats(t["ours"], t["plain"]), "load": f"{before} -> {after}"})
    return rows


# ------------------------------------------------------------------------------------- process
def row_process(args) -> list[dict]:
    from icmlgym.runner import execute
    from icmlgym.runner.api import make_tasks
    from icmlgym.runner.executors import ProcessExecutor

    agents = ("random", "ucb1", "epsilon-greedy", "bandit-thompson")
    tasks = [t for a in agents for t in make_tasks("icmlgym/Bandit-v0", a, seeds=args.runs // len(agents))]
    one, two = ProcessExecutor(workers=1), ProcessExecutor(workers=2)
    list(one.imap(tasks[:2]))  # start the warm server once (as a sweep's first runs do)

    def pool(ex) -> Callable[[], None]:
        def sweep() -> None:
            recs = list(ex.imap(tasks))
            assert all(r.status == "ok" for r in recs), [r.error for r in recs if r.status != "ok"][:1]
        return sweep

    before = load()
    t = interleaved({"one": pool(one), "two": pool(two), "plain": lambda: [execute(x) for x in tasks]}, max(2, args.repeats // 2))
    after = load()
    n = len(tasks)
    over1 = [(w - p) / n * 1e3 for w, p in zip(t["one"], t["plain"])]
    over2 = [(w * 2 - p) / n * 1e3 for w, p in zip(t["two"], t["plain"])]
    note = f"sweep with 2 workers at {min(t['plain']) / min(t['two']):.2f}x the speed of a single-core loop"
    return [
        {"row": f"process executor, {n} short runs, 1 worker: overhead per run (ms) = (wall - plain loop) / runs",
         "ours": statistics.median(over1), "limit": 0.0, "min": min(over1), "median": statistics.median(over1), "max": max(over1),
         "load": f"{before} -> {after}", "note": f"plain loop {1e3 * min(t['plain']) / n:.1f} ms/run"},
        {"row": f"process executor, {n} short runs, 2 workers: overhead per run (ms) = (wall x 2 - plain loop) / runs",
         "ours": statistics.median(over2), "limit": 0.0, "min": min(over2), "median": statistics.median(over2), "max": max(over2),
         "load": f"{before} -> {after}", "note": note},
    ]


def row_process_min(args) -> list[dict]:
    """Per-run overhead with the load filtered out: one short run at a time through the process
    executor and in process, interleaved; the minimum over many runs estimates the cost on an idle
    machine (scheduling delays on a loaded one only ever add to a run's time)."""
    from icmlgym.runner import execute
    from icmlgym.runner.api import make_tasks
    from icmlgym.runner.executors import ProcessExecutor

    tasks = make_tasks("icmlgym/Bandit-v0", "ucb1", seeds=args.runs, env_kwargs={"horizon": 10})
    ex = ProcessExecutor(workers=1)
    list(ex.imap(tasks[:1]))  # start the warm server once
    pool, plain = [], []
    before = load()
    for t in tasks:
        t0 = time.perf_counter()
        (rec,) = list(ex.imap([t]))
        pool.append(time.perf_counter() - t0)
        assert rec.status == "ok", rec.error
        t0 = time.perf_counter()
        execute(t)
        plain.append(time.perf_counter() - t0)
    after = load()
    over = 1e3 * (min(pool) - min(plain))
    q = lambda xs, f: 1e3 * float(np.quantile(xs, f))  # noqa: E731
    return [{"row": f"process executor, one short run at a time ({len(tasks)} runs): overhead per run (ms), min(pool) - min(in process)",
             "ours": over, "limit": 0.0, "min": over, "median": q(pool, 0.5) - q(plain, 0.5), "max": q(pool, 0.9) - q(plain, 0.9),
             "load": f"{before} -> {after}",
             "note": f"min / median / 90th pct run: pool {1e3 * min(pool):.1f} / {q(pool, 0.5):.1f} / {q(pool, 0.9):.1f} ms, "
                     f"in process {1e3 * min(plain):.1f} / {q(plain, 0.5):.1f} / {q(plain, 0.9):.1f} ms"}]


_CPU_PROBE = """
import os, sys
from multiprocessing import forkserver
from icmlgym.runner.api import make_tasks
from icmlgym.runner.executors import ProcessExecutor
if __name__ == "__main__":
    tasks = make_tasks("icmlgym/Bandit-v0", "ucb1", seeds=int(sys.argv[1]), env_kwargs={"horizon": 10})
    recs = list(ProcessExecutor(workers=1).imap(tasks))
    assert all(r.status == "ok" for r in recs)
    forkserver._forkserver._stop()  # wait for the fork server: its workers' CPU time then counts as ours
    t = os.times()
    print(t.user + t.system + t.children_user + t.children_system)
"""


def row_process_cpu(args) -> list[dict]:
    """CPU seconds (not wall) per run that the process executor adds, load-independent: a sweep of
    n tiny runs in a fresh interpreter, CPU of the driver, the fork server and every worker, at two
    sizes (the difference removes start-up), minus the same runs' CPU in process."""
    import sys
    import tempfile

    from icmlgym.runner import execute
    from icmlgym.runner.api import make_tasks

    with tempfile.TemporaryDirectory() as d:
        probe = os.path.join(d, "probe.py")
        with open(probe, "w") as fh:
            fh.write(_CPU_PROBE)
        env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}

        def cpu(n: int) -> float:
            out = subprocess.run([sys.executable, probe, str(n)], capture_output=True, text=True, env=env, check=True)
            return float(out.stdout.strip().splitlines()[-1])

        small, large = 10, 10 + args.runs
        before = load()
        per_run = []
        for _ in range(max(2, args.repeats // 2)):
            per_run.append((cpu(large) - cpu(small)) / args.runs)
        after = load()
    tasks = make_tasks("icmlgym/Bandit-v0", "ucb1", seeds=args.runs, env_kwargs={"horizon": 10})
    execute(tasks[0])
    c0 = time.process_time()
    for t in tasks:
        execute(t)
    plain = (time.process_time() - c0) / len(tasks)
    over = [1e3 * (x - plain) for x in per_run]
    return [{"row": f"process executor: CPU per run added (ms CPU; driver + fork server + worker, {args.runs} tiny runs)",
             "ours": statistics.median(over), "limit": 0.0, "min": min(over), "median": statistics.median(over), "max": max(over),
             "load": f"{before} -> {after}", "note": f"the same run in process: {1e3 * plain:.1f} ms CPU"}]


# ------------------------------------------------------------------------------------- crafter
def row_crafter(args) -> list[dict]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from craft_speed import stepping

    before = load()
    ratios = []
    for _ in range(args.repeats):
        ratios.append(stepping(args.crafter_steps, 1)["backend_ratio"])
    after = load()
    return [{"row": "Crafter backend vs raw crafter.Env (time ratio per step)", "ours": statistics.median(ratios), "limit": 1.0,
             "min": min(ratios), "median": statistics.median(ratios), "max": max(ratios), "load": f"{before} -> {after}"}]


ROWS = {"bandit": row_bandit, "batched": row_batched, "batched_trained": row_batched_trained, "hedge": row_hedge, "games_metrics": row_games_metrics, "sketch": row_sketch,
        "fairlin": row_fairlin, "process": row_process, "process_min": row_process_min, "process_cpu": row_process_cpu, "crafter": row_crafter}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=",".join(ROW_NAMES))
    ap.add_argument("--agents", default="", help="batched row: only these agents (comma-separated; default all)")
    ap.add_argument("--envs", default="", help="batched rows: only these envs (names without the namespace, comma-separated)")
    ap.add_argument("--trained-seeds", type=int, default=3, help="batched_trained row: single runs per agent and env")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="batched row: time by the wall clock or by the process's CPU time (steadier under load)")
    ap.add_argument("--horizon", type=int, default=20_000, help="bandit steps per episode")
    ap.add_argument("--rounds", type=int, default=5_000, help="Hedge rounds")
    ap.add_argument("--sketch-n", type=int, default=1_000_000)
    ap.add_argument("--fair-T", type=int, default=2_000)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--crafter-steps", type=int, default=1_000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import icmlgym

    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}, icmlgym {icmlgym.__version__}; uptime: {uptime}; {args.repeats} interleaved repeats")
    print("| path | ours | limit | ratio min / median / max | load (1, 5, 15 min) before -> after | note |")
    print("|---|---|---|---|---|---|")
    results = []
    for name in args.rows.split(","):
        if name not in ROWS:
            raise SystemExit(f"unknown row {name!r}; rows: {', '.join(ROW_NAMES)}")
        try:
            rows = ROWS[name](args)
        except ImportError as err:
            print(f"| {name} | skipped: {err} | | | | |", flush=True)
            continue
        for r in rows:
            results.append(r)
            print(f"| {r['row']} | {r['ours']:.3g} | {r['limit']:.3g} | {r['min']:.2f} / {r['median']:.2f} / {r['max']:.2f} | "
                  f"{r['load']} | {r.get('note', '')} |", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"uptime": uptime, "rows": results}, fh, indent=1)


if __name__ == "__main__":
    main()
