"""Reading the model's insides: out-of-domain detection from per-layer hidden states (LayerOOD-v0)
and hallucination labelling from the geometry of sampled responses (HallucinationLabeling-v0).

The papers' methods are the SAE layer-transition detector and APORIA-LP (``agents/insides.py``);
the comparators (max softmax probability, energy, Mahalanobis and kNN on the last layer, a
random-feature SAE; self-consistency, semantic-entropy-style clustering, logistic regression and
kNN on the embeddings, uncertainty sampling) are in ``baselines/insides.py``. docs/insides.md has
the findings.
"""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

EXTRAS: dict[str, tuple[str, ...]] = {}  # uses the core's [text] extra (the shipped encoder, transformers, torch)
PROVENANCE: tuple[str, ...] = ()

_APORIA = "APORIA: hallucinations as retrieval instability, seen in the geometry of repeated responses (ICML 2026)"
_PAPER = "Layer-transition OOD detection: sparse-autoencoder codes of consecutive layers (ICML 2026)"

CARDS = [
    TaskCard(
        id="icmlgym/LayerOOD-v0",
        family="insides",
        paper=_PAPER,
        entry_point="icmlgym.envs.insides.layer_ood:LayerOODEnv",
        kind="single",
        primary_metric="auroc",
        direction="max",
        cost_units=("predictions",),
        extra="text",
        tiers={
            "smoke": Tier(episodes=2, env_kwargs={"batch_size": 16, "n_batches": 4}, train_steps=150, train_unit="gradient_steps", seeds=3),
            "standard": Tier(episodes=5, env_kwargs={"batch_size": 16, "n_batches": 6}, train_steps=600, train_unit="gradient_steps", seeds=5),
            "full": Tier(episodes=10, env_kwargs={"batch_size": 32, "n_batches": 4}, train_steps=1500, train_unit="gradient_steps", seeds=10),
        },
        reference_agent="ood-sae-transitions",
        baselines=("ood-msp", "ood-energy", "ood-mahalanobis-last", "ood-knn-last", "ood-sae-transitions-random", "ood-single-layer-sae", "random"),
        # random: AUROC 0.5 in expectation; reference: ood-sae-transitions, mean over seeds 0-2 x 2 episodes of
        # `icmlgym.run("icmlgym/LayerOOD-v0", "ood-sae-transitions", seeds=3)` (0.594; range 0.539-0.676)
        score_refs={"smoke": (0.5, 0.594)},
        suites=("insides",),
        description="flag out-of-domain docstrings from MiniLM's per-layer hidden states, scored by AUROC",
    ),
    TaskCard(
        id="icmlgym/HallucinationLabeling-v0",
        family="insides",
        paper=_APORIA,
        entry_point="icmlgym.envs.insides.hallucination:HallucinationLabelingEnv",
        kind="single",
        primary_metric="f1",
        direction="max",
        cost_units=("annotations",),
        extra="text",
        tiers={
            "smoke": Tier(episodes=2, max_steps=60, env_kwargs={"n_prompts": 30, "n_responses": 8, "budget": 40}, seeds=3),
            "standard": Tier(episodes=5, max_steps=60, env_kwargs={"n_prompts": 48, "n_responses": 8, "budget": 40}, seeds=5),
            "full": Tier(episodes=10, max_steps=60, env_kwargs={"n_prompts": 60, "n_responses": 8, "budget": 50}, seeds=10),
        },
        reference_agent="aporia-lp",
        baselines=("hal-self-consistency", "hal-semantic-entropy", "hal-logreg", "hal-knn", "hal-uncertainty", "random"),
        # random: F1 of random scores, reference: aporia-lp; means over seeds 0-2 x 2 episodes of
        # `icmlgym.run("icmlgym/HallucinationLabeling-v0", agent, seeds=3)` (random 0.373, 0.284-0.467; aporia-lp 0.738, 0.642-0.857)
        score_refs={"smoke": (0.373, 0.738)},
        suites=("insides",),
        description="label a fact model's sampled answers genuine or hallucinated from their embeddings, 40 annotations, scored by F1",
    ),
]

AGENTS = {
    "ood-sae-transitions": AgentInfo(
        "icmlgym.agents.insides:SAETransitionAgent", extra="text",
        description="TopK SAEs per layer, a ridge model of which codes follow which between consecutive layers; z-scored residuals (one-class)",
    ),
    "ood-sae-transitions-random": AgentInfo(
        "icmlgym.baselines.insides:RandomSAETransitionAgent", extra="text",
        description="the same detector over untrained (random-feature) SAEs: the sanity check",
    ),
    "ood-logreg-last": AgentInfo(
        "icmlgym.baselines.insides:LastLayerLogisticAgent",
        description="few labels (n_labelled_ood > 0): logistic regression on the last layer, in-domain against the labelled OOD texts",
    ),
    "ood-best-single-layer": AgentInfo(
        "icmlgym.baselines.insides:BestSingleLayerKNNAgent",
        description="kNN on the one layer that best separates held-out in-domain texts from the labelled OOD ones (last layer one-class)",
    ),
    "ood-single-layer-sae": AgentInfo(
        "icmlgym.baselines.insides:SingleLayerSAEAgent", extra="text",
        description="one TopK SAE on the last layer: its reconstruction error (one-class) or a light learner on it (labels)",
    ),
    "ood-mahalanobis-flag": AgentInfo(
        "icmlgym.baselines.insides:OperatingPointAgent",
        description="flags (action_mode='flag'): last-layer Mahalanobis thresholded at 95% TPR on held-out labelled OOD texts (one-class: at 5% FPR)",
    ),
    "ood-msp": AgentInfo(
        "icmlgym.baselines.insides:MaxSoftmaxAgent",
        description="1 - max softmax probability of a topic classifier on the last layer",
    ),
    "ood-energy": AgentInfo(
        "icmlgym.baselines.insides:EnergyAgent",
        description="energy (-logsumexp of the topic classifier's logits) on the last layer",
    ),
    "ood-mahalanobis-last": AgentInfo(
        "icmlgym.baselines.insides:LastLayerMahalanobisAgent",
        description="Mahalanobis distance to the in-domain mean of the last layer's states (shrunk covariance)",
    ),
    "ood-knn-last": AgentInfo(
        "icmlgym.baselines.insides:LastLayerKNNAgent",
        description="mean distance to the k nearest in-domain sentence embeddings (normalised last layer)",
    ),
}

AGENTS.update({
    "aporia-lp": AgentInfo(
        "icmlgym.agents.insides:APORIALPAgent",
        description="Fisher projection on the annotated few + prompt-wise geometry, kNN graph, label spreading (random queries)",
    ),
    "hal-self-consistency": AgentInfo(
        "icmlgym.baselines.insides:SelfConsistencyAgent",
        description="no labels: 1 - mean similarity to the prompt's other responses, split in two groups",
    ),
    "hal-semantic-entropy": AgentInfo(
        "icmlgym.baselines.insides:SemanticEntropyAgent",
        description="no labels: cluster each prompt's responses; flag those outside a majority cluster",
    ),
    "hal-logreg": AgentInfo(
        "icmlgym.baselines.insides:LogisticRegressionAgent", extra="prediction",
        description="logistic regression on the raw embeddings with the same random annotations as APORIA-LP",
    ),
    "hal-knn": AgentInfo(
        "icmlgym.baselines.insides:KNNLabelAgent",
        description="random annotations, then the hallucinated share among the 5 nearest annotated responses",
    ),
    "hal-uncertainty": AgentInfo(
        "icmlgym.baselines.insides:UncertaintySamplingAgent", extra="prediction",
        description="uncertainty sampling with logistic regression on the raw embeddings",
    ),
})
