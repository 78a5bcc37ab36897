"""Partitions of a virtual library into bandit arms, without enumerating it.

- :class:`ReagentPartition` (``"reagent"``, ``"reagent:<axis>"``): one arm per
  building block at one reagent position. ``axis`` is a reactant position
  (``0``, ``1``, ``2``: each reaction with that many components contributes
  arms) or a building-block set name (``"amines"``: one arm per amine, spanning
  every reaction that uses amines). Chemistry-aligned: the *meaningful*
  partition of the paper. Any axis can be chosen, so users can compare them.
- :class:`ReagentPartition` by reaction (``"reaction"``): one arm per reaction.
- :class:`ClusterPartition` (``"cluster:<n>[:<axis>]"``): the building blocks of
  one axis are clustered by k-means on their Morgan fingerprints; an arm is all
  compounds whose building block at that axis lies in one cluster.
- :class:`RandomPartition` (``"random[:<n>]"``): compounds assigned to ``n``
  equal arms by a seeded bijection of the index space (the ablation: same
  number of arms as the reagent partition by default, no chemistry).

Every partition maps an arm and a position inside it to a compound index, so
drawing compounds from an arm costs O(batch), whatever the library size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from icmlgym.envs.screening.library import VirtualLibrary

_SMALL_ARM = 200_000  # arms up to this size are sampled exactly from their unseen members


class SeenSet:
    """Compounds already drawn in an episode: a bool array for libraries up to 10^7, else a set."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._arr = np.zeros(size, dtype=bool) if size <= 10_000_000 else None
        self._set: set[int] = set()
        self.count = 0

    def contains(self, idx: np.ndarray) -> np.ndarray:
        if self._arr is not None:
            return self._arr[idx]
        return np.fromiter((int(i) in self._set for i in idx), dtype=bool, count=len(idx))

    def add(self, idx: np.ndarray) -> None:
        idx = np.asarray(idx, dtype=np.int64)
        if self._arr is not None:
            new = ~self._arr[idx]
            self._arr[idx] = True
            self.count += int(new.sum())
        else:
            before = len(self._set)
            self._set.update(int(i) for i in idx)
            self.count += len(self._set) - before

    def unseen_indices(self) -> np.ndarray:
        """Every unseen compound (small libraries only)."""
        if self._arr is None:
            raise ValueError("unseen_indices() needs a library of at most 10^7 compounds")
        return np.flatnonzero(~self._arr)


class Partition:
    """Base class: ``n_arms`` arms with sizes, names, and a map (arm, positions) -> compound indices."""

    kind: str = "partition"
    names: list[str]
    sizes: np.ndarray

    @property
    def n_arms(self) -> int:
        return len(self.sizes)

    def indices(self, arm: int, positions: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def sample(self, arm: int, n: int, rng: np.random.Generator, seen: SeenSet) -> np.ndarray:
        """Up to ``n`` distinct compounds of ``arm`` not in ``seen`` (fewer only when the arm runs out)."""
        size = int(self.sizes[arm])
        if size <= _SMALL_ARM:
            idx = self.indices(arm, np.arange(size, dtype=np.int64))
            idx = idx[~seen.contains(idx)]
            if len(idx) <= n:
                return rng.permutation(idx)
            return idx[rng.choice(len(idx), size=n, replace=False)]
        out: list[np.ndarray] = []
        got: set[int] = set()
        for _ in range(50):
            pos = rng.integers(0, size, size=2 * n)
            idx = self.indices(arm, pos)
            idx = idx[~seen.contains(idx)]
            for i in idx:
                if int(i) not in got:
                    got.add(int(i))
                    out.append(i)
                    if len(out) == n:
                        return np.array(out, dtype=np.int64)
        return np.array(out, dtype=np.int64)


@dataclass
class _Segment:
    reaction: int
    axis: int | None  # None: the whole reaction
    blocks: np.ndarray  # building-block indices at ``axis`` (ignored when axis is None)
    per_block: int  # compounds per building block (reaction size when axis is None)

    @property
    def size(self) -> int:
        return self.per_block * (len(self.blocks) if self.axis is not None else 1)


class SegmentPartition(Partition):
    """Arms made of segments: (reaction, axis, set of building blocks at that axis)."""

    def __init__(self, library: VirtualLibrary, arms: list[list[_Segment]], names: list[str], kind: str) -> None:
        if not arms:
            raise ValueError(f"{kind} partition has no arms")
        self.library = library
        self.arms = arms
        self.names = names
        self.kind = kind
        self.sizes = np.array([sum(s.size for s in segs) for segs in arms], dtype=np.int64)
        self._starts = [np.cumsum([0] + [s.size for s in segs])[:-1] for segs in arms]

    def indices(self, arm: int, positions: np.ndarray) -> np.ndarray:
        lib = self.library
        positions = np.asarray(positions, dtype=np.int64)
        out = np.empty(len(positions), dtype=np.int64)
        starts = self._starts[arm]
        which = np.searchsorted(starts, positions, side="right") - 1
        for s_i, seg in enumerate(self.arms[arm]):
            sel = which == s_i
            if not sel.any():
                continue
            q = positions[sel] - starts[s_i]
            r = seg.reaction
            if seg.axis is None:
                out[sel] = lib.offsets[r] + q
                continue
            shape = lib.shapes[r]
            b = seg.blocks[q // seg.per_block]
            rest = q % seg.per_block
            other = tuple(d for k, d in enumerate(shape) if k != seg.axis)
            coords = list(np.unravel_index(rest, other)) if other else []
            coords.insert(seg.axis, b)
            out[sel] = lib.offsets[r] + np.ravel_multi_index(tuple(coords), shape)
        return out


def _axis_segments(library: VirtualLibrary, axis: int | str) -> tuple[list[tuple[int, int]], int]:
    """(reaction, position) pairs the axis covers, and the number of building blocks on it."""
    pairs: list[tuple[int, int]] = []
    if isinstance(axis, str) and not axis.lstrip("-").isdigit():
        if axis not in library.building_blocks:
            raise ValueError(f"unknown building-block set {axis!r} for a reagent partition; sets: {sorted(library.building_blocks)}")
        for r, rx in enumerate(library.reactions):
            for k, comp in enumerate(rx.components):
                if comp == axis:
                    pairs.append((r, k))
        return pairs, len(library.building_blocks[axis])
    k = int(axis)
    if k < 0 or k >= library.max_components:
        raise ValueError(f"reagent axis {k} is out of range: reactions of this library have at most {library.max_components} components")
    return [(r, k) for r, s in enumerate(library.shapes) if len(s) > k], -1


def reagent_partition(library: VirtualLibrary, axis: int | str = 0) -> SegmentPartition:
    """One arm per building block at reagent position (or building-block set) ``axis``."""
    pairs, n_named = _axis_segments(library, axis)
    arms: list[list[_Segment]] = []
    names: list[str] = []
    if n_named >= 0:  # a named set: arm b spans every reaction that uses the set
        set_name = str(axis)
        ids = library.building_blocks[set_name].ids
        for b in range(n_named):
            arms.append([_Segment(r, k, np.array([b]), library.reaction_sizes[r] // library.shapes[r][k]) for r, k in pairs])
            names.append(f"{set_name}:{ids[b]}")
    else:
        for r, k in pairs:
            comp = library.reactions[r].components[k]
            ids = library.building_blocks[comp].ids
            per = int(library.reaction_sizes[r] // library.shapes[r][k])
            for b in range(library.shapes[r][k]):
                arms.append([_Segment(r, k, np.array([b]), per)])
                names.append(f"{library.reactions[r].name}/{comp}:{ids[b]}")
    return SegmentPartition(library, arms, names, f"reagent:{axis}")


def reaction_partition(library: VirtualLibrary) -> SegmentPartition:
    """One arm per reaction."""
    arms = [[_Segment(r, None, np.zeros(0, dtype=np.int64), int(library.reaction_sizes[r]))] for r in range(len(library.reactions))]
    return SegmentPartition(library, arms, [r.name for r in library.reactions], "reaction")


def _kmeans(x: np.ndarray, k: int, seed: int, iters: int = 25) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = len(x)
    centers = [x[rng.integers(n)]]
    d2 = ((x - centers[0]) ** 2).sum(1)
    for _ in range(1, k):  # k-means++ seeding
        p = d2 / d2.sum() if d2.sum() > 0 else np.full(n, 1.0 / n)
        centers.append(x[rng.choice(n, p=p)])
        d2 = np.minimum(d2, ((x - centers[-1]) ** 2).sum(1))
    c = np.array(centers)
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(iters):
        dist = (x**2).sum(1)[:, None] - 2 * x @ c.T + (c**2).sum(1)[None, :]
        new = dist.argmin(1)
        if np.array_equal(new, labels) and _ > 0:
            break
        labels = new
        for j in range(k):
            members = x[labels == j]
            if len(members):
                c[j] = members.mean(0)
    return labels


def cluster_partition(library: VirtualLibrary, n_clusters: int = 20, axis: int | str = 0, seed: int = 0) -> SegmentPartition:
    """Arms = k-means clusters (Morgan fingerprints) of the building blocks at ``axis``."""
    from rdkit.Chem import rdFingerprintGenerator

    pairs, n_named = _axis_segments(library, axis)
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=256)
    sets = sorted({library.reactions[r].components[k] for r, k in pairs})
    labels: dict[str, np.ndarray] = {}
    for s in sets:
        bbs = library.building_blocks[s]
        k = min(int(n_clusters), len(bbs))
        if k < 1:
            raise ValueError(f"n_clusters must be positive, got {n_clusters}")
        x = np.array([gen.GetFingerprintAsNumPy(bbs.mol(b)) for b in range(len(bbs))], dtype=np.float32)
        labels[s] = _kmeans(x, k, seed)
    arms: list[list[_Segment]] = []
    names: list[str] = []
    if n_named >= 0:
        s = str(axis)
        for j in range(int(labels[s].max()) + 1):
            blocks = np.flatnonzero(labels[s] == j)
            if len(blocks):
                arms.append([_Segment(r, k, blocks, int(library.reaction_sizes[r] // library.shapes[r][k])) for r, k in pairs])
                names.append(f"{s}:cluster{j}")
    else:
        for r, k in pairs:
            s = library.reactions[r].components[k]
            for j in range(int(labels[s].max()) + 1):
                blocks = np.flatnonzero(labels[s] == j)
                if len(blocks):
                    arms.append([_Segment(r, k, blocks, int(library.reaction_sizes[r] // library.shapes[r][k]))])
                    names.append(f"{library.reactions[r].name}/{s}:cluster{j}")
    return SegmentPartition(library, arms, names, f"cluster:{n_clusters}:{axis}")


class RandomPartition(Partition):
    """``n`` arms of (nearly) equal size from a seeded affine bijection of the index space."""

    def __init__(self, library: VirtualLibrary, n_arms: int, seed: int = 0) -> None:
        n = library.size
        if not 1 <= n_arms <= n:
            raise ValueError(f"a random partition needs between 1 and {n} arms, got {n_arms}")
        rng = np.random.default_rng(seed)
        # multiplier near n / golden ratio, made coprime with n, so neighbouring indices scatter
        a = max(1, int(n * 0.6180339887) + int(rng.integers(0, 1000)))
        while math.gcd(a, n) != 1:
            a += 1
        self.n = n
        self.a = a % n if n > 1 else 1
        self.c = int(rng.integers(0, n))
        self.a_inv = pow(self.a, -1, n) if n > 1 else 0
        self.bounds = np.array([n * j // n_arms for j in range(n_arms + 1)], dtype=np.int64)
        self.sizes = np.diff(self.bounds)
        self.names = [f"random{j}" for j in range(n_arms)]
        self.kind = f"random:{n_arms}"
        self._big = n >= 2**31

    def indices(self, arm: int, positions: np.ndarray) -> np.ndarray:
        p = np.asarray(positions, dtype=np.int64) + self.bounds[arm]
        if not self._big:  # products stay below 2^62
            return ((p - self.c) % self.n * self.a_inv) % self.n
        return np.array([((int(x) - self.c) * self.a_inv) % self.n for x in p], dtype=np.int64)

    def arm_of(self, indices: np.ndarray) -> np.ndarray:
        """The arm of each compound (inverse map, for tests)."""
        i = np.asarray(indices, dtype=np.int64)
        if not self._big:
            p = (i * self.a + self.c) % self.n
        else:
            p = np.array([(int(x) * self.a + self.c) % self.n for x in i], dtype=np.int64)
        return np.searchsorted(self.bounds, p, side="right") - 1


def make_partition(library: VirtualLibrary, spec: str | Partition, seed: int = 0) -> Partition:
    """A partition from a spec string: ``reagent[:axis]``, ``reaction``, ``cluster[:n[:axis]]``,
    ``random[:n]`` (default n: the arm count of ``reagent:0``), or a :class:`Partition`."""
    if isinstance(spec, Partition):
        return spec
    if not isinstance(spec, str):
        raise ValueError(f"partition must be a string spec or a Partition, got {spec!r}")
    head, _, rest = spec.partition(":")
    if head == "reagent":
        return reagent_partition(library, rest or 0)
    if head == "reaction":
        return reaction_partition(library)
    if head == "cluster":
        n, _, axis = rest.partition(":")
        return cluster_partition(library, int(n) if n else 20, axis or 0, seed=seed)
    if head == "random":
        if rest:
            n = int(rest)
        else:
            n = sum(library.shapes[r][0] for r in range(len(library.reactions)))
        return RandomPartition(library, n, seed=seed)
    raise ValueError(
        f"unknown partition {spec!r}; use 'reagent[:axis]' (axis: position or building-block set), "
        "'reaction', 'cluster[:n[:axis]]' or 'random[:n]'"
    )
