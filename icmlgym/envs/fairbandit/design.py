"""Optimal experimental design over a finite arm set, with numpy only.

- :func:`g_optimal_design`: the Kiefer–Wolfowitz / D-optimal design (the two
  coincide by the Kiefer–Wolfowitz theorem), by Frank–Wolfe (Fedorov–Wynn)
  iterations with away steps. A design ``lam`` over arms ``X`` satisfies
  ``max_x ||x||^2_{V(lam)^{-1}} <= (1 + tol) * r`` at return, where ``r`` is the
  rank of ``X`` (the optimum is exactly ``r``).
- :func:`john_ellipsoid_distribution`: a distribution over arms whose mean is
  the centre of the Löwner–John (minimum-volume enclosing) ellipsoid of the
  arms, by Khachiyan's algorithm (a D-optimal design of the lifted points
  ``(x, 1)``). For that centre ``c``, ``c + (E - c)/r`` lies inside the convex
  hull of the arms (John's theorem), so for any ``theta`` with positive mean
  reward on the hull ``<c, theta> >= max_x <x, theta> / (r + 1)``: the
  guarantee LinNash's first phase needs (Sawarni, Pal & Barman 2023, who state
  it for the maximal inscribed ellipsoid; the enclosing one gives the same
  bound and is computable from the points alone, without facets).

Rank-deficient arm sets (fewer arms than dimensions, or arms on a subspace
after elimination) are handled in the span of the arms.

The agents ask for designs through a :class:`Designs` object: :data:`DIRECT` solves every
request (a single run), :class:`SharedDesigns` solves each distinct problem once and hands
every later request a copy (a batch of seeds over one arm matrix, whose seeds often ask for
the same design; both functions are deterministic, so the copy holds the very same doubles).
:meth:`SharedDesigns.prefetch` hands a batch's distinct unsolved problems to
:func:`g_optimal_designs`, which runs problems of one padded shape in lock step (one array
operation per iteration for all of them) and returns the same doubles as
:func:`g_optimal_design` one by one: every problem is solved on zero rows padded up to
:func:`padded_rows`, in a single run too, so both paths do the same arithmetic.
"""

from __future__ import annotations

import numpy as np

from icmlgym.envs.blas import single_thread_blas


def _span_coordinates(X: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Coordinates of the rows of ``X`` in an orthonormal basis of their span."""
    _, s, vt = np.linalg.svd(X, full_matrices=False)
    rank = int(np.sum(s > rtol * max(s[0], 1e-300))) if s.size else 0
    if rank == 0:
        raise ValueError("the arms span no direction (all arm vectors are zero)")
    return X @ vt[:rank].T


def _check_arms(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"arms must be a (K, d) array with K >= 1, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("arms must be finite")
    return X


_LOCK_STEP_FROM = 4  # fewer problems of a shape are solved one by one: a lock-step iteration costs ~2 single ones
_LOCK_STEP_UNTIL = 3  # a group down to fewer unfinished problems finishes them one by one
_REFRESH_EVERY = 64  # Frank-Wolfe iterations between exact recomputations of M^{-1} and the variances


def _variances(Q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``M(u)^{-1}`` and every row's variance ``g_i = q_i^T M(u)^{-1} q_i``, computed afresh."""
    Minv = np.linalg.inv((Q * u[:, None]).T @ Q)
    return Minv, np.einsum("ij,ij->i", Q @ Minv, Q)


def padded_rows(k: int) -> int:
    """The row count a ``k``-row problem is solved at: the next power of two (at least 8).

    Zero rows change neither ``M`` nor any variance, but the length of the weight vector
    orders the sums BLAS and numpy take over it; solving every problem at a row count that
    depends on ``k`` alone makes :func:`_d_optimal_weights` (one problem, a single run) and
    :func:`_d_optimal_weights_many` (a batch's problems in lock step) do the same
    arithmetic on the same shapes, so their doubles agree.
    """
    return max(8, 1 << (int(k) - 1).bit_length())


def _padded(Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Q`` with zero rows up to :func:`padded_rows`, and the starting (uniform) weights."""
    k, m = Q.shape
    Qp = np.zeros((padded_rows(k), m))
    Qp[:k] = Q
    u = np.zeros(len(Qp))
    u[:k] = 1.0 / k
    return Qp, u


def _d_optimal_weights(Q: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """D-optimal design over the rows of a full-column-rank ``Q`` (k, m).

    Frank–Wolfe with away steps (Todd & Yildirim 2007, "On Khachiyan's
    algorithm for the computation of minimum-volume enclosing ellipsoids"):
    each iteration moves weight toward the row of largest variance
    ``g_i = q_i^T M^{-1} q_i`` or away from the supported row of smallest
    variance, with the exact line-search step. Stops when
    ``max_i g_i <= (1 + tol) * m`` (the optimum has ``max_i g_i = m``).

    Each step changes ``M`` by a rank-one term, so ``M^{-1}`` and the variances
    follow by Sherman–Morrison in O(k m) instead of an inverse and an O(k m^2)
    product; they are recomputed exactly every ``_REFRESH_EVERY`` iterations and
    before the stopping test is trusted, so rounding cannot accumulate.

    The problem is solved with zero rows up to :func:`padded_rows` (they keep weight
    and variance 0 and are never chosen); :func:`_d_optimal_weights_many` is this loop
    for many problems at once, with the same doubles.
    """
    k = Q.shape[0]
    if Q.shape[1] == 1:
        return _line_design(Q[:, 0], tol)
    Q, u = _padded(Q)
    Minv, g = _variances(Q, u)
    return _frank_wolfe(Q, u, Minv, g, 0, tol, max_iter)[:k].copy()


def _line_design(q: np.ndarray, tol: float) -> np.ndarray:
    """The D-optimal design over arms on one line (``m = 1``), in closed form.

    ``g_i = q_i^2 / sum_j u_j q_j^2`` is at most 1 only with all weight on the rows of
    largest ``|q_i|``; the uniform start is kept where it already meets the stopping test
    (as the iterations would keep it). Frank–Wolfe cannot be used here: its first step
    moves all the weight (step 1), which makes its rank-one update divide by zero.
    """
    q2 = q * q
    if q2.max() <= (1.0 + tol) * q2.mean():
        return np.full(len(q), 1.0 / len(q))
    top = q2 == q2.max()
    return top / np.count_nonzero(top)


def _frank_wolfe(Q: np.ndarray, u: np.ndarray, Minv: np.ndarray, g: np.ndarray, fresh: int, tol: float,
                 max_iter: int) -> np.ndarray:
    """:func:`_d_optimal_weights`'s iterations from a state (``u`` is updated in place and returned):
    ``fresh`` steps since ``Minv`` and ``g`` were computed afresh, at most ``max_iter`` more."""
    m = Q.shape[1]
    bound = (1.0 + tol) * m
    Qv, vv = np.empty(len(Q)), np.empty((m, m))  # buffers: each step's arithmetic is written into them
    for _ in range(max_iter):
        j = int(g.argmax())
        gj = g[j]
        if gj <= bound:
            if fresh == 0:
                break
            Minv, g = _variances(Q, u)
            fresh = 0
            j = int(g.argmax())
            gj = g[j]
            if gj <= bound:
                break
        i = int(np.where(u > 0, g, np.inf).argmin())  # the supported row of smallest variance (first of ties)
        gi = g[i]
        if gj - m >= m - gi or gi <= 1.0:
            step = (gj - m) / (m * (gj - 1.0))
            u *= 1.0 - step
            u[j] += step
            a, b, r, gr = 1.0 - step, step, j, gj  # M <- a M + b q_r q_r^T
        else:
            # away step: remove weight from arm i (at most all of it)
            ui = u[i]
            step = min((m - gi) / (m * (gi - 1.0)), ui / (1.0 - ui))
            u *= 1.0 + step
            u[i] -= step
            u[i] = max(u[i], 0.0)
            a, b, r, gr = 1.0 + step, -step, i, gi
        total = np.add.reduce(u)  # u.sum() without its wrappers
        u /= total
        fresh += 1
        if fresh >= _REFRESH_EVERY:
            Minv, g = _variances(Q, u)
            fresh = 0
            continue
        # (a M + b q q^T)^{-1} = (M^{-1} - c v v^T) / a with v = M^{-1} q, c = (b/a) / (1 + (b/a) q^T v);
        # dividing u by its total divides M by it, so M^{-1} and g are multiplied by it
        v = Minv @ Q[r]
        ba = b / a
        c = ba / (1.0 + ba * gr)
        np.matmul(Q, v, out=Qv)
        scale = total / a
        np.multiply(v[:, None], v, out=vv)  # np.outer(v, v)
        vv *= c
        Minv -= vv
        Minv *= scale
        Qv *= Qv
        Qv *= c
        g -= Qv
        g *= scale
    return u


def _d_optimal_weights_many(Qs: list[np.ndarray], tol: float, max_iter: int) -> list[np.ndarray]:
    """:func:`_d_optimal_weights` of every ``Q`` in ``Qs``, the same doubles, in lock step.

    Problems of one padded shape advance together: each iteration is one array operation
    over all of them where the single loop makes one per problem (the step's choice and
    size by ``np.where``; ``M^{-1} q`` and ``Q v`` by stacked ``matmul``, which calls the
    single loop's ``gemv`` per problem; the weights' total by a row-wise reduce, each row
    summed as a 1-D ``add.reduce``). The exact refreshes (``inv``, ``einsum``) run per
    problem, as in the single loop; a problem leaves the group when the single loop would
    have returned. ``tests/fairbandit/test_design.py`` checks the doubles against single solves.
    """
    out: list[np.ndarray | None] = [None] * len(Qs)
    groups: dict[tuple[int, int], list[int]] = {}
    for n, Q in enumerate(Qs):
        groups.setdefault((padded_rows(Q.shape[0]), Q.shape[1]), []).append(n)
    for (_, m), members in groups.items():
        if len(members) < _LOCK_STEP_FROM or m == 1:
            for n in members:
                out[n] = _d_optimal_weights(Qs[n], tol, max_iter)
            continue
        ks = np.array([Qs[n].shape[0] for n in members])
        pads = [_padded(Qs[n]) for n in members]
        Q = np.stack([q for q, _ in pads])
        u = np.stack([w for _, w in pads])
        Minv = np.empty((len(members), m, m))
        g = np.empty(u.shape)
        for p in range(len(members)):
            Minv[p], g[p] = _variances(Q[p], u[p])
        ids = np.array(members)
        fresh = np.zeros(len(members), dtype=np.int64)
        iters = 0
        bound = (1.0 + tol) * m
        outer = np.empty((len(members), m, m))  # v v^T of every problem (its first rows while problems leave)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # the branch a problem does not take
            while len(ids) and iters < max_iter:
                rows = np.arange(len(ids))
                j = g.argmax(axis=1)
                gj = g[rows, j]
                low = gj <= bound
                done = None
                if low.any():
                    done = np.zeros(len(ids), dtype=bool)
                    for p in np.flatnonzero(low).tolist():
                        if fresh[p] == 0:
                            done[p] = True
                            continue
                        Minv[p], g[p] = _variances(Q[p], u[p])
                        fresh[p] = 0
                        j[p] = int(g[p].argmax())
                        gj[p] = g[p, j[p]]
                        done[p] = gj[p] <= bound
                if done is not None and done.any():
                    for p in np.flatnonzero(done).tolist():
                        out[ids[p]] = u[p, :ks[p]].copy()
                    keep = ~done
                    ids, ks, Q, u, Minv, g, fresh, j, gj = (x[keep] for x in (ids, ks, Q, u, Minv, g, fresh, j, gj))
                    if len(ids) < _LOCK_STEP_UNTIL:  # the stragglers: one by one from here (the same iterations)
                        for p in range(len(ids)):
                            w = _frank_wolfe(Q[p].copy(), u[p].copy(), Minv[p].copy(), g[p].copy(), int(fresh[p]), tol,
                                             max_iter - iters)
                            out[ids[p]] = w[:ks[p]].copy()
                        ids = ids[:0]
                        break
                    rows = np.arange(len(ids))
                i = np.where(u > 0, g, np.inf).argmin(axis=1)
                gi = g[rows, i]
                over, under = gj - m, m - gi
                toward = (over >= under) | (gi <= 1.0)
                ui = u[rows, i]
                step = np.where(toward, over / (m * (gj - 1.0)), np.minimum(under / (m * (gi - 1.0)), ui / (1.0 - ui)))
                b = np.where(toward, step, -step)
                a = 1.0 - b  # 1 - step toward j, 1 + step away from i (x - (-y) is x + y exactly)
                r = np.where(toward, j, i)
                gr = np.where(toward, gj, gi)
                u *= a[:, None]
                ur = u[rows, r]
                ur += b
                u[rows, r] = np.where(0.0 > ur, 0.0, ur)  # an away step's max(u_i, 0.0) (a step toward j leaves u_j > 0)
                total = np.add.reduce(u, axis=1)
                u /= total[:, None]
                fresh += 1
                v = np.matmul(Minv, Q[rows, r][:, :, None])  # (P, m, 1)
                ba = b / a
                c = ba / (1.0 + ba * gr)
                Qv = np.matmul(Q, v)[:, :, 0]
                v = v[:, :, 0]
                scale = total / a
                vv = np.multiply(v[:, :, None], v[:, None, :], out=outer[:len(ids)])
                vv *= c[:, None, None]
                Minv -= vv
                Minv *= scale[:, None, None]
                Qv *= Qv
                Qv *= c[:, None]
                g -= Qv
                g *= scale[:, None]
                if fresh.max() >= _REFRESH_EVERY:
                    for p in np.flatnonzero(fresh >= _REFRESH_EVERY).tolist():
                        Minv[p], g[p] = _variances(Q[p], u[p])
                        fresh[p] = 0
                iters += 1
        for p in range(len(ids)):  # max_iter reached
            out[ids[p]] = u[p, :ks[p]].copy()
    return out  # type: ignore[return-value]


def g_optimal_design(X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
    """Kiefer–Wolfowitz (G-/D-optimal) design over the rows of ``X``.

    Args:
        X: arms, shape (K, d).
        tol: stop when ``max_x ||x||^2_{V^{-1}} <= (1 + tol) * rank``.
        max_iter: cap on Frank–Wolfe iterations.

    Returns:
        ``lam``, shape (K,), a probability vector.
    """
    return g_optimal_designs([X], tol, max_iter)[0]  # one problem: solved on its own, not in lock step


def g_optimal_designs(Xs: list[np.ndarray], tol: float = 0.01, max_iter: int = 10_000) -> list[np.ndarray]:
    """:func:`g_optimal_design` of every arm matrix in ``Xs``, the same doubles, solved together.

    The problems of one padded shape run their Frank–Wolfe iterations in lock step
    (:func:`_d_optimal_weights_many`): a batch of seeds whose phases end in the same round
    solves its designs in one loop instead of one loop each.
    """
    out: list[np.ndarray | None] = [None] * len(Xs)
    todo, Qs = [], []
    for n, X in enumerate(Xs):
        X = _check_arms(X)
        if X.shape[0] == 1:
            out[n] = np.ones(1)
            continue
        todo.append(n)
        Qs.append(X)
    if todo:
        with single_thread_blas():  # small LAPACK calls: OpenBLAS's threads only wait on a busy machine
            lams = _d_optimal_weights_many([_span_coordinates(X) for X in Qs], tol, max_iter)
        for n, lam in zip(todo, lams):
            out[n] = lam
    return out  # type: ignore[return-value]


def design_allocation(lam: np.ndarray, n: int) -> np.ndarray:
    """Integer pull counts summing to ``n`` that follow the design ``lam`` (largest remainders)."""
    lam = np.asarray(lam, dtype=np.float64)
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    raw = lam * n
    counts = np.floor(raw).astype(np.int64)
    rest = n - int(counts.sum())
    if rest > 0:
        order = np.argsort(-(raw - counts), kind="stable")
        counts[order[:rest]] += 1
    return counts


def john_ellipsoid_distribution(X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
    """Weights ``u`` over arms whose mean ``sum_i u_i x_i`` is the Löwner–John ellipsoid centre.

    Khachiyan's algorithm: a D-optimal design over the lifted points ``(z, 1)``
    where ``z`` are the arms in coordinates of their affine span.
    """
    X = _check_arms(X)
    k = X.shape[0]
    if k == 1:
        return np.ones(1)
    centred = X - X.mean(axis=0)
    with single_thread_blas():
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        rank = int(np.sum(s > 1e-10 * max(s[0], 1e-300))) if s.size else 0
        if rank == 0:  # all arms equal
            return np.full(k, 1.0 / k)
        Q = np.hstack([centred @ vt[:rank].T, np.ones((k, 1))])  # lifted, (k, rank + 1)
        return _d_optimal_weights(Q, tol, max_iter)


class Designs:
    """Where an agent gets its designs: this base solves every request (what a single run uses)."""

    def g_optimal(self, X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
        """:func:`g_optimal_design` of ``X``."""
        return g_optimal_design(X, tol, max_iter)

    def john(self, X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
        """:func:`john_ellipsoid_distribution` of ``X``."""
        return john_ellipsoid_distribution(X, tol, max_iter)


DIRECT = Designs()


class SharedDesigns(Designs):
    """Solves each distinct design problem once and gives every request a copy of its answer.

    A problem is the function, the arm matrix's shape and bytes (as float64), ``tol`` and
    ``max_iter``. Owned by one vector twin (one batch of seeds), never process-wide: single
    runs keep solving for themselves. ``solved`` counts the problems solved, ``asked`` the
    requests.
    """

    def __init__(self) -> None:
        self._answers: dict[tuple, np.ndarray] = {}
        self.asked = 0

    @property
    def solved(self) -> int:
        return len(self._answers)

    @staticmethod
    def _key(fn, X: np.ndarray, tol: float, max_iter: int) -> tuple:
        return (fn.__name__, X.shape, X.tobytes(), float(tol), int(max_iter))

    def _answer(self, fn, X: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
        self.asked += 1
        X = np.ascontiguousarray(X, dtype=np.float64)
        key = self._key(fn, X, tol, max_iter)
        lam = self._answers.get(key)
        if lam is None:
            lam = self._answers[key] = fn(X, tol, max_iter)
        return lam.copy()

    def g_optimal(self, X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
        return self._answer(g_optimal_design, X, tol, max_iter)

    def john(self, X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
        return self._answer(john_ellipsoid_distribution, X, tol, max_iter)

    def prefetch(self, Xs: list[np.ndarray], tol: float = 0.01, max_iter: int = 10_000) -> None:
        """Solve the G-optimal designs of ``Xs`` not solved yet, together (:func:`g_optimal_designs`).

        For the seeds of a batch about to ask for them one by one: their requests then
        find the answers (the same doubles as solving each on its own); not counted as asked.
        """
        todo: dict[tuple, np.ndarray] = {}
        for X in Xs:
            X = np.ascontiguousarray(X, dtype=np.float64)
            key = self._key(g_optimal_design, X, tol, max_iter)
            if key not in self._answers:
                todo.setdefault(key, X)
        for key, lam in zip(todo, g_optimal_designs(list(todo.values()), tol, max_iter)):
            self._answers[key] = lam
