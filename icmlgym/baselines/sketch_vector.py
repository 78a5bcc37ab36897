"""Vector twins of the oblivious sketch attackers (see :mod:`icmlgym.agents.vector`).

- :class:`VectorObliviousWorstCaseStream`: the worst-case stream's schedule (queries, the heavy
  key, the sliding window's inserts and resets) depends on nothing but the step and the query
  budget left, which is the same for every seed still playing, so it runs once, on label
  indices, and each seed maps the indices through its own permutation of the keys: one
  schedule step and one gather per step for all seeds.
- :class:`VectorObliviousRandomStream`: the random stream interleaves ``random()`` and
  ``integers()`` calls on each seed's generator (a double takes a whole 64-bit output, a small
  integer a buffered 32-bit half), so the twin reads each seed's raw outputs and does numpy's
  conversions itself, for all seeds and a block of 128 steps at once: the stream ignores what it
  sees, so its actions can be decoded ahead (see the class).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Sequence

import numpy as np

from icmlgym.agents.protocol import AgentSpec
from icmlgym.agents.vector import PerSeedAgents, VectorBaseAgent
from icmlgym.baselines.sketch import OP_INCREMENT, OP_QUERY, OP_RESET, ObliviousRandomStream, ObliviousWorstCaseStream, budgets


_RAW = 2048  # 64-bit outputs of each seed's generator held at once (refilled as they are used)
_BLOCK = 128  # steps of every seed decoded at once (a block reads at most 3 outputs a step)
_M32 = np.uint64(0xFFFFFFFF)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53
_U11, _U32 = np.uint64(11), np.uint64(32)
_THREE = np.arange(3)
# by a step's code (bit 0 a query, bit 1 a reset if a half is buffered, bit 2 one if none is) and h,
# the next state's offset from 2 * j: a query reads 1 output and keeps h; with h a reset reads 2 and
# clears it, an increment reads 3 and keeps it; without h both read 3, a reset sets h
_NEXT = np.array([[2 if c & 1 else (7 if c & 4 else 6), 3 if c & 1 else (4 if c & 2 else 7)] for c in range(8)], dtype=np.int64)
# by (code << 1) | h: the op, + 4 when the step leaves a new half buffered (a reset without h, an increment with h)
_KIND = np.array(
    [OP_QUERY if c & 1 else (OP_RESET + 4 * (1 - hh) if (c >> (1 if hh else 2)) & 1 else OP_INCREMENT + 4 * hh)
     for c in range(8) for hh in (0, 1)], dtype=np.int64)


class VectorObliviousRandomStream(VectorBaseAgent):
    """N seeds of :class:`~icmlgym.baselines.sketch.ObliviousRandomStream`, their draws emulated in arrays.

    The single agent calls ``random()``, ``integers(n_keys)``, ``random()``, ``integers(max_increment)``
    on its ``np.random.default_rng(seed)`` (stopping early for a query or a reset). Each seed's
    generator is read here as raw 64-bit outputs (``bit_generator.random_raw``, the stream those
    calls consume) and each call is done as numpy's ``Generator`` does it: a double is
    ``(w >> 11) * 2**-53`` of the next output; a bounded integer below ``n < 2**32`` is Lemire's
    ``(v * n) >> 32`` of the next 32-bit value, where 32-bit values are the low then the high half
    of one output (the bit generator's buffered half), with Lemire's rejection loop run seed by seed
    in the rare case it is entered (leftover below ``n``). With more than one key and amount the
    calls are decoded a block of steps at a time (:meth:`_next_block`); a block stops before the
    first step of any seed where Lemire's loop is entered, which goes call by call (:meth:`_step`,
    also the path without an amount or key draw). Equal, call for call, to the single agent's draws
    (``tests/sketch/test_vector.py``); with ``n_keys >= 2**32`` the twin steps one single agent per
    seed instead. Takes the single agent's constructor arguments."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.kwargs = kwargs
        self.template = ObliviousRandomStream(**kwargs)
        self._per_seed: _PerSeedRandomStream | None = None

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        self.n_keys, self.max_inc, u, q, _ = budgets(spec)
        if self.n_keys > 0xFFFFFFFF:
            self._per_seed = _PerSeedRandomStream(**self.kwargs)
            self._per_seed.reset(seeds, spec)
            return
        self._per_seed = None
        self.query_frac = q / float(u + q)  # the single agent's
        self.reset_prob = self.template.reset_prob
        self._nk, self._mi = np.uint64(self.n_keys), np.uint64(self.max_inc)
        n = self.num
        self.raw = np.stack([rng.bit_generator.random_raw(_RAW) for rng in self.rngs]).reshape(-1) if n else np.zeros(0, np.uint64)
        self.base = np.arange(n, dtype=np.int64) * _RAW  # seed i's outputs at raw[base[i] : base[i] + _RAW]
        self.ptr = np.zeros(n, dtype=np.int64)
        self.has_half = np.zeros(n, dtype=bool)
        self.half = np.zeros(n, dtype=np.uint64)
        self.live = np.ones(n, dtype=bool)
        self._all_live = True
        self._rows = np.arange(n)
        # a stream that always draws a key and an amount is decoded a block of steps at a time (_next_block)
        self._blocks = self.n_keys > 1 and self.max_inc > 1
        self._k = _BLOCK
        self._block = np.zeros((0, n, 3), dtype=np.int64)
        self._t = 0
        self._at: dict[int, np.ndarray] = {}
        self._cols = np.arange(3 * _BLOCK + 3)
        self._steps_col = np.repeat(np.arange(1, _BLOCK + 1) * n, n)  # (t + 1) * n in every seed's column: row t + 1 of (k + 1, n)
        self._cols_n = np.tile(np.arange(n), _BLOCK + 1)  # every seed's column, row after row

    def _refill(self, need: int = 16) -> None:
        """Seeds with fewer than ``need`` outputs left keep them and read the next ones from their generator."""
        for i in np.flatnonzero(self.ptr > _RAW - need).tolist():
            b, p = int(self.base[i]), int(self.ptr[i])
            rest = self.raw[b + p : b + _RAW].copy()
            self.raw[b : b + len(rest)] = rest
            self.raw[b + len(rest) : b + _RAW] = self.rngs[i].bit_generator.random_raw(p)
            self.ptr[i] = 0

    def _next64(self, rows: np.ndarray) -> np.ndarray:
        p = self.ptr[rows]
        self.ptr[rows] = p + 1
        return self.raw[self.base[rows] + p]

    def _next32(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows), dtype=np.uint64)
        h = self.has_half[rows]
        if np.count_nonzero(h):
            rh = rows[h]
            out[h] = self.half[rh]
            self.has_half[rh] = False
        if np.count_nonzero(h) < len(rows):
            nh = ~h
            rn = rows[nh]
            w = self._next64(rn)
            out[nh] = w & _M32
            self.half[rn] = w >> np.uint64(32)
            self.has_half[rn] = True
        return out

    def _integers(self, rows: np.ndarray, n: int) -> np.ndarray:
        """``Generator.integers(n)`` (``1 <= n < 2**32``) for each of ``rows``."""
        if n == 1:
            return np.zeros(len(rows), dtype=np.int64)
        nn = np.uint64(n)
        m = self._next32(rows) * nn
        low = m & _M32
        if np.count_nonzero(low < nn):  # maybe a rejection: Lemire's loop, seed by seed
            threshold = (0xFFFFFFFF - (n - 1)) % n
            for j in np.flatnonzero(low < nn).tolist():
                mj = int(m[j])
                while (mj & 0xFFFFFFFF) < threshold:
                    if self.ptr[rows[j]] > _RAW - 2:
                        self._refill()
                    mj = int(self._next32(rows[j : j + 1])[0]) * n
                m[j] = mj
        return (m >> np.uint64(32)).astype(np.int64)

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if self._per_seed is not None:
            return self._per_seed.act(obs, info)
        if self._blocks:  # the stream ignores what it sees: the next action of a block decoded ahead
            t = self._t
            if t >= len(self._block):
                self._next_block()
                t = 0
            self._t = t + 1
            return self._block[t]
        return self._step(self._rows if self._all_live else np.flatnonzero(self.live))

    def _step(self, rows: np.ndarray) -> np.ndarray:
        """One step of the single agents' calls for ``rows`` (the others query), drawn step by step."""
        if int(self.ptr.max(initial=0)) > _RAW - 16:
            self._refill()
        out = np.zeros((self.num, 3), dtype=np.int64)
        out[:, 0] = OP_QUERY
        if self.n_keys > 1 and self.max_inc > 1:
            slow = self._act_fast(rows, out)
            if not len(slow):
                return out
            rows = slow  # rows where Lemire's rejection loop may run: call by call below
        u = (self._next64(rows) >> np.uint64(11)) * _TO_UNIT
        ru = rows[u >= self.query_frac]
        if len(ru):
            keys = self._integers(ru, self.n_keys)
            out[ru, 1] = keys
            reset = (self._next64(ru) >> np.uint64(11)) * _TO_UNIT < self.reset_prob
            out[ru[reset], 0] = OP_RESET
            ri = ru[~reset]
            if len(ri):
                out[ri, 0] = OP_INCREMENT
                out[ri, 2] = self._integers(ri, self.max_inc)
        return out

    def _next_block(self) -> None:
        """Decode the next ``_k`` steps of every seed at once from its raw outputs (``self._block``).

        A step's reads depend only on the state ``(j, h)``: the output ``j`` it starts at and
        whether a 32-bit half is buffered (see :meth:`_act_fast`); which of the three ops it is,
        and so the next state, is decided by the doubles of outputs ``j`` to ``j + 2``. So the next
        state of every ``(j, h)`` of a window of ``3 k + 3`` outputs is one table, a block's states
        are ``k`` look-ups in it for all seeds, and every action of the block is then gathered at
        once. The buffered half's value (the key of a step with ``h``) is the high half left by the
        block's last step that set one (a reset without ``h`` leaves output ``j + 1``'s, an
        increment with ``h`` output ``j + 2``'s), carried forward. The block stops before the first
        step where a bounded integer's leftover is below its bound (Lemire's loop may draw again):
        that step goes through :meth:`_step`, call by call."""
        n, k = self.num, self._k
        w_len = 3 * k + 3
        if int(self.ptr.max(initial=0)) > _RAW - w_len:
            self._refill(w_len)
        at = self._window(k)  # (n, w_len): 2 * the flat index of each seed's window output
        w = self.raw[(self.base + self.ptr)[:, None] + self._cols[:w_len]]  # (n, w_len): each seed's next outputs
        d = (w >> _U11) * _TO_UNIT
        # code of the step starting at output j: bit 0 a query (double j), bit 1 a reset if the second
        # double is output j + 1 (a half buffered), bit 2 a reset if it is output j + 2 (none buffered)
        code = (d < self.query_frac).view(np.uint8)
        rst = (d < self.reset_prob).view(np.uint8)
        code[:, :-1] |= rst[:, 1:] << 1
        code[:, :-2] |= rst[:, 2:] << 2
        nxt = (at[:, :, None] + _NEXT[code]).reshape(-1)  # the next state (2 * output index + h) of every state
        states = np.empty((k + 1, n), dtype=np.int64)
        states[0] = at[:, 0] + self.has_half
        take = nxt.take
        for t in range(k):
            take(states[t], out=states[t + 1])
        st = states[:k]
        j = st >> 1  # flat index into w
        h = st & 1
        kind = _KIND[(code.reshape(-1)[j] << 1) | h]  # 0 increment, 1 reset, 2 query; + 4 if the step sets the half
        op = kind & 3
        probe = op != OP_QUERY
        inc = op == OP_INCREMENT
        wf = w.reshape(-1)
        w1, w2 = wf[j + 1], wf[j + 2]
        hi1 = w1 >> _U32
        hb = h.astype(bool)
        # the half buffered before each step: the value left by the last step before it that set one
        # (a reset without a half leaves output j + 1's high half, an increment with one output j + 2's)
        vals = np.empty((k + 1, n), dtype=np.uint64)
        vals[0] = self.half
        vals[1:] = np.where(hb, w2 >> _U32, hi1)
        src = np.zeros((k + 1, n), dtype=np.int64)
        src[1:] = np.where(kind >= 4, self._steps_col[: k * n].reshape(k, n), 0)
        np.maximum.accumulate(src, axis=0, out=src)
        half = vals.reshape(-1)[src.reshape(-1) + self._cols_n[: (k + 1) * n]].reshape(k + 1, n)  # the half before step t
        m1 = np.where(hb, half[:k], w1 & _M32) * self._nk
        m2 = np.where(hb, w2 & _M32, hi1) * self._mi
        bad = probe & (((m1 & _M32) < self._nk) | (inc & ((m2 & _M32) < self._mi)))
        any_bad = bad.any(axis=1)
        stop = int(np.argmax(any_bad)) if any_bad.any() else k
        if stop == 0:  # this step may loop: call by call; then smaller blocks for a while
            self._block = self._step(self._rows)[None]
            self._k = max(4, k // 2)
            return
        block = np.empty((stop, n, 3), dtype=np.int64)
        block[:, :, 0] = op[:stop]
        block[:, :, 1] = (m1[:stop] >> _U32).astype(np.int64) * probe[:stop]
        block[:, :, 2] = (m2[:stop] >> _U32).astype(np.int64) * inc[:stop]
        self._block = block
        end = states[stop]
        self.ptr += (end >> 1) - (at[:, 0] >> 1)
        self.has_half = (end & 1).astype(bool)
        self.half = half[stop].copy()
        if stop == k:
            self._k = min(_BLOCK, 2 * k)

    def _window(self, k: int) -> np.ndarray:
        """``2 * (i * w_len + j)`` for seed ``i`` and window output ``j`` (``w_len = 3 k + 3``), cached per ``k``."""
        got = self._at.get(k)
        if got is None:
            w_len = 3 * k + 3
            got = self._at[k] = (np.arange(self.num)[:, None] * w_len + np.arange(w_len)) * 2
        return got

    def _act_fast(self, rows: np.ndarray, out: np.ndarray) -> np.ndarray:
        """One step of the single agent's calls for ``rows`` from the next three outputs of each seed.

        With ``h`` whether a 32-bit half is buffered, a step reads: its first double from output 0;
        the key from the buffered half (``h``) or the low half of output 1; the second double from
        output 1 (``h``) or 2; the amount from the low half of output 2 (``h``) or the high half of
        output 1. Writes ``out`` and advances the state of every row but those where a bounded
        integer's leftover is below its bound (Lemire's loop may draw again), which it returns
        untouched for the call-by-call path."""
        p = self.ptr[rows]
        w = self.raw[(self.base[rows] + p)[:, None] + _THREE]
        w0, w1, w2 = w[:, 0], w[:, 1], w[:, 2]
        h = self.has_half[rows]
        probe = (w0 >> _U11) * _TO_UNIT >= self.query_frac  # not a query
        v1 = np.where(h, self.half[rows], w1 & _M32)
        reset = (np.where(h, w1, w2) >> _U11) * _TO_UNIT < self.reset_prob
        v2 = np.where(h, w2 & _M32, w1 >> _U32)
        m1 = v1 * self._nk
        m2 = v2 * self._mi
        inc = probe & ~reset
        slow = probe & (((m1 & _M32) < self._nk) | (inc & ((m2 & _M32) < self._mi)))
        n_slow = np.count_nonzero(slow)
        fast = ~slow if n_slow else slice(None)
        rf, pf, hf, probe_f, reset_f, inc_f = rows[fast], p[fast], h[fast], probe[fast], reset[fast], inc[fast]
        ops = np.where(probe_f, np.where(reset_f, OP_RESET, OP_INCREMENT), OP_QUERY)
        out[rf, 0] = ops
        out[rf, 1] = np.where(probe_f, (m1[fast] >> _U32).astype(np.int64), 0)
        out[rf, 2] = np.where(inc_f, (m2[fast] >> _U32).astype(np.int64), 0)
        # outputs read: 1 for a query; 2 for a reset with a buffered half; 3 otherwise
        self.ptr[rf] = pf + np.where(probe_f, np.where(reset_f & hf, 2, 3), 1)
        # a reset flips the buffer (a half taken, or output 1's high half left); an increment takes
        # one half and leaves output 2's high half when one was buffered
        rr = reset_f & probe_f
        self.has_half[rf] = hf ^ rr
        left = np.where(rr & ~hf, w1[fast] >> _U32, np.where(inc_f & hf, w2[fast] >> _U32, self.half[rf]))
        self.half[rf] = left
        return rows[slow] if n_slow else rows[:0]

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        if self._per_seed is not None:
            return self._per_seed.update(obs, actions, rewards, next_obs, terminated, truncated, info)
        ended = np.logical_or(terminated, truncated)
        if np.count_nonzero(ended):
            self.live &= ~ended
            self._all_live = False
        return None


class _PerSeedRandomStream(PerSeedAgents):
    """One single :class:`~icmlgym.baselines.sketch.ObliviousRandomStream` per seed (key universes of 2**32 or more)."""

    single = ObliviousRandomStream
    idle = (OP_QUERY, 0, 0)


class VectorObliviousWorstCaseStream(VectorBaseAgent):
    """N seeds of :class:`~icmlgym.baselines.sketch.ObliviousWorstCaseStream`: one schedule, per-seed labels.

    Takes the single agent's constructor arguments (checked with its messages)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.template = ObliviousWorstCaseStream(**kwargs)

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        t = self.template
        t.reset(seeds[0] if len(seeds) else None, spec)  # seed 0's single agent: the sizes and window
        self.n_keys, self.max_inc, self.statistic, self.w, self.heavy_every = t.n_keys, t.max_inc, t.statistic, t.w, t.heavy_every
        self.labels = np.stack([rng.permutation(self.n_keys) for rng in self.rngs]).astype(np.int64, copy=False)
        self.cycle = self.n_keys - 1 if self.n_keys > 1 else 1
        self.next_key = 0
        self.alive: deque[int] = deque()  # label indices
        self.updates = 0
        self.pending: int | None = None
        self.query_next = False
        self.live = np.ones(self.num, dtype=bool)
        self._first_live = 0
        self._out = np.zeros((self.num, 3), dtype=np.int64)

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        out = self._out.copy()
        # every seed still playing has made the same moves, so has the same queries left
        if self.query_next and float(obs[self._first_live, 2]) > 0:
            self.query_next = False
            out[:, 0] = OP_QUERY
            return out
        self.query_next = True
        self.updates += 1
        if self.statistic != "cardinality" and self.updates % self.heavy_every == 0:
            out[:, 0] = OP_INCREMENT
            out[:, 1] = self.labels[:, -1]
            out[:, 2] = self.max_inc - 1
            return out
        if self.pending is not None:
            idx, self.pending = self.pending, None
            out[:, 0] = OP_RESET
            out[:, 1] = self.labels[:, idx]
            return out
        idx = self.next_key % self.cycle
        self.next_key += 1
        self.alive.append(idx)
        if len(self.alive) > self.w:
            self.pending = self.alive.popleft()
        out[:, 0] = OP_INCREMENT
        out[:, 1] = self.labels[:, idx]
        return out

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        ended = np.logical_or(terminated, truncated)
        if ended[self._first_live]:
            self.live &= ~ended
            live = np.flatnonzero(self.live)
            self._first_live = int(live[0]) if len(live) else 0


__all__ = ["VectorObliviousRandomStream", "VectorObliviousWorstCaseStream"]
