"""Findings of "What preferences can — and cannot — predict in multi-agent online learning" (ICML 2026).

Statistical claims run through the runner on RepeatedGame-v0 (Hedge for every player, random
initial strategies drawn from the agent seed) and StabilityPrediction-v0. The independent unit is
the game (``game_seed``); the runs within a game are random initialisations. Absorption is a rate
with an interval over games at a stated horizon. The graph-theoretic facts (sink components of
rock-paper-scissors, the leaky-hexagon counterexample, subgame stability) are exact checks in
tests/games/test_findings.py, not statistics.
"""

from __future__ import annotations

from icmlgym.findings.claims import (
    DOES_NOT_HOLD,
    NOT_AT_SCALE,
    Arm,
    Finding,
    Mean,
    Share,
)

SOURCE = "What preferences can — and cannot — predict in multi-agent online learning (ICML 2026)"
R = "icmlgym/RepeatedGame-v0"
P = "icmlgym/StabilityPrediction-v0"
GAMES = tuple(range(10))
HORIZON = 4000
INITS = 3

FINDINGS = [
    Finding(
        id="games-potential-absorbed-at-strict-nash",
        family="games",
        claim="In potential games, Hedge play is absorbed at a strict Nash equilibrium (here: the share of "
        "runs with >= 0.99 of play on one sink component, which in potential games are exactly the strict "
        "equilibria, after 4,000 rounds; claimed above 0.95).",
        source=SOURCE,
        treatment=Arm(
            "Hedge, 3x3x3 potential games",
            R,
            "games-hedge",
            env_kwargs={"game": "potential", "n_players": 3, "n_actions": 3, "horizon": HORIZON, "absorption_threshold": 0.99},
            unit_kwarg="game_seed",
            runs_per_unit=INITS,
        ),
        control=0.95,
        measure=Mean("absorbed"),
        direction="greater",
        unit="game",
        expected=NOT_AT_SCALE,
        test_units=GAMES,
    ),
    Finding(
        id="games-tail-support-closed",
        family="games",
        claim="The tail support of FTRL play is closed under profitable deviations (share of runs whose "
        "support of the last 20% of 2,000 rounds has no profitable exit; claimed above 0.95).",
        source=SOURCE,
        treatment=Arm(
            "Hedge, 3-player 2-action random games",
            R,
            "games-hedge",
            env_kwargs={"game": "random", "n_players": 3, "n_actions": 2, "horizon": 2000},
            unit_kwarg="game_seed",
            runs_per_unit=INITS,
        ),
        control=0.95,
        measure=Share("closure_violations", 0.0),
        direction="greater",
        unit="game",
        expected=DOES_NOT_HOLD,
        test_units=GAMES,
    ),
    Finding(
        id="games-sink-predictor-beats-nash-predictor",
        family="games",
        claim="Preferences predict where learning ends: the sink components of the preference graph predict "
        "the observed long-run support better than strict Nash equilibria do.",
        source=SOURCE,
        treatment=Arm("sink-component predictor", P, "games-sink-predictor"),
        control=Arm("strict-Nash predictor", P, "games-nash-predictor"),
        measure=Mean("prediction_accuracy"),
        direction="greater",
        unit="seed (a batch of random games)",
        min_effect=0.01,
        expected=NOT_AT_SCALE,
        test_units=GAMES,
    ),
]
