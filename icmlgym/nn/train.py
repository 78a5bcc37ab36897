"""The budgeted training loop: optimiser steps until a budget in a stated unit is spent, counting cost.

Usage::

    result = train_loop(model, batches, loss_fn, torch.optim.AdamW(model.parameters(), 1e-3),
                        Budget(500, "gradient_steps"), meter=env_meter)
    info["cost"].update(env_meter.as_dict())

``loss_fn(model, batch)`` returns ``(loss, n_examples, n_tokens)`` (``n_tokens`` 0 for
non-sequence data). Counters go to ``meter`` when given (an env that trains reports its
own cost in ``info["cost"]``), else to the run's meter (:func:`icmlgym.nn.runtime.current`,
which the runner adds to the record's cost: an agent's ``train``), else to a fresh meter;
the result carries it either way. FLOPs are counted by torch's ``FlopCounterMode`` on the
first real step of each batch shape (no extra pass) and reused for later steps of that shape.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import torch

from icmlgym.nn.counters import CostMeter, input_shapes
from icmlgym.nn.runtime import current

BUDGET_UNITS: tuple[str, ...] = ("gradient_steps", "train_examples", "train_tokens", "seconds")


@dataclass(frozen=True)
class Budget:
    """How much training: ``amount`` of ``unit`` (gradient steps, examples, tokens or wall seconds)."""

    amount: float
    unit: str = "gradient_steps"

    def __post_init__(self) -> None:
        if self.unit not in BUDGET_UNITS:
            raise ValueError(f"unknown budget unit {self.unit!r}; units: {BUDGET_UNITS}")
        if not self.amount >= 0:
            raise ValueError(f"a budget must be >= 0, got {self.amount}")

    @classmethod
    def of(cls, budget: "Budget | int | float") -> "Budget":
        """A Budget from a Budget, a catalog ``TrainBudget`` (an int with a unit) or a plain number of steps."""
        if isinstance(budget, Budget):
            return budget
        unit = getattr(budget, "unit", "gradient_steps")
        return cls(float(budget), unit if unit in BUDGET_UNITS else "gradient_steps")


@dataclass
class TrainResult:
    """What a training loop did: steps, examples, tokens, seconds, the loss per step, the counters."""

    steps: int = 0
    examples: int = 0
    tokens: int = 0
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)
    meter: CostMeter = field(default_factory=CostMeter)


def _spent(res: TrainResult, unit: str, t0: float) -> float:
    return {"gradient_steps": res.steps, "train_examples": res.examples, "train_tokens": res.tokens}.get(unit, time.perf_counter() - t0)


def train_loop(
    model: torch.nn.Module,
    batches: Iterable[Any] | Callable[[int], Any],
    loss_fn: Callable[[torch.nn.Module, Any], tuple[torch.Tensor, int, int]],
    optimizer: torch.optim.Optimizer,
    budget: Budget | int,
    meter: CostMeter | None = None,
    grad_clip: float | None = 1.0,
    scheduler: Any = None,
    on_step: Callable[[int, float], None] | None = None,
) -> TrainResult:
    """Train until ``budget`` is spent (or the batches run out); see the module docstring.

    Args:
        batches: an iterable of batches, or a function ``step -> batch``.
        loss_fn: ``(model, batch) -> (loss, n_examples, n_tokens)``.
        budget: a :class:`Budget` (a plain int means gradient steps).
        meter: where counters go (default: the run's meter, else a fresh one).
        grad_clip: max gradient norm (None: no clipping).
        scheduler: stepped after each optimiser step.
        on_step: called with (step, loss) after each step.

    Raises:
        FloatingPointError: the loss became NaN or infinite (named with the step).
    """
    from torch.utils.flop_counter import FlopCounterMode

    budget = Budget.of(budget)
    if meter is None:
        ctx = current()
        meter = ctx.meter if ctx is not None else CostMeter()
    res = TrainResult(meter=meter)
    device = next(model.parameters()).device
    on_gpu = device.type == "cuda"
    it: Iterator[Any] | None = None if callable(batches) else iter(batches)
    flops: dict[Any, tuple[int, int]] = {}
    model.train()
    t0 = time.perf_counter()
    while _spent(res, budget.unit, t0) < budget.amount:
        if it is None:
            batch = batches(res.steps)  # type: ignore[operator]
        else:
            try:
                batch = next(it)
            except StopIteration:
                break
        key = input_shapes(batch)
        optimizer.zero_grad(set_to_none=True)
        if key not in flops:
            mode = FlopCounterMode(display=False)
            with mode:
                loss, n_ex, n_tok = loss_fn(model, batch)
                fwd = mode.get_total_flops()
                loss.backward()
            flops[key] = (int(fwd), int(mode.get_total_flops() - fwd))
        else:
            loss, n_ex, n_tok = loss_fn(model, batch)
            loss.backward()
        value = float(loss.detach())
        if value != value or value in (float("inf"), float("-inf")):
            raise FloatingPointError(f"training loss is {value} at step {res.steps}")
        if grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        res.steps += 1
        res.examples += int(n_ex)
        res.tokens += int(n_tok)
        res.losses.append(value)
        meter.add("gradient_steps")
        meter.add("train_examples", n_ex)
        if n_tok:
            meter.add("train_tokens", n_tok)
        meter.add("forward_flops", flops[key][0])
        meter.add("backward_flops", flops[key][1])
        if on_step is not None:
            on_step(res.steps, value)
    if on_gpu:
        torch.cuda.synchronize(device)
    res.seconds = time.perf_counter() - t0
    if on_gpu:
        meter.add("gpu_seconds", res.seconds)
    model.eval()
    return res


__all__ = ["BUDGET_UNITS", "Budget", "TrainResult", "train_loop"]
