"""The zoo: registry, cache (build once, fast loads, concurrent builders), transformer, SAE, CLI."""

import json
import multiprocessing as mp
import os
import time

import numpy as np
import pytest
import torch

from icmlgym import zoo
from icmlgym.zoo.registry import Member
from icmlgym.zoo.sae import TopKSAE, sae_quality, train_sae
from icmlgym.zoo.transformer import GPT, GPTConfig

FAST = {"steps": 40}  # a digits CNN trained for 40 steps: seconds, enough to exercise the cache


def test_registry_refuses_duplicates_and_names_unknowns():
    m = zoo.get("digits-cnn")
    with pytest.raises(ValueError, match="already registered"):
        zoo.register(m)
    with pytest.raises(zoo.ZooError, match="did you mean 'digits-cnn'"):
        zoo.get("digits-cn")
    with pytest.raises(zoo.ZooError, match="unknown configuration keys .*'stpes'"):
        m.config("smoke", {"stpes": 3})
    with pytest.raises(zoo.ZooError, match="no size 'huge'"):
        m.config("huge")
    names = [x.name for x in zoo.members()]
    assert {"reasoner", "reasoner-draft", "reasoner-moe", "digits-mlp", "digits-cnn", "signals-cnn", "reasoner-sae"} <= set(names)


def test_build_then_load_from_cache_quickly():
    built = zoo.load("digits-cnn", overrides=FAST)
    assert built.source == "trained"
    card = built.card
    assert card["parameters"] == sum(p.numel() for p in built.model.parameters())
    assert card["training"]["steps"] == 40 and card["cost"]["gradient_steps"] == 40
    assert card["cost"]["forward_flops"] > 0 and 0 <= card["quality"]["accuracy"] <= 1
    again = zoo.load("digits-cnn", overrides=FAST)
    assert again.source == "cache" and again.load_seconds < 1.0
    x = torch.rand(5, 1, 8, 8)
    assert torch.equal(built.model(x), again.model(x))
    with pytest.raises(zoo.ZooError, match="is not built"):
        zoo.load("digits-cnn", overrides={"steps": 41}, build=False)


def test_training_is_deterministic_from_the_seed():
    a = zoo.load("digits-mlp", overrides=FAST, seed=3)
    b = zoo.load("digits-mlp", overrides=FAST, seed=3, force=True)
    assert b.source == "trained"
    for (n, p), (_, q) in zip(a.model.state_dict().items(), b.model.state_dict().items()):
        assert torch.equal(p, q), n


def test_a_corrupt_entry_is_rebuilt():
    z = zoo.load("digits-cnn", overrides=FAST)
    path = zoo.get("digits-cnn").key(z.config, 0)
    from icmlgym.cache import Cache

    Cache("zoo").path(path, ".pt").write_bytes(b"truncated")
    again = zoo.load("digits-cnn", overrides=FAST)
    assert again.source == "trained"


def _build(home: str, log: str) -> None:
    os.environ["ICMLGYM_HOME"] = home
    torch.set_num_threads(1)
    z = zoo.load("digits-cnn", overrides=FAST)
    with open(log, "a") as fh:
        fh.write(z.source + "\n")


def test_two_processes_building_one_member_end_with_one_intact_copy(tmp_path):
    home, log = str(tmp_path / "home"), str(tmp_path / "log")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_build, args=(home, log)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    assert sorted(open(log).read().split()) == ["cache", "trained"]
    files = sorted(os.listdir(tmp_path / "home" / "cache" / "zoo"))
    assert [f for f in files if not f.startswith(".")] == sorted(f for f in files if f.endswith((".pt", ".json")))
    assert len([f for f in files if f.endswith(".pt")]) == 1


def test_editing_a_members_code_changes_its_key(monkeypatch):
    m = zoo.get("digits-cnn")
    cfg = m.config("smoke")
    key = m.key(cfg, 0)
    monkeypatch.setattr(Member, "code_hash", lambda self: "edited")
    assert m.key(cfg, 0) != key


# ----------------------------------------------------------------------------- transformer

@pytest.mark.parametrize("n_expert", [0, 4])
def test_kv_cache_matches_the_full_forward(n_expert):
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=32, n_layer=2, n_head=2, n_embd=16, n_expert=n_expert, top_k=2)).eval()
    ids = torch.randint(0, 20, (1, 12))
    with torch.no_grad():
        full, states = model(ids, hidden=True)
        cache = model.new_cache()
        parts = [model(ids[:, :5], cache=cache)]  # a prompt, then a 4-token block (speculative verify), then singles
        parts.append(model(ids[:, 5:9], cache=cache))
        parts += [model(ids[:, i : i + 1], cache=cache) for i in range(9, 12)]
    assert len(states) == 3 and states[0].shape == (1, 12, 16)
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5)
    cache.truncate(7)  # drop rejected speculative tokens, then continue from position 7
    with torch.no_grad():
        redo = model(ids[:, 7:12], cache=cache)
    assert torch.allclose(redo, full[:, 7:12], atol=1e-5)
    if n_expert:
        logits, choice = model.last_routing[0]
        assert logits.shape == (5, 4) and choice.shape == (5, 2)


def test_generate_greedy_and_sampled_with_a_generator():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=32, n_layer=1, n_head=2, n_embd=16)).eval()
    greedy = model.generate([1, 5, 6], 10)
    assert greedy == model.generate([1, 5, 6], 10) and len(greedy) == 10
    s1 = model.generate([1, 5, 6], 10, temperature=1.0, generator=torch.Generator().manual_seed(3))
    s2 = model.generate([1, 5, 6], 10, temperature=1.0, generator=torch.Generator().manual_seed(3))
    assert s1 == s2
    with pytest.raises(ValueError, match="exceeds the block size"):
        model(torch.zeros(1, 33, dtype=torch.long))
    with pytest.raises(ValueError, match="multiple of n_head"):
        GPTConfig(vocab_size=20, n_embd=10, n_head=4)


# ----------------------------------------------------------------------------- SAE

def test_topk_sae_recovers_sparse_structure_better_than_random_features():
    rng = np.random.default_rng(0)
    dictionary = rng.normal(size=(64, 24))
    codes = (rng.random((3000, 64)) < 0.05) * rng.random((3000, 64))
    acts = codes @ dictionary
    trained = train_sae(acts[:2500], d_latent=128, k=8, steps=400, seed=0)
    q_trained = sae_quality(trained, acts[2500:])
    torch.manual_seed(0)
    q_random = sae_quality(TopKSAE(24, 128, 8), acts[2500:])
    assert q_trained["variance_explained"] > 0.8 > q_random["variance_explained"]
    with pytest.raises(ValueError, match="k must be in 1..d_latent"):
        TopKSAE(4, 8, 9)


# ----------------------------------------------------------------------------- CLI

def test_cli_zoo_and_cache_commands(tmp_path):
    from typer.testing import CliRunner

    from icmlgym.cli import app

    r = CliRunner()
    res = r.invoke(app, ["zoo", "build", "digits-mlp"])
    assert res.exit_code == 0 and "trained in" in res.output and "accuracy" in res.output, res.output
    t0 = time.perf_counter()
    res = r.invoke(app, ["zoo", "build", "digits-mlp"])
    assert res.exit_code == 0 and "loaded from cache" in res.output
    assert time.perf_counter() - t0 < 5
    res = r.invoke(app, ["zoo", "info", "digits-mlp"])
    info = json.loads(res.output)
    assert info["built"] and info["card"]["quality"]["accuracy"] > 0.9  # the smoke MLP on held-out digits
    assert "digits-mlp" in r.invoke(app, ["zoo", "list"]).output
    assert r.invoke(app, ["zoo", "build", "nope"]).exit_code == 2
    assert r.invoke(app, ["zoo", "build"]).exit_code == 2
    assert "zoo" in r.invoke(app, ["cache", "list"]).output
    res = r.invoke(app, ["cache", "clear", "nope", "--yes"])
    assert res.exit_code == 2 and "no cache namespace 'nope'" in res.output
    res = r.invoke(app, ["cache", "clear", "zoo", "--yes"])
    assert res.exit_code == 0 and "deleted 2 files" in res.output
