"""Six cognitive tasks with NeuroGym's trial structure, and a batched trial generator.

Each task is a :class:`CognitiveTask`: an ordered list of periods with durations in
milliseconds (fixed, a set to choose from, uniform, or NeuroGym's truncated
exponential), input channels, a discrete action set whose action 0 is "fixate", and
the ground-truth action of every time step. :meth:`CognitiveTask.batch` draws ``n``
trials at once (numpy, vectorised over trials) for supervised training;
:meth:`CognitiveTask.score` applies the task's response rule to a sequence of actions
(the rule the Gymnasium env of :mod:`icmlgym.envs.cognitive.task_env` uses step by
step), so that a network evaluated offline and an agent playing the env are scored
alike.

The definitions follow NeuroGym's (Molano-Mazón et al. 2022) documented defaults,
written here from its documentation (NeuroGym itself pins gymnasium 0.29 and cannot be
a dependency):

===========================  ===============================  ==========================================
ours                         NeuroGym                         periods (ms at NeuroGym's dt)
===========================  ===============================  ==========================================
``perceptual_decision``      PerceptualDecisionMaking-v0      fixation 100, stimulus 2000, delay 0, decision 100
``context_integration``      ContextDecisionMaking-v0 (expl)  fixation 300, stimulus 750, delay TruncExp(600, 300, 3000), decision 100
``delayed_match``            DelayMatchSample-v0              fixation 300, sample 500, delay 1000, test 500, decision 900
``go_nogo``                  GoNogo-v0                        fixation 0, stimulus 500, delay 500, decision 500
``delayed_comparison``       DelayComparison-v0               fixation 500, stimulus1 500, delay 1000, stimulus2 500, decision 100
``interval_timing``          ReadySetGo-v0                    fixation 100, ready 83, measure U(800, 1500), set 83, production 2 x measure x gain
===========================  ===============================  ==========================================

Conventions shared by every task here (where NeuroGym's tasks differ among themselves
we take one): a duration of ``d`` ms lasts ``round(d / dt)`` steps; the fixation input
is 1 in every period before the response period and 0 in it (NeuroGym's
DelayMatchSample, DelayComparison, GoNogo and ReadySetGo do this; its
PerceptualDecisionMaking and ContextDecisionMaking show the fixation cue in the
fixation period only); input noise is Gaussian with standard deviation
``sigma / sqrt(dt)`` on the stimulus channels during stimulus periods.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

Duration = float | tuple  # ms: a number, a tuple of choices, ("uniform", lo, hi) or ("truncexp", mean, lo, hi)


@dataclass
class TrialBatch:
    """``n`` trials of one task, padded to the longest (``T`` steps).

    Attributes:
        inputs: ``(n, T, n_input)`` float32 observations.
        targets: ``(n, T)`` int64 ground-truth action per step (0 = fixate); -1 after a trial ends.
        response_mask: ``(n, T)`` bool, the steps of the response period (where the answer is scored).
        lengths: ``(n,)`` steps of each trial.
        periods: period name -> ``(n, 2)`` int array of [start, end) steps.
        conditions: per-trial task variables (``ground_truth`` and the task's own, arrays of length n).
        task: the task's name.
        dt: ms per step.
    """

    inputs: np.ndarray
    targets: np.ndarray
    response_mask: np.ndarray
    lengths: np.ndarray
    periods: dict[str, np.ndarray]
    conditions: dict[str, np.ndarray]
    task: str
    dt: float

    @property
    def n(self) -> int:
        return int(self.inputs.shape[0])

    def subset(self, idx: np.ndarray) -> "TrialBatch":
        """The trials ``idx`` (trimmed to their own longest length)."""
        idx = np.asarray(idx)
        t = int(self.lengths[idx].max()) if len(idx) else 0
        return TrialBatch(
            self.inputs[idx, :t],
            self.targets[idx, :t],
            self.response_mask[idx, :t],
            self.lengths[idx],
            {k: v[idx] for k, v in self.periods.items()},
            {k: v[idx] for k, v in self.conditions.items()},
            self.task,
            self.dt,
        )


def _trunc_exp(rng: np.random.Generator, n: int, mean: float, lo: float, hi: float) -> np.ndarray:
    """NeuroGym's TruncExp: exponential draws of the given mean, rejected outside [lo, hi)."""
    out = np.empty(n)
    todo = np.arange(n)
    while len(todo):
        x = rng.exponential(mean, size=len(todo))
        ok = (x >= lo) & (x < hi)
        out[todo[ok]] = x[ok]
        todo = todo[~ok]
    return out


def uniform_choice(rng: np.random.Generator, values: Sequence[float], n: int) -> np.ndarray:
    """``rng.choice(np.asarray(values, dtype=float), size=n)``: the same draws and values (``Generator.choice``
    draws uniform indices with ``integers(0, len, size=n)``), without its argument handling (half its time)."""
    return np.asarray(values, dtype=float)[rng.integers(0, len(values), size=n)]


def integers_many(rngs: Sequence[np.random.Generator], draws: Sequence[tuple[int, int]]) -> list[np.ndarray]:
    """``[np.stack([rng.integers(0, r, size=m) for rng in rngs]) for r, m in draws]``, each generator making the calls
    in ``draws``' order: the same values, and every generator left in the state those calls leave it in.

    numpy draws an int64 below ``r < 2**32`` from one 32-bit output (Lemire's method: the high word of
    ``u * r``, redrawn while the low word is below ``2**32 % r``), and a PCG64 generator's 32-bit outputs are
    the low then the high half of each 64-bit output (the high one buffered in its state). So for a PCG64
    generator with no half buffered, the calls' values are Lemire's on the halves of one ``random_raw`` call,
    computed for all generators at once; a generator with a half buffered, another bit generator, or a draw
    that Lemire's method would redraw (probability below ``r / 2**32`` a value) makes the calls themselves.
    Every later draw is the same as after the calls; of the state only the stale value of a consumed half
    (``uinteger`` while ``has_uint32`` is 0, which no draw reads) may differ (``tests/cognitive/test_tasks.py``)."""
    counts = [int(m) for _, m in draws]
    total = sum(counts)
    fast = sys.byteorder == "little" and total > 0 and all(2 <= r < 2**31 for r, _ in draws)
    states = []
    for rng in rngs:
        bg = rng.bit_generator
        state = bg.state if fast and type(bg) is np.random.PCG64 else None
        states.append(state if state is not None and not state["has_uint32"] else None)
    fast_rows = [g for g, st in enumerate(states) if st is not None]
    out = [np.empty((len(rngs), m), dtype=np.int64) for m in counts]
    slow = [g for g, st in enumerate(states) if st is None]
    if fast_rows:
        half = np.stack([rngs[g].bit_generator.random_raw((total + 1) // 2) for g in fast_rows]).view(np.uint32)
        rejected = np.zeros(len(fast_rows), dtype=bool)
        start = 0
        for (r, m), o in zip(draws, out):
            prod = half[:, start : start + m].astype(np.uint64) * np.uint64(r)
            o[fast_rows] = (prod >> np.uint64(32)).astype(np.int64)
            rejected |= ((prod & np.uint64(0xFFFFFFFF)) < np.uint64((2**32 - r) % r)).any(axis=1)
            start += m
        for j, g in enumerate(fast_rows):
            bg = rngs[g].bit_generator
            if rejected[j]:  # back to the state before, and the calls themselves
                bg.state = states[g]
                slow.append(g)
            elif total % 2:  # the last output's high half stays buffered, as the calls leave it
                st = bg.state
                st["has_uint32"], st["uinteger"] = 1, int(half[j, total])
                bg.state = st
    for g in sorted(slow):
        for (r, m), o in zip(draws, out):
            o[g] = rngs[g].integers(0, r, size=m)
    return out


def add_channels(inputs: np.ndarray, lo: int, mask: np.ndarray, values: np.ndarray) -> None:
    """``inputs[:, :, lo : lo + k] += mask[:, :, None] * values[:, None, :]`` for a ``(n, T)`` mask and ``(n, k)`` float32
    values, channel by channel: the same float32 products and sums, in inner loops along the steps rather than over
    ``k`` channels (numpy pays its inner-loop set-up per run of ``k`` elements: several times slower for a few)."""
    for c in range(values.shape[1]):
        inputs[:, :, lo + c] += mask * values[:, c : c + 1]


def sample_duration(spec: Duration, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` durations in ms from a duration spec (see ``Duration``)."""
    if isinstance(spec, (int, float, np.integer, np.floating)):
        return np.full(n, float(spec))
    if isinstance(spec, tuple) and spec and isinstance(spec[0], str):
        kind = spec[0]
        if kind == "uniform":
            return rng.uniform(spec[1], spec[2], size=n)
        if kind == "truncexp":
            return _trunc_exp(rng, n, *spec[1:])
        raise ValueError(f"unknown duration kind {kind!r} (known: 'uniform', 'truncexp')")
    if isinstance(spec, (tuple, list)):
        return uniform_choice(rng, spec, n)
    raise ValueError(f"a duration is a number, a tuple of choices, ('uniform', lo, hi) or ('truncexp', mean, lo, hi); got {spec!r}")


@dataclass
class CognitiveTask:
    """Base of the six tasks: periods, channels, actions and the response rule.

    Subclasses set the class attributes and implement :meth:`_conditions` (draw the
    per-trial variables) and :meth:`_fill` (write the noiseless inputs and the ground
    truth). ``timing`` overrides durations (ms) by period name; ``sigma`` is the input
    noise (0 gives the noiseless means).
    """

    dt: float = 100.0
    sigma: float = 1.0
    timing: dict[str, Duration] = field(default_factory=dict)

    name: ClassVar[str] = ""
    neurogym_id: ClassVar[str] = ""
    period_names: ClassVar[tuple[str, ...]] = ()
    default_timing: ClassVar[dict[str, Duration]] = {}
    # set per instance by tasks whose channels depend on their arguments
    input_names: tuple[str, ...] = field(default=(), init=False, repr=False)
    action_names: tuple[str, ...] = field(default=(), init=False, repr=False)
    noisy_channels: tuple[int, ...] = field(default=(), init=False, repr=False)
    response_period: ClassVar[str] = "decision"
    noisy_periods: ClassVar[tuple[str, ...]] = ()
    # rewards as in NeuroGym: abort = a non-fixate action in the fixation period
    rewards: ClassVar[dict[str, float]] = {"abort": -0.1, "correct": 1.0, "fail": 0.0}

    def __post_init__(self) -> None:
        if self.dt <= 0:
            raise ValueError(f"dt must be positive, got {self.dt}")
        if self.sigma < 0:
            raise ValueError(f"sigma must be >= 0, got {self.sigma}")
        unknown = set(self.timing) - set(self.period_names)
        if unknown:
            raise ValueError(f"{self.name}: unknown periods {sorted(unknown)} in timing; periods: {list(self.period_names)}")
        self._timing = {**self.default_timing, **self.timing}

    @property
    def n_input(self) -> int:
        return len(self.input_names)

    @property
    def n_actions(self) -> int:
        return len(self.action_names)

    # --- per-task pieces -------------------------------------------------------------
    def _conditions(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def _conditions_many(self, rngs: Sequence[np.random.Generator], n: int) -> dict[str, np.ndarray]:
        """``_conditions(rng, n)`` of every generator in turn, concatenated (a task with a cheaper way to make the
        same draws overrides this)."""
        conds = [self._conditions(rng, n) for rng in rngs]
        return {k: np.concatenate([c[k] for c in conds]) for k in conds[0]}

    @classmethod
    def plain_durations(cls) -> bool:
        """Whether the task keeps the base class's period durations (drawn without its trial variables)."""
        return cls._durations is CognitiveTask._durations

    def _durations(self, rng: np.random.Generator, n: int, cond: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """ms per period (tasks whose periods depend on the trial override this)."""
        return {p: sample_duration(self._timing[p], rng, n) for p in self.period_names}

    def _fill(
        self, inputs: np.ndarray, targets: np.ndarray, where: Callable[[str], np.ndarray], cond: dict[str, np.ndarray], periods: dict[str, np.ndarray]
    ) -> None:
        raise NotImplementedError

    def task_variables(self, batch: TrialBatch) -> dict[str, np.ndarray]:
        """The variables a network must hold before it responds (for linear-readout analyses)."""
        raise NotImplementedError

    # --- shared machinery --------------------------------------------------------------
    def steps(self, ms: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(ms, dtype=float) / self.dt).astype(np.int64)

    def batch(self, n: int, rng: np.random.Generator | int | None = None, **fixed: Any) -> TrialBatch:
        """Draw ``n`` trials. ``fixed`` pins trial variables (for example ``ground_truth=1``),
        each a scalar or an array of length ``n``."""
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        cond = self._conditions(rng, n)
        for k, v in fixed.items():
            if k not in cond:
                raise ValueError(f"{self.name}: unknown trial variable {k!r}; variables: {sorted(cond)}")
            cond[k] = np.broadcast_to(np.asarray(v, dtype=cond[k].dtype), (n,)).copy()
        self._derive(cond)
        dur = self._durations(rng, n, cond)
        lens = np.stack([self.steps(dur[p]) for p in self.period_names], axis=1)  # (n, P)
        ends = np.cumsum(lens, axis=1)
        starts = ends - lens
        lengths = ends[:, -1]
        t_max = int(lengths.max())
        t = np.arange(t_max)
        periods = {p: np.stack([starts[:, k], ends[:, k]], axis=1) for k, p in enumerate(self.period_names)}

        def where(period: str) -> np.ndarray:
            s, e = periods[period][:, 0:1], periods[period][:, 1:2]
            return (t[None, :] >= s) & (t[None, :] < e)

        inputs = np.zeros((n, t_max, self.n_input), dtype=np.float32)
        targets = np.zeros((n, t_max), dtype=np.int64)
        # fixation input on before the response period
        inputs[:, :, 0] = t[None, :] < periods[self.response_period][:, 0:1]
        self._fill(inputs, targets, where, cond, periods)
        if self.sigma > 0 and self.noisy_periods:
            mask = np.zeros((n, t_max), dtype=bool)
            for p in self.noisy_periods:
                mask |= where(p)
            ch = list(self.noisy_channels)
            noise = rng.standard_normal((n, t_max, len(ch))).astype(np.float32) * np.float32(self.sigma / np.sqrt(self.dt))
            inputs[:, :, ch] += noise * mask[:, :, None]
        alive = t[None, :] < lengths[:, None]
        inputs *= alive[:, :, None]
        targets[~alive] = -1
        return TrialBatch(inputs, targets, where(self.response_period), lengths, periods, cond, self.name, self.dt)

    def _derive(self, cond: dict[str, np.ndarray]) -> None:
        """Compute variables that follow from the drawn ones (after ``fixed`` is applied)."""

    def score(self, actions: np.ndarray, batch: TrialBatch) -> tuple[np.ndarray, np.ndarray]:
        """Apply the response rule to ``actions`` ``(n, T)``: (correct, aborted) per trial.

        Choice tasks (NeuroGym's rule): the first non-fixate action in the response period
        decides; the trial is correct when it equals the ground truth. A trial without
        one is wrong. ``aborted``: some non-fixate action in the fixation period.
        """
        actions = np.asarray(actions)
        resp = batch.response_mask & (actions != 0)
        has = resp.any(axis=1)
        first = np.argmax(resp, axis=1)
        rows = np.arange(batch.n)
        correct = has & (actions[rows, first] == batch.targets[rows, first])
        return correct, self._aborted(actions, batch)

    def _aborted(self, actions: np.ndarray, batch: TrialBatch) -> np.ndarray:
        s, e = batch.periods["fixation"][:, 0:1], batch.periods["fixation"][:, 1:2]
        t = np.arange(actions.shape[1])[None, :]
        return (((t >= s) & (t < e)) & (actions != 0)).any(axis=1)

    def response_reward(self, action: int, target: int, t: int, periods: dict[str, tuple[int, int]], cond: dict[str, Any]) -> tuple[float, bool, bool]:
        """(reward, trial ends, correct) for a non-fixate ``action`` at step ``t`` of the response period."""
        if action == target:
            return self.rewards["correct"], True, True
        return self.rewards["fail"], True, False

    def end_reward(self, cond: dict[str, Any]) -> tuple[float, bool]:
        """(reward, correct) when a trial runs out without a response."""
        return 0.0, False

    def description(self) -> str:
        return (type(self).__doc__ or "").strip().splitlines()[0]


def _ring(dim: int) -> np.ndarray:
    return np.linspace(0, 2 * np.pi, dim, endpoint=False)


@dataclass
class PerceptualDecision(CognitiveTask):
    """Perceptual decision making: integrate a noisy stimulus, report the stronger direction (Britten et al. 1992).

    Inputs: fixation, ``dim_ring`` stimulus channels with mean ``cos(theta - theta_gt) * coh / 200 + 0.5``.
    Actions: fixate, choice 1..dim_ring. Ground truth: the choice of ``theta_gt`` in the decision period.
    """

    cohs: tuple[float, ...] = (0.0, 6.4, 12.8, 25.6, 51.2)
    dim_ring: int = 2

    name = "perceptual_decision"
    neurogym_id = "PerceptualDecisionMaking-v0"
    period_names = ("fixation", "stimulus", "delay", "decision")
    default_timing = {"fixation": 100, "stimulus": 2000, "delay": 0, "decision": 100}
    noisy_periods = ("stimulus",)

    def __post_init__(self) -> None:
        if self.dim_ring < 2:
            raise ValueError(f"dim_ring must be >= 2, got {self.dim_ring}")
        self.input_names = ("fixation",) + tuple(f"stimulus{i + 1}" for i in range(self.dim_ring))
        self.action_names = ("fixate",) + tuple(f"choice{i + 1}" for i in range(self.dim_ring))
        self.noisy_channels = tuple(range(1, 1 + self.dim_ring))
        super().__post_init__()

    def _conditions(self, rng, n):
        return {"ground_truth": rng.integers(0, self.dim_ring, size=n), "coh": uniform_choice(rng, self.cohs, n)}

    def _fill(self, inputs, targets, where, cond, periods):
        theta = _ring(self.dim_ring)
        mean = np.cos(theta[None, :] - theta[cond["ground_truth"]][:, None]) * (cond["coh"][:, None] / 200.0) + 0.5
        add_channels(inputs, 1, where("stimulus"), mean.astype(np.float32))
        targets[:] = np.where(where("decision"), cond["ground_truth"][:, None] + 1, 0)

    def task_variables(self, batch):
        theta = _ring(self.dim_ring)[batch.conditions["ground_truth"]]
        c = batch.conditions["coh"] / 100.0
        return {"evidence_cos": c * np.cos(theta), "evidence_sin": c * np.sin(theta)} if self.dim_ring > 2 else {"signed_coherence": c * np.cos(theta)}


@dataclass
class ContextIntegration(CognitiveTask):
    """Context-dependent integration: two noisy modalities, an explicit context cue says which to report (Mante et al. 2013).

    Inputs: fixation, modality 1 (``dim_ring``), modality 2 (``dim_ring``), context 1, context 2.
    Actions: fixate, choice 1..dim_ring. Ground truth: the choice the cued modality points to.
    """

    cohs: tuple[float, ...] = (5.0, 15.0, 50.0)
    dim_ring: int = 2

    name = "context_integration"
    neurogym_id = "ContextDecisionMaking-v0"
    period_names = ("fixation", "stimulus", "delay", "decision")
    default_timing = {"fixation": 300, "stimulus": 750, "delay": ("truncexp", 600, 300, 3000), "decision": 100}
    noisy_periods = ("stimulus",)

    def __post_init__(self) -> None:
        if self.dim_ring < 2:
            raise ValueError(f"dim_ring must be >= 2, got {self.dim_ring}")
        r = self.dim_ring
        self.input_names = (
            ("fixation",) + tuple(f"mod1_{i + 1}" for i in range(r)) + tuple(f"mod2_{i + 1}" for i in range(r)) + ("context1", "context2")
        )
        self.action_names = ("fixate",) + tuple(f"choice{i + 1}" for i in range(r))
        self.noisy_channels = tuple(range(1, 1 + 2 * r))
        super().__post_init__()

    def _conditions(self, rng, n):
        # one integers call for the variables of one range, in their order: the values (and the generator's state
        # after them) of one call per variable, since each value takes its own 32-bit draws (tests/cognitive/test_tasks.py)
        r = self.dim_ring
        if r == 2:
            ground_truth, other_choice, context = rng.integers(0, 2, size=3 * n).reshape(3, n)
        else:
            ground_truth, other_choice = rng.integers(0, r, size=2 * n).reshape(2, n)
            context = rng.integers(0, 2, size=n)
        coh_1, coh_2 = uniform_choice(rng, self.cohs, 2 * n).reshape(2, n)
        return {"ground_truth": ground_truth, "other_choice": other_choice, "context": context, "coh_1": coh_1, "coh_2": coh_2}

    def _conditions_many(self, rngs, n):
        # _conditions' integers calls, every generator's at once (integers_many)
        r, g = self.dim_ring, len(rngs)
        if r == 2:
            ints, coh = integers_many(rngs, [(2, 3 * n), (len(self.cohs), 2 * n)])
            ints = ints.reshape(g, 3, n)
        else:
            pair, context, coh = integers_many(rngs, [(r, 2 * n), (2, n), (len(self.cohs), 2 * n)])
            ints = np.concatenate([pair.reshape(g, 2, n), context[:, None, :]], axis=1)
        coh = np.asarray(self.cohs, dtype=float)[coh.reshape(g, 2, n)]
        return {"ground_truth": ints[:, 0].reshape(-1), "other_choice": ints[:, 1].reshape(-1), "context": ints[:, 2].reshape(-1),
                "coh_1": coh[:, 0].reshape(-1), "coh_2": coh[:, 1].reshape(-1)}

    def _derive(self, cond):
        # modality 1 shows the ground truth in context 0, the other choice in context 1 (NeuroGym's convention)
        ctx = cond["context"] == 1
        cond["choice_1"] = np.where(ctx, cond["other_choice"], cond["ground_truth"])
        cond["choice_2"] = np.where(ctx, cond["ground_truth"], cond["other_choice"])

    def _fill(self, inputs, targets, where, cond, periods):
        r = self.dim_ring
        theta = _ring(r)
        stim = where("stimulus")
        for m in (1, 2):
            mean = np.cos(theta[None, :] - theta[cond[f"choice_{m}"]][:, None]) * (cond[f"coh_{m}"][:, None] / 200.0) + 0.5
            add_channels(inputs, 1 + (m - 1) * r, stim, mean.astype(np.float32))
        ctx_on = ~where("decision")
        inputs[:, :, 1 + 2 * r] = ctx_on & (cond["context"] == 0)[:, None]
        inputs[:, :, 2 + 2 * r] = ctx_on & (cond["context"] == 1)[:, None]
        targets[:] = np.where(where("decision"), cond["ground_truth"][:, None] + 1, 0)

    def task_variables(self, batch):
        c = batch.conditions
        theta = _ring(self.dim_ring)
        e1 = c["coh_1"] / 100.0 * np.cos(theta[c["choice_1"]])
        e2 = c["coh_2"] / 100.0 * np.cos(theta[c["choice_2"]])
        return {"context": c["context"].astype(float), "evidence_mod1": e1, "evidence_mod2": e2, "relevant_evidence": np.where(c["context"] == 0, e1, e2)}


@dataclass
class DelayedMatch(CognitiveTask):
    """Delayed match-to-sample: hold a sample through a delay, report whether the test matches (Miller et al. 1996).

    Inputs: fixation, ``dim_ring`` stimulus channels (mean ``cos(theta - x) * 0.5 + 0.5``).
    Actions: fixate, match, non-match. Ground truth: 1 (match) or 2 (non-match) in the decision period.
    """

    dim_ring: int = 2

    name = "delayed_match"
    neurogym_id = "DelayMatchSample-v0"
    period_names = ("fixation", "sample", "delay", "test", "decision")
    default_timing = {"fixation": 300, "sample": 500, "delay": 1000, "test": 500, "decision": 900}
    noisy_periods = ("sample", "test")

    def __post_init__(self) -> None:
        if self.dim_ring < 2:
            raise ValueError(f"dim_ring must be >= 2, got {self.dim_ring}")
        self.action_names = ("fixate", "match", "non-match")
        self.input_names = ("fixation",) + tuple(f"stimulus{i + 1}" for i in range(self.dim_ring))
        self.noisy_channels = tuple(range(1, 1 + self.dim_ring))
        super().__post_init__()

    def _conditions(self, rng, n):
        # ground_truth is the correct action: 1 = match, 2 = non-match
        return {"ground_truth": rng.integers(1, 3, size=n), "sample": rng.integers(0, self.dim_ring, size=n)}

    def _fill(self, inputs, targets, where, cond, periods):
        theta = _ring(self.dim_ring)
        x_sample = theta[cond["sample"]]
        x_test = np.where(cond["ground_truth"] == 1, x_sample, np.mod(x_sample + np.pi, 2 * np.pi))
        for period, x in (("sample", x_sample), ("test", x_test)):
            mean = np.cos(theta[None, :] - x[:, None]) * 0.5 + 0.5
            add_channels(inputs, 1, where(period), mean.astype(np.float32))
        targets[:] = np.where(where("decision"), cond["ground_truth"][:, None], 0)

    def task_variables(self, batch):
        x = _ring(self.dim_ring)[batch.conditions["sample"]]
        return {"sample_cos": np.cos(x), "sample_sin": np.sin(x)} if self.dim_ring > 2 else {"sample": np.cos(x)}


@dataclass
class GoNoGo(CognitiveTask):
    """Go/no-go: a go or a no-go cue, a delay, then respond only after the go cue.

    Inputs: fixation, no-go cue, go cue. Actions: fixate, go. Ground truth: 1 in the decision
    period of go trials, 0 otherwise. Rewards (NeuroGym): correct +1, a go on a no-go trial
    -0.5, no go on a go trial (miss) -0.5. NeuroGym's cues carry no noise (``sigma`` adds it).
    """

    name = "go_nogo"
    neurogym_id = "GoNogo-v0"
    period_names = ("fixation", "stimulus", "delay", "decision")
    default_timing = {"fixation": 0, "stimulus": 500, "delay": 500, "decision": 500}
    noisy_periods = ("stimulus",)
    rewards: ClassVar[dict[str, float]] = {"abort": -0.1, "correct": 1.0, "fail": -0.5, "miss": -0.5}

    sigma: float = 0.0

    def __post_init__(self) -> None:
        self.input_names = ("fixation", "nogo", "go")
        self.action_names = ("fixate", "go")
        self.noisy_channels = (1, 2)
        super().__post_init__()

    def _conditions(self, rng, n):
        return {"ground_truth": rng.integers(0, 2, size=n)}

    def _fill(self, inputs, targets, where, cond, periods):
        stim = where("stimulus")
        inputs[:, :, 1] = stim & (cond["ground_truth"] == 0)[:, None]
        inputs[:, :, 2] = stim & (cond["ground_truth"] == 1)[:, None]
        targets[:] = np.where(where("decision"), cond["ground_truth"][:, None], 0)

    def score(self, actions, batch):
        go = (batch.response_mask & (np.asarray(actions) == 1)).any(axis=1)
        return go == (batch.conditions["ground_truth"] == 1), self._aborted(actions, batch)

    def response_reward(self, action, target, t, periods, cond):
        if target == 1:
            return self.rewards["correct"], True, True
        return self.rewards["fail"], True, False

    def end_reward(self, cond):
        if int(cond["ground_truth"]) == 1:
            return self.rewards["miss"], False
        return 0.0, True

    def task_variables(self, batch):
        return {"go": batch.conditions["ground_truth"].astype(float)}


@dataclass
class DelayedComparison(CognitiveTask):
    """Delayed comparison: two vibration frequencies separated by a delay; report whether f1 > f2 (Romo et al. 1999).

    Inputs: fixation, stimulus (``(1 + (f - f_min) / (f_max - f_min)) / 2``). Actions: fixate,
    f1 > f2, f1 < f2. Ground truth: 1 when f1 > f2, else 2, in the decision period.
    """

    vpairs: tuple[tuple[float, float], ...] = ((18, 10), (22, 14), (26, 18), (30, 22), (34, 26))
    # the range the stimulus encoding is scaled to (None: that of vpairs); fixed when pairs change
    vrange: tuple[float, float] | None = None

    name = "delayed_comparison"
    neurogym_id = "DelayComparison-v0"
    period_names = ("fixation", "stimulus1", "delay", "stimulus2", "decision")
    default_timing = {"fixation": 500, "stimulus1": 500, "delay": 1000, "stimulus2": 500, "decision": 100}
    noisy_periods = ("stimulus1", "stimulus2")

    def __post_init__(self) -> None:
        v = np.asarray(self.vpairs, dtype=float)
        if v.ndim != 2 or v.shape[1] != 2 or np.any(v[:, 0] == v[:, 1]):
            raise ValueError(f"vpairs must be pairs of unequal frequencies, got {self.vpairs!r}")
        self._vmin, self._vmax = self.vrange or (float(v.min()), float(v.max()))
        self.input_names = ("fixation", "stimulus")
        self.action_names = ("fixate", "f1>f2", "f1<f2")
        self.noisy_channels = (1,)
        super().__post_init__()

    def represent(self, f: np.ndarray) -> np.ndarray:
        return (1 + (f - self._vmin) / (self._vmax - self._vmin)) / 2

    def _conditions(self, rng, n):
        return {"ground_truth": rng.integers(1, 3, size=n), "pair": rng.integers(0, len(self.vpairs), size=n)}

    def _derive(self, cond):
        v = np.asarray(self.vpairs, dtype=float)[cond["pair"]]
        hi, lo = v.max(axis=1), v.min(axis=1)
        first_high = cond["ground_truth"] == 1
        cond["f1"] = np.where(first_high, hi, lo)
        cond["f2"] = np.where(first_high, lo, hi)

    def _fill(self, inputs, targets, where, cond, periods):
        inputs[:, :, 1] += where("stimulus1") * self.represent(cond["f1"])[:, None].astype(np.float32)
        inputs[:, :, 1] += where("stimulus2") * self.represent(cond["f2"])[:, None].astype(np.float32)
        targets[:] = np.where(where("decision"), cond["ground_truth"][:, None], 0)

    def task_variables(self, batch):
        return {"f1": batch.conditions["f1"], "f2": batch.conditions["f2"]}


@dataclass
class IntervalTiming(CognitiveTask):
    """Interval timing (ready-set-go): measure the interval between two cues, reproduce it after the set cue (Jazayeri & Shadlen 2010).

    Inputs: fixation, ready, set. Actions: fixate, go. Ground truth (NeuroGym): go at step
    ``int(production / dt)`` of the production period, fixate elsewhere. A go is correct
    when its time after the set cue's onset is within ``prod_margin * production + 25`` ms of
    ``production = gain * measure``; NeuroGym's reward ``max(0.1, (1 - err / margin) ** 1.5)``.
    """

    dt: float = 80.0
    sigma: float = 0.0
    gain: float = 1.0
    prod_margin: float = 0.2

    name = "interval_timing"
    neurogym_id = "ReadySetGo-v0"
    period_names = ("fixation", "ready", "measure", "set", "production")
    default_timing = {"fixation": 100, "ready": 83, "measure": ("uniform", 800, 1500), "set": 83, "production": 0}
    response_period = "production"
    noisy_periods = ()

    def __post_init__(self) -> None:
        if self.gain <= 0 or self.prod_margin <= 0:
            raise ValueError(f"gain and prod_margin must be positive, got {self.gain}, {self.prod_margin}")
        self.input_names = ("fixation", "ready", "set")
        self.action_names = ("fixate", "go")
        super().__post_init__()

    def _conditions(self, rng, n):
        return {"ground_truth": np.ones(n, dtype=np.int64), "measure": sample_duration(self._timing["measure"], rng, n)}

    def _derive(self, cond):
        cond["production"] = cond["measure"] * self.gain

    def _durations(self, rng, n, cond):
        d = {p: sample_duration(self._timing[p], rng, n) for p in self.period_names}
        d["measure"] = cond["measure"]
        d["production"] = 2 * cond["production"]
        return d

    def _fill(self, inputs, targets, where, cond, periods):
        inputs[:, :, 1] = where("ready")
        inputs[:, :, 2] = where("set")
        go_step = periods["production"][:, 0] + (cond["production"] // self.dt).astype(np.int64)
        t = np.arange(targets.shape[1])[None, :]
        targets[:] = (t == go_step[:, None]).astype(np.int64)

    def margin(self, production: np.ndarray) -> np.ndarray:
        return self.prod_margin * production + 25.0

    def score(self, actions, batch):
        actions = np.asarray(actions)
        resp = batch.response_mask & (actions == 1)
        has = resp.any(axis=1)
        first = np.argmax(resp, axis=1)
        t_prod = (first - batch.periods["set"][:, 0]) * self.dt  # ms from the set cue's onset
        err = np.abs(t_prod - batch.conditions["production"])
        return has & (err <= self.margin(batch.conditions["production"])), self._aborted(actions, batch)

    def response_reward(self, action, target, t, periods, cond):
        t_prod = (t - periods["set"][0]) * self.dt
        prod = float(cond["production"])
        err, margin = abs(t_prod - prod), float(self.margin(prod))
        if err > margin:
            return self.rewards["fail"], True, False
        return max(0.1, (1.0 - err / margin) ** 1.5) * self.rewards["correct"], True, True

    def task_variables(self, batch):
        return {"measure": batch.conditions["measure"] / 1000.0}


TASKS: dict[str, type[CognitiveTask]] = {
    t.name: t for t in (PerceptualDecision, ContextIntegration, DelayedMatch, GoNoGo, DelayedComparison, IntervalTiming)
}

# per task: (conditions trained on, held-out conditions) as constructor kwargs. Coherence tasks hold
# out unseen coherences (one weaker than any trained, one in between); memory and timing tasks
# hold out longer delays / intervals.
SPLITS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "perceptual_decision": ({"cohs": (12.8, 25.6, 51.2)}, {"cohs": (3.2, 6.4, 19.2)}),
    "context_integration": ({"cohs": (15.0, 50.0)}, {"cohs": (5.0, 30.0)}),
    "delayed_match": ({"timing": {"delay": 1000}}, {"timing": {"delay": 2000}}),
    "go_nogo": ({"timing": {"delay": 500}}, {"timing": {"delay": 1500}}),
    "delayed_comparison": ({"timing": {"delay": 1000}}, {"timing": {"delay": 2000}}),
    "interval_timing": ({"timing": {"measure": ("uniform", 800, 1500)}}, {"timing": {"measure": ("uniform", 1500, 1900)}}),
}


def make_task(name: str, **kwargs: Any) -> CognitiveTask:
    """The task ``name`` (a key of :data:`TASKS`) built with ``kwargs``; an unknown name raises
    ``ValueError`` listing the known ones."""
    if name not in TASKS:
        close = difflib.get_close_matches(str(name), list(TASKS), n=2, cutoff=0.5)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        raise ValueError(f"unknown cognitive task {name!r}{hint}; tasks: {sorted(TASKS)}")
    cls = TASKS[name]
    if "cohs" in kwargs:
        kwargs["cohs"] = tuple(float(c) for c in kwargs["cohs"])
    if "vpairs" in kwargs:
        kwargs["vpairs"] = tuple(tuple(p) for p in kwargs["vpairs"])
    return cls(**kwargs)


__all__ = ["TASKS", "SPLITS", "CognitiveTask", "TrialBatch", "make_task", "sample_duration"]
