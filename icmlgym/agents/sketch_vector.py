"""Vector twins of the adaptive sketch attackers: N seeds of probe-and-reset in arrays.

Each twin plays N seeds of its single agent (:mod:`icmlgym.agents.sketch`) in lock step
against :class:`~icmlgym.envs.sketch.vector.SketchAttackVectorEnv` and reproduces it seed by
seed, bit for bit (see :mod:`icmlgym.agents.vector`; ``tests/sketch/test_vector.py``). The
single agent's lists and dicts become arrays with the seeds on axis 0:

- the fresh keys (the single agent's shuffled list, popped from its end; the refresh
  attacker's dummy key from its front) are each seed's permutation with two pointers;
- the attacker's copy of the true vector is a dense ``(N, n_keys)`` array, the kept keys an
  ``(N, n_keys)`` array in the single agent's list order with a length per seed;
- the plan (the actions queued by the single agent) is an ``(N, L, 3)`` buffer with a
  position and a length per seed, filled from the same templates (the queries of a reading,
  a probe's increment, a detected key's reset);
- a reading is the single agent's ``np.mean`` of its queries' answers: the value itself when
  ``repeats`` is 1, else ``np.add.reduce`` over the rows of an ``(n, repeats)`` array divided by
  ``repeats``, which sums each contiguous row as the 1-d mean does (checked against per-row
  ``np.mean`` on random rows of 1-24 values before relying on it, and by the twins' tests with
  ``repeats`` 5, 9 and 10).

The only per-seed Python left is where the single agent draws: for ``sum`` and ``lp`` a
probe may re-add a kept key (``pump``), one ``random()`` and maybe one ``integers()`` call on
the seed's generator, made seed by seed in the single agent's order. For cardinality (the
card's default) the attackers draw only their permutation at reset. A kept key removed after
a detected over-count is taken out of its seed's row in place (rare: only a pumped key).
Rows of seeds whose episode has ended are no longer stepped (their action is a query,
ignored by the env).
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
        self.perm = np.stack([rng.permutation(nk) for rng in self.rngs]).astype(np.int64, copy=False)
        self.lo = np.zeros(n, dtype=np.int64)  # fresh keys of seed i: perm[i, lo[i]:hi[i]]
        self.hi = np.full(n, nk, dtype=np.int64)
        self.values = np.zeros(n * nk, dtype=np.int64)  # flat: seed i's key k at i * nk + k
        self.kept = np.zeros((n, nk), dtype=np.int64)
        self.kept_len = np.zeros(n, dtype=np.int64)
        self.in_kept = np.zeros(n * nk, dtype=bool)
        w = min(self.warmup, nk)
        rows = np.arange(n)
        lq = 1 + 2 * self.refresh if self.refresh else self.repeats
        self.lq = lq
        self.plan = np.zeros((n, max(1 + lq, w), 3), dtype=np.int64)
        self.plan_pos = np.zeros(n, dtype=np.int64)
        self.plan_len = np.zeros(n, dtype=np.int64)
        if w:  # the single agent's warmup: fresh keys popped from the end, inserted and kept in that order
            keys = self.perm[:, nk - w :][:, ::-1]
            self.hi[:] = nk - w
            self.values[(rows * nk)[:, None] + keys] = step
            self.kept[:, :w] = keys
            self.kept_len[:] = w
            self.in_kept[(rows * nk)[:, None] + keys] = True
            self.plan[:, :w, 0] = OP_INCREMENT
            self.plan[:, :w, 1] = keys
            self.plan[:, :w, 2] = step - 1
            self.plan_len[:] = w
        self.queries = np.zeros((n, lq, 3), dtype=np.int64)  # each seed's plan of one reading
        self.queries[:, :, 0] = OP_QUERY
        if self.refresh:
            if nk - w < 1:
                raise IndexError("pop from empty list")  # the single agent's dummy key: fresh.pop(0)
            self.queries[:, 1::2, 0] = OP_RESET
            self.queries[:, 1::2, 1] = self.perm[:, :1]
            self.lo[:] = 1
        self.readings = np.zeros((n, self.repeats))
        self.nread = np.zeros(n, dtype=np.int64)
        self.baseline = np.zeros(n)
        self.has_baseline = np.zeros(n, dtype=bool)
        self.probe_key = np.zeros(n, dtype=np.int64)
        self.probe_rise = np.zeros(n)
        self.has_probe = np.zeros(n, dtype=bool)
        self.probing = np.zeros(n, dtype=bool)  # stage "probe" (else "baseline")
        self.live = np.ones(n, dtype=bool)
        self._all_live = True
        self._rows = rows
        self._idle = np.array([OP_QUERY, 0, 0], dtype=np.int64)

    def _f(self, v: np.ndarray) -> np.ndarray:
        """The single agent's ``_f`` elementwise."""
        return f_of_counts(self.statistic, self.q, v)

    def _plan(self, rows: np.ndarray, first: np.ndarray | None) -> None:
        """Queue a reading's queries for ``rows``, after one action per row (``first``, (k, 3)) if given."""
        k = 0 if first is None else 1
        if first is not None:
            self.plan[rows, 0] = first
        self.plan[rows, k : k + self.lq] = self.queries[rows]
        self.plan_len[rows] = k + self.lq
        self.plan_pos[rows] = 0

    # ------------------------------------------------------------------ act
    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        rows = self._rows if self._all_live else np.flatnonzero(self.live)
        pos = self.plan_pos[rows]
        empty = pos >= self.plan_len[rows]
        if np.count_nonzero(empty):
            re = rows[empty]
            probing = self.probing[re]
            n_probing = np.count_nonzero(probing)
            if n_probing < len(re):
                self._plan(re[~probing], None)
            if n_probing:
                self._next_probe(re[probing])
            pos = self.plan_pos[rows]
        a = self.plan[rows, pos]
        self.plan_pos[rows] = pos + 1
        if self._all_live:
            return a
        out = np.empty((self.num, 3), dtype=np.int64)
        out[:] = self._idle
        out[rows] = a
        return out

    def _next_probe(self, rows: np.ndarray) -> None:
        """The single agent's ``_next_probe`` for ``rows`` (each with an empty plan, in stage probe)."""
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
            self._plan(idle, None)  # nothing left to probe: watch
        if len(pr):
            flat = pr * nk + keys
            old = self.values[flat]
            new = old + self.step_amount
            self.probe_key[pr] = keys
            self.probe_rise[pr] = self._f(new) - self._f(old)
            self.has_probe[pr] = True
            self.values[flat] = new
            first = np.empty((len(pr), 3), dtype=np.int64)
            first[:, 0] = OP_INCREMENT
            first[:, 1] = keys
            first[:, 2] = self.step_amount - 1
            self._plan(pr, first)

    # ------------------------------------------------------------------ update
    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        rows = self._rows if self._all_live else np.flatnonzero(self.live)
        a = np.asarray(actions)
        qr = rows[a[rows, 0] == OP_QUERY]
        if len(qr):
            self._readings(qr, np.asarray(next_obs)[qr, 0])
        ended = np.logical_or(terminated, truncated)
        if np.count_nonzero(ended[rows]):
            self.live &= ~ended
            self._all_live = False

    def _readings(self, qr: np.ndarray, answers: np.ndarray) -> None:
        """The single agent's ``update`` after a query, for the rows ``qr`` that queried."""
        if self.repeats == 1:  # every reading plan ends with its one query; np.mean of one value is the value
            done = self.plan_pos[qr] >= self.plan_len[qr]
            cr, reading = qr[done], answers[done]
        else:
            self.readings[qr, self.nread[qr]] = answers
            self.nread[qr] += 1
            done = (self.nread[qr] >= self.repeats) & (self.plan_pos[qr] >= self.plan_len[qr])
            cr = qr[done]
            # a reading plan has exactly ``repeats`` queries, so each row is full; numpy reduces each
            # contiguous row of a 2-d array with the 1-d array's pairwise sum: the single np.mean's doubles
            reading = np.add.reduce(self.readings[cr], axis=1) / self.repeats
            self.nread[cr] = 0
        if not len(cr):
            return
        base = ~(self.probing[cr] & self.has_probe[cr])
        n_base = np.count_nonzero(base)
        if n_base:
            rb = cr[base]
            self.baseline[rb] = reading[base]
            self.has_baseline[rb] = True
            self.probing[rb] = True
            if n_base == len(cr):
                return
        rp, rd = cr[~base], reading[~base]
        key, tr = self.probe_key[rp], self.probe_rise[rp]
        self.has_probe[rp] = False
        rise = rd - np.where(self.has_baseline[rp], self.baseline[rp], 0.0)
        # equal rises (an exact count) are kept: only over-counted keys give the sketch away
        keep = rise <= self.keep_ratio * tr + 1e-9 * (1.0 + np.abs(tr))
        nk = self.n_keys
        n_keep = np.count_nonzero(keep)
        if n_keep:
            kr, kk = rp[keep], key[keep]
            new = ~self.in_kept[kr * nk + kk]
            kn, kkn = kr[new], kk[new]
            self.kept[kn, self.kept_len[kn]] = kkn
            self.kept_len[kn] += 1
            self.in_kept[kn * nk + kkn] = True
            self.baseline[kr] = rd[keep]
        if n_keep < len(rp):
            xr, xk = rp[~keep], key[~keep]
            flat = xr * nk + xk
            self.values[flat] = 0
            for i, k in zip(xr[self.in_kept[flat]].tolist(), xk[self.in_kept[flat]].tolist()):
                n = int(self.kept_len[i])
                j = int(np.flatnonzero(self.kept[i, :n] == k)[0])
                self.kept[i, j : n - 1] = self.kept[i, j + 1 : n]
                self.kept_len[i] = n - 1
            self.in_kept[flat] = False
            first = np.zeros((len(xr), 3), dtype=np.int64)
            first[:, 0] = OP_RESET
            first[:, 1] = xk
            self._plan(xr, first)
            self.probing[xr] = False


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
