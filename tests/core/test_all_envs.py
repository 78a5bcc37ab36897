"""The catalog-wide conformance suite: every registered env, present and future, with no edit here.

For each card, :func:`icmlgym.envs.checking.check` (what ``icmlgym check`` runs) at the smoke
tier: the checkers with warnings as errors (allow-list in ``checking.ALLOWED_WARNINGS``), the
card <-> env contract (primary metric and cost units present, metrics scalar numbers, cost
counters monotone, observations inside their space), seed determinism, invalid actions, step
after the end, and the rollout hash recorded for the env's version in the family's
``rollouts.json``. A family writes no conformance tests of its own.

Then the same checks on deliberately broken envs, to show each failure names its problem.
"""

from __future__ import annotations

import dataclasses

import pytest

import icmlgym
from icmlgym import catalog
from icmlgym.catalog import TaskCard, Tier
from icmlgym.envs.checking import check, failures, play_single

IDS = [c.id for c in catalog.cards()]


@pytest.mark.parametrize("env_id", IDS)
def test_env_conforms(env_id):
    results = check(env_id)
    if len(results) == 1 and results[0].passed is None:
        pytest.skip(results[0].detail)
    assert {r.check for r in results} >= {"card contract", "recorded rollout", "seed determinism", "invalid action", "step after end", "docstrings"}
    assert not failures(results), failures(results)


def test_the_sweep_covers_every_family():
    from icmlgym.registry import FAMILIES

    assert {catalog.card(i).family for i in IDS} == set(FAMILIES)
    assert len(IDS) >= 11


BANDIT_CARD = dataclasses.replace(
    icmlgym.card("icmlgym/Bandit-v0"), family="test", suites=(),
    tiers={t: Tier(env_kwargs={"horizon": 40}) for t in catalog.TIERS},
)


def _broken(cls: str, **changes) -> TaskCard:
    return dataclasses.replace(BANDIT_CARD, id=f"icmlgym/Broken{cls}-v0", entry_point=f"tests.core.broken_envs:{cls}", **changes)


def _check_broken(card: TaskCard) -> str:
    with icmlgym.registered(card):
        recorded = play_single(card.id, {"horizon": 40}).rollout_hash if card.entry_point.endswith("BernoulliBanditEnv") else "-"
        return failures(check(card.id, recorded=recorded))


def test_an_observation_outside_its_box_fails():
    text = _check_broken(_broken("ObservationOutsideBox"))
    assert "card contract" in text and "is outside the observation space Box(0.0, 1.0, (2,), float32)" in text


def test_a_primary_metric_missing_from_info_fails():
    text = _check_broken(_broken("PrimaryMetricMissing"))
    assert "primary metric 'pseudo_regret' of the card is missing from info['metrics']" in text


def test_a_metric_or_cost_unit_the_card_does_not_list_fails():
    text = _check_broken(dataclasses.replace(BANDIT_CARD, id="icmlgym/BrokenCard-v0", primary_metric="regret", cost_units=("env_steps", "pulls")))
    assert "primary metric 'regret' of the card is missing" in text
    assert "the episode ended without cost unit(s) ['pulls'] of the card" in text
    text = _check_broken(_broken("CostGoesDown"))
    assert "info['cost'] has ['pulls_left'], which the card's cost_units ['env_steps'] do not list" in text
    assert "info['cost']['pulls_left'] went down" in text


def test_a_warning_is_an_error():
    text = _check_broken(_broken("WarnsOnStep"))
    assert "check_env: UserWarning: reward scale is approximate" in text


def test_behaviour_changed_without_a_version_bump_fails():
    """Record v0's rollout, then register other behaviour under the same id: the hash differs."""
    card = dataclasses.replace(BANDIT_CARD, id="icmlgym/BrokenVersion-v0")
    with icmlgym.registered(card):
        recorded = play_single(card.id, {"horizon": 40}).rollout_hash
        assert not failures(check(card.id, recorded=recorded))
    changed = dataclasses.replace(card, default_kwargs={"instance_seed": 1})  # other arm means, same id
    with icmlgym.registered(changed):
        text = failures(check(changed.id, recorded=recorded))
    assert "behaviour of icmlgym/BrokenVersion-v0 changed without a version bump" in text and recorded in text


def test_an_env_without_a_recorded_rollout_fails():
    card = dataclasses.replace(BANDIT_CARD, id="icmlgym/Unrecorded-v0")
    with icmlgym.registered(card):
        text = failures(check(card.id))
    assert text == "icmlgym/Unrecorded-v0 · recorded rollout: no rollout recorded for icmlgym/Unrecorded-v0: record it with `icmlgym check --record icmlgym/Unrecorded-v0`"


def test_a_rollout_recorded_on_another_platform_is_accepted_beside_the_versions(tmp_path, monkeypatch):
    """An entry's ``other_platforms`` hashes pass the check as its ``sha256`` does; ``--record-platform``
    adds this machine's hash without replacing the version's, and a hash in neither fails naming
    this machine's numerics platform."""
    import json

    from icmlgym.envs import checking
    from icmlgym.nn.runtime import numerics_platform

    path = tmp_path / "rollouts.json"
    monkeypatch.setattr(checking, "rollouts_path", lambda c: path)
    card = dataclasses.replace(BANDIT_CARD, id="icmlgym/Platforms-v0")
    with icmlgym.registered(card):
        here = play_single(card.id, {"horizon": 40}).rollout_hash
        path.write_text(json.dumps({card.id: {"steps": 50, "sha256": "0123456789abcdef", "other_platforms": {"CPU X": here}}}))
        assert checking.recorded_hashes(card) == {"0123456789abcdef": "the version's recording", here: "CPU X"}
        assert not failures(check(card.id))
        path.write_text(json.dumps({card.id: {"steps": 50, "sha256": "0123456789abcdef"}}))
        text = failures(check(card.id))
        assert f"hash to {here} on {numerics_platform()}, recorded 0123456789abcdef (the version's recording)" in text
        assert "icmlgym check --record-platform ID" in text
        assert checking.record_rollout(card.id, platform_only=True) == here
        entry = json.loads(path.read_text())[card.id]
        assert entry["sha256"] == "0123456789abcdef" and entry["other_platforms"] == {numerics_platform(): here}
        assert not failures(check(card.id))
        checking.record_rollout(card.id, platform_only=True)  # already accepted: nothing added
        assert json.loads(path.read_text())[card.id] == entry
        checking.record_rollout(card.id)  # a new version's recording replaces the entry
        entry = json.loads(path.read_text())[card.id]
        assert entry["sha256"] == here and "other_platforms" not in entry and entry["recorded_on"] == numerics_platform()


def test_icmlgym_check_prints_the_failure(tmp_path):
    from typer.testing import CliRunner

    from icmlgym.cli import app

    with icmlgym.registered(_broken("PrimaryMetricMissing")):
        r = CliRunner().invoke(app, ["check", "icmlgym/BrokenPrimaryMetricMissing-v0"])
    assert r.exit_code == 1
    assert "primary metric 'pseudo_regret' of the card is missing" in " ".join(r.output.split())


def test_an_env_sb3_cannot_encode_fails_the_sb3_check():
    pytest.importorskip("stable_baselines3")
    text = _check_broken(_broken("TupleActions"))
    assert "sb3 check_env: TypeError: SB3Compatible cannot encode the action space Tuple(Discrete(10))" in text
