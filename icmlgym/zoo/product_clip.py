"""The zoo's small vision-language teacher for LanguageToVisualKD-v1's MaKD baseline (``product-clip``).

MaKD distils a pretrained vision-language model into a vision-only student. No CLIP-family
model installs offline, so this member is a CLIP-style teacher trained here, contrastively, on
image/caption pairs of the generated product images (:mod:`icmlgym.corpora.product_images`):

- captions ``"a photo of a <colour> <material> <object>"``, embedded by the shipped sentence
  encoder (all-MiniLM-L6-v2, extra ``[text]``) and mapped by a trainable linear projection;
- images by a small CNN (two 3 x 3 convolutions, 16 and 32 channels as the student's, 2 x 2
  max-pooling, a 64-unit layer, a linear projection to the 32-dimensional joint space) on 16 x 16 images with a random land / water background
  (independent of the class, so the teacher does not learn the env's spurious cue);
- loss: each image's cosine similarities to the captions of every training class, times a
  learnable logit scale, under cross-entropy with its own caption (CLIP's image-to-text side,
  with all training captions as negatives).

It is trained on the generator's classes OUTSIDE the block of the first 4 objects x 4 colours x
3 materials (272 of the 320 classes; :data:`HELD_OUT`), so it has seen every object, colour and
material, but never these 48 combinations, the classes of LanguageToVisualKD's default data set
and of its smoke tier. What it knows about them it composes from other classes' images and from
language: visual-language knowledge the student (trained on the 48 classes only) does not have.
After training the projected caption embeddings of all 320 classes are stored in the model
(buffer ``class_embeddings``), so using the teacher needs torch only.

Held-out quality: zero-shot accuracy on the 48 held-out classes (test images, argmax over their
48 captions: ``zero_shot_accuracy``, chance 1/48), the share of those predictions with the right
object, colour and material, and accuracy on new images of the 272 training classes. Importing
this module registers the member; it does not import torch until the model is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from icmlgym.zoo.registry import Member, ZooError, get, register

NAME = "product-clip"
# the held-out block (n_objects, n_colours, n_materials): classes whose object, colour and material all lie in these prefixes
HELD_OUT: tuple[int, int, int] = (4, 4, 3)
ALL: tuple[int, int, int] = (8, 8, 5)
TEXT_DIM = 384  # all-MiniLM-L6-v2


def all_class_names() -> tuple[str, ...]:
    """The names of the generator's 320 classes, in the order of the model's ``class_embeddings`` rows."""
    from icmlgym.corpora.product_images import product_classes

    return product_classes(*ALL).names


def held_out_mask() -> np.ndarray:
    """Boolean ``(320,)``: the classes the teacher never saw in training."""
    from icmlgym.corpora.product_images import product_classes

    attrs = product_classes(*ALL).attributes
    return (attrs < np.array(HELD_OUT)).all(axis=1)


def caption(name: str) -> str:
    return f"a photo of a {name}"


def caption_embeddings(names: Sequence[str]) -> np.ndarray:
    """The sentence encoder's embeddings of the captions of ``names`` (one text at a time, cached per text)."""
    from icmlgym.corpora.embeddings import SentenceEncoder

    return np.asarray(SentenceEncoder(batch_size=1).encode([caption(n) for n in names]), dtype=np.float32)


def _make(cfg: dict[str, Any]):
    import math

    import torch
    import torch.nn.functional as F
    from torch import nn

    w, hidden, dim, size = int(cfg["width"]), int(cfg["hidden"]), int(cfg["dim"]), int(cfg["size"])

    class ProductCLIP(nn.Module):
        """An image encoder and a caption projection into one space, with the 320 classes' projected captions kept."""

        def __init__(self) -> None:
            super().__init__()
            self.image = nn.Sequential(
                nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                nn.Flatten(), nn.Linear(2 * w * (size // 4) ** 2, hidden), nn.ReLU(), nn.Linear(hidden, dim),
            )
            self.text = nn.Linear(TEXT_DIM, dim)
            self.logit_scale = nn.Parameter(torch.tensor(math.log(10.0)))
            self.register_buffer("class_embeddings", torch.zeros(ALL[0] * ALL[1] * ALL[2], dim))

        def embed_images(self, x: torch.Tensor) -> torch.Tensor:
            return F.normalize(self.image(x), dim=1)

        def embed_captions(self, e: torch.Tensor) -> torch.Tensor:
            return F.normalize(self.text(e), dim=1)

        def class_logits(self, x: torch.Tensor, classes: torch.Tensor | None = None) -> torch.Tensor:
            """Scaled cosine similarity of each image to the captions of ``classes`` (indices into the 320; default all)."""
            emb = self.class_embeddings if classes is None else self.class_embeddings[classes]
            return self.logit_scale.exp().clamp(max=100.0) * self.embed_images(x) @ emb.T

    return ProductCLIP()


def _images(split: str, per_class: int, seed: int, cfg: dict[str, Any]):
    from icmlgym.corpora.product_images import product_images

    return product_images(split, n_objects=ALL[0], n_colours=ALL[1], n_materials=ALL[2], per_class=per_class, size=int(cfg["size"]),
                          seed=seed, spurious=float(cfg["background_mix"]))


def _flip(x, gen):
    """Random horizontal flips (the only augmentation, as for the env's student)."""
    import torch

    m = torch.rand(len(x), generator=gen) < 0.5
    return torch.where(m[:, None, None, None], x.flip(-1), x)


def _train(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    names = all_class_names()
    try:
        text = torch.as_tensor(caption_embeddings(names))
    except Exception as err:  # the encoder's extra is missing or it failed to load
        raise ZooError(f"training {NAME} needs the shipped sentence encoder (extra [text]): {err}") from err
    seen = np.flatnonzero(~held_out_mask())
    remap = np.full(len(names), -1, np.int64)
    remap[seen] = np.arange(len(seen))
    d = _images("train", int(cfg["per_class"]), seed, cfg)
    keep = np.isin(d.y, seen)
    x, y = torch.as_tensor(d.x[keep]), torch.as_tensor(remap[d.y[keep]])
    opt = torch.optim.Adam(model.parameters(), lr=float(cfg["lr"]))
    gen = torch.Generator().manual_seed(seed)
    seen_t = torch.as_tensor(seen)
    losses = []
    model.train()
    for _ in range(int(cfg["epochs"])):
        for idx in torch.randperm(len(x), generator=gen).split(int(cfg["batch"])):
            img = model.embed_images(_flip(x[idx], gen))
            cap = model.embed_captions(text[seen_t])
            loss = F.cross_entropy(model.logit_scale.exp().clamp(max=100.0) * img @ cap.T, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            meter.add("gradient_steps")
            meter.add("train_examples", len(idx))
    with torch.no_grad():
        model.class_embeddings.copy_(model.embed_captions(text))
    return {"final_loss": round(float(np.mean(losses[-10:])), 4), "images": len(x), "classes": len(seen),
            "held_out_block": list(HELD_OUT), "logit_scale": round(float(model.logit_scale.detach().exp()), 3)}


def _evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    import torch

    from icmlgym.corpora.product_images import product_classes

    attrs = product_classes(*ALL).attributes
    d = _images("test", 4, 12345, cfg)
    held = held_out_mask()
    out: dict[str, float] = {}
    with torch.no_grad():
        for name, mask in (("zero_shot", held), ("seen", ~held)):
            classes = np.flatnonzero(mask)
            keep = np.isin(d.y, classes)
            logits = model.class_logits(torch.as_tensor(d.x[keep]), torch.as_tensor(classes))
            pred = classes[logits.argmax(1).numpy()]
            truth = d.y[keep]
            out[f"{name}_accuracy"] = round(float((pred == truth).mean()), 4)
            if name == "zero_shot":
                for i, attr in enumerate(("object", "colour", "material")):
                    out[f"zero_shot_{attr}"] = round(float((attrs[pred, i] == attrs[truth, i]).mean()), 4)
    out["zero_shot_chance"] = round(1.0 / int(held.sum()), 4)
    return out


def _register() -> Member:
    try:
        return get(NAME)
    except ZooError:  # not registered yet
        return register(Member(
            name=NAME,
            kind="vision-language-model",
            description="CLIP-style image/caption model (captions by the shipped sentence encoder) trained on product classes outside the 4x4x3 block",
            data="generated product images, train split, the 272 of 320 classes outside the first 4 objects x 4 colours x 3 materials",
            configs={
                "smoke": {"width": 16, "hidden": 64, "dim": 32, "size": 16, "per_class": 12, "epochs": 10, "batch": 128, "lr": 3e-3, "background_mix": 0.5},
            },
            make=_make,
            train=_train,
            evaluate=_evaluate,
            code=("icmlgym.zoo.product_clip", "icmlgym.corpora.product_images"),
            quality="zero_shot_accuracy",
        ))


MEMBER = _register()


def load_teacher(size: str = "smoke", device: str = "cpu"):
    """The trained, frozen teacher (shipped weights, else the zoo's cache, else trained now: needs extra [text])."""
    from icmlgym.zoo.registry import load

    zm = load(NAME, size, device=device)
    for p in zm.model.parameters():
        p.requires_grad_(False)
    return zm.model.eval()


__all__ = ["ALL", "HELD_OUT", "MEMBER", "NAME", "all_class_names", "caption", "caption_embeddings", "held_out_mask", "load_teacher"]
