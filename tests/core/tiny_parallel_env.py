"""A two-player repeated matching-pennies ParallelEnv used to test the multi-agent path of the core."""

import functools

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


class MatchingPennies(ParallelEnv):
    """Matching pennies repeated for ``rounds`` rounds; each player observes the other's last move (2 = none yet)."""

    metadata = {"name": "matching_pennies_v0", "render_modes": []}

    def __init__(self, rounds: int = 20):
        self.rounds = rounds
        self.possible_agents = ["player_0", "player_1"]
        self.agents = []

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent):
        return spaces.Discrete(3)

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent):
        return spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        self.np_random = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.t = 0
        return {a: 2 for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        if not self.agents:
            raise RuntimeError("step() called after the episode ended; call reset()")
        for a, act in actions.items():
            if not self.action_space(a).contains(act):
                raise ValueError(f"action {act!r} of {a} is not in {self.action_space(a)}")
        self.t += 1
        match = actions["player_0"] == actions["player_1"]
        rewards = {"player_0": 1.0 if match else -1.0, "player_1": -1.0 if match else 1.0}
        obs = {"player_0": int(actions["player_1"]), "player_1": int(actions["player_0"])}
        done = self.t >= self.rounds
        terms = {a: done for a in self.agents}  # the rounds are the game's own length: terminated
        truncs = {a: False for a in self.agents}
        infos = {a: {"cost": {"rounds": self.t}} for a in self.agents}
        if done:
            for a in self.agents:
                infos[a]["metrics"] = {"rounds": float(self.t)}
            self.agents = []
        return obs, rewards, terms, truncs, infos
