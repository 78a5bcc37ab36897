"""Games by name: the generator table and :func:`make_game` (names, files, arrays).

Kept apart from :mod:`icmlgym.envs.games.normal_form` so that the table can name games built
elsewhere in the family (the leaky hexagon of :mod:`icmlgym.envs.games.counterexample`, which
itself builds on ``normal_form`` and ``stability``) without an import cycle.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from icmlgym.envs.games.counterexample import leaky_hexagon_game
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

GENERATORS: dict[str, Callable[..., NormalFormGame]] = {
    "random": random_game,
    "covariant": covariant_game,
    "potential": potential_game,
    "zero_sum": zero_sum_game,
    "coordination": coordination_game,
    "rock_paper_scissors": lambda **kw: rock_paper_scissors(),
    "shapley": lambda **kw: shapley_game(),
}


def make_game(
    game: str | NormalFormGame | np.ndarray | Sequence = "random",
    n_players: int = 2,
    n_actions: int = 3,
    seed: int | np.random.Generator | None = 0,
    **kwargs: Any,
) -> NormalFormGame:
    """A game from a generator name, a file path (``.npy``/``.npz``/``.json``), an array or a game.

    Generator names: ``random``, ``covariant`` (takes ``rho``), ``potential``,
    ``zero_sum``, ``coordination``, ``rock_paper_scissors``, ``shapley``;
    a name may also be ``leaky_hexagon`` (the project's 3-player counterexample,
    :func:`icmlgym.envs.games.counterexample.leaky_hexagon_game`).
    """
    if isinstance(game, NormalFormGame):
        return game
    if isinstance(game, str):
        if game in GENERATORS:
            if game in ("rock_paper_scissors", "shapley"):
                return GENERATORS[game]()
            if game == "coordination":
                return coordination_game(n_actions=n_actions, n_players=n_players, seed=seed, **kwargs)
            return GENERATORS[game](n_actions=n_actions, n_players=n_players, seed=seed, **kwargs)
        if game == "leaky_hexagon":
            return leaky_hexagon_game(**kwargs)
        if game.endswith((".npy", ".npz", ".json")):
            return load_game(game)
        raise ValueError(
            f"unknown game {game!r}; use one of {sorted(GENERATORS) + ['leaky_hexagon']}, "
            "a .npy/.npz/.json file, or an array of shape (N, n_1, ..., n_N)"
        )
    return NormalFormGame.from_array(game)


__all__ = ["GENERATORS", "make_game"]
