import gymnasium as gym
import pandas as pd
import pytest

import icmlgym
from icmlgym.catalog import (
    MissingExtraError,
    TaskCard,
    Tier,
    UnknownEnvError,
    add_card,
    card,
    task_label,
)


def test_import_registers_bandit_in_gymnasium():
    env = gym.make("icmlgym/Bandit-v0")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert "icmlgym/Bandit-v0" in gym.registry


def test_tasks_dataframe_has_the_catalog_columns():
    df = icmlgym.tasks()
    assert isinstance(df, pd.DataFrame)
    for col in ["id", "family", "paper", "kind", "primary_metric", "direction", "cost_units",
                "tier_smoke", "tier_standard", "tier_full", "extra", "installed"]:
        assert col in df.columns
    row = df.set_index("id").loc["icmlgym/Bandit-v0"]
    assert row["family"] == "bandit"
    assert row["kind"] == "single"
    assert row["primary_metric"] == "pseudo_regret" and row["direction"] == "min"
    assert bool(row["installed"]) is True
    assert "1000" in row["tier_smoke"]
    assert df["id"].is_unique
    assert all(i.startswith("icmlgym/") for i in df["id"])


def test_every_card_is_complete():
    from icmlgym.catalog import AGENTS, TIERS, cards

    for c in cards():
        assert set(TIERS) <= set(c.tiers), c.id
        assert c.primary_metric and c.direction in ("max", "min"), c.id
        assert c.cost_units, c.id
        for name in c.agents:
            assert name in AGENTS, f"{c.id} lists agent {name!r} which is not registered"


def test_unknown_id_suggests_close_names():
    with pytest.raises(UnknownEnvError, match="did you mean 'icmlgym/Bandit-v0'"):
        card("icmlgym/Bandt-v0")
    with pytest.raises(UnknownEnvError):
        icmlgym.make("icmlgym/NoSuchThing-v0")


def test_short_id_without_namespace_resolves():
    assert card("Bandit-v0").id == "icmlgym/Bandit-v0"


def test_missing_extra_names_the_pip_command():
    needs = TaskCard(
        id="icmlgym/NeedsMineRL-v0", family="test", paper="-", extra="minerl",
        entry_point="icmlgym.envs.bandit.bernoulli_bandit:BernoulliBanditEnv",
    )
    with icmlgym.registered(needs):
        row = icmlgym.tasks().set_index("id").loc["icmlgym/NeedsMineRL-v0"]
        assert bool(row["installed"]) is False and row["extra"] == "minerl"
        with pytest.raises(MissingExtraError, match=r'pip install "icmlgym\[minerl\]"'):
            icmlgym.make("icmlgym/NeedsMineRL-v0")


def test_card_validation():
    with pytest.raises(ValueError, match="namespace"):
        add_card(TaskCard(id="Foo-v0", family="x", paper="-", entry_point="a:b"))
    with pytest.raises(ValueError, match="tiers"):
        add_card(TaskCard(id="icmlgym/Foo-v0", family="x", paper="-", entry_point="a:b", tiers={"smoke": Tier()}))
    with pytest.raises(ValueError, match="no tier"):
        card("icmlgym/Bandit-v0").tier("huge")


def test_normalisation_and_labels():
    c = card("icmlgym/Bandit-v0")
    lo, hi = c.score_refs["smoke"]
    assert c.normalise(lo, "smoke") == pytest.approx(0.0)
    assert c.normalise(hi, "smoke") == pytest.approx(1.0)
    assert c.normalise(1.0, "full") is None
    assert task_label("icmlgym/X-v0", {"b": 2, "a": 1}) == "icmlgym/X-v0[a=1,b=2]"
    assert task_label("icmlgym/X-v0") == "icmlgym/X-v0"


def test_suites():
    assert ("icmlgym/Bandit-v0", {}) in icmlgym.suite("all")
    assert ("icmlgym/Bandit-v0", {}) in icmlgym.suite("smoke")
    with pytest.raises(KeyError, match="did you mean"):
        icmlgym.suite("smok")


def test_making_a_superseded_version_does_not_warn() -> None:
    # SkillNeologism-v0 stays a benchmark entry beside -v1; gymnasium would call it out of date
    import warnings

    import icmlgym

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = icmlgym.make("icmlgym/SkillNeologism-v0")
    env.close()
