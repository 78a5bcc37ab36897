"""N-player normal-form games as payoff tensors, and the seeded generators that make them.

A game with ``N`` players where player ``i`` has ``n_i`` actions is stored as one
float64 array ``payoffs`` of shape ``(N, n_1, ..., n_N)``: ``payoffs[i][a]`` is
player ``i``'s payoff at the pure profile ``a``. This is OpenSpiel's
``egt`` layout, so tensors pass between the two unchanged.

Generators (all seeded by a ``numpy.random.Generator`` or an int):
:func:`random_game` (i.i.d. uniform payoffs), :func:`covariant_game`
(GAMUT's covariant game: each profile's payoff vector is multivariate normal with
pairwise correlation ``rho``), :func:`potential_game` (exact potential plus
a dummy term per player), :func:`zero_sum_game`, :func:`coordination_game`,
:func:`rock_paper_scissors`, :func:`shapley_game`, and
:meth:`NormalFormGame.restrict` for subgames. Games given as arrays or files
enter through :meth:`NormalFormGame.from_array` and :func:`load_game`.
"""

from __future__ import annotations

import functools
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

Profile = tuple[int, ...]


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


@dataclass(frozen=True, eq=False)
class NormalFormGame:
    """A finite N-player game in normal form.

    Args:
        payoffs: array of shape ``(N, n_1, ..., n_N)`` with ``N >= 2`` and every ``n_i >= 1``.
        name: a label (generator and parameters) used in reprs and env specs.
        actions: for subgames, ``actions[i]`` lists the original action indices of
            player ``i`` that the restricted game keeps; ``None`` for a full game.
    """

    payoffs: np.ndarray
    name: str = "game"
    actions: tuple[tuple[int, ...], ...] | None = field(default=None)

    def __post_init__(self) -> None:
        p = np.asarray(self.payoffs, dtype=np.float64)
        if p.ndim < 3:
            raise ValueError(
                f"payoffs must have shape (N, n_1, ..., n_N) with N >= 2 players, got shape {p.shape}"
            )
        if p.shape[0] != p.ndim - 1:
            raise ValueError(
                f"payoffs of shape {p.shape} has {p.shape[0]} payoff slices but {p.ndim - 1} action axes; "
                "the first axis must be the player index (one slice per player)"
            )
        if min(p.shape[1:]) < 1:
            raise ValueError(f"every player needs at least one action, got shape {p.shape}")
        if not np.all(np.isfinite(p)):
            raise ValueError("payoffs contain NaN or infinite values")
        p = np.ascontiguousarray(p)
        p.setflags(write=False)
        object.__setattr__(self, "payoffs", p)
        # player i's payoff tensor with i's own axis first and the others flattened after it;
        # expected payoffs are then one matrix-vector product per player
        mats = []
        for i in range(self.n_players):
            mats.append(np.ascontiguousarray(np.moveaxis(p[i], i, 0).reshape(p.shape[1 + i], -1)))
        object.__setattr__(self, "_mats", tuple(mats))

    # ----------------------------------------------------------------- shape
    @property
    def n_players(self) -> int:
        return self.payoffs.shape[0]

    @property
    def n_actions(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self.payoffs.shape[1:])

    @property
    def n_profiles(self) -> int:
        return int(np.prod(self.n_actions))

    def profiles(self) -> Iterator[Profile]:
        """Every pure profile, in C (row-major) order."""
        return itertools.product(*(range(n) for n in self.n_actions))

    def profile_index(self, profile: Sequence[int]) -> int:
        self._check_profile(profile)
        return int(np.ravel_multi_index(tuple(int(a) for a in profile), self.n_actions))

    def profile_at(self, index: int) -> Profile:
        return tuple(int(a) for a in np.unravel_index(int(index), self.n_actions))

    def _check_profile(self, profile: Sequence[int]) -> None:
        if len(profile) != self.n_players or any(
            not (0 <= int(a) < n) for a, n in zip(profile, self.n_actions)
        ):
            raise ValueError(f"{tuple(profile)!r} is not a pure profile of a game with actions {self.n_actions}")

    # --------------------------------------------------------------- payoffs
    def payoff(self, profile: Sequence[int]) -> np.ndarray:
        """The payoff vector (one entry per player) at a pure profile."""
        self._check_profile(profile)
        return self.payoffs[(slice(None),) + tuple(int(a) for a in profile)].copy()

    def expected_payoffs(self, strategies: Sequence[np.ndarray]) -> list[np.ndarray]:
        """``u_i(., x_{-i})`` for every player: the payoff of each own action against the others' mixes.

        Args:
            strategies: one mixed strategy per player, shape ``(n_i,)``, or a batch
                of them, shape ``(M, n_i)`` (M independent runs at once).

        Returns:
            One array per player of shape ``(n_i,)`` (or ``(M, n_i)`` for a batch).
        """
        xs = [np.asarray(x, dtype=np.float64) for x in strategies]
        if len(xs) != self.n_players:
            raise ValueError(f"expected {self.n_players} strategies, got {len(xs)}")
        batched = xs[0].ndim == 2
        if not batched:
            xs = [x[None, :] for x in xs]
        out = []
        for i in range(self.n_players):
            others = [xs[j] for j in range(self.n_players) if j != i]
            joint = others[0]
            for x in others[1:]:
                joint = (joint[:, :, None] * x[:, None, :]).reshape(joint.shape[0], -1)
            out.append(joint @ self._mats[i].T)
        return out if batched else [u[0] for u in out]

    def payoffs_and_joint(self, strategies: Sequence[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
        """:meth:`expected_payoffs` and the product distribution of one profile of 1-d float64 mixed strategies.

        The same products in the same order as ``expected_payoffs(strategies)`` and
        :func:`icmlgym.envs.games.dynamics.joint_distribution` (bit for bit), sharing the
        product of players ``0 .. N-2``, without their argument handling (a repeated game's round).
        """
        rows = [x[None, :] for x in strategies]
        out = []
        joint = rows[0]
        for i in range(self.n_players):
            others = rows[:i] + rows[i + 1 :]
            joint = others[0]
            for x in others[1:]:
                joint = (joint[:, :, None] * x[:, None, :]).reshape(1, -1)
            out.append((joint @ self._mats[i].T)[0])
        # the last player's "others" product is players 0 .. N-2 in order: one more factor gives the joint
        full = (joint[:, :, None] * rows[-1][:, None, :]).reshape(-1)
        return out, full

    def round_arrays(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One round of mixed play as arrays: ``(U, pay, left)`` for ``x`` of shape ``(N, n)`` (equal action counts).

        ``U[i]`` is ``u_i(., x_{-i})``, ``pay[i] = x[i] @ U[i]``, and the product distribution
        of the round is ``outer(left, x[-1]).ravel()`` (``left``: the product of players
        ``0 .. N-2``): the values of :meth:`payoffs_and_joint` and the per-player ``x @ u``
        bit for bit (the same products in the same order, and the same BLAS calls per
        player: a stacked ``matmul`` runs its 2-d kernel slice by slice), in a fixed number
        of array operations whatever the number of players.
        """
        others, mats_t = self._round_plan
        joint = x.take(others[0], 0)  # take: the gather of x[idx] without the indexing machinery
        for idx in others[1:]:
            joint = (joint[:, :, None] * x.take(idx, 0)[:, None, :]).reshape(joint.shape[0], -1)
        u = np.matmul(joint[:, None, :], mats_t).reshape(x.shape)
        pay = np.matmul(x[:, None, :], u[:, :, None]).reshape(x.shape[0])
        # the last player's "others" product is players 0 .. N-2 in order: one more factor gives the joint
        return u, pay, joint[-1]

    @functools.cached_property
    def _round_plan(self) -> tuple[list[np.ndarray], np.ndarray]:
        n = self.n_players
        # others[k][i]: the k-th of player i's opponents in increasing order
        others = [np.array([[j for j in range(n) if j != i][k] for i in range(n)]) for k in range(n - 1)]
        mats_t = np.stack(self._mats).transpose(0, 2, 1)  # each slice strided as _mats[i].T
        return others, mats_t

    def deviation_payoffs(self, profile: Sequence[int], player: int) -> np.ndarray:
        """Player ``player``'s payoff for each of its actions with the others fixed at ``profile``."""
        self._check_profile(profile)
        idx = [int(a) for a in profile]
        idx[player] = slice(None)  # type: ignore[call-overload]
        return self.payoffs[(player,) + tuple(idx)].copy()

    # -------------------------------------------------------------- subgames
    def restrict(self, action_subsets: Sequence[Sequence[int]]) -> "NormalFormGame":
        """The subgame where player ``i`` may use only ``action_subsets[i]`` (a product of action subsets)."""
        if len(action_subsets) != self.n_players:
            raise ValueError(f"need one action subset per player ({self.n_players}), got {len(action_subsets)}")
        subsets = []
        for i, s in enumerate(action_subsets):
            s = tuple(sorted({int(a) for a in s}))
            if not s:
                raise ValueError(f"action subset of player {i} is empty")
            if s[0] < 0 or s[-1] >= self.n_actions[i]:
                raise ValueError(f"action subset {s} of player {i} is outside range(0, {self.n_actions[i]})")
            subsets.append(s)
        sub = self.payoffs[np.ix_(range(self.n_players), *subsets)]
        base = self.actions or tuple(tuple(range(n)) for n in self.n_actions)
        original = tuple(tuple(base[i][a] for a in s) for i, s in enumerate(subsets))
        return NormalFormGame(sub, name=f"{self.name}|sub{[list(s) for s in subsets]}", actions=original)

    # ----------------------------------------------------------------- i/o
    @classmethod
    def from_array(cls, payoffs: Any, name: str = "array") -> "NormalFormGame":
        """A game from an array-like of shape ``(N, n_1, ..., n_N)``; a bimatrix may be given as ``(A, B)``."""
        return cls(np.asarray(payoffs, dtype=np.float64), name=name)

    def save(self, path: str | Path) -> None:
        """Write the payoffs as ``.npy``, ``.npz`` (key ``payoffs``) or ``.json`` (nested lists)."""
        path = Path(path)
        if path.suffix == ".npy":
            np.save(path, np.asarray(self.payoffs))
        elif path.suffix == ".npz":
            np.savez(path, payoffs=np.asarray(self.payoffs))
        elif path.suffix == ".json":
            path.write_text(json.dumps({"name": self.name, "payoffs": self.payoffs.tolist()}))
        else:
            raise ValueError(f"unknown game file type {path.suffix!r}; use .npy, .npz or .json")

    def __repr__(self) -> str:
        return f"NormalFormGame({self.name!r}, players={self.n_players}, actions={self.n_actions})"


def load_game(path: str | Path) -> NormalFormGame:
    """Read a game from ``.npy``, ``.npz`` (array ``payoffs``) or ``.json`` (``{"payoffs": [...]}`` or a bare list)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"game file {str(path)!r} does not exist")
    if path.suffix == ".npy":
        arr = np.load(path, allow_pickle=False)
        name = path.stem
    elif path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as z:
            if "payoffs" not in z:
                raise ValueError(f"{path} has no array named 'payoffs' (found {sorted(z.files)})")
            arr = z["payoffs"]
        name = path.stem
    elif path.suffix == ".json":
        data = json.loads(path.read_text())
        if isinstance(data, dict):
            if "payoffs" not in data:
                raise ValueError(f"{path} has no key 'payoffs' (found {sorted(data)})")
            arr, name = data["payoffs"], str(data.get("name", path.stem))
        else:
            arr, name = data, path.stem
    else:
        raise ValueError(f"unknown game file type {path.suffix!r} for {path}; use .npy, .npz or .json")
    return NormalFormGame.from_array(arr, name=name)


# ------------------------------------------------------------------ generators
def _shape(n_actions: int | Sequence[int], n_players: int | None) -> tuple[int, ...]:
    if isinstance(n_actions, (int, np.integer)):
        if n_players is None:
            n_players = 2
        shape = (int(n_actions),) * int(n_players)
    else:
        shape = tuple(int(n) for n in n_actions)
        if n_players is not None and len(shape) != n_players:
            raise ValueError(f"n_actions {tuple(n_actions)} does not match n_players={n_players}")
    if len(shape) < 2:
        raise ValueError(f"a game needs at least 2 players, got {len(shape)}")
    if min(shape) < 1:
        raise ValueError(f"every player needs at least one action, got {shape}")
    return shape


def random_game(
    n_actions: int | Sequence[int] = 3, n_players: int | None = None, seed: int | np.random.Generator | None = None
) -> NormalFormGame:
    """Payoffs i.i.d. uniform on [0, 1] (generic: no ties with probability one)."""
    shape = _shape(n_actions, n_players)
    p = _rng(seed).uniform(0.0, 1.0, size=(len(shape),) + shape)
    return NormalFormGame(p, name=f"random{shape}")


def covariant_game(
    n_actions: int | Sequence[int] = 3,
    n_players: int | None = None,
    rho: float = 0.0,
    seed: int | np.random.Generator | None = None,
) -> NormalFormGame:
    """GAMUT's covariant game: at each profile the players' payoffs are jointly normal with correlation ``rho``.

    ``rho = 1`` gives common-interest games, ``rho = -1/(N-1)`` the most competitive
    (constant-sum in distribution) games; ``rho`` must lie in ``[-1/(N-1), 1]`` for
    the covariance matrix to be positive semi-definite.
    """
    shape = _shape(n_actions, n_players)
    n = len(shape)
    lo = -1.0 / (n - 1)
    if not (lo - 1e-12 <= rho <= 1.0):
        raise ValueError(f"rho must lie in [{lo:.4g}, 1] for {n} players, got {rho}")
    cov = np.full((n, n), float(rho))
    np.fill_diagonal(cov, 1.0)
    # eigh-based factor: cov can be singular at the ends of the range
    w, v = np.linalg.eigh(cov)
    factor = v * np.sqrt(np.clip(w, 0.0, None))
    z = _rng(seed).standard_normal(size=(int(np.prod(shape)), n)) @ factor.T
    p = z.T.reshape((n,) + shape)
    return NormalFormGame(p, name=f"covariant{shape},rho={rho:g}")


def potential_game(
    n_actions: int | Sequence[int] = 3,
    n_players: int | None = None,
    seed: int | np.random.Generator | None = None,
    dummy_scale: float = 1.0,
) -> NormalFormGame:
    """An exact potential game: ``u_i(a) = phi(a) + d_i(a_{-i})``.

    ``phi`` is uniform on [0, 1] per profile and ``d_i`` a dummy term that does not
    depend on player ``i``'s own action (uniform on [0, dummy_scale]), so every
    unilateral deviation changes the deviator's payoff by exactly the change in ``phi``.
    """
    shape = _shape(n_actions, n_players)
    rng = _rng(seed)
    phi = rng.uniform(0.0, 1.0, size=shape)
    p = np.empty((len(shape),) + shape)
    for i in range(len(shape)):
        d_shape = list(shape)
        d_shape[i] = 1
        p[i] = phi + dummy_scale * rng.uniform(0.0, 1.0, size=d_shape)
    return NormalFormGame(p, name=f"potential{shape}")


def zero_sum_game(
    n_actions: int | Sequence[int] = 3, n_players: int | None = None, seed: int | np.random.Generator | None = None
) -> NormalFormGame:
    """Payoffs that sum to zero at every profile (two players: ``(A, -A)``)."""
    shape = _shape(n_actions, n_players)
    p = _rng(seed).uniform(-1.0, 1.0, size=(len(shape),) + shape)
    p -= p.mean(axis=0, keepdims=True)
    return NormalFormGame(p, name=f"zero_sum{shape}")


def coordination_game(
    n_actions: int = 3, n_players: int = 2, seed: int | np.random.Generator | None = None, noise: float = 0.1
) -> NormalFormGame:
    """Everyone gets ``1 + w_k`` when all play the same action ``k`` and a small noise payoff otherwise.

    ``w_k`` is uniform on [0, 1] (so the ``n_actions`` strict Nash equilibria differ in value)
    and off-diagonal payoffs are uniform on [0, noise] with ``noise < 1``.
    """
    if not 0.0 <= noise < 1.0:
        raise ValueError(f"noise must lie in [0, 1), got {noise}")
    shape = _shape(int(n_actions), int(n_players))
    rng = _rng(seed)
    p = rng.uniform(0.0, noise, size=(len(shape),) + shape)
    w = rng.uniform(0.0, 1.0, size=n_actions)
    for k in range(n_actions):
        p[(slice(None),) + (k,) * len(shape)] = 1.0 + w[k]
    return NormalFormGame(p, name=f"coordination{shape}")


def rock_paper_scissors(win: float = 1.0, lose: float = -1.0, tie: float = 0.0) -> NormalFormGame:
    """Rock-paper-scissors (row beats column: paper > rock > scissors > paper)."""
    a = np.array([[tie, lose, win], [win, tie, lose], [lose, win, tie]], dtype=np.float64)
    return NormalFormGame(np.stack([a, a.T]), name="rock_paper_scissors")


def shapley_game() -> NormalFormGame:
    """Shapley's (1964) 3x3 game, on which fictitious play cycles without converging."""
    a = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
    b = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=np.float64)
    return NormalFormGame(np.stack([a, b]), name="shapley")


