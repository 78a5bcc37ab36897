"""Vision from video (LatentActionTransfer-v0): Olaf-World's claims about Seq-Delta-REPA.

The independent unit is the run seed: it fixes the agent's pre-training clips and
initialisation and the episode (labelled transitions, queries, demonstration), the same for
both arms of a comparison. Every arm runs at the smoke tier (2,000 pre-training frames,
32 queries in unseen context 6, demonstration in unseen context 7); ``n_labels`` is the number
of labelled transitions of the unseen context beside the 64 of the training contexts.
"""

from __future__ import annotations

from icmlgym.findings.claims import HOLDS, Arm, Finding, Mean

E = "icmlgym/LatentActionTransfer-v0"
SOURCE = "Olaf-World: transferable latent actions from unlabelled video via Seq-Delta-REPA (ICML 2026)"


def _arm(agent: str, label: str, n_labels: int) -> Arm:
    return Arm(f"{label} (n_labels={n_labels})", E, agent, env_kwargs={"n_labels": n_labels})


FINDINGS = [
    Finding(
        id="vision-seq-delta-repa-beats-lapo-cross-context",
        family="vision",
        claim="Seq-Delta-REPA's latent actions transfer across contexts better than LAPO's: a linear probe fitted on "
              "training-context labels names the real action in an unseen context more often.",
        source=SOURCE,
        treatment=_arm("seq-delta-repa", "Seq-Delta-REPA", 0),
        control=_arm("lapo", "LAPO", 0),
        measure=Mean("action_accuracy"),
        direction="greater",
        unit="run seed (clips, initialisation, episode)",
        expected=HOLDS,
    ),
    Finding(
        id="vision-seq-delta-repa-beats-lapo-8-labels",
        family="vision",
        claim="Seq-Delta-REPA adapts to a new context with 8 labelled transitions better than LAPO.",
        source=SOURCE,
        treatment=_arm("seq-delta-repa", "Seq-Delta-REPA", 8),
        control=_arm("lapo", "LAPO", 8),
        measure=Mean("action_accuracy"),
        direction="greater",
        unit="run seed (clips, initialisation, episode)",
        expected=HOLDS,
    ),
    Finding(
        id="vision-alignment-beats-no-alignment-cross-context",
        family="vision",
        claim="The alignment is what transfers: the same continuous-latent model without Seq-Delta-REPA's loss "
              "probes worse in an unseen context.",
        source=SOURCE,
        treatment=_arm("seq-delta-repa", "Seq-Delta-REPA", 0),
        control=_arm("lam-no-align", "no alignment", 0),
        measure=Mean("action_accuracy"),
        direction="greater",
        unit="run seed (clips, initialisation, episode)",
        expected=HOLDS,
    ),
]
