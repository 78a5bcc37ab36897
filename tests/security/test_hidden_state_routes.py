"""Issue #13's hidden-state attacks on FairLinearBandit-v0, SketchAttack-v0, ScreeningCompounds-v0
and ChoiceArena-v0, one route at a time (``route_adversaries.py``).

For each env: run in process, every route (the env ``train`` gets, an env rebuilt from the
public kwargs and seed, the caller's frames and the garbage collector) hands the cheat the
evaluation instance and it scores what the issue reported (regret 0, success 1, recall 1,
far above an honest agent). Submitted (isolated, hidden instances from the board's secret),
no route reaches the evaluation env: the frames hold none, and the envs the agent builds
itself are other instances, so playing what they say scores what it costs on the hidden
instance (computed here from the secret where the metric allows).
"""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym
from icmlgym.runner.evaluator import hidden_seed
from tests.security.conftest import HERE, SECRET, isolated, local

ROUTES = ("train", "rebuild", "frames")
READERS = HERE / "route_adversaries.py"

FAIRLIN = "icmlgym/FairLinearBandit-v0"
SKETCH = "icmlgym/SketchAttack-v0"
SCREENING = "icmlgym/ScreeningCompounds-v0"
ARENA = "icmlgym/ChoiceArena-v0"
# small instances: every isolated run stays a few seconds
KWARGS = {
    FAIRLIN: {"horizon": 200, "n_arms": 20, "dim": 5},
    SKETCH: {"n_keys": 600, "space": 60, "update_budget": 300, "query_budget": 300},
    SCREENING: {"library": {"kind": "embedded", "n_amines": 40, "n_acids": 60, "reactions": ["amide"]},
                "eval_batch": 4, "eval_budget": 10, "top_k": 10},
    ARENA: {"image_size": 32, "edit_budget": 3, "queries_per_step": 8, "heldout_judges": 0, "catalog_size": 40},
}
READER = {FAIRLIN: "FairLinReader", SKETCH: "SketchReader", SCREENING: "ScreeningReader", ARENA: "ArenaReader"}


def metrics(rec) -> dict[str, float]:
    assert rec.status == "ok", rec.error
    return rec.episodes[0].metrics


def cheat_local(env_id: str, route: str) -> dict[str, float]:
    return metrics(local(f"{READERS}:{READER[env_id]}", env_id, env_kwargs=dict(KWARGS[env_id]), agent_kwargs={"route": route}))


def cheat_submitted(env_id: str):
    rec = isolated(f"{READERS}:{READER[env_id]}", env_id, env_kwargs=dict(KWARGS[env_id]), hidden_seeds=SECRET)
    assert rec.status == "ok", rec.error
    assert rec.isolation["seeds"] == "hidden"
    return rec


def routes_seen(log: str) -> dict[str, tuple[str, str]]:
    """route -> (found, matches) from the reader's printed lines."""
    out = {}
    for line in log.splitlines():
        if line.startswith("route="):
            fields = dict(part.split("=", 1) for part in line.split())
            out[fields["route"]] = (fields["found"], fields["matches"])
    return out


def assert_no_route_reaches_the_evaluation(rec, matches_known: bool = True) -> None:
    seen = routes_seen(rec.log)
    assert set(seen) == set(ROUTES), rec.log
    assert seen["frames"] == ("False", "False")  # no evaluation env in the agent's process
    for route in ("train", "rebuild"):  # the agent's own envs: built, but other instances
        assert seen[route][0] == "True"
        assert seen[route][1] == ("False" if matches_known else "unknown")


@pytest.mark.parametrize("route", ROUTES)
def test_fairlin_routes_in_process_read_theta(route):
    m = cheat_local(FAIRLIN, route)
    assert m["nash_regret"] == 0.0 and m["optimal_arm_fraction"] == 1.0


def test_fairlin_submitted_cheat_plays_the_public_instances_best_arm():
    rec = cheat_submitted(FAIRLIN)
    assert rec.isolation["hidden_kwargs"] == ["instance_seed"]
    assert_no_route_reaches_the_evaluation(rec)
    kw = KWARGS[FAIRLIN]
    public = icmlgym.make(FAIRLIN, **kw).unwrapped
    hidden = icmlgym.make(FAIRLIN, **kw, instance_seed=hidden_seed(SECRET, f"{FAIRLIN}/instance_seed", 0)).unwrapped
    arm = int(np.argmax(public.means))
    assert hidden.means[arm] < hidden.optimum  # the public instance's best arm is not the hidden one's
    # it pulls that arm every round: the Nash regret is exactly the gap of that arm on the hidden instance
    assert metrics(rec)["nash_regret"] == pytest.approx(hidden.optimum - hidden.means[arm])
    assert metrics(rec)["optimal_arm_fraction"] == 0.0


@pytest.mark.parametrize("route", ROUTES)
def test_sketch_routes_in_process_read_the_defenders_sampling(route):
    m = cheat_local(SKETCH, route)
    assert m["success"] == 1.0


def test_sketch_submitted_cheat_does_not_break_the_defender():
    honest = metrics(local("random", SKETCH, env_kwargs=dict(KWARGS[SKETCH])))
    assert honest["success"] == 0.0
    rec = cheat_submitted(SKETCH)
    assert_no_route_reaches_the_evaluation(rec, matches_known=False)
    # the defender is seeded from the (hidden) reset seed: the keys it skips are other keys
    m = metrics(rec)
    assert m["success"] == 0.0 and m["prefix_max_error"] < KWARGS[SKETCH].get("epsilon", 0.5)


@pytest.mark.parametrize("route", ROUTES)
def test_screening_routes_in_process_read_the_ground_truth(route):
    assert cheat_local(SCREENING, route)["top_k_recall"] == 1.0


def test_screening_submitted_cheat_evaluates_the_public_librarys_top_compounds():
    honest = metrics(local("random", SCREENING, env_kwargs=dict(KWARGS[SCREENING])))
    assert honest["top_k_recall"] < 1.0
    rec = cheat_submitted(SCREENING)
    assert rec.isolation["hidden_kwargs"] == ["library.seed"]
    assert rec.env_spec["kwargs"]["library"]["seed"] == "<hidden>"
    assert_no_route_reaches_the_evaluation(rec, matches_known=False)
    kw = KWARGS[SCREENING]
    public = icmlgym.make(SCREENING, **kw).unwrapped
    library = {**kw["library"], "seed": hidden_seed(SECRET, f"{SCREENING}/library.seed", 0)}
    hidden = icmlgym.make(SCREENING, **{**kw, "library": library}).unwrapped
    # it evaluates the public library's top-10 indices; on the hidden library they score what they score
    top = np.argsort(-public.truth.objective, kind="stable")[: kw["eval_budget"]]
    expected = min(int((hidden.truth.objective[top] >= hidden.truth.topk_threshold).sum()), hidden.truth.k) / hidden.truth.k
    assert metrics(rec)["top_k_recall"] == pytest.approx(expected) and expected < 0.5


@pytest.mark.parametrize("route", ROUTES)
def test_arena_routes_in_process_give_a_free_oracle(route):
    honest = metrics(local("random", ARENA, env_kwargs=dict(KWARGS[ARENA])))
    assert cheat_local(ARENA, route)["objective"] > honest["objective"] + 0.1


def test_arena_submitted_cheat_optimises_another_photo():
    cheat = cheat_local(ARENA, "rebuild")
    rec = cheat_submitted(ARENA)
    assert rec.isolation["hidden_kwargs"] == ["catalog_seed"]
    # the catalogue and the episode's draws are hidden: the photo it simulates is not the one scored
    assert_no_route_reaches_the_evaluation(rec)
    assert metrics(rec)["objective"] < cheat["objective"] - 0.1
