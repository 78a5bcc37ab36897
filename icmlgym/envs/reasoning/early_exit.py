"""EarlyExit-v0: stop a reasoning model's chain of thought once the answer is determined (SpecExit).

Description:
    Reasoning models overthink: after the answer is determined they keep writing checks.
    SpecExit (ICML 2026) decides when to stop from the hidden states of the draft model
    that speculative decoding already runs, with no probing; DEER-style methods force a
    trial answer at step boundaries and exit when it is confident, paying target passes.
    Here one reasoning problem (:mod:`icmlgym.corpora.reasoning`) is decoded per episode by
    real speculative decoding (:mod:`icmlgym.envs.reasoning.speculative`: the draft
    proposes ``k`` tokens, the target verifies them in one pass over its KV cache) with
    the zoo's overthinking reasoner and its draft, which write redundant ``C:`` check
    lines after the last step on about half of the problems. At every line boundary the
    agent continues or exits; on exit the target writes ``A:`` and the answer.

Action Space:
    ``Discrete(4)``: 0 continue (decode the next line), 1 exit (write the answer now),
    2 trial answer (a probe: the target's greedy ``A:...`` continuation on a copy of the
    state; its confidence appears in ``trial``; charged as target passes), 3 read the
    target's hidden state of the boundary token (``target_hidden``; one target pass when
    the target has not processed that token yet). A probe or read repeated at the same
    boundary acts as continue.

Observation Space:
    ``Dict``: ``draft_hidden`` ``Box(d_draft)`` (the draft's last-layer state of the
    boundary token), ``target_hidden`` ``Box(d_target)`` (zeros until read),
    ``stats`` ``Box(8)`` (boundary index, generated tokens, draft entropy of the next
    token, mean draft entropy over the last line's proposals, acceptance rate so far,
    target state read (0/1), tokens left in the block, length of the last line),
    ``trial`` ``Box(4)`` (probed here (0/1), mean and minimum probability of the trial
    answer's tokens, same answer as the previous trial (0/1)).

Rewards:
    ``-length_cost`` per generated token and per probe pass; ``+1`` at the end when the
    answer is right. The return is the ``score`` metric.

Starting State:
    ``reset(seed)`` draws a problem of ``split``, runs the prompt through both models and
    stops at boundary 0 (before the first reasoning line).

Episode End:
    Terminated when the answer line is written (by the model, or after an exit), at the
    end-of-text token or at the block size (then the answer is forced if there is room).

Arguments:
    ``k`` (4, draft tokens per round), ``temperature`` (1.0; 0 is greedy), ``length_cost``
    (0.005), ``split`` ("test"), ``domains``, ``levels`` ((1, 2)), ``overthink`` (0.5: the
    rate the zoo pair was fine-tuned at; another value trains a new pair), ``reference``
    (True: after an exit, decode the never-exit continuation of the same prefix, outside
    the episode's cost, for the paired metrics), ``size`` ("smoke"), ``device``,
    ``model_pair`` (a :class:`~icmlgym.envs.reasoning.pair.ModelPair`, e.g. from local
    ``transformers`` folders; default the zoo pair).

Metrics:
    ``score`` (primary: the return), ``accuracy``, ``generated_tokens``, ``reference_tokens``
    and ``reference_accuracy`` (never exiting from the same prefix), ``accuracy_gain``
    (accuracy - reference accuracy, paired), ``length_reduction`` (1 - generated / reference), ``exited``, ``probe_forwards``, ``target_forwards``,
    ``draft_forwards``, ``acceptance_rate``, ``modelled_latency`` (cost model below, in target
    passes), ``modelled_speedup`` (reference latency / latency), ``wall_ms`` (measured decoding
    time of the episode). Cost model: a target pass costs 1 whatever its length (memory-bound
    decoding), a draft pass costs ``draft params / target params``, a probe pass costs 1.

Version History:
    v0: first version.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.cache import Cache, content_key, file_hash
from icmlgym.catalog import require_extra

require_extra("reasoning", what="icmlgym/EarlyExit-v0")

from icmlgym.corpora.reasoning import extract_answer  # noqa: E402
from icmlgym.envs.reasoning.pair import ModelPair, draw_problem, line_tokens, validate_problems, zoo_pair  # noqa: E402
from icmlgym.envs.reasoning.speculative import SpeculativeDecoder  # noqa: E402

CONTINUE, EXIT, PROBE, READ_TARGET = 0, 1, 2, 3
ANSWER_TOKENS = 8  # an answer line is at most this long (numbers below 100, words up to 6 letters)


class EarlyExitEnv(gym.Env):
    """Continue or exit at each line boundary of speculative decoding (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        k: int = 4,
        temperature: float = 1.0,
        length_cost: float = 0.005,
        split: str = "test",
        domains: Sequence[str] = ("arithmetic", "lists", "strings", "code"),
        levels: Sequence[int] = (1, 2),
        overthink: float = 0.5,
        reference: bool = True,
        size: str = "smoke",
        device: str = "cpu",
        model_pair: ModelPair | None = None,
    ) -> None:
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k (draft tokens per round) must be an int >= 1, got {k!r}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if length_cost < 0:
            raise ValueError(f"length_cost must be >= 0, got {length_cost}")
        validate_problems(split, domains, levels)
        self.k, self.temperature, self.length_cost = int(k), float(temperature), float(length_cost)
        self.split, self.domains, self.levels = split, tuple(domains), tuple(levels)
        self.reference = bool(reference)
        self.pair = model_pair if model_pair is not None else zoo_pair(size, overthink, device)
        self.tok = self.pair.tokenizer
        self.ids = line_tokens(self.tok)
        d_draft, d_target = self.pair.draft.config.n_embd, self.pair.target.config.n_embd
        inf = np.inf
        self.observation_space = spaces.Dict({
            "draft_hidden": spaces.Box(-inf, inf, (d_draft,), np.float32),
            "target_hidden": spaces.Box(-inf, inf, (d_target,), np.float32),
            "stats": spaces.Box(-inf, inf, (8,), np.float32),
            "trial": spaces.Box(-inf, inf, (4,), np.float32),
        })
        self.action_space = spaces.Discrete(4)
        self._dec: SpeculativeDecoder | None = None
        self._done = True

    # ------------------------------------------------------------------ episode

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        from icmlgym.nn.runtime import fixed_threads

        self.problem = draw_problem(self.np_random, self.split, self.domains, self.levels)
        self._ref_seed = int(self.np_random.integers(2**31 - 1))
        t0 = time.perf_counter()
        with fixed_threads(1):
            prompt = self.tok.encode(self.problem.prompt, bos=True)
            self._dec = SpeculativeDecoder(self.pair.target, self.pair.draft, prompt, self.k, self.temperature,
                                           self.np_random, self.ids["newline"], self.ids["eos"])
            self._boundary(last_line=0)
        self._wall = time.perf_counter() - t0
        self._boundaries = 0
        self._probe_passes = 0
        self._prev_trial: str | None = None
        self._done = False
        self._exited = False
        self._answer_line: list[int] | None = None
        return self._obs(), self._info()

    def _boundary(self, last_line: int) -> None:
        st = self._dec.boundary_state()
        ent = self._dec.line_entropies
        self._draft_hidden = st["draft_hidden"].astype(np.float32)
        self._target_hidden = np.zeros(self.pair.target.config.n_embd, np.float32)
        self._draft_entropy = float(st["draft_entropy"])
        self._line_entropy = float(np.mean(ent)) if ent else self._draft_entropy
        self._last_line = last_line
        self._read = False
        self._trial = np.zeros(4, np.float32)

    def _obs(self) -> dict[str, np.ndarray]:
        c = self._dec.counters
        acc = c.accepted / c.proposed if c.proposed else 0.0
        stats = np.array([self._boundaries if hasattr(self, "_boundaries") else 0, self._dec.generated, self._draft_entropy,
                          self._line_entropy, acc, float(self._read), self._dec.room, self._last_line], np.float32)
        return {"draft_hidden": self._draft_hidden.copy(), "target_hidden": self._target_hidden.copy(),
                "stats": stats, "trial": self._trial.copy()}

    def _cost(self) -> dict[str, float]:
        c = self._dec.counters
        return {"target_forwards": float(c.target_forwards), "draft_forwards": float(c.draft_forwards),
                "probe_forwards": float(self._probe_passes)}

    def _info(self) -> dict[str, Any]:
        return {"cost": self._cost(), "problem": self.problem.question, "text": self.tok.decode(self._dec.tokens[self._dec.n_prompt:])}

    def latency(self, counters: Any, probe_passes: int) -> float:
        """The cost model: target passes + draft passes x (draft/target parameters) + probe passes."""
        return counters.target_forwards + self.pair.draft_cost * counters.draft_forwards + probe_passes

    # ------------------------------------------------------------------ step

    def step(self, action: Any):
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset()")
        if not self.action_space.contains(action) and not (np.ndim(action) == 0 and np.asarray(action).dtype.kind in "iu" and self.action_space.contains(int(action))):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space} (0 continue, 1 exit, 2 trial answer, 3 read the target's state)")
        a = int(action)
        from icmlgym.nn.runtime import fixed_threads

        t0 = time.perf_counter()
        with fixed_threads(1):
            reward, ended = self._act(a)
        self._wall += time.perf_counter() - t0
        info = self._info()
        if ended:
            self._done = True
            info["metrics"] = self._metrics()
            info["answer"] = self._answer
        return self._obs(), float(reward), ended, False, info

    def _act(self, a: int) -> tuple[float, bool]:
        dec = self._dec
        if a == PROBE and not self._trial[0]:
            toks, probs, passes = dec.greedy_target(self.ids["answer"], ANSWER_TOKENS, (self.ids["newline"], self.ids["eos"]))
            self._probe_passes += passes
            answer = self.tok.decode(toks).split("\n", 1)[0]
            same = float(answer == self._prev_trial)
            self._prev_trial = answer
            # no room left in the block for a trial answer: a probe that says nothing
            self._trial = np.array([1.0, np.mean(probs), np.min(probs), same] if probs else [1.0, 0.0, 0.0, 0.0], np.float32)
            return -self.length_cost * passes, False
        if a == READ_TARGET and not self._read:
            self._target_hidden = dec.boundary_state(read_target=True)["target_hidden"].astype(np.float32)
            self._read = True
            return 0.0, False
        before = dec.generated
        if a == EXIT:
            self._exit_snapshot = dec.snapshot()
            self._exited = True
            self._write_answer()
            return self._finish(before)
        # continue (or a repeated probe/read)
        line = dec.decode_line()
        if line[:2] == self.ids["answer"]:
            self._answer_line = line
            return self._finish(before)
        if dec.ended:
            if dec.room > len(self.ids["answer"]) and dec.tokens[-1] != self.ids["eos"]:
                self._write_answer()
            return self._finish(before)
        self._boundaries += 1
        self._boundary(last_line=len(line))
        return -self.length_cost * (dec.generated - before), False

    def _write_answer(self) -> None:
        dec = self._dec
        if dec.room <= len(self.ids["answer"]):
            self._answer_line = []
            return
        dec.force(self.ids["answer"])
        self._answer_line = self.ids["answer"] + dec.decode_line()

    def _finish(self, before: int) -> tuple[float, bool]:
        text = self.tok.decode(self._answer_line or [])
        self._answer = extract_answer(text) if text else None
        self._correct = float(self._answer == self.problem.answer)
        return -self.length_cost * (self._dec.generated - before) + self._correct, True

    # ------------------------------------------------------------------ metrics

    def _never_exit(self) -> tuple[int, float, float]:
        """Tokens, accuracy and modelled latency of never exiting from the exit point (outside the episode's cost)."""
        if not self._exited or not self.reference:
            return self._dec.generated, self._correct, self.latency(self._dec.counters, self._probe_passes)
        from icmlgym.nn.runtime import fixed_threads

        dec = SpeculativeDecoder.__new__(SpeculativeDecoder)
        dec.__dict__.update(self._dec.__dict__)
        dec.restore(self._exit_snapshot)
        dec.rng = np.random.default_rng(self._ref_seed)
        answer_line: list[int] = []
        with fixed_threads(1):
            while not dec.ended:
                line = dec.decode_line()
                if line[:2] == self.ids["answer"]:
                    answer_line = line
                    break
            if not answer_line and dec.room > len(self.ids["answer"]) and dec.tokens[-1] != self.ids["eos"]:
                dec.force(self.ids["answer"])
                answer_line = self.ids["answer"] + dec.decode_line()
        correct = float(extract_answer(self.tok.decode(answer_line)) == self.problem.answer) if answer_line else 0.0
        return dec.generated, correct, self.latency(dec.counters, self._probe_passes)

    def _metrics(self) -> dict[str, float]:
        c = self._dec.counters
        ref_tokens, ref_correct, ref_latency = self._never_exit()
        lat = self.latency(c, self._probe_passes)
        gen = self._dec.generated
        return {
            "score": self._correct - self.length_cost * (gen + self._probe_passes),
            "accuracy": self._correct,
            "generated_tokens": float(gen),
            "reference_tokens": float(ref_tokens),
            "reference_accuracy": ref_correct,
            "accuracy_gain": self._correct - ref_correct,
            "length_reduction": 1.0 - gen / ref_tokens if ref_tokens else 0.0,
            "exited": float(self._exited),
            "probe_forwards": float(self._probe_passes),
            "target_forwards": float(c.target_forwards),
            "draft_forwards": float(c.draft_forwards),
            "acceptance_rate": c.accepted / c.proposed if c.proposed else 0.0,
            "modelled_latency": float(lat),
            "modelled_speedup": float(ref_latency / lat) if lat else 1.0,
            "wall_ms": 1000.0 * self._wall,
        }

    # ------------------------------------------------------------------ traces for agents that learn

    def traces(self, n: int, split: str = "train", seed: int = 0) -> list[dict[str, np.ndarray]]:
        """``n`` never-exit decodings of ``split`` problems with, at every boundary, what an exit there gives.

        Per problem a dict of arrays over its boundaries: ``draft_hidden``, ``target_hidden``
        (read at every boundary), ``stats``, ``trial`` (the probe's numbers), ``exit_correct``
        (the target's greedy answer written at this boundary is right), ``tokens`` (generated so
        far) and the scalars ``final_tokens``, ``final_correct``. Cached on disk by the pair's
        weights, the decoding settings and the code, so agents of every seed share one build.
        """
        return exit_traces(self, n, split, seed)


# ----------------------------------------------------------------------------- traces (cached)

_FIELDS = ("draft_hidden", "target_hidden", "stats", "trial", "exit_correct", "tokens")


def _code_hash() -> str:
    mods = ("icmlgym.envs.reasoning.early_exit", "icmlgym.envs.reasoning.speculative",
            "icmlgym.envs.reasoning.pair", "icmlgym.corpora.reasoning")
    return file_hash(*(importlib.util.find_spec(m).origin for m in mods))


SHIPPED_TRACES = Path(__file__).parent / "traces"
# the traces the shipped agents read (specexit, target-head, the calibrated baselines) at the
# env's defaults: (n, split, seed)
DEFAULT_TRACES: tuple[tuple[int, str, int], ...] = ((96, "train", 0), (64, "val", 1))


def traces_key(env: Any, n: int, split: str, seed: int) -> str:
    """The cache key of a trace set: the pair's weights, the decoding settings, the problems and the code."""
    return content_key("exit-traces", env.pair.key, env.k, env.temperature, env.domains, env.levels, n, split, seed, _code_hash())


def exit_traces(env: Any, n: int, split: str = "train", seed: int = 0) -> list[dict[str, np.ndarray]]:
    """See :meth:`icmlgym.envs.reasoning.early_exit.EarlyExitEnv.traces`.

    Looked up in the shared cache, then among the traces shipped with the package
    (``icmlgym/envs/reasoning/traces/``, :data:`DEFAULT_TRACES` at the defaults: built once by
    :func:`ship_traces`, used only while the key matches, so a change of code or weights builds
    afresh), else built (about 30 s of one core for the defaults) and cached.
    """
    if n < 1:
        raise ValueError(f"n (traces) must be >= 1, got {n}")
    if split == "test":
        raise ValueError("traces come from the train or val split; the test split is what the env evaluates on")
    key = traces_key(env, n, split, seed)
    cache = Cache("reasoning")
    hit = cache.read_arrays(key)
    if hit is None:
        hit = Cache("reasoning", SHIPPED_TRACES).read_arrays(key)
    if hit is None:
        with cache.lock(key):
            hit = cache.read_arrays(key)
            if hit is None:
                hit = _build_traces(env, n, split, seed)
                cache.write_arrays(key, hit)
    out = []
    for i in range(n):
        sel = hit["problem"] == i
        tr = {f: hit[f][sel] for f in _FIELDS}
        tr["final_tokens"], tr["final_correct"] = float(hit["final_tokens"][i]), float(hit["final_correct"][i])
        out.append(tr)
    return out


def _build_traces(env: Any, n: int, split: str, seed: int) -> dict[str, np.ndarray]:
    sim = EarlyExitEnv(k=env.k, temperature=env.temperature, length_cost=env.length_cost, split=split,
                       domains=env.domains, levels=env.levels, reference=False, model_pair=env.pair)
    rows: dict[str, list[Any]] = {f: [] for f in _FIELDS}
    problem, final_tokens, final_correct = [], [], []
    for i in range(n):
        sim.reset(seed=int(seed) * 1_000_003 + i)
        done = False
        while not done:
            sim.step(READ_TARGET)
            obs, _, _, _, _ = sim.step(PROBE)
            answer = sim._prev_trial
            for f in ("draft_hidden", "target_hidden", "stats", "trial"):
                rows[f].append(obs[f])
            rows["exit_correct"].append(float(answer == sim.problem.answer))
            rows["tokens"].append(float(sim._dec.generated))
            problem.append(i)
            _, _, done, _, info = sim.step(CONTINUE)
        final_tokens.append(info["metrics"]["generated_tokens"])
        final_correct.append(info["metrics"]["accuracy"])
    hit = {f: np.asarray(v, np.float32) for f, v in rows.items()}
    hit.update(problem=np.asarray(problem), final_tokens=np.asarray(final_tokens, np.float32),
               final_correct=np.asarray(final_correct, np.float32))
    return hit


def ship_traces() -> list[Path]:
    """Build (or read from the cache) :data:`DEFAULT_TRACES` for the default env and write them into the package.

    Run after changing the decoding code or the pair (``python -c "from icmlgym.envs.reasoning.early_exit
    import ship_traces; ship_traces()"``); stale files are removed.
    """
    env = EarlyExitEnv()
    keys = []
    for n, split, seed in DEFAULT_TRACES:
        exit_traces(env, n, split, seed)
        keys.append(traces_key(env, n, split, seed))
    shipped = Cache("reasoning", SHIPPED_TRACES)
    for old in SHIPPED_TRACES.glob("*.npz"):
        if old.stem not in keys:
            old.unlink()
    return [shipped.write_arrays(k, Cache("reasoning").read_arrays(k)) for k in keys]


__all__ = ["CONTINUE", "DEFAULT_TRACES", "EXIT", "EarlyExitEnv", "PROBE", "READ_TARGET", "exit_traces", "ship_traces", "traces_key"]
