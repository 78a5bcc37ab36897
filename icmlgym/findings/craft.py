"""DeepHA's findings on Craft-v0 (Crafter backend): acting over mixed action levels.

The independent unit is the world: the run seed generates the Crafter world, and every task
run at that seed plays the same world, so a world's tasks are not independent units. Per world
the measure pools the 8 held-out ordered tasks (``craft-smoke-heldout``: compositions never in
training; all multi-step), step limit 300. Efficiency is reported conditioned on success
(steps to success over the episodes that succeeded), through the runner.
"""

from __future__ import annotations

from icmlgym.findings.claims import HOLDS, NOT_AT_SCALE, Arm, Finding, Mean

C = "icmlgym/Craft-v0"
SOURCE = "Deep Hierarchical Agent (DeepHA, ICML 2026)"
HELDOUT = (
    "collect_coal_then_collect_stone/hard",
    "collect_coal_then_place_table/hard",
    "collect_stone_then_place_furnace/hard",
    "eat_cow_then_make_stone_sword/hard",
    "make_stone_pickaxe_then_place_table/hard",
    "make_wood_pickaxe_then_make_stone_pickaxe/hard",
    "place_plant_then_collect_coal/hard",
    "place_table_then_make_stone_pickaxe/hard",
)
TASKS = tuple({"task": t} for t in HELDOUT)
WORLDS = tuple(range(10))


def _arm(label: str, agent: str) -> Arm:
    return Arm(label, C, agent, env_kwargs={"max_steps": 300}, variants=TASKS)


HIER = _arm("hierarchical (mixed levels)", "craft-hierarchical")
SKILL = _arm("skill-only", "craft-skill-only")
MOTOR = _arm("motor-only", "craft-motor-scripted")
SUCCESS = Mean("success")

FINDINGS = [
    Finding(
        id="craft-mixed-beats-skill-only",
        family="craft",
        claim="An agent acting over a mixture of action spaces succeeds more often than one tied to "
        "semantic skills, most so on complex multi-step (here held-out) tasks.",
        source=SOURCE,
        treatment=HIER,
        control=SKILL,
        measure=SUCCESS,
        direction="greater",
        unit="world",
        min_effect=0.05,
        expected=HOLDS,
        test_units=WORLDS,
    ),
    Finding(
        id="craft-mixed-beats-motor-only",
        family="craft",
        claim="An agent acting over a mixture of action spaces succeeds more often than one tied to motor control.",
        source=SOURCE,
        treatment=HIER,
        control=MOTOR,
        measure=SUCCESS,
        direction="greater",
        unit="world",
        min_effect=0.05,
        expected=HOLDS,
        test_units=WORLDS,
    ),
    Finding(
        id="craft-mixed-fewer-steps-than-motor-only",
        family="craft",
        claim="(Our earlier observation, not the paper's claim) on held-out tasks the mixed agent needs fewer "
        "primitive steps to succeed than the motor-only agent, given success.",
        source="docs/craft.md (seeds 0-2)",
        treatment=HIER,
        control=MOTOR,
        measure=Mean("steps_to_success", given="success"),
        direction="less",
        unit="world",
        min_effect=5.0,
        expected=NOT_AT_SCALE,
        note="Observed (worlds 0-9): the mixed agent needs 4.9 more steps [-6.0, +15.4] given success: "
        "the earlier observation (seeds 0-2, outside the runner) does not hold through the runner.",
        test_units=WORLDS,
    ),
]
