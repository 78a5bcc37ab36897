"""Games as payoff tensors: generators, subgames, files, and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from icmlgym.envs.games.generators import make_game
from icmlgym.envs.games.normal_form import (
    NormalFormGame,
    coordination_game,
    covariant_game,
    load_game,
    potential_game,
    random_game,
    rock_paper_scissors,
    shapley_game,
    zero_sum_game,
)


def test_shapes_and_seeding():
    g = random_game(n_actions=(2, 3, 4), seed=1)
    assert g.n_players == 3 and g.n_actions == (2, 3, 4) and g.payoffs.shape == (3, 2, 3, 4)
    assert np.array_equal(g.payoffs, random_game(n_actions=(2, 3, 4), seed=1).payoffs)
    assert not np.array_equal(g.payoffs, random_game(n_actions=(2, 3, 4), seed=2).payoffs)
    assert g.n_profiles == 24 and g.profile_at(g.profile_index((1, 2, 3))) == (1, 2, 3)


def test_expected_payoffs_match_explicit_sum():
    g = random_game(3, 3, seed=0)
    rng = np.random.default_rng(0)
    xs = [rng.dirichlet(np.ones(3)) for _ in range(3)]
    us = g.expected_payoffs(xs)
    for i in range(3):
        for b in range(3):
            want = 0.0
            for a in g.profiles():
                if a[i] != b:
                    continue
                w = np.prod([xs[j][a[j]] for j in range(3) if j != i])
                want += w * g.payoffs[(i,) + a]
            assert us[i][b] == pytest.approx(want, abs=1e-12)
    batch = g.expected_payoffs([np.stack([x, x]) for x in xs])
    assert np.allclose(batch[1][0], us[1])


def test_potential_game_has_exact_potential():
    g = potential_game(3, 3, seed=4)
    # a cycle of unilateral deviations sums to zero gain in an exact potential game
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = tuple(int(v) for v in rng.integers(0, 3, 3))
        i, j = rng.choice(3, 2, replace=False)
        bi, bj = int(rng.integers(3)), int(rng.integers(3))
        b = list(a); b[i] = bi; b = tuple(b)
        c = list(b); c[j] = bj; c = tuple(c)
        d = list(a); d[j] = bj; d = tuple(d)
        # a -> b -> c versus a -> d -> c: the same potential change along both paths
        path1 = (g.payoffs[(i,) + b] - g.payoffs[(i,) + a]) + (g.payoffs[(j,) + c] - g.payoffs[(j,) + b])
        path2 = (g.payoffs[(j,) + d] - g.payoffs[(j,) + a]) + (g.payoffs[(i,) + c] - g.payoffs[(i,) + d])
        assert path1 == pytest.approx(path2, abs=1e-12)


def test_zero_sum_coordination_rps_shapley():
    assert np.allclose(zero_sum_game(3, 3, seed=0).payoffs.sum(axis=0), 0.0)
    c = coordination_game(3, 2, seed=0)
    for k in range(3):
        assert c.payoffs[0, k, k] > 1.0 > c.payoffs[0, k, (k + 1) % 3]
    r = rock_paper_scissors()
    assert np.allclose(r.payoffs[0], -r.payoffs[1]) and np.allclose(r.payoffs[0], r.payoffs[1].T)
    s = shapley_game()
    assert s.n_actions == (3, 3) and s.payoffs[1, 0, 1] == 1.0


def test_covariant_correlation():
    g = covariant_game(4, 3, rho=0.8, seed=0)
    c = np.corrcoef(g.payoffs.reshape(3, -1))
    assert c[0, 1] > 0.6 and c[1, 2] > 0.6
    g = covariant_game(6, 2, rho=-1.0, seed=0)
    assert np.corrcoef(g.payoffs.reshape(2, -1))[0, 1] < -0.99
    with pytest.raises(ValueError, match="rho must lie"):
        covariant_game(3, 3, rho=-0.9)


def test_restrict_keeps_payoffs_and_original_actions():
    g = random_game(4, 3, seed=0)
    sub = g.restrict([[0, 2], [1], [3, 0]])
    assert sub.n_actions == (2, 1, 2)
    assert sub.actions == ((0, 2), (1,), (0, 3))
    assert sub.payoffs[2, 1, 0, 1] == g.payoffs[2, 2, 1, 3]
    subsub = sub.restrict([[1], [0], [0, 1]])
    assert subsub.actions == ((2,), (1,), (0, 3))
    with pytest.raises(ValueError, match="empty"):
        g.restrict([[0], [], [1]])
    with pytest.raises(ValueError, match="outside"):
        g.restrict([[0], [5], [1]])


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".json"])
def test_save_and_load(tmp_path, suffix):
    g = random_game((2, 3), seed=3)
    path = tmp_path / f"g{suffix}"
    g.save(path)
    h = load_game(path)
    assert np.allclose(h.payoffs, g.payoffs)
    assert np.allclose(make_game(str(path)).payoffs, g.payoffs)


def test_bad_input_is_named(tmp_path):
    with pytest.raises(ValueError, match="shape"):
        NormalFormGame(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="first axis must be the player"):
        NormalFormGame(np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        NormalFormGame(np.full((2, 2, 2), np.nan))
    with pytest.raises(ValueError, match="unknown game"):
        make_game("nonsense")
    with pytest.raises(FileNotFoundError):
        load_game(tmp_path / "missing.npy")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"pay": []}))
    with pytest.raises(ValueError, match="payoffs"):
        load_game(bad)
    with pytest.raises(ValueError, match="not a pure profile"):
        random_game(2, 2, seed=0).payoff((0, 5))
