"""Prediction tasks: the shared base (:mod:`~icmlgym.envs.prediction.base`), their metrics, and DigitsOOD-v0."""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

EXTRAS: dict[str, tuple[str, ...]] = {"prediction": ("sklearn",)}  # scikit-learn ships the digits
PROVENANCE: tuple[str, ...] = ("scikit-learn",)

CARDS = [
    TaskCard(
        id="icmlgym/DigitsOOD-v0",
        family="prediction",
        paper="(substrate example) Sun et al. 2022, Out-of-distribution detection with deep nearest neighbors",
        entry_point="icmlgym.envs.prediction.digits_ood:DigitsOODEnv",
        kind="single",
        primary_metric="auroc",
        direction="max",
        cost_units=("predictions",),
        extra="prediction",
        tiers={
            "smoke": Tier(episodes=2, env_kwargs={"batch_size": 32, "n_batches": 4}, train_steps=300, train_unit="gradient_steps", seeds=3),
            "standard": Tier(episodes=5, env_kwargs={"batch_size": 64, "n_batches": 4}, train_steps=2000, train_unit="gradient_steps", seeds=5),
            "full": Tier(episodes=10, env_kwargs={"batch_size": 64, "n_batches": 5}, train_steps=5000, train_unit="gradient_steps", seeds=10),
        },
        reference_agent="ood-knn",
        baselines=("ood-mahalanobis", "ood-autoencoder", "random"),
        # random scores: AUROC 0.5 in expectation; reference: ood-knn, mean over seeds 0-2 x 2 episodes of
        # `icmlgym.run("icmlgym/DigitsOOD-v0", "ood-knn", seeds=3)` (0.987; range 0.979-0.998)
        score_refs={"smoke": (0.5, 0.987)},
        suites=("prediction",),
        description="flag out-of-domain 8x8 digits (5-9) among in-domain ones (0-4), scored by AUROC",
    )
]

AGENTS = {
    "ood-knn": AgentInfo(
        "icmlgym.baselines.prediction:KNNDistanceAgent",
        description="mean distance to the k nearest in-domain training inputs (one-class)",
    ),
    "ood-mahalanobis": AgentInfo(
        "icmlgym.baselines.prediction:MahalanobisAgent",
        description="Mahalanobis distance to the in-domain training mean (shrunk covariance)",
    ),
    "ood-autoencoder": AgentInfo(
        "icmlgym.baselines.prediction:AutoencoderAgent", extra="nn",
        description="reconstruction error of an MLP autoencoder trained with icmlgym.nn's budgeted loop",
    ),
}
