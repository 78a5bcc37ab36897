"""SpeculativeReasoning-v0: a draft writes each reasoning step, the agent accepts it or lets the target write it (DREAM-R).

Description:
    Speculative reasoning (SpecReason; DREAM-R, ICML 2026) moves speculation from tokens to
    reasoning steps: a cheap draft writes a whole step, the target scores it in one pass, and
    a verifier accepts it or has the target write the step itself. A lax verifier lets draft
    errors propagate; a strict one saves nothing. Here one reasoning problem
    (:mod:`icmlgym.corpora.reasoning`) is solved per episode by the zoo's overthinking
    reasoner (target) and its draft (:mod:`icmlgym.envs.reasoning.pair`). At every step the
    draft samples a line (its KV cache), the target scores the line's tokens in ONE pass over
    its KV cache, and the agent sees the target's and the draft's probability of every token
    of the line. Accept: the line stays. Reject: the line is cut from both caches and the
    target samples the step itself, one pass per token.

Action Space:
    ``Discrete(3)``: 0 accept the draft's step, 1 reject it (the target writes the step), 2 verify
    it token by token: lossless token-level speculative decoding (rejection sampling of the
    drafted tokens against the target's pass that scored them, the first rejected one resampled
    from the residual, then rounds of ``TOKEN_K`` = 4 draft tokens until the line ends; the
    text is distributed exactly as the target's own).

Observation Space:
    ``Dict``: ``target_probs`` ``Box(0, 1, (32,))`` (the target's probability of each token of
    the draft's line, at temperature 1), ``target_runner_up`` ``Box(0, 1, (32,))`` (the
    target's highest probability of any other token at that position: the evidence against),
    ``draft_probs`` ``Box(0, 1, (32,))`` (the draft's own probability of its tokens),
    ``mask`` ``Box(0, 1, (32,))`` (1 on the line's tokens; lines are at most 32 tokens),
    ``stats`` ``Box(5)`` (step index, tokens so far, line length, acceptance rate so far,
    tokens left in the block).

Rewards:
    ``+1`` at the end when the answer is right, ``-cost_weight`` per unit of modelled latency
    (target passes; see the cost model). The return is the ``score`` metric.

Starting State:
    ``reset(seed)`` draws a problem of ``split``, runs the prompt through both models and has
    the draft propose the first step.

Episode End:
    Terminated when an answer line (``A:...``) is kept (accepted or written by the target), at
    the end-of-text token or at the block size.

Arguments:
    ``temperature`` (1.0), ``parallel`` (False; True is FPSR's cost model, below),
    ``early_stop`` (True; FPSR's early stopping, used when ``parallel``), ``cost_weight`` (0.01),
    ``split`` ("test"), ``domains``, ``levels`` ((1, 2)), ``reference`` (True: also decode the
    problem with the target alone, outside the episode's cost, for the paired metrics),
    ``size``, ``device``, ``model_pair``, ``draft`` ("base"; "sapo": the draft after SAPO's
    policy-gradient alignment to the target, :mod:`icmlgym.zoo.sapo`), ``sapo_budget`` ("smoke":
    the shipped SAPO draft; "standard": SAPO's standard RL budget on the same pair, trained and
    cached on first use, about 10 minutes of one core; the standard tier sets it).

Metrics:
    ``score`` (primary), ``accuracy``, ``reference_accuracy`` (target-only decoding of the same
    problem), ``accuracy_gain``, ``acceptance_rate`` (steps whose text is the draft's line /
    steps), ``token_acceptance_rate`` (draft tokens kept / draft tokens proposed),
    ``steps``, ``generated_tokens``, ``target_tokens_saved`` (tokens the target did not have to
    write: the draft tokens kept), ``target_forwards``, ``draft_forwards``,
    ``modelled_latency``, ``reference_latency`` (target-only: one pass per token),
    ``modelled_speedup``, ``wall_ms`` and ``reference_wall_ms`` (measured), ``wall_speedup``.
    ``info["step_cost"]`` breaks each step's modelled cost down.

Cost model (in target passes; a target pass costs 1, a draft pass the draft's share ``s`` of
    the target's parameters). Per step: ``D`` = the line's draft passes x ``s``, 1 verification
    pass, ``T`` = the target's passes writing the step itself (on reject), ``X`` = the passes of
    token-level rounds after the first verification (draft x ``s`` + target).
    Sequential: ``D + 1 + T + X``. Parallel (FPSR: draft, target and verification run at once):
    the draft writes the next line while the target verifies this one, so the draft's wait is
    ``W = max(0, D - 1)`` when the previous step kept the draft's line and ``W = D`` otherwise
    (first step, after a rejection: the draft had to wait for the target's line); an accepted
    step costs ``W + 1``; a rejected one ``max(W + 1, T)`` with early stopping (the target began
    writing the step when the step began and is stopped when the draft's line is accepted, so on
    reject the clean fallback is already under way) and ``W + 1 + T`` without; a token-level step
    ``W + 1 + X`` (its rounds depend on the verification).

Version History:
    v0: first version.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("reasoning", what="icmlgym/SpeculativeReasoning-v0")

import torch  # noqa: E402

from icmlgym.corpora.reasoning import extract_answer  # noqa: E402
from icmlgym.envs.reasoning.pair import ModelPair, draw_problem, line_tokens, validate_problems, zoo_pair  # noqa: E402
from icmlgym.envs.reasoning.speculative import SpeculativeDecoder, next_token_probs  # noqa: E402

ACCEPT, REJECT, TOKEN = 0, 1, 2
MAX_LINE = 32
TOKEN_K = 4  # draft tokens per round when token-level verification continues a line (EarlyExit-v0's k)


class SpeculativeReasoningEnv(gym.Env):
    """Accept or reject each draft-written reasoning step (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        temperature: float = 1.0,
        parallel: bool = False,
        early_stop: bool = True,
        cost_weight: float = 0.01,
        split: str = "test",
        domains: Sequence[str] = ("arithmetic", "lists", "strings", "code"),
        levels: Sequence[int] = (1, 2),
        reference: bool = True,
        size: str = "smoke",
        device: str = "cpu",
        model_pair: ModelPair | None = None,
        draft: str = "base",
        sapo_budget: str = "smoke",
    ) -> None:
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if cost_weight < 0:
            raise ValueError(f"cost_weight must be >= 0, got {cost_weight}")
        validate_problems(split, domains, levels)
        self.temperature, self.parallel, self.cost_weight = float(temperature), bool(parallel), float(cost_weight)
        self.early_stop = bool(early_stop)
        self.split, self.domains, self.levels, self.reference = split, tuple(domains), tuple(levels), bool(reference)
        self.pair = model_pair if model_pair is not None else zoo_pair(size, 0.5, device, draft=draft, sapo_budget=sapo_budget)
        self.tok = self.pair.tokenizer
        self.ids = line_tokens(self.tok)
        box = lambda: spaces.Box(0.0, 1.0, (MAX_LINE,), np.float32)  # noqa: E731
        self.observation_space = spaces.Dict({
            "target_probs": box(), "target_runner_up": box(), "draft_probs": box(), "mask": box(),
            "stats": spaces.Box(-np.inf, np.inf, (5,), np.float32),
        })
        self.action_space = spaces.Discrete(3)
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
            # k = 1 builds both models' states; this env drives them itself, step by step
            self._dec = SpeculativeDecoder(self.pair.target, self.pair.draft, prompt, 1, self.temperature,
                                           self.np_random, self.ids["newline"], self.ids["eos"])
            self._steps = self._accepted = self._saved = self._drafted = self._kept = 0
            self._latency = 0.0
            self._prefetched = False
            self._step_cost: dict[str, float] = {}
            self._answer_line: list[int] | None = None
            self._propose()
        self._wall = time.perf_counter() - t0
        self._done = False
        return self._obs(), self._info()

    def _propose(self) -> None:
        """The draft samples a line; the target scores it in one pass."""
        dec, d = self._dec, self._dec.draft
        self._d_saved = (d.cache.length, list(d.pending), d.logits, d.hidden)
        room = min(MAX_LINE, dec.room)
        toks: list[int] = []
        q: list[float] = []
        dists: list[np.ndarray] = []
        passes = 0
        while len(toks) < room:
            if d.pending:
                d.feed([])
                passes += 1
            dist = next_token_probs(d.logits, self.temperature)
            x = int(self.np_random.choice(len(dist), p=dist))
            toks.append(x)
            dists.append(dist)
            q.append(float(torch.softmax(d.logits.double(), -1)[x]))
            d.pending = [x]
            if x in (self.ids["newline"], self.ids["eos"]):
                break
        dec.counters.draft_forwards += passes
        sc = dec.score(toks)
        before = torch.stack([sc.before(i) for i in range(len(toks))])
        probs = torch.softmax(before.double(), -1)
        idx = torch.tensor(toks)
        p = probs[torch.arange(len(toks)), idx]
        others = probs.clone()
        others[torch.arange(len(toks)), idx] = 0.0
        self._line, self._line_draft_passes, self._dists, self._scored = toks, passes, dists, sc
        n = sc.n_pending
        self._t_saved = (sc.base + n, sc.logits[n - 1] if n else sc.first, sc.states[n - 1] if n else sc.first_hidden)
        self._p = p.numpy().astype(np.float32)
        self._runner = others.max(-1).values.numpy().astype(np.float32)
        self._q = np.asarray(q, np.float32)

    def _obs(self) -> dict[str, np.ndarray]:
        n = len(self._line)
        pad = lambda a: np.concatenate([a, np.zeros(MAX_LINE - n, np.float32)]).astype(np.float32)  # noqa: E731
        acc = self._accepted / self._steps if self._steps else 0.0
        stats = np.array([self._steps, self._dec.generated, n, acc, self._dec.room], np.float32)
        return {"target_probs": np.clip(pad(self._p), 0, 1), "target_runner_up": np.clip(pad(self._runner), 0, 1),
                "draft_probs": np.clip(pad(self._q), 0, 1), "mask": pad(np.ones(n, np.float32)), "stats": stats}

    def _cost(self) -> dict[str, float]:
        c = self._dec.counters
        return {"target_forwards": float(c.target_forwards), "draft_forwards": float(c.draft_forwards), "steps": float(self._steps)}

    def _info(self) -> dict[str, Any]:
        return {"cost": self._cost(), "problem": self.problem.question, "text": self.tok.decode(self._dec.tokens[self._dec.n_prompt:]),
                "draft_line": self.tok.decode(self._line)}

    # ------------------------------------------------------------------ step

    def step(self, action: Any):
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset()")
        ok = np.ndim(action) == 0 and np.asarray(action).dtype.kind in "iu" and self.action_space.contains(int(action))
        if not ok:
            raise ValueError(f"action {action!r} is not in the action space {self.action_space} "
                             "(0 accept the draft's step, 1 reject it, 2 verify it token by token)")
        from icmlgym.nn.runtime import fixed_threads

        t0 = time.perf_counter()
        with fixed_threads(1):
            cost, ended = self._act(int(action))
        self._wall += time.perf_counter() - t0
        reward = -self.cost_weight * cost
        info = self._info()
        info["step_cost"] = dict(self._step_cost)
        if ended:
            self._done = True
            correct = float(extract_answer(self.tok.decode(self._answer_line or [])) == self.problem.answer) if self._answer_line else 0.0
            reward += correct
            info["metrics"] = self._metrics(correct)
        return self._obs(), float(reward), ended, False, info

    def _act(self, a: int) -> tuple[float, bool]:
        dec, t, d = self._dec, self._dec.target, self._dec.draft
        share = self.pair.draft_cost
        draft_cost = share * self._line_draft_passes
        drafted = len(self._line)
        # FPSR: the draft wrote this line while the target verified the previous one, unless that
        # step did not keep the draft's line (then the draft had to wait for it) or this is the first
        wait = max(0.0, draft_cost - 1.0) if self._prefetched else draft_cost
        own = extra = 0.0  # the target's passes writing the step itself; passes after the verification (token level)
        self._steps += 1
        if a == ACCEPT:
            line = self._line
            dec.tokens.extend(line)
            kept = len(line)
        elif a == REJECT:
            keep, logits, hidden = self._t_saved
            t.cache.truncate(keep)
            t.logits, t.pending = logits, []
            if hidden is not None:
                t.hidden = hidden
            d_len, d_pending, d_logits, d_hidden = self._d_saved
            d.cache.truncate(d_len)
            d.pending, d.logits, d.hidden = d_pending, d_logits, d_hidden
            line, passes = self._target_writes()
            d.pending = d.pending + line
            kept, own = 0, float(passes)
        else:
            line, kept, drafted, extra = self._token_level(share)
        self._drafted += drafted
        self._kept += kept
        self._saved += kept
        whole = a == ACCEPT or (a == TOKEN and line == self._line)
        self._accepted += int(whole)
        if not self.parallel:
            cost = draft_cost + 1.0 + own + extra
        elif a == REJECT and self.early_stop:
            cost = max(wait + 1.0, own)  # the target began writing the step when it began: the fallback is under way
        else:
            cost = wait + 1.0 + own + extra
        self._step_cost = {"draft": draft_cost, "wait": wait, "verify": 1.0, "target": own, "token_level": extra,
                           "cost": cost, "kept_draft_tokens": float(kept), "prefetched": float(self._prefetched),
                           "kept_draft_line": float(whole)}
        self._prefetched = whole
        self._latency += cost
        if line[:2] == self.ids["answer"]:
            self._answer_line = line
            return cost, True
        if dec.ended:
            return cost, True
        self._propose()
        return cost, False

    def _token_level(self, share: float) -> tuple[list[int], int, int, float]:
        """Token-level speculative decoding of this step (lossless): rejection sampling of the drafted
        line against the target's pass that already scored it, then, after a correction, rounds of
        ``TOKEN_K`` draft tokens until the line ends. Returns the line, the draft tokens kept, the
        draft tokens proposed and the cost of the rounds after the first verification."""
        dec = self._dec
        dec.stop_at_newline = True
        out = dec.resolve(self._scored, self._line, self._dists)
        dec.tokens.extend(out)
        kept = dec.last_accepted
        before = dec.counters.as_dict()
        rest: list[int] = []
        if out[-1] not in (self.ids["newline"], self.ids["eos"]) and not dec.ended:
            dec.k = TOKEN_K
            rest = dec.decode_line()
            dec.k = 1
        after = dec.counters.as_dict()
        extra = (after["target_forwards"] - before["target_forwards"]) + share * (after["draft_forwards"] - before["draft_forwards"])
        accepted = after["accepted"] - before["accepted"]
        proposed = after["proposed"] - before["proposed"]
        return out + rest, kept + accepted, len(self._line) + proposed, float(extra)

    def _target_writes(self) -> tuple[list[int], int]:
        """The target samples the step itself (one pass per token after the first)."""
        dec, t = self._dec, self._dec.target
        line: list[int] = []
        passes = 0
        while dec.room > 0:
            if t.pending:
                t.feed([])
                passes += 1
            x = int(self.np_random.choice(t.logits.shape[-1], p=next_token_probs(t.logits, self.temperature)))
            t.pending = [x]
            line.append(x)
            dec.tokens.append(x)
            if x in (self.ids["newline"], self.ids["eos"]):
                break
        dec.counters.target_forwards += passes
        dec.counters.target_tokens += passes
        return line, passes

    # ------------------------------------------------------------------ metrics

    def _target_only(self) -> tuple[float, float, float]:
        """Accuracy, passes and wall seconds of the target decoding the problem alone (plain, KV cache)."""
        from icmlgym.nn.runtime import fixed_threads

        prompt = self.tok.encode(self.problem.prompt, bos=True)
        t0 = time.perf_counter()
        with fixed_threads(1):
            ref = SpeculativeDecoder(self.pair.target, self.pair.draft, prompt, 0, self.temperature,
                                     np.random.default_rng(self._ref_seed), self.ids["newline"], self.ids["eos"])
            answer: list[int] = []
            while not ref.ended:
                line = ref.decode_line()
                if line[:2] == self.ids["answer"]:
                    answer = line
                    break
        secs = time.perf_counter() - t0
        correct = float(extract_answer(self.tok.decode(answer)) == self.problem.answer) if answer else 0.0
        return correct, float(ref.counters.target_forwards - 1), secs

    def _metrics(self, correct: float) -> dict[str, float]:
        c = self._dec.counters
        if self.reference:
            ref_correct, ref_latency, ref_wall = self._target_only()
        else:
            ref_correct, ref_latency, ref_wall = correct, float(self._dec.generated), self._wall
        lat = self._latency
        return {
            "score": correct - self.cost_weight * lat,
            "accuracy": correct,
            "reference_accuracy": ref_correct,
            "accuracy_gain": correct - ref_correct,
            "acceptance_rate": self._accepted / self._steps if self._steps else 0.0,
            "token_acceptance_rate": self._kept / self._drafted if self._drafted else 0.0,
            "steps": float(self._steps),
            "generated_tokens": float(self._dec.generated),
            "target_tokens_saved": float(self._saved),
            "target_forwards": float(c.target_forwards),
            "draft_forwards": float(c.draft_forwards),
            "modelled_latency": float(lat),
            "reference_latency": float(ref_latency),
            "modelled_speedup": float(ref_latency / lat) if lat else 1.0,
            "wall_ms": 1000.0 * self._wall,
            "reference_wall_ms": 1000.0 * ref_wall,
            "wall_speedup": float(ref_wall / self._wall) if self._wall else 1.0,
        }


__all__ = ["ACCEPT", "MAX_LINE", "REJECT", "TOKEN", "TOKEN_K", "SpeculativeReasoningEnv"]
