"""Craft family (issue 7): Minecraft-style hierarchical tasks over mixed action levels (DeepHA, ICML 2026).

Imports nothing heavy: the Crafter backend loads when the env is made. The task
suite is data (:mod:`icmlgym.envs.craft.tasks`); suites ``craft-smoke`` (20
tasks), ``craft-smoke-heldout`` and ``craft-800`` (every generated task) are
built lazily from it when the extra is installed.
"""

from __future__ import annotations

from typing import Any

from icmlgym.catalog import AgentInfo, TaskCard, Tier, imports_available

# optional extras this family needs (extra -> modules that must import) and the distributions
# whose versions every run records; tests/core/test_extras.py checks them against pyproject.toml
EXTRAS: dict[str, tuple[str, ...]] = {"craft": ("crafter",), "craftax": ("craftax", "jax"), "minerl": ("minerl",)}
PROVENANCE: tuple[str, ...] = ("crafter", "numba", "craftax", "jax", "minerl")

ENV_ID = "icmlgym/Craft-v0"

CARDS = [
    TaskCard(
        id=ENV_ID,
        family="craft",
        paper="Deep Hierarchical Agent (DeepHA): Chain-of-Action over a mixture of heterogeneous action spaces (ICML 2026)",
        entry_point="icmlgym.envs.craft.craft_env:CraftEnv",
        # gym.make_vec(..., vectorization_mode="vector_entry_point"): Craftax-Classic in JAX (extra [craftax])
        vector_entry_point="icmlgym.envs.craft.craftax_backend:CraftaxVectorEnv",
        kind="single",
        primary_metric="success",
        direction="max",
        cost_units=("env_steps", "macro_steps", "skill_calls", "grounding_calls", "motor_calls"),
        tiers={
            # smoke: a one-step task with a short limit, so all six agents x 3 seeds fit in ~20 s
            "smoke": Tier(episodes=1, max_steps=None, env_kwargs={"task": "collect_wood_x3/hard", "max_steps": 150},
                          train_steps=256, seeds=3),
            "standard": Tier(episodes=3, env_kwargs={"task": "make_wood_pickaxe/hard"}, train_steps=20_000, seeds=5),
            "full": Tier(episodes=10, env_kwargs={"task": "make_stone_pickaxe/hard"}, train_steps=200_000, seeds=10),
        },
        extra="craft",
        reference_agent="craft-hierarchical",
        baselines=("craft-skill-only", "craft-motor-scripted", "craft-oracle", "craft-random", "craft-ppo"),
        # smoke: (craft-random, craft-hierarchical) mean success over seeds 0-5,
        # measured with `python benchmarks/craft_refs.py`
        score_refs={"smoke": (0.0, 1.0)},
        suites=("craft",),
        description="1,048 Crafter tasks from the tech tree; skill / grounding / motor actions and Chain-of-Action steps",
    )
]

AGENTS = {
    "craft-hierarchical": AgentInfo(
        "icmlgym.agents.craft:HierarchicalAgent",
        extra="craft",
        description="DeepHA-style Chain-of-Action agent: tech-tree plan -> skill -> grounding -> motor, with memory and replanning",
    ),
    "craft-skill-only": AgentInfo(
        "icmlgym.baselines.craft:SkillOnlyAgent", extra="craft",
        description="plans over the tech tree, acts only through the env's skill controllers",
    ),
    "craft-motor-scripted": AgentInfo(
        "icmlgym.baselines.craft:MotorScriptedAgent", extra="craft",
        description="plans over the tech tree, acts only with motor actions from reactive rules (no skills, no grounding)",
    ),
    "craft-oracle": AgentInfo(
        "icmlgym.baselines.craft:OracleAgent", extra="craft",
        description="tech-tree oracle (upper bound): plans on the full world map from info['world_semantic']",
    ),
    "craft-random": AgentInfo(
        "icmlgym.baselines.craft:RandomMotorAgent", extra="craft", description="uniform random motor actions",
    ),
    "craft-ppo": AgentInfo(
        "icmlgym.baselines.craft:PPOMotorAgent", extra="rl",
        description="stable-baselines3 PPO on motor actions (MotorOnly wrapper), trained for the tier's train_steps",
    ),
}


def _suites() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    if not imports_available(EXTRAS["craft"]):
        return {}
    from icmlgym.envs.craft import tasks

    return {
        "craft-smoke": [(ENV_ID, {"task": t.name}) for t in tasks.smoke_tasks()],
        "craft-smoke-heldout": [(ENV_ID, {"task": t.name}) for t in tasks.heldout_smoke_tasks()],
        "craft-800": [(ENV_ID, {"task": n}) for n in tasks.task_names()],
        "craft-heldout": [(ENV_ID, {"task": n}) for n in tasks.task_names(split="heldout")],
    }


SUITES = _suites  # built once the family's extras are registered


def describe(env_id: str = ENV_ID) -> str:
    """What ``icmlgym info icmlgym/Craft-v0`` adds: the task suite, one line per task."""
    if not imports_available(EXTRAS["craft"]):
        return 'The task suite is generated from Crafter\'s recipes: pip install "icmlgym[craft]" to list it.'
    from icmlgym.envs.craft.tasks import task_table

    df = task_table()
    counts = df.groupby(["category", "split"]).size().unstack(fill_value=0)
    head = (
        f"{len(df)} tasks (load one with gym.make('{ENV_ID}', task=NAME); "
        "icmlgym.envs.craft.tasks.task_table() has the prompts)\n"
        f"{counts.to_string()}\n\n"
    )
    return head + df[["task", "category", "difficulty", "split", "depth", "max_steps"]].to_string(index=False)
