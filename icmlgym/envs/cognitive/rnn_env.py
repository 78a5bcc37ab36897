"""Train a recurrent network on a cognitive task from few trials; scored on fresh and held-out trials.

Description:
    The training benchmark of the ICML 2026 paper on heavy-tailed, Dale-constrained
    RNNs trained by optimal transport: does the structure of the recurrent weights
    (excitatory/inhibitory signs, heavy- or light-tailed magnitudes) change how well a
    network trained on a few trials generalises? An agent gets ``n_train_trials``
    trials of one task (``info["train_trials"]`` at reset) and a parameter budget
    (``n_hidden`` units), trains a rate RNN in ``train(env, budget)`` (``budget`` =
    gradient steps), and returns its weights as the one action of the episode. The
    env runs the network (:func:`icmlgym.envs.cognitive.network.simulate`, the
    dynamics of :class:`icmlgym.nn.recurrent.RecurrentNetwork`) on fresh trials of
    the training conditions and on held-out conditions (unseen coherences, longer
    delays; :data:`icmlgym.envs.cognitive.tasks.SPLITS`).

Action Space:
    ``Dict`` of float32 ``Box(-inf, inf)``: ``w_in (n_hidden, n_input)``,
    ``w_rec (n_hidden, n_hidden)``, ``b_rec (n_hidden,)``, ``w_out (n_output, n_hidden)``,
    ``b_out (n_output,)``: the effective weights (signs included). A smaller network
    fits the budget by leaving units at zero. A wrong key or shape, or a non-finite
    weight, raises ``ValueError`` naming it.

Observation Space:
    ``Box(0, 1, (6,))``: the one-hot index of the task among
    :data:`icmlgym.envs.cognitive.tasks.TASKS`. Everything else is in ``info`` at
    reset: ``train_trials`` (``inputs (n, T, n_input)``, ``targets (n, T)`` with -1
    padding, ``response_mask``, ``lengths``), ``network`` (sizes, ``alpha``,
    ``rate_max``, the dynamics), ``task`` (name, input and action names).

Rewards:
    The test accuracy, at the single step.

Starting State:
    A fresh training set of the task's training conditions, drawn from the reset seed.

Episode End:
    After the one step (the network is scored).

Arguments:
    ``task`` (default ``perceptual_decision``), ``n_hidden`` (the budget, 64),
    ``n_train_trials`` (64), ``n_eval_trials`` (256, per condition set), ``alpha``
    (dt / tau, 0.2), ``rate_max`` (100), ``task_kwargs`` (passed to both splits).

Metrics:
    ``test_accuracy`` (fresh trials, training conditions), ``heldout_accuracy``,
    ``generalisation_gap`` (test - held-out accuracy), ``effective_rank`` (of
    ``w_rec``), ``participation_ratio`` (of the activity on test trials),
    ``readout_error`` (1 - R^2 of a linear readout of the task variables from the
    activity before the response), ``tail_index`` (Hill, of |w_rec|). Cost:
    ``eval_trials``, ``forward_flops``.

Version History:
    v0: first version.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.envs.cognitive import network as netlib
from icmlgym.envs.cognitive.tasks import SPLITS, TASKS, make_task


class CognitiveRNNEnv(gym.Env):
    """One episode = one submitted network, scored on fresh and held-out trials of a task."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        task: str = "perceptual_decision",
        n_hidden: int = 64,
        n_train_trials: int = 64,
        n_eval_trials: int = 256,
        alpha: float = 0.2,
        rate_max: float = 100.0,
        task_kwargs: dict[str, Any] | None = None,
    ) -> None:
        for name, v, lo in (("n_hidden", n_hidden, 1), ("n_train_trials", n_train_trials, 1), ("n_eval_trials", n_eval_trials, 4)):
            if int(v) < lo:
                raise ValueError(f"{name} must be >= {lo}, got {v}")
        if not 0 < alpha <= 1:
            raise ValueError(f"alpha must be in (0, 1], got {alpha}")
        if not rate_max > 0:
            raise ValueError(f"rate_max must be positive, got {rate_max}")
        base = dict(task_kwargs or {})
        make_task(task)  # an unknown name fails here, listing the known ones
        train_kw, held_kw = SPLITS[task]
        self.task_name = task
        self.train_task = make_task(task, **{**base, **_merge(base, train_kw)})
        self.heldout_task = make_task(task, **{**base, **_merge(base, held_kw)})
        self.n_hidden, self.n_train_trials, self.n_eval_trials = int(n_hidden), int(n_train_trials), int(n_eval_trials)
        self.alpha, self.rate_max = float(alpha), float(rate_max)
        self.n_input, self.n_output = self.train_task.n_input, self.train_task.n_actions
        self.shapes = netlib.shapes(self.n_input, self.n_hidden, self.n_output)
        self.action_space = spaces.Dict({k: spaces.Box(-np.inf, np.inf, shape=s, dtype=np.float32) for k, s in self.shapes.items()})
        self.observation_space = spaces.Box(0.0, 1.0, shape=(len(TASKS),), dtype=np.float32)
        self._ready = False

    def _obs(self) -> np.ndarray:
        obs = np.zeros(len(TASKS), dtype=np.float32)
        obs[list(TASKS).index(self.task_name)] = 1.0
        return obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        train = self.train_task.batch(self.n_train_trials, self.np_random)
        self._ready = True
        info = {
            "train_trials": {"inputs": train.inputs, "targets": train.targets, "response_mask": train.response_mask, "lengths": train.lengths},
            "network": {
                "n_input": self.n_input,
                "n_hidden": self.n_hidden,
                "n_output": self.n_output,
                "alpha": self.alpha,
                "rate_max": self.rate_max,
                "dynamics": "h_t = (1-alpha) h_{t-1} + alpha (w_rec r_{t-1} + w_in x_t + b_rec); r_t = min(relu(h_t), rate_max); logits_t = w_out r_t + b_out",
            },
            "task": {"name": self.task_name, "inputs": list(self.train_task.input_names), "actions": list(self.train_task.action_names), "dt": self.train_task.dt},
            "cost": {"eval_trials": 0, "forward_flops": 0},
        }
        return self._obs(), info

    def validate(self, action: Any) -> dict[str, np.ndarray]:
        """The network as float32 arrays, or ``ValueError`` naming what is wrong with it."""
        if not isinstance(action, dict):
            raise ValueError(f"action {type(action).__name__} is not in the action space {self.action_space} (a dict of weight arrays)")
        missing, extra = set(self.shapes) - set(action), set(action) - set(self.shapes)
        if missing or extra:
            raise ValueError(f"the network's weights must be exactly {sorted(self.shapes)}; missing {sorted(missing)}, unexpected {sorted(extra)}")
        sizes = f"n_input={self.n_input} ({self.task_name}), n_hidden<={self.n_hidden}, n_output={self.n_output}"
        out = {}
        for k, want in self.shapes.items():
            a = np.asarray(action[k])
            if a.shape != want:
                raise ValueError(f"{k} has shape {a.shape}, expected {want} ({sizes}); a smaller network pads unused units with zeros")
            if not np.issubdtype(a.dtype, np.number):
                raise ValueError(f"{k} has dtype {a.dtype}, expected numbers")
            a = a.astype(np.float32)
            if not np.all(np.isfinite(a)):
                bad = int((~np.isfinite(a)).sum())
                raise ValueError(f"{k} has {bad} non-finite (NaN or inf) weights")
            out[k] = a
        return out

    def step(self, action: Any):
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        net = self.validate(action)
        self._ready = False
        test = self.train_task.batch(self.n_eval_trials, self.np_random)
        held = self.heldout_task.batch(self.n_eval_trials, self.np_random)
        logits, rates = netlib.simulate(net, test.inputs, self.alpha, self.rate_max)
        test_correct, _ = self.train_task.score(logits.argmax(-1), test)
        h_logits, _ = netlib.simulate(net, held.inputs, self.alpha, self.rate_max)
        held_correct, _ = self.heldout_task.score(h_logits.argmax(-1), held)

        alive = np.arange(test.inputs.shape[1])[None, :] < test.lengths[:, None]
        rows = np.arange(test.n)
        pre = np.maximum(test.periods[self.train_task.response_period][:, 0] - 1, 0)  # last step before the response
        test_acc, held_acc = float(test_correct.mean()), float(held_correct.mean())
        metrics = {
            "test_accuracy": test_acc,
            "heldout_accuracy": held_acc,
            "generalisation_gap": test_acc - held_acc,
            "effective_rank": netlib.effective_rank(net["w_rec"]),
            "participation_ratio": netlib.participation_ratio(rates[alive]),
            "readout_error": netlib.readout_error(rates[rows, pre], self.train_task.task_variables(test)),
            "tail_index": netlib.hill_tail_index(net["w_rec"]),
        }
        n, i, o = self.n_hidden, self.n_input, self.n_output
        flops = 2 * (int(test.lengths.sum()) + int(held.lengths.sum())) * (n * n + n * i + o * n)
        info = {"cost": {"eval_trials": test.n + held.n, "forward_flops": flops}, "metrics": metrics}
        return self._obs(), test_acc, True, False, info


def _merge(base: dict[str, Any], split: dict[str, Any]) -> dict[str, Any]:
    """The split's kwargs over the user's, merging ``timing`` dicts."""
    out = dict(split)
    if "timing" in split and "timing" in base:
        out["timing"] = {**base["timing"], **split["timing"]}
    return out


__all__ = ["CognitiveRNNEnv"]
