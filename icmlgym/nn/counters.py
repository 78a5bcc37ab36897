"""Cost counters under standard names, and FLOPs counted from a model's shapes.

Every neural env and agent reports compute under the same names, so the
leaderboard can put them on one axis:

- ``gradient_steps``: optimiser steps taken.
- ``train_examples`` / ``train_tokens``: examples (or tokens, for sequence models) consumed by training.
- ``forward_flops`` / ``backward_flops``: floating-point operations of forward and backward
  passes, counted by torch's own ``FlopCounterMode`` from the shapes of the operations
  actually dispatched (matmuls, convolutions, attention), never estimated by hand.
- ``gpu_seconds``: wall time spent computing on a GPU (synchronised).

FLOP counting dispatches every op through a Python mode, so it is done once per
(model, input shapes, train/eval) and memoised: :func:`count_flops` on a repeated
shape costs a dictionary look-up, and in another process a read of the count from
the cache (namespace ``flops``) instead of the counting pass.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

STANDARD_COUNTERS: tuple[str, ...] = (
    "gradient_steps", "train_examples", "train_tokens", "forward_flops", "backward_flops", "gpu_seconds",
)


class CostMeter:
    """Named non-negative counters (a dict of floats) that can be added to and merged.

    Example::

        meter = CostMeter()
        meter.add("gradient_steps")
        meter.add("train_examples", 64)
        info["cost"] = {**info["cost"], **meter.as_dict()}
    """

    def __init__(self, counts: dict[str, float] | None = None) -> None:
        self.counts: dict[str, float] = {}
        for k, v in (counts or {}).items():
            self.add(k, v)

    def add(self, name: str, value: float = 1.0) -> None:
        value = float(value)
        if not value >= 0:  # also refuses NaN
            raise ValueError(f"cost counter {name!r} takes non-negative values, got {value}")
        self.counts[name] = self.counts.get(name, 0.0) + value

    def merge(self, other: "CostMeter | dict[str, float]") -> None:
        for k, v in (other.counts if isinstance(other, CostMeter) else other).items():
            self.add(k, v)

    def __getitem__(self, name: str) -> float:
        return self.counts.get(name, 0.0)

    def as_dict(self) -> dict[str, float]:
        return dict(self.counts)

    def __repr__(self) -> str:
        return f"CostMeter({self.counts})"


_FLOP_MEMO: dict[tuple, tuple[int, int]] = {}


def input_shapes(obj: Any) -> Any:
    import torch

    if isinstance(obj, torch.Tensor):
        return (tuple(obj.shape), str(obj.dtype))
    if isinstance(obj, (list, tuple)):
        return tuple(input_shapes(o) for o in obj)
    if isinstance(obj, dict):
        return tuple(sorted((k, input_shapes(v)) for k, v in obj.items()))
    return repr(obj)


def count_flops(model: Any, inputs: Iterable[Any], backward: bool = False, key: Any = None, fn: Callable[..., Any] | None = None) -> tuple[int, int]:
    """(forward FLOPs, backward FLOPs) of ``model(*inputs)`` (or ``fn(*inputs)``), from the dispatched ops' shapes.

    Runs one pass under ``torch.utils.flop_counter.FlopCounterMode`` (with
    ``backward=True``, also the backward of the output's sum) and memoises the
    result by (``key`` or the model's class and parameter shapes, input shapes, training mode),
    in the process and in the cache (:func:`_disk_key`: also torch's version, the module tree
    and its source files). Gradients from the counting pass are discarded.
    """
    from torch.utils.flop_counter import FlopCounterMode

    inputs = tuple(inputs)
    if key is None:  # same class and parameter shapes: same ops for the same input shapes
        key = (type(model).__qualname__, tuple((n, tuple(p.shape)) for n, p in model.named_parameters()))
    memo_key = (key, input_shapes(inputs), bool(getattr(model, "training", False)), backward)
    if memo_key in _FLOP_MEMO:
        return _FLOP_MEMO[memo_key]
    disk_key = _disk_key(memo_key, model, fn)
    if disk_key is not None:
        from icmlgym.cache import Cache

        stored = Cache("flops").read_json(disk_key)
        if isinstance(stored, list) and len(stored) == 2 and all(type(v) is int and v >= 0 for v in stored):
            _FLOP_MEMO[memo_key] = result = (stored[0], stored[1])
            return result
    call = fn if fn is not None else model
    grads = None
    if backward:
        grads = {n: (p.grad.clone() if p.grad is not None else None) for n, p in model.named_parameters()}
    mode = FlopCounterMode(display=False)
    with mode:
        out = call(*inputs)
        fwd = mode.get_total_flops()
        if backward:
            first = out[0] if isinstance(out, (tuple, list)) else out
            first.float().sum().backward()
    total = mode.get_total_flops()
    if grads is not None:
        for n, p in model.named_parameters():
            p.grad = grads[n]
    result = (int(fwd), int(total - fwd))
    if len(_FLOP_MEMO) > 4096:
        _FLOP_MEMO.clear()
    _FLOP_MEMO[memo_key] = result
    if disk_key is not None:
        from icmlgym.cache import Cache

        try:
            Cache("flops").write_json(disk_key, list(result))
        except OSError:  # an unwritable cache (a sandboxed agent's home): the count stands, unstored
            pass
    return result


def _disk_key(memo_key: tuple, model: Any, fn: Callable[..., Any] | None) -> str | None:
    """The on-disk cache key of a count, or None when it cannot be keyed safely.

    A process's first ``FlopCounterMode`` pass imports ~900 modules (sympy, torch's symbolic
    shapes: ~1.6 CPU-s), which every worker process of a sweep paid again for a count some
    earlier run had already made. On disk the count is keyed by what it depends on beyond the
    memo key: torch's version (its FLOP formulas), the module tree's ``repr`` (layer kinds,
    kernel sizes, strides) and the source files of every class in it, and of ``fn``, that is
    not torch's own, so an edit of the model code counts again.
    """
    import inspect

    import torch

    from icmlgym.cache import content_key, file_hash

    text = repr(memo_key)
    if " at 0x" in text:
        return None
    files: set[str] = set()
    parts: list[Any] = [text, torch.__version__]
    objs: list[Any] = list(model.modules()) if isinstance(model, torch.nn.Module) else [model]
    if fn is not None:
        objs.append(fn)
        parts.append(getattr(fn, "__qualname__", repr(fn)))
    for obj in objs:
        cls = obj if inspect.isfunction(obj) or inspect.ismethod(obj) else type(obj)
        module = getattr(cls, "__module__", "") or ""
        if module == "torch" or module.startswith("torch."):
            continue
        try:
            files.add(inspect.getfile(cls))
        except (TypeError, OSError):
            return None  # a builtin or a class without a source file: count in process only
    if isinstance(model, torch.nn.Module):
        parts.append(repr(model))
    if " at 0x" in parts[-1]:
        return None
    try:
        parts.append(file_hash(*sorted(files)))
    except OSError:
        return None
    return content_key("flops", *parts)


__all__ = ["STANDARD_COUNTERS", "CostMeter", "count_flops"]
