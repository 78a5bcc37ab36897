"""The zoo's registry and cache: small models our own code trains deterministically, built once.

A :class:`Member` says how to make a model from a configuration (``make``), how to
train it (``train``: deterministic given the seed) and how to measure it on a held-out
split (``evaluate``). :func:`load` returns a trained :class:`ZooModel`: from the cache
when an entry with the same key exists, else it trains one (under the cache's
inter-process lock, so two processes asking for the same member at once build it once
and both end with the one intact copy).

The cache key is ``(name, configuration, seed, code hash)``: the code hash covers the
source files the member lists, so editing the model or its training code builds a new
entry instead of loading a stale one. Entries live in the shared cache's ``zoo``
namespace: ``<key>.pt`` (the weights) and ``<key>.json`` (the card: parameters,
training data, training time, held-out quality, the counters of its training).

Shipped weights: a member may ship its weights as package data
(``icmlgym/zoo/weights/<name>-<size>.pt`` and its card ``.json``, produced by
``scripts/zoo_weights.py``); :func:`load` uses them when the recorded key equals the
current key (same configuration, seed and code), and trains otherwise, so editing a
member's code never loads stale weights.
"""

from __future__ import annotations

import importlib
import io
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from icmlgym.cache import Cache, content_key, file_hash

SIZES: tuple[str, ...] = ("smoke", "standard")
WEIGHTS_DIR = Path(__file__).with_name("weights")


class ZooError(RuntimeError):
    """A zoo member cannot be found, built or loaded (the message says which and why)."""


@dataclass(frozen=True)
class Member:
    """One kind of model in the zoo.

    Attributes:
        name: the registry name (``reasoner``, ``digits-cnn``, ...).
        kind: what it is (``language-model``, ``image-classifier``, ``sparse-autoencoder``, ...).
        description: one line for ``icmlgym zoo list``.
        data: the training data (a corpus and its split).
        configs: size -> configuration (JSON-able; it is part of the cache key).
        make: ``config -> torch.nn.Module`` (untrained, shapes only).
        train: ``(model, config, seed, meter) -> dict`` of training facts; trains in place.
        evaluate: ``(model, config) -> dict`` of held-out quality (name -> value).
        code: modules whose source is hashed into the cache key.
        quality: the name of the headline held-out metric.
        depends: names of members this one is built on (e.g. an SAE's base model).
    """

    name: str
    kind: str
    description: str
    data: str
    configs: dict[str, dict[str, Any]]
    make: Callable[[dict[str, Any]], Any]
    train: Callable[..., dict[str, Any]]
    evaluate: Callable[[Any, dict[str, Any]], dict[str, float]]
    code: tuple[str, ...] = ()
    quality: str = "accuracy"
    depends: tuple[str, ...] = ()
    extras: dict[str, Any] = field(default_factory=dict)

    def config(self, size: str = "smoke", overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        if size not in self.configs:
            raise ZooError(f"zoo member {self.name!r} has no size {size!r}; sizes: {sorted(self.configs)}")
        cfg = {**self.configs[size], **(overrides or {})}
        unknown = set(overrides or {}) - set(self.configs[size])
        if unknown:
            raise ZooError(f"unknown configuration keys for {self.name!r}: {sorted(unknown)}; keys: {sorted(self.configs[size])}")
        return cfg

    def code_hash(self) -> str:
        paths = []
        for mod in self.code:
            spec = importlib.util.find_spec(mod)
            if spec is None or spec.origin is None:
                raise ZooError(f"zoo member {self.name!r} lists code module {mod!r}, which cannot be found")
            paths.append(spec.origin)
        return file_hash(*paths) if paths else ""

    def key(self, config: dict[str, Any], seed: int) -> str:
        return f"{self.name}-{content_key(self.name, config, int(seed), self.code_hash(), n=16)}"


_MEMBERS: dict[str, Member] = {}


def register(member: Member) -> Member:
    """Add a member; a name already taken is refused (unregister it first to replace it)."""
    if member.name in _MEMBERS:
        raise ValueError(f"zoo member {member.name!r} is already registered ({_MEMBERS[member.name].description}); unregister it first")
    for size, cfg in member.configs.items():
        if size not in SIZES:
            raise ValueError(f"zoo member {member.name!r}: unknown size {size!r}; sizes: {SIZES}")
        json.dumps(cfg)  # configurations are part of the key: they must be JSON
    _MEMBERS[member.name] = member
    return member


def unregister(name: str) -> None:
    if name not in _MEMBERS:
        raise KeyError(f"no zoo member {name!r}")
    del _MEMBERS[name]


# modules that register members on import (the built-in list, and families' members kept in their own
# modules so that adding one never changes the code hash, hence the shipped weights, of another).
# A new member module goes here, or zoo.get/list (and tests/substrate/test_zoo_shipped.py) will not see it.
MEMBER_MODULES: tuple[str, ...] = ("icmlgym.zoo.builtin", "icmlgym.zoo.skills", "icmlgym.zoo.skill_chains", "icmlgym.zoo.overthink", "icmlgym.zoo.sapo", "icmlgym.zoo.sprites", "icmlgym.zoo.outlier_moe",
                                  "icmlgym.zoo.product_clip")


def _ensure_members() -> None:
    for module in MEMBER_MODULES:
        importlib.import_module(module)


def members() -> list[Member]:
    _ensure_members()
    return [_MEMBERS[k] for k in sorted(_MEMBERS)]


def get(name: str) -> Member:
    _ensure_members()
    if name not in _MEMBERS:
        import difflib

        close = difflib.get_close_matches(name, list(_MEMBERS), n=3)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        raise ZooError(f"no zoo member {name!r}{hint}; members: {sorted(_MEMBERS)}")
    return _MEMBERS[name]


@dataclass
class ZooModel:
    """A trained zoo model: the module, its card, and how it was obtained."""

    name: str
    model: Any
    config: dict[str, Any]
    card: dict[str, Any]
    source: str  # "trained", "cache" or "shipped"
    load_seconds: float = 0.0

    def __getattr__(self, item: str) -> Any:  # tokenizer and other extras a member attaches
        extras = self.__dict__.get("card", {}).get("_extras", {})
        if item in extras:
            return extras[item]
        raise AttributeError(item)


def _cache() -> Cache:
    return Cache("zoo")


def _torch_load(raw: bytes, device: str) -> Any:
    import torch

    return torch.load(io.BytesIO(raw), map_location=device, weights_only=True)


def _state_bytes(model: Any) -> bytes:
    import torch

    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.getvalue()


def _from_state(member: Member, cfg: dict[str, Any], raw: bytes, device: str) -> Any:
    model = member.make(cfg)
    model.load_state_dict(_torch_load(raw, device))
    model.to(device)
    model.eval()
    return model


def cached_card(name: str, size: str = "smoke", overrides: dict[str, Any] | None = None, seed: int = 0) -> dict[str, Any] | None:
    """The card of a built entry, or None when it is not built."""
    m = get(name)
    cfg = m.config(size, overrides)
    return _cache().read_json(m.key(cfg, seed))


def load(
    name: str,
    size: str = "smoke",
    overrides: dict[str, Any] | None = None,
    seed: int = 0,
    device: str = "cpu",
    build: bool = True,
    force: bool = False,
) -> ZooModel:
    """The trained member ``name`` at ``size``: from the cache, shipped weights, or trained now.

    Args:
        overrides: configuration values replacing the size's (part of the key).
        seed: training seed (part of the key).
        device: where the returned module lives (training happens on the CPU by default).
        build: train when no cached or shipped weights exist (False: raise :class:`ZooError`).
        force: retrain even when an entry exists (and replace it).
    """
    from icmlgym.nn.runtime import resolve_device

    m = get(name)
    cfg = m.config(size, overrides)
    key = m.key(cfg, seed)
    device = resolve_device(device)
    cache = _cache()
    t0 = time.perf_counter()
    if not force:
        hit = _load_entry(m, cfg, key, device, cache)
        if hit is not None:
            hit.load_seconds = time.perf_counter() - t0
            return hit
        shipped = _load_shipped(m, cfg, key, device, size)
        if shipped is not None:
            shipped.load_seconds = time.perf_counter() - t0
            return shipped
    if not build:
        raise ZooError(f"zoo member {name!r} ({size}) is not built; run `icmlgym zoo build {name} --size {size}`")
    with cache.lock(key):
        if not force:  # another process may have built it while we waited for the lock
            hit = _load_entry(m, cfg, key, device, cache)
            if hit is not None:
                hit.load_seconds = time.perf_counter() - t0
                return hit
        model, card = _train(m, cfg, seed, size, key)
        cache.write_bytes(key, _state_bytes(model), ".pt")
        cache.write_json(key, card)
    model.to(device)
    return ZooModel(name, model, cfg, _with_extras(m, cfg, card), "trained", time.perf_counter() - t0)


def _with_extras(m: Member, cfg: dict[str, Any], card: dict[str, Any]) -> dict[str, Any]:
    extras = {k: (v(cfg) if callable(v) else v) for k, v in m.extras.items()}
    return {**card, "_extras": extras} if extras else card


def _load_entry(m: Member, cfg: dict[str, Any], key: str, device: str, cache: Cache) -> ZooModel | None:
    card = cache.read_json(key)
    raw = cache.read_bytes(key, ".pt")
    if card is None or raw is None:
        return None
    try:
        model = _from_state(m, cfg, raw, device)
    except Exception:  # a corrupt or truncated entry is a miss; the rebuild replaces it
        return None
    return ZooModel(m.name, model, cfg, _with_extras(m, cfg, card), "cache")


def shipped_paths(name: str, size: str) -> tuple[Path, Path]:
    """Where a member's shipped card and weights live (package data)."""
    return WEIGHTS_DIR / f"{name}-{size}.json", WEIGHTS_DIR / f"{name}-{size}.pt"


def _load_shipped(m: Member, cfg: dict[str, Any], key: str, device: str, size: str) -> ZooModel | None:
    meta_path, weights_path = shipped_paths(m.name, size)
    if not meta_path.is_file() or not weights_path.is_file():
        return None
    card = json.loads(meta_path.read_text())
    if card.get("key") != key:
        return None  # shipped for another configuration, seed or code version: train instead
    model = _from_state(m, cfg, weights_path.read_bytes(), device)
    return ZooModel(m.name, model, cfg, _with_extras(m, cfg, card), "shipped")


def _train(m: Member, cfg: dict[str, Any], seed: int, size: str, key: str) -> tuple[Any, dict[str, Any]]:
    import torch

    from icmlgym.nn.counters import CostMeter
    from icmlgym.nn.runtime import seed_everything

    import os

    threads = torch.get_num_threads()
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    seed_everything(seed, "cpu")
    meter = CostMeter()
    model = m.make(cfg)
    t0 = time.perf_counter()
    facts = m.train(model, cfg, seed, meter)
    train_seconds = time.perf_counter() - t0
    model.eval()
    t1 = time.perf_counter()
    quality = m.evaluate(model, cfg)
    card = {
        "name": m.name,
        "kind": m.kind,
        "size": size,
        "key": key,
        "seed": int(seed),
        "config": cfg,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "data": m.data,
        "train_seconds": round(train_seconds, 2),
        "eval_seconds": round(time.perf_counter() - t1, 2),
        "torch_threads": threads,
        # the machine's 1-minute load average before and after training: times on a shared machine depend on it
        "load_average": [load_before, os.getloadavg()[0] if hasattr(os, "getloadavg") else None],
        "quality": quality,
        "headline": m.quality,
        "training": facts,
        "cost": meter.as_dict(),
        "torch": torch.__version__,
    }
    return model, card


def info(name: str, size: str = "smoke") -> dict[str, Any]:
    """What the registry says about a member, plus its built card when it is built."""
    m = get(name)
    out = {
        "name": m.name, "kind": m.kind, "description": m.description, "data": m.data,
        "sizes": {s: m.configs[s] for s in m.configs}, "quality": m.quality, "depends": list(m.depends),
    }
    card = cached_card(name, size)
    out["built"] = card is not None
    if card is not None:
        out["card"] = card
    return out


__all__ = ["Member", "SIZES", "ZooError", "ZooModel", "cached_card", "get", "info", "load", "members", "register", "unregister"]
