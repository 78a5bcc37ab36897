"""Registration refuses duplicates, and temporary registrations leave the catalog as they found it."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest

import icmlgym
from icmlgym import catalog
from icmlgym.catalog import AGENTS, AgentInfo, TaskCard
from icmlgym.registry import FAMILIES, DuplicateRegistrationError, family_of

BANDIT = "icmlgym/Bandit-v0"
TEST_CARD = TaskCard(
    id="icmlgym/RegistryTest-v0", family="test", paper="-", primary_metric="pseudo_regret",
    entry_point="icmlgym.envs.bandit.bernoulli_bandit:BernoulliBanditEnv",
)


def test_register_and_unregister_reach_the_catalog_and_gymnasium():
    icmlgym.register(TEST_CARD)
    try:
        assert icmlgym.card(TEST_CARD.id) is TEST_CARD and TEST_CARD.id in gym.registry
        icmlgym.register(TEST_CARD)  # identical: harmless
        env = icmlgym.make(TEST_CARD.id)
        env.close()
    finally:
        assert icmlgym.unregister(TEST_CARD.id) == TEST_CARD
    assert TEST_CARD.id not in gym.registry and TEST_CARD.id not in catalog._CARDS


def test_a_different_card_under_a_taken_id_raises():
    other = dataclasses.replace(icmlgym.card(BANDIT), primary_metric="regret")
    with pytest.raises(DuplicateRegistrationError, match=r"icmlgym/Bandit-v0 is already registered .*bump the version"):
        icmlgym.register(other)
    assert icmlgym.card(BANDIT).primary_metric == "pseudo_regret"


def test_an_id_taken_in_gymnasium_outside_icmlgym_raises():
    gym.register("icmlgym/Foreign-v0", entry_point="gymnasium.envs.classic_control:CartPoleEnv")
    try:
        card = dataclasses.replace(TEST_CARD, id="icmlgym/Foreign-v0")
        with pytest.raises(DuplicateRegistrationError, match="Gymnasium's registry"):
            icmlgym.register(card)
        assert "icmlgym/Foreign-v0" not in catalog._CARDS
    finally:
        gym.registry.pop("icmlgym/Foreign-v0")


def test_a_different_agent_under_a_taken_name_raises():
    with pytest.raises(DuplicateRegistrationError, match="agent name 'ucb1' is already registered"):
        icmlgym.register_agent("ucb1", AgentInfo("my_agents:UCB"))
    icmlgym.register_agent("ucb1", AGENTS["ucb1"])  # identical: harmless
    assert AGENTS["ucb1"].entry_point == "icmlgym.baselines.generic:UCB1Agent"


def test_registered_block_restores_cards_agents_and_suites():
    before = (dict(catalog._CARDS), dict(AGENTS), icmlgym.suites())
    card = dataclasses.replace(TEST_CARD, suites=("registry-test",))
    with icmlgym.registered(card, agents={"registry-test-agent": AgentInfo("icmlgym.baselines.generic:RandomAgent")}):
        (rec,) = icmlgym.run(card.id, "registry-test-agent", seeds=1)
        assert rec.status == "ok", rec.error
        assert icmlgym.suite("registry-test") == [(card.id, {})]
    assert (dict(catalog._CARDS), dict(AGENTS), icmlgym.suites()) == before
    with pytest.raises(KeyError):
        icmlgym.suite("registry-test")


def test_registered_block_undoes_a_partial_registration():
    clash = dataclasses.replace(icmlgym.card(BANDIT), primary_metric="regret")
    with pytest.raises(DuplicateRegistrationError):
        with icmlgym.registered(TEST_CARD, clash):
            pass
    assert TEST_CARD.id not in catalog._CARDS


def test_families_are_discovered_not_listed():
    assert {"bandit", "screening", "fairbandit", "games", "craft", "sketch", "arena"} <= set(FAMILIES)
    for name, fam in FAMILIES.items():
        assert fam.cards and all(c.family == name for c in fam.cards)
    assert {c.family for c in catalog.cards()} == set(FAMILIES)


def test_a_card_in_the_wrong_family_package_is_refused():
    import types

    module = types.ModuleType("icmlgym.envs.bandit")
    module.CARDS = [dataclasses.replace(TEST_CARD, family="games")]
    with pytest.raises(ValueError, match="declared in icmlgym.envs.bandit but its card says family='games'"):
        family_of(module)
