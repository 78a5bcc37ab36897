"""Vector twins of the adaptive sketch attackers: N seeds of probe-and-reset in arrays.

Each twin plays N seeds of its single agent (:mod:`icmlgym.agents.sketch`) in lock step
against :class:`~icmlgym.envs.sketch.vector.SketchAttackVectorEnv` and reproduces it seed by
seed, bit for bit (see :mod:`icmlgym.agents.vector`; ``tests/sketch/test_vector.py``).

**Lock step.** A single agent's plan is its warmup increments and a reading (``repeats``
queries; the refresh attacker's dummy-key resets between them) at the start, then, after each
reading, one increment (a probe) or one reset (a detected key) followed by a reading. Every seed
has plans of the same lengths in the same order, so one plan position serves them all: ``act``
returns the plan's row at that position (each seed's action in row ``i``) and ``update`` does
nothing but store the answers until the plan's last query, where every seed's reading is
processed at once and the next plan is built. The one exception is a seed with nothing left to
probe (no fresh key; for ``sum`` / ``lp`` no kept key either), whose single agent only watches
from then on, reading after reading, for good: it leaves the lock step and repeats the reading's
actions from the step it began (an ``idle`` seed). Seeds whose episode ended are stepped along
(their actions are ignored) but take no part in draws or in going idle.

The single agent's lists and dicts become arrays with the seeds on axis 0:

- the fresh keys (the single agent's shuffled list, popped from its end; the refresh
  attacker's dummy key from its front) are each seed's permutation with two pointers;
- the attacker's copy of the true vector is a dense ``(N, n_keys)`` array, the kept keys an
  ``(N, n_keys)`` array in the single agent's list order with a length per seed;
- a reading is the single agent's ``np.mean`` of its queries' answers: the value itself when
  ``repeats`` is 1, else ``np.add.reduce`` over the rows of an ``(N, repeats)`` array divided by
  ``repeats``, which sums each contiguous row as the 1-d mean does (checked against per-row
  ``np.mean`` on random rows of 1-24 values before relying on it, and by the twins' tests with
  ``repeats`` 2, 3, 5, 9 and 10).

For cardinality (the card's default) a probe is always a fresh key, whose value is 0, so its true
rise is 1.0 and the copy of the truth and the kept list are never read: a reading is a handful of
whole-array masks (:meth:`VectorProbeResetAttack._reading_cardinality`). The only per-seed Python
left is where the single agent draws: for ``sum`` and ``lp`` a probe may re-add a kept key
(``pump``), one ``random()`` and maybe one ``integers()`` call on the seed's generator, made seed
by seed in the single agent's order. A kept key removed after a detected over-count is taken out
of its seed's row in place (rare: only a pumped key).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from icmlgym.agents.protocol import AgentSpec
from icmlgym.agents.sketch import (
    OP_INCREMENT,
    OP_QUERY,
    OP_RESET,
    LinearDescentAttack,
    ProbeAverageAttack,
    ProbeRefreshAttack,
    ProbeResetAttack,
)
from icmlgym.agents.vector import VectorBaseAgent
from icmlgym.envs.sketch.vector import f_of_counts


class VectorProbeResetAttack(VectorBaseAgent):
    """N seeds of :class:`~icmlgym.agents.sketch.ProbeResetAttack` (subclasses: of ``single``).

    Takes the single agent's constructor arguments (and checks them with its messages)."""

    single: type[ProbeResetAttack] = ProbeResetAttack

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.template = t = self.single(**kwargs)
        self.repeats, self.pump, self.keep_ratio, self.warmup = t.repeats, t.pump, t.keep_ratio, t.warmup
        self.refresh = int(getattr(t, "refresh", 0)) if isinstance(t, ProbeRefreshAttack) else 0

    # ------------------------------------------------------------------ reset
    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        n = self.num
        nk, _, self.statistic, self.q, step = self.template.settings(spec)
        self.n_keys, self.step_amount = nk, step
        self.perm = np.stack([rng.permutation(nk) for rng in self.rngs]).astype(np.int64, copy=False) if n else np.zeros((0, nk), np.int64)
        self.lo = np.zeros(n, dtype=np.int64)  # fresh keys of seed i: perm[i, lo[i]:hi[i]]
        self.hi = np.full(n, nk, dtype=np.int64)
        self.values = np.zeros(n * nk, dtype=np.int64)  # flat: seed i's key k at i * nk + k
        # the kept keys in the single agent's list order; only sum and lp ever read them (a re-added key)
        self.kept = np.zeros((n, nk), dtype=np.int64)
        self.kept_len = np.zeros(n, dtype=np.int64)
        self.in_kept = np.zeros(n * nk, dtype=bool)
        w = min(self.warmup, nk)
        rows = np.arange(n)
        lq = 1 + 2 * self.refresh if self.refresh else self.repeats
        self.lq = lq
        queries = np.zeros((lq, n, 3), dtype=np.int64)  # the actions of one reading, position by position
        queries[:, :, 0] = OP_QUERY
        if self.refresh:
            if nk - w < 1:
                raise IndexError("pop from empty list")  # the single agent's dummy key: fresh.pop(0)
            queries[1::2, :, 0] = OP_RESET
            queries[1::2, :, 1] = self.perm[:, :1].T
            self.lo[:] = 1
        self._queries = queries
        self._query_rows = list(queries)
        q_at = [bool(x) for x in queries[:, 0, 0] == OP_QUERY] if n else [True] * lq
        self._cycle_isq = [False] + q_at  # a plan after the first: one increment or reset, then a reading
        warm = []
        if w:  # the single agent's warmup: fresh keys popped from the end, inserted and kept in that order
            keys = self.perm[:, nk - w :][:, ::-1]
            self.hi[:] = nk - w
            self.values[(rows * nk)[:, None] + keys] = step
            self.kept[:, :w] = keys
            self.kept_len[:] = w
            self.in_kept[(rows * nk)[:, None] + keys] = True
            for c in range(w):
                a = np.zeros((n, 3), dtype=np.int64)
                a[:, 0] = OP_INCREMENT
                a[:, 1] = keys[:, c]
                a[:, 2] = step - 1
                warm.append(a)
        # every seed plays its plan in lock step: the same length, the same position (see the class)
        self._plan = warm + self._query_rows
        self._plan_isq = [False] * w + q_at
        self._pos = 0
        self._t = 0  # actions returned this episode
        self.readings = np.zeros((n, self.repeats))
        self._nread = 0
        self.baseline = np.zeros(n)  # 0.0 until a seed's first reading, as the single agent's rise takes it
        self.probe_key = np.zeros(n, dtype=np.int64)
        self.probe_rise = np.zeros(n)
        self.has_probe = np.zeros(n, dtype=bool)
        self.probing = np.zeros(n, dtype=bool)  # stage "probe" (else "baseline")
        self.idle = np.zeros(n, dtype=bool)  # seeds with nothing left to probe, which only watch from then on
        self.idle_from = np.zeros(n, dtype=np.int64)  # the action index of an idle seed's first watching query
        self._any_idle = False
        self._perm_flat = self.perm.reshape(-1)
        self._perm_at = rows * nk
        self._thr_one = self.keep_ratio * 1.0 + 1e-9 * (1.0 + 1.0)  # the keep threshold of a true rise of 1.0
        self._watch = np.zeros((n, 3), dtype=np.int64)
        self._watch[:, 0] = OP_QUERY
        self._rows = rows

    def _f(self, v: np.ndarray) -> np.ndarray:
        """The single agent's ``_f`` elementwise."""
        return f_of_counts(self.statistic, self.q, v)

    # ------------------------------------------------------------------ act
    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        pos, t = self._pos, self._t
        self._pos, self._t = pos + 1, t + 1
        a = self._plan[pos]
        if self._any_idle and self.lq > 1:  # an idle seed repeats the reading's actions from where it began
            a = a.copy()
            r = self._idle_rows
            a[r] = self._queries[(t - self.idle_from[r]) % self.lq, r]
        return a

    # ------------------------------------------------------------------ update
    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        if not self._plan_isq[self._pos - 1]:
            return
        if self.repeats > 1:
            self.readings[:, self._nread] = np.asarray(next_obs)[:, 0]
            self._nread += 1
        if self._pos == len(self._plan):  # a plan ends with its reading's last query
            self._reading(np.asarray(next_obs)[:, 0], ~np.logical_or(terminated, truncated))

    def _reading(self, answers: np.ndarray, live: np.ndarray) -> None:
        """The single agent's ``update`` after a reading's last query, for every seed, and its next plan.

        A seed that probed a key keeps it (its answer rose at most as much as the truth) or resets it
        (a reset then a reading); every other seed (a first reading, a key kept, a reset read) probes
        next. Seeds that ended (``live`` false) and idle seeds take no part."""
        if self.repeats == 1:  # np.mean of one value is the value
            reading = answers
        else:
            # numpy reduces each contiguous row of a 2-d array with the 1-d array's pairwise sum: the single np.mean's doubles
            reading = np.add.reduce(self.readings, axis=1) / self.repeats
            self._nread = 0
        if self.statistic == "cardinality":
            return self._reading_cardinality(reading, live)
        pm = self.probing & self.has_probe  # seeds whose reading follows a probe
        tr = self.probe_rise
        rise = reading - self.baseline
        # equal rises (an exact count) are kept: only over-counted keys give the sketch away
        detected = ~(rise <= self.keep_ratio * tr + 1e-9 * (1.0 + np.abs(tr)))
        detected &= pm
        np.copyto(self.baseline, reading, where=~detected)  # a first reading, a reset read or a key kept
        self.has_probe[:] = False
        nk = self.n_keys
        cardinality = self.statistic == "cardinality"
        if not cardinality:  # a kept key joins the list once, in order (sum and lp re-add them)
            kr = np.flatnonzero(pm & ~detected)
            kk = self.probe_key[kr]
            new = ~self.in_kept[kr * nk + kk]
            kn, kkn = kr[new], kk[new]
            self.kept[kn, self.kept_len[kn]] = kkn
            self.kept_len[kn] += 1
            self.in_kept[kn * nk + kkn] = True
        first = self._watch.copy()
        xr = np.flatnonzero(detected)
        if len(xr):  # over-counted: reset the key and read the answer again
            xk = self.probe_key[xr]
            flat = xr * nk + xk
            self.values[flat] = 0
            if not cardinality:
                for i, k in zip(xr[self.in_kept[flat]].tolist(), xk[self.in_kept[flat]].tolist()):
                    n = int(self.kept_len[i])
                    j = int(np.flatnonzero(self.kept[i, :n] == k)[0])
                    self.kept[i, j : n - 1] = self.kept[i, j + 1 : n]
                    self.kept_len[i] = n - 1
                self.in_kept[flat] = False
            first[xr, 0] = OP_RESET
            first[xr, 1] = xk
        self.probing = ~detected
        probe = self.probing & live
        if self._any_idle:
            probe &= ~self.idle
        self._next_probe(np.flatnonzero(probe), first)
        self._plan = [first] + self._query_rows
        self._plan_isq = self._cycle_isq
        self._pos = 0

    def _reading_cardinality(self, reading: np.ndarray, live: np.ndarray) -> None:
        """:meth:`_reading` for cardinality, in whole-array masks.

        For cardinality every probe is a fresh key (a kept key adds nothing, so none is re-added),
        whose value is 0: its true rise is ``f(step) - f(0) = 1.0``, and the attacker's copy of the
        truth and its kept list are never read. So a reading needs only each seed's baseline, its
        stage, its probed key and its fresh-key pointer."""
        pm = self.probing & self.has_probe
        rise = reading - self.baseline
        detected = ~(rise <= self._thr_one)
        detected &= pm
        np.copyto(self.baseline, reading, where=~detected)
        self.probing = ~detected
        probe = self.probing & live
        if self._any_idle:
            probe &= ~self.idle
        go = probe & (self.hi > self.lo)
        if np.count_nonzero(go) < np.count_nonzero(probe):
            self._set_idle(np.flatnonzero(probe & ~go))
        self.hi -= go
        # the popped key perm[i, hi[i]] (a row that does not probe reads some key, unused)
        keys = self._perm_flat.take(self._perm_at + self.hi, mode="clip")
        first = np.empty((self.num, 3), dtype=np.int64)
        first[:, 0] = OP_QUERY - 2 * go - detected  # increment (0) a probed key, reset (1) a detected one, else query
        first[:, 1] = keys * go + self.probe_key * detected
        first[:, 2] = go * (self.step_amount - 1)
        self.probe_key = keys
        self.has_probe = go
        self._plan = [first] + self._query_rows
        self._plan_isq = self._cycle_isq
        self._pos = 0

    def _set_idle(self, rows: np.ndarray) -> None:
        """``rows`` have nothing left to probe: they watch from the next action on (for good: nothing can be probed again)."""
        self.idle[rows] = True
        self.idle_from[rows] = self._t
        self._any_idle = True
        self._idle_rows = np.flatnonzero(self.idle)

    def _next_probe(self, rows: np.ndarray, first: np.ndarray) -> None:
        """The single agent's ``_next_probe`` for ``rows`` (in stage probe): writes their first actions."""
        nk = self.n_keys
        if self.statistic == "cardinality":
            has = self.hi[rows] > self.lo[rows]
            pr = rows[has]
            self.hi[pr] -= 1
            keys = self.perm[pr, self.hi[pr]]
            idle = rows[~has]
        else:  # a probe may re-add a kept key: the seed's generator draws, in the single agent's order
            picked, keys_l, idle_l = [], [], []
            hi, lo, kept, kept_len, rngs, pump = self.hi, self.lo, self.kept, self.kept_len, self.rngs, self.pump
            for i in rows.tolist():
                kl = int(kept_len[i])
                if kl and rngs[i].random() < pump:
                    key = int(kept[i, int(rngs[i].integers(kl))])
                elif hi[i] > lo[i]:
                    hi[i] -= 1
                    key = int(self.perm[i, hi[i]])
                elif kl:
                    key = int(kept[i, int(rngs[i].integers(kl))])
                else:
                    idle_l.append(i)
                    continue
                picked.append(i)
                keys_l.append(key)
            pr = np.array(picked, dtype=np.int64)
            keys = np.array(keys_l, dtype=np.int64)
            idle = np.array(idle_l, dtype=np.int64)
        if len(idle):
            self._set_idle(idle)
        if len(pr):
            flat = pr * nk + keys
            old = self.values[flat]
            new = old + self.step_amount
            self.probe_key[pr] = keys
            self.probe_rise[pr] = self._f(new) - self._f(old)
            self.has_probe[pr] = True
            self.values[flat] = new
            first[pr, 0] = OP_INCREMENT
            first[pr, 1] = keys
            first[pr, 2] = self.step_amount - 1


class VectorProbeAverageAttack(VectorProbeResetAttack):
    """N seeds of :class:`~icmlgym.agents.sketch.ProbeAverageAttack`."""

    single = ProbeAverageAttack


class VectorLinearDescentAttack(VectorProbeResetAttack):
    """N seeds of :class:`~icmlgym.agents.sketch.LinearDescentAttack`."""

    single = LinearDescentAttack


class VectorProbeRefreshAttack(VectorProbeResetAttack):
    """N seeds of :class:`~icmlgym.agents.sketch.ProbeRefreshAttack` (its dummy-key resets are in each seed's query plan)."""

    single = ProbeRefreshAttack


__all__ = ["VectorLinearDescentAttack", "VectorProbeAverageAttack", "VectorProbeRefreshAttack", "VectorProbeResetAttack"]
