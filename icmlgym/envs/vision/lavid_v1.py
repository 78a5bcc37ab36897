"""LanguageToVisualKD-v1: v0 plus a ninth soft-target source, a vision-language teacher (MaKD).

MaKD distils a pretrained vision-language model into the student: the teacher's similarity of
each training image to the caption of every class, as a distribution over the classes, is the
soft target of the class logits (Hinton KD at the agent's temperature). The teacher is the zoo's
``product-clip`` (:mod:`icmlgym.zoo.product_clip`): a CLIP-style model trained contrastively on
product images and their captions (embedded by the shipped sentence encoder) of the generator's
classes outside the 4 x 4 x 3 block, so on the default data set and the smoke tier it classifies
classes it never saw, from language. Everything else is v0's, bit for bit for the same actions.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from icmlgym.cache import content_key
from icmlgym.catalog import require_extra

require_extra("vision", what="icmlgym/LanguageToVisualKD-v1")

import torch

from icmlgym.envs.vision import kd_student as ks
from icmlgym.envs.vision.lavid import (
    TEACHERS,
    LanguageToVisualKDEnv,
    cached_teacher_logits,
)
from icmlgym.nn.runtime import fixed_threads

TEACHERS_V1: tuple[str, ...] = (*TEACHERS, "vlm")


@functools.lru_cache(maxsize=1)
def _clip_teacher():
    """The frozen ``product-clip`` teacher and its card (shipped weights; loaded once per process)."""
    from icmlgym.zoo.product_clip import MEMBER, NAME
    from icmlgym.zoo.registry import load

    zm = load(NAME, "smoke")
    for p in zm.model.parameters():
        p.requires_grad_(False)
    return zm.model.eval(), MEMBER.key(zm.config, zm.card["seed"])


class LanguageToVisualKDV1Env(LanguageToVisualKDEnv):
    """LanguageToVisualKD with a vision-language teacher as a ninth soft-target source (MaKD).

    ## Description
    As ``icmlgym/LanguageToVisualKD-v0`` (one episode is one student training run on the
    generated product images; each step an epoch with the agent's distillation settings), with
    one more soft-target source, ``vlm``: a small CLIP-style vision-language teacher from the zoo
    (``product-clip``, :mod:`icmlgym.zoo.product_clip`), pre-trained on image/caption pairs of
    the 272 generator classes outside the first 4 objects x 4 colours x 3 materials. Its
    image-to-class-caption similarities over the episode's classes are distilled into the
    student's class logits (MaKD). On data sets inside that block (the default and the smoke
    tier) the teacher never saw the student's classes; larger data sets include classes it saw.

    ## Action Space
    ``MultiDiscrete([9, 5, 4, 2])``: ``(teacher, weight, temperature, standardise)`` with the
    teacher index in :data:`TEACHERS_V1` (v0's eight, then ``vlm``); the rest as v0.

    ## Observation Space
    As v0: ``Box(0, inf, (6,), float32)``.

    ## Rewards
    As v0: 0 per epoch; at the end the test accuracy over all fine-grained classes.

    ## Starting State
    As v0; the teacher's logits on the training images are computed on first use of ``vlm``
    (a forward pass of the frozen teacher, kept per data set in the process).

    ## Episode End
    Terminates after ``epochs`` epochs.

    ## Arguments
    As v0.

    ## Metrics
    As v0.

    ## Version History
    v1: adds the ``vlm`` soft-target source (MaKD's teacher); v0's actions give v0's episodes.
    v0: first version.
    """

    teachers = TEACHERS_V1

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from icmlgym.zoo.product_clip import all_class_names, held_out_mask

        index = {n: i for i, n in enumerate(all_class_names())}
        self.clip_classes = np.array([index[n] for n in self.class_names], dtype=np.int64)
        self.vlm_unseen_share = float(held_out_mask()[self.clip_classes].mean())

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = super().reset(seed=seed, options=options)
        self._vlm_logits = None
        info["vlm_unseen_share"] = self.vlm_unseen_share
        return obs, info

    def _vlm_teacher(self) -> torch.Tensor:
        """The vision-language teacher's class logits on the training images (kept per data set in the process)."""
        model, model_key = _clip_teacher()
        key = content_key("lavid-vlm-teacher", sorted(self.kw.items(), key=str), self.per_class, self.data_seed, model_key)

        def compute() -> torch.Tensor:
            with torch.no_grad():
                return model.class_logits(self.x["train"], torch.as_tensor(self.clip_classes))

        return cached_teacher_logits(key, compute)

    def _prepare(self, teacher: str) -> None:
        if teacher == "vlm":
            if self._vlm_logits is None:
                with fixed_threads(1):
                    self._vlm_logits = self._vlm_teacher()
            return
        super()._prepare(teacher)

    def _aux(self, teacher, logits, aux, idx, yb, w: float, t: float, std: bool):
        if teacher == "vlm":
            return ks.kd(logits, self._vlm_logits[idx], t, std)
        return super()._aux(teacher, logits, aux, idx, yb, w, t, std)


__all__ = ["TEACHERS_V1", "LanguageToVisualKDV1Env"]
