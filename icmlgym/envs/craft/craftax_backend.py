"""Craftax-Classic backend: many Craft worlds stepped at once in JAX (extra ``[craftax]``).

``gym.make_vec("icmlgym/Craft-v0", num_envs=N, vectorization_mode="vector_entry_point",
task=...)`` returns :class:`CraftaxVectorEnv`: N Craftax-Classic-Symbolic worlds
(Matthews et al. 2024, a JAX reimplementation of Crafter with the same 17
actions and 22 achievements) stepped under ``jax.jit`` + ``vmap``, with the Craft
task's goals, initial inventory, success/death/limit ends and same-step
autoreset. (``vectorization_mode="sync"`` / ``"async"`` instead vectorise the
Crafter-backed single env.)

Differences from the Crafter backend, stated rather than hidden:

- motor actions only (``Discrete(17)`` per env; the skill and grounding levels
  need the local semantic view, which this backend does not decode);
- observations are Craftax's flat symbolic vector (``Box(0, 1, (1345,))``);
- Craftax records *whether* an achievement was unlocked, not how often, so
  tasks with a quantity above 1 are rejected, and an ordered task counts each
  achievement's first unlock (goal ``i + 1`` must first unlock no earlier than goal ``i``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from icmlgym.catalog import require_extra

require_extra("craftax", what="the Craftax backend of icmlgym/Craft-v0")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from craftax.craftax_classic.constants import Achievement  # noqa: E402
from craftax.craftax_classic.envs.craftax_symbolic_env import (  # noqa: E402
    CraftaxClassicSymbolicEnvNoAutoReset,
    get_flat_map_obs_shape,
    get_inventory_obs_shape,
)

from icmlgym.envs.craft.tasks import CraftTask, get_task  # noqa: E402

_INTRINSICS = {"health": "player_health", "food": "player_food", "drink": "player_drink", "energy": "player_energy"}


class CraftaxVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` Craftax-Classic worlds running one Craft task (see the module docstring).

    Args:
        num_envs: number of parallel worlds.
        task: a Craft task name, dict or :class:`CraftTask` (quantities of 1 only).
        max_steps: step limit per episode (default: the task's).
        max_episode_steps: alias of ``max_steps`` (what ``gym.make_vec`` passes from a spec).
        reset_ratio: optimistic resets (as in the Craftax baselines): a step that ends episodes
            generates ``ceil(num_envs / reset_ratio)`` fresh worlds and hands them to the ended envs
            (several envs ending on the same step beyond that number share a world). World
            generation dominates the cost of a step, so this keeps large batches fast.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 64,
        task: str | dict[str, Any] | CraftTask = "collect_wood/hard",
        max_steps: int | None = None,
        max_episode_steps: int | None = None,
        reset_ratio: int = 16,
        **unsupported: Any,
    ) -> None:
        if unsupported:
            raise ValueError(
                f"the Craftax vector backend does not support {sorted(unsupported)} "
                "(it runs motor actions on Craftax's symbolic observation); use vectorization_mode='sync' for those"
            )
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs}")
        if int(reset_ratio) < 1:
            raise ValueError(f"reset_ratio must be a positive integer, got {reset_ratio}")
        self.pool_size = -(-int(num_envs) // int(reset_ratio))
        self.task = get_task(task)
        too_many = [g for g, c in self.task.goals if c > 1]
        if too_many:
            raise ValueError(
                f"task {self.task.name!r} asks for {too_many} more than once; Craftax records unlocks, not counts"
            )
        self.num_envs = int(num_envs)
        limit = max_steps if max_steps is not None else max_episode_steps
        self.max_steps = int(limit) if limit is not None else self.task.max_steps
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {limit}")
        self._env = CraftaxClassicSymbolicEnvNoAutoReset()
        self._params = self._env.default_params.replace(max_timesteps=max(self.max_steps + 1, 10_000))
        obs_dim = get_flat_map_obs_shape() + get_inventory_obs_shape()
        self.single_observation_space = spaces.Box(0.0, 1.0, (obs_dim,), np.float32)
        self.single_action_space = spaces.Discrete(17)
        self.observation_space = spaces.Box(0.0, 1.0, (self.num_envs, obs_dim), np.float32)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, 17))
        self._goal_ids = jnp.array([Achievement[g.upper()].value for g, _ in self.task.goals], dtype=jnp.int32)
        self._survive = int(self.task.survive_steps)
        self._key = jax.random.PRNGKey(0)
        self._state = None
        self._t = None
        self._first = None
        self._build()

    # -- jitted kernels -----------------------------------------------------------
    def _build(self) -> None:
        env, params, inv = self._env, self._params, dict(self.task.initial_inventory)
        goal_ids, survive, max_steps = self._goal_ids, self._survive, self.max_steps

        def reset_one(key):
            obs, state = env.reset_env(key, params)
            items = {k: v for k, v in inv.items() if k not in _INTRINSICS}
            if items:
                state = state.replace(inventory=state.inventory.replace(**{k: jnp.int32(v) for k, v in items.items()}))
            intr = {_INTRINSICS[k]: jnp.int32(v) for k, v in inv.items() if k in _INTRINSICS}
            if intr:
                state = state.replace(**intr)
            # strong dtypes everywhere (Craftax leaves player_direction weakly typed), so that the
            # state a step returns has the same abstract type as a fresh one and jit compiles once
            state = jax.tree_util.tree_map(lambda x: jnp.asarray(x, dtype=jnp.result_type(x)), state)
            return env.get_obs(state), state

        def step_core(key, state, actions, t, first):
            n = actions.shape[0]
            obs, nstate, _, _, _ = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))(
                jax.random.split(key, n), state, actions, params
            )
            t = t + 1
            first = jnp.where((first < 0) & nstate.achievements, t[:, None], first)
            if goal_ids.shape[0]:
                g = first[:, goal_ids]
                ok = jnp.all(g >= 0, axis=1)
                if goal_ids.shape[0] > 1:
                    ok &= jnp.all(g[:, 1:] >= g[:, :-1], axis=1)
            else:
                ok = jnp.zeros(n, dtype=bool)
            dead = nstate.player_health <= 0
            if survive:
                ok = ok | ((t >= survive) & ~dead)
            terminated = ok | dead
            truncated = (t >= max_steps) & ~terminated
            return obs, nstate, ok, terminated, truncated, t, first

        k = self.pool_size

        def assign(end, pool_obs, pool_state, obs, state, t, first):
            # the j-th ended env takes pool world j mod k
            n = end.shape[0]
            idx = jnp.where(end, (jnp.cumsum(end) - 1) % k, 0)
            pick = lambda a, b: jnp.where(end.reshape((n,) + (1,) * (a.ndim - 1)), a[idx], b)  # noqa: E731
            return (pick(pool_obs, obs), jax.tree_util.tree_map(pick, pool_state, state),
                    jnp.where(end, 0, t), jnp.where(end[:, None], -1, first))

        reset_pool = jax.vmap(reset_one)

        def step_all(key, state, actions, t, first):
            k_step, k_reset = jax.random.split(key)
            obs, state, ok, term, trunc, t, first = step_core(k_step, state, actions, t, first)
            steps = t
            end = term | trunc

            def fresh(_):
                pobs, pstate = reset_pool(jax.random.split(k_reset, k))
                return assign(end, pobs, pstate, obs, state, t, first)

            obs, state, t, first = jax.lax.cond(end.any(), fresh, lambda _: (obs, state, t, first), None)
            return obs, state, ok.astype(jnp.float32), term, trunc, t, first, ok, steps

        self._reset_pool = jax.jit(reset_pool)
        self._step_core = jax.jit(step_core)
        self._assign = jax.jit(assign)
        # step_all (with in-graph autoreset) is compiled only for rollout's lax.scan
        self._step_all = step_all

    # -- gymnasium VectorEnv API ------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            self._key = jax.random.PRNGKey(int(seed))
        # n distinct worlds, generated in batches of the pool size (one compiled kernel)
        batches = []
        for _ in range(-(-self.num_envs // self.pool_size)):
            self._key, sub = jax.random.split(self._key)
            batches.append(self._reset_pool(jax.random.split(sub, self.pool_size)))
        obs = jnp.concatenate([b[0] for b in batches])[: self.num_envs]
        self._state = jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs)[: self.num_envs], *[b[1] for b in batches])
        self._t = jnp.zeros(self.num_envs, jnp.int32)
        self._first = jnp.full((self.num_envs, len(Achievement)), -1, jnp.int32)
        return np.asarray(obs, dtype=np.float32), {}

    def step(self, actions):
        if self._state is None:
            raise RuntimeError("step() called before reset()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() > 16:
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        self._key, k_step, k_reset = jax.random.split(self._key, 3)
        obs, state, ok, term, trunc, t, first = self._step_core(k_step, self._state, jnp.asarray(a, jnp.int32), self._t, self._first)
        term, trunc, ok, steps = np.asarray(term), np.asarray(trunc), np.asarray(ok), np.asarray(t)
        ended = term | trunc
        if ended.any():
            # same-step autoreset from a pool of fresh worlds (the reset kernel is already compiled)
            pobs, pstate = self._reset_pool(jax.random.split(k_reset, self.pool_size))
            obs, state, t, first = self._assign(jnp.asarray(ended), pobs, pstate, obs, state, t, first)
        self._state, self._t, self._first = state, t, first
        info = {"success": ok, "episode_steps": np.where(ended, steps, 0)}
        return np.asarray(obs, np.float32), ok.astype(np.float64), term, trunc, info

    def rollout(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Run ``T`` steps of given actions (``(T, num_envs)`` ints) inside one ``lax.scan``.

        Returns per-step ``reward``, ``terminated``, ``truncated`` and ``success`` arrays of shape
        ``(T, num_envs)``; the env's state advances as if ``step`` had been called ``T`` times.
        """
        if self._state is None:
            raise RuntimeError("rollout() called before reset()")
        acts = jnp.asarray(actions, jnp.int32)
        if acts.ndim != 2 or acts.shape[1] != self.num_envs:
            raise ValueError(f"actions must have shape (T, {self.num_envs}), got {tuple(acts.shape)}")
        if not hasattr(self, "_scan"):
            step_all = self._step_all

            def body(carry, a):
                key, state, t, first = carry
                key, sub = jax.random.split(key)
                _, state, rew, term, trunc, t, first, ok, _ = step_all(sub, state, a, t, first)
                return (key, state, t, first), (rew, term, trunc, ok)

            self._scan = jax.jit(lambda carry, acts: jax.lax.scan(body, carry, acts))
        carry, (rew, term, trunc, ok) = self._scan((self._key, self._state, self._t, self._first), acts)
        self._key, self._state, self._t, self._first = carry
        return {"reward": np.asarray(rew), "terminated": np.asarray(term), "truncated": np.asarray(trunc), "success": np.asarray(ok)}

    def close_extras(self, **kwargs: Any) -> None:
        self._state = None
