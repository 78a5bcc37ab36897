"""A 3-player game with a preferentially stable set whose span is unstable under FTRL.

Construction (the "leaky hexagon"). Players 1 and 2 have actions {0, 1}; player 0
has actions {0, 1, 2}. Restricted to actions {0, 1} for everyone, the 8 profiles
form a cube. We orient the cube's edges so that the six profiles with one or two
1s form a directed 6-cycle (a "hexagon" around the cube's long diagonal)::

    100 -> 110 -> 010 -> 011 -> 001 -> 101 -> 100

and the two remaining corners 000 and 111 point into the hexagon along all three
of their edges. Every edge is one player's preference, realised with payoffs 1
(preferred) and 0:

- player 0 gets 1 at 100, 010, 101, 011 and 0 at 000, 110, 001, 111;
- player 1 gets 1 at 010, 110, 001, 101 and 0 elsewhere on the cube;
- player 2 gets 1 at 001, 100, 011, 110 and 0 elsewhere on the cube.

The hexagon ``S`` is then strongly connected and no arrow leaves it inside the
cube. Player 0's third action 2 pays -1 against every (a_1, a_2) except (1, 1),
where it pays ``leak`` in (0, 1): worse than the hexagon profile 011 (payoff 1),
so no arrow leaves ``S`` through action 2 either, but better than 111 (payoff
0). Players 1 and 2 are indifferent (payoff 0) when player 0 plays 2.

Consequences, all computed from the payoffs by :mod:`preference_graph`:
``S`` is closed under profitable deviations and is a sink component
(preferentially stable), but it is not a subgame: its span is the whole cube
{0,1}^3, which contains 111, and at 111 player 0 profits (gain ``leak``) from
leaving the span with action 2. Under FTRL the span (a face of the strategy
space) is therefore unstable: play that starts arbitrarily close to the face
near 111 is carried to mass >= 1/2 on action 2 (:func:`demonstrate`), while
for ``leak < 0`` (the control game) the same starts stay within ``O(delta)``.
Play that does leave drifts to 211 and, since player 0 prefers 011 there,
returns to the hexagon: the sink component is still where play ends up —
preferential stability of ``S`` predicts the attractor, but not the stability
of the smallest subgame that holds it, which is what FTRL's face dynamics see.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icmlgym.envs.games.normal_form import NormalFormGame, Profile
from icmlgym.envs.games.stability import probe_subgames

HEXAGON: tuple[Profile, ...] = ((1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 1, 1), (0, 0, 1), (1, 0, 1))


def leaky_hexagon_game(leak: float = 0.5) -> NormalFormGame:
    """The counterexample game (see the module docstring); ``leak`` is player 0's gain from 111 to 211.

    ``leak`` must be below 1 (so that 011 still beats 211 and the hexagon stays closed);
    ``leak <= 0`` gives the control game whose cube is a closed subgame.
    """
    if not leak < 1.0:
        raise ValueError(f"leak must be below 1 (else the hexagon is not closed), got {leak}")
    p = np.zeros((3, 3, 2, 2))
    for a in [(1, 0, 0), (0, 1, 0), (1, 0, 1), (0, 1, 1)]:
        p[(0,) + a] = 1.0
    for a in [(0, 1, 0), (1, 1, 0), (0, 0, 1), (1, 0, 1)]:
        p[(1,) + a] = 1.0
    for a in [(0, 0, 1), (1, 0, 0), (0, 1, 1), (1, 1, 0)]:
        p[(2,) + a] = 1.0
    p[0, 2] = -1.0
    p[0, 2, 1, 1] = leak
    return NormalFormGame(p, name=f"leaky_hexagon(leak={leak:g})")


@dataclass
class SpanInstability:
    """Result of :func:`demonstrate`: per ``delta``, the largest excursion out of the span."""

    deltas: tuple[float, ...]
    max_excursion: tuple[float, ...]
    random_start_escape_fraction: tuple[float, ...]


def demonstrate(
    leak: float = 0.5,
    deltas: tuple[float, ...] = (1e-2, 1e-4, 1e-6),
    eta: float = 0.5,
    rounds: int = 1500,
    n_random: int = 64,
    seed: int = 0,
) -> SpanInstability:
    """Probe the span of the hexagon (the cube {0,1}^3) with Hedge from starts ``delta`` away from it.

    For each ``delta``: the largest mass play puts on player 0's action 2 (outside
    the span) over all probes, and the fraction of random interior starts that
    reach mass 1/2 outside. An unstable face shows excursions that do not shrink
    as ``delta`` does; a stable one shows excursions of order ``delta``.
    """
    game = leaky_hexagon_game(leak)
    cube = ((0, 1), (0, 1), (0, 1))
    exc, frac = [], []
    for d in deltas:
        (res,) = probe_subgames(game, [cube], delta=d, eta=eta, rounds=rounds, n_random=n_random, seed=seed)
        exc.append(res.max_excursion)
        frac.append(float(np.mean(res.random_excursions >= 0.5)))
    return SpanInstability(tuple(deltas), tuple(exc), tuple(frac))
