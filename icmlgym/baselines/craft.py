"""Baselines for icmlgym/Craft-v0 (DeepHA's single-action-space comparators and bounds).

- :class:`SkillOnlyAgent`: the same tech-tree planner, acting only through skills.
- :class:`MotorScriptedAgent`: the same planner, acting only with motor actions chosen
  by reactive rules (no path planning, no skill controllers).
- :class:`OracleAgent`: the planner on the full world map (``info["world_semantic"]``,
  privileged) with shortest paths: an upper bound.
- :class:`RandomMotorAgent`: uniform motor actions.
- :class:`PPOMotorAgent`: stable-baselines3 PPO on motor actions through
  :class:`~icmlgym.envs.craft.wrappers.MotorOnly` (extra ``[rl]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.craft import PlannerAgent, direction_to
from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.envs.craft.navigation import DIRECTIONS, bfs_next_step, ids_of
from icmlgym.envs.craft.planner import StationKnowledge, Subgoal
from icmlgym.envs.craft.skills import CENTER, SkillController, Skill, View


class SkillOnlyAgent(PlannerAgent):
    """Plans over the tech tree, acts only with skills; a skill that fails twice in a row
    is followed by an ``explore`` skill. Stations count as known only while in view."""

    name = "craft-skill-only"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.failures = 0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        sem = obs["semantic"]
        knowledge = StationKnowledge(
            lambda s: bool((sem == self.tree.semantic_id(s)).any()), lambda s: self.local_adjacent(sem, s)
        )
        sg = self.subgoal(obs, info, knowledge)
        chain = self.last_chain
        if chain and chain.get("executed") == "skill":
            self.failures = self.failures + 1 if chain.get("status") == "failed" else 0
        if self.failures >= 2:
            self.failures = 0
            return {"skill": "explore"}
        if sg.verb in ("survive", "eat_plant"):
            # no skill eats a ripe plant or waits: keep exploring (and so stay clear of zombies)
            return {"skill": "explore"}
        return {"skill": sg.skill}


class MotorScriptedAgent(PlannerAgent):
    """Plans over the tech tree, acts only with motor actions from reactive rules:
    act on a target it faces, step greedily toward the nearest visible target along the
    longer axis (the other axis when blocked), else walk on in a random direction."""

    name = "craft-motor-scripted"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.walk_dir: str | None = None
        self.walk_left = 0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        sem = obs["semantic"]
        knowledge = StationKnowledge(
            lambda s: bool((sem == self.tree.semantic_id(s)).any()), lambda s: self.local_adjacent(sem, s)
        )
        sg = self.subgoal(obs, info, knowledge)
        facing = list(DIRECTIONS)[int(obs["facing"])]
        fdx, fdy = DIRECTIONS[facing]
        ahead = sem[CENTER[0] + fdx, CENTER[1] + fdy]
        names = self.tree.semantic_names
        if sg.verb == "make":
            return {"motor": f"make_{sg.arg}"}
        if sg.verb == "sleep":
            return {"motor": "sleep"}
        if sg.verb == "survive":
            return {"motor": "noop"}
        if sg.verb == "place":
            if names[ahead] in self.tree.place[sg.arg]["where"]:
                return {"motor": f"place_{sg.arg}"}
            return {"motor": self._wander(sem)}
        targets, interact = self.target_names(sg)
        if sg.verb == "collect" and targets[0] in self.tree.walkable:
            return {"motor": "do"} if names[ahead] == targets[0] else {"motor": self._wander(sem)}
        mask = np.isin(sem, ids_of(self.tree, targets))
        if interact and mask[CENTER[0] + fdx, CENTER[1] + fdy]:
            return {"motor": "do"}
        cells = np.argwhere(mask)
        if len(cells) == 0:
            return {"motor": self._wander(sem)}
        d = np.abs(cells - np.array(CENTER)).sum(1)
        tx, ty = cells[int(np.argmin(d))]
        ox, oy = int(tx) - CENTER[0], int(ty) - CENTER[1]
        if abs(ox) + abs(oy) == 1 and not interact:
            return {"motor": "noop"}  # next to the station already
        first = [("right" if ox > 0 else "left", abs(ox)), ("down" if oy > 0 else "up", abs(oy))]
        first.sort(key=lambda p: -p[1])
        for name, size in first:
            if size == 0:
                continue
            dx, dy = DIRECTIONS[name]
            cell = sem[CENTER[0] + dx, CENTER[1] + dy]
            if self.passable[cell] or mask[CENTER[0] + dx, CENTER[1] + dy]:
                return {"motor": f"move_{name}"}
        return {"motor": self._wander(sem, force_new=True)}

    def _wander(self, sem: np.ndarray, force_new: bool = False) -> str:
        free = [d for d, (dx, dy) in DIRECTIONS.items() if self.passable[sem[CENTER[0] + dx, CENTER[1] + dy]]]
        if force_new or self.walk_dir not in free or self.walk_left <= 0:
            options = free or list(DIRECTIONS)
            self.walk_dir = options[int(self.np_random.integers(len(options)))]
            self.walk_left = int(self.np_random.integers(3, 8))
        self.walk_left -= 1
        return f"move_{self.walk_dir}"


class OracleAgent(PlannerAgent):
    """Tech-tree oracle: the planner plus shortest paths on the full world map
    (``info["world_semantic"]``, privileged information no other agent reads); motor actions only."""

    name = "craft-oracle"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.ctrl: SkillController | None = None
        self.ctrl_goal: Subgoal | None = None
        self.last: tuple[str, tuple[int, int]] | None = None

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        world = info["world_semantic"]
        pos = tuple(int(v) for v in info["player_pos"])
        sem = obs["semantic"]
        knowledge = StationKnowledge(
            lambda s: bool((world == self.tree.semantic_id(s)).any()), lambda s: self.local_adjacent(sem, s)
        )
        sg = self.subgoal(obs, info, knowledge)
        if sg.verb in ("make", "place", "sleep") or (
            sg.verb == "collect" and self.tree.source_of(sg.arg)[1] in self.tree.walkable
        ):
            # no navigation needed: run the env's own controller logic locally, emitting motor actions
            if self.ctrl is None or self.ctrl_goal != sg or self.ctrl.status != "running":
                verb = sg.verb
                self.ctrl = SkillController(Skill(verb, sg.arg), self.tree, self.np_random)
                self.ctrl_goal = sg
            view = View(sem, DIRECTIONS[list(DIRECTIONS)[int(obs["facing"])]], self.inventory(obs), info["achievements"])
            motor = self.ctrl.act(view)
            return {"motor": motor or "noop"}
        if sg.verb == "survive":
            return {"motor": "noop"}
        names, interact = self.target_names(sg)
        targets = np.isin(world, ids_of(self.tree, names))
        direction, cell, dist = bfs_next_step(world, pos, targets, self.passable, adjacent=True)
        if dist < 0 or cell is None:
            return {"motor": self.safe_random_move(sem)}
        if direction is not None:
            motor = f"move_{direction}"
            if self.last == (motor, pos):  # blocked by a creature: side-step
                motor = self.safe_random_move(sem)
            self.last = (motor, pos)
            return {"motor": motor}
        d = direction_to(pos, cell)
        facing = list(DIRECTIONS)[int(obs["facing"])]
        if not interact:
            return {"motor": "noop"}
        return {"motor": "do" if facing == d else f"move_{d}"}


class RandomMotorAgent(BaseAgent):
    """Uniform random motor actions (seeded by the agent's own seed)."""

    name = "craft-random"

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        n = int(self.spec.action_space["motor"].n) if self.spec is not None else 17
        return {"motor": int(self.np_random.integers(n))}


class PPOMotorAgent(BaseAgent):
    """stable-baselines3 PPO on motor actions: ``train`` wraps the runner's env in
    :class:`~icmlgym.envs.craft.wrappers.MotorOnly` (vector observation without the image
    unless ``image=True``) and learns; ``act`` predicts a motor action.

    Args:
        image: include the 64x64 image (NatureCNN; slow on CPU) in the policy's input.
        n_steps, batch_size: PPO rollout length and minibatch size.
        deterministic: act with the policy's mode.
    """

    name = "craft-ppo"

    def __init__(self, image: bool = False, n_steps: int = 128, batch_size: int = 64, deterministic: bool = False) -> None:
        super().__init__()
        from icmlgym.catalog import require_extra

        require_extra("rl", what="craft-ppo")
        self.image = bool(image)
        self.n_steps = int(n_steps)
        self.batch_size = int(batch_size)
        self.deterministic = bool(deterministic)
        self.model = None
        self._keys: list[str] = []
        self._train_seed: int | None = None

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        if self.spec is None:
            self._train_seed = seed
        super().reset(seed, spec)

    def train(self, env, budget: int) -> None:
        from stable_baselines3 import PPO

        from icmlgym.envs.craft.wrappers import MotorOnly

        wrapped = MotorOnly(env, image=self.image)
        self._keys = list(wrapped.observation_space.spaces)
        device = self.spec.device if self.spec is not None else "cpu"
        self.model = PPO(
            "MultiInputPolicy", wrapped, n_steps=self.n_steps, batch_size=self.batch_size,
            seed=self._train_seed, verbose=0, device=device,
        )
        if budget > 0:
            from icmlgym.agents.sb3 import learn_quietly

            learn_quietly(self.model, int(budget))

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        if self.model is None:
            raise RuntimeError("craft-ppo: act() before train(env, budget); the runner calls train first")
        action, _ = self.model.predict({k: obs[k] for k in self._keys}, deterministic=self.deterministic)
        return {"motor": int(np.asarray(action).reshape(()))}
