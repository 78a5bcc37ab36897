"""LanguageToVisualKD-v0: distil a language-only teacher's conceptual signatures into a vision-only student.

LaViD (ICML 2026): a language model writes multiple-choice questions that probe distinctions
between visual classes; each class maps to a soft answer distribution over them (a conceptual
signature), and a vision-only student learns to predict its class's signature beside its label
(an auxiliary distillation loss), with no paired image-text data. The env trains the student on
the generated product images (:mod:`icmlgym.corpora.product_images`, fine-grained classes
object x colour x material, few images per class, a Waterbirds-like spurious background) and
lets the agent set, each epoch, which soft targets to distil, their weight and temperature.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.cache import Cache, content_key
from icmlgym.catalog import require_extra

require_extra("vision", what="icmlgym/LanguageToVisualKD-v0")

import torch
import torch.nn.functional as F

from icmlgym.corpora.product_images import product_images
from icmlgym.envs.vision import kd_student as ks
from icmlgym.envs.vision import signatures as sg
from icmlgym.nn.runtime import fixed_threads

TEACHERS: tuple[str, ...] = ("none", "language", "shuffled", "oracle", "smoothing", "visual-kd", "dkd", "mlkd")
WEIGHTS: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0)
TEMPERATURES: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
OBS_FIELDS: tuple[str, ...] = ("epoch_fraction", "train_loss", "aux_loss", "train_accuracy", "val_accuracy", "val_worst_group_accuracy")
# Deterministic work kept per process, keyed by everything that determines it: the rendered
# splits of a data set (runs of other agents or arms on the same seed reuse them) and the visual
# teacher's logits on a data set (also on disk, in the cache's ``vision-teacher`` namespace, so
# the main job's fresh worker processes train it once per data set; its epochs are still charged
# to every episode that uses it). Bounded LRU: a findings run or a suite holds ~10 data seeds at a time.
_DATA_CACHE: OrderedDict[tuple, tuple] = OrderedDict()
_TEACHER_CACHE: OrderedDict[tuple, Any] = OrderedDict()
_CACHE_MAX = 12


def _remember(cache: OrderedDict, key: tuple, value: Any) -> Any:
    cache[key] = value
    while len(cache) > _CACHE_MAX:
        cache.popitem(last=False)
    return value


def cached_teacher_logits(key: tuple, compute: Callable[[], Any]) -> Any:
    """A teacher's logits on a data set from this process's bounded cache, computed with ``compute`` on a miss."""
    logits = _TEACHER_CACHE.get(key)
    if logits is None:
        return _remember(_TEACHER_CACHE, key, compute())
    _TEACHER_CACHE.move_to_end(key)
    return logits


@functools.lru_cache(maxsize=1)
def _teacher_code() -> str:
    """Hash of the code the visual teacher's logits depend on (its trainer and the image generator): part of the disk key."""
    from icmlgym.corpora import product_images as pi

    return hashlib.sha256((inspect.getsource(ks) + inspect.getsource(pi)).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _renderer_code() -> str:
    """Hash of the image generator's source: part of the rendered splits' disk key."""
    from icmlgym.corpora import product_images as pi

    return hashlib.sha256(inspect.getsource(pi).encode()).hexdigest()[:16]


def _split(split: str, per_class: int, seed: int, kw: dict[str, Any]) -> tuple[torch.Tensor, np.ndarray, np.ndarray]:
    """(images, labels, groups) of one split, rendered once (the renderer is deterministic given its arguments).

    Kept in the process and on disk (namespace ``vision-images``, keyed by the arguments and the
    renderer's source): each run is a process of its own and rendered its three splits again
    (0.09 CPU-s of a 0.9 s LanguageToVisualKD smoke run)."""
    key = (split, per_class, seed, tuple(sorted(kw.items(), key=str)))
    hit = _DATA_CACHE.get(key)
    if hit is not None:
        _DATA_CACHE.move_to_end(key)
        return hit
    disk_key = content_key("lavid-split", 1, split, int(per_class), int(seed), sorted(kw.items(), key=str), _renderer_code())
    cache = Cache("vision-images")
    arrays = cache.read_arrays(disk_key)
    if arrays is None or set(arrays) != {"x", "y", "groups"}:
        d = product_images(split, per_class=per_class, seed=seed, **kw)
        arrays = {"x": d.x, "y": d.y, "groups": d.groups}
        cache.write_arrays(disk_key, arrays)
    x = torch.as_tensor(arrays["x"])
    return _remember(_DATA_CACHE, key, (x, arrays["y"], arrays["groups"]))


class LanguageToVisualKDEnv(gym.Env):
    """One episode is one student training run; each step is an epoch with the agent's distillation settings.

    ## Description
    LaViD (ICML 2026) distils a language-only teacher into a vision-only student: classes map to
    soft answers to multiple-choice questions (conceptual signatures) that an auxiliary head of
    the student learns to predict. Data: the generated product images, ``n_objects x n_colours x
    n_materials`` fine-grained classes, ``per_class`` training images each, with a spurious
    background (land or water) that follows the class group (the object) with probability
    ``spurious`` in training and is balanced in validation and test (Waterbirds-like groups:
    2 object groups x 2 backgrounds). Signatures: ``language`` (the default question bank
    answered by the shipped sentence encoder, or ``signature_file``, a JSON file from your own
    LLM), ``shuffled`` (the same with the classes permuted), ``oracle`` (the renderer's
    attributes). Other soft targets: label smoothing, and a visual teacher (a double-width CNN
    trained here) for KD, DKD and MLKD.

    ## Action Space
    ``MultiDiscrete([8, 5, 4, 2])``: ``(teacher, weight, temperature, standardise)``: teacher
    index in :data:`TEACHERS`, weight in :data:`WEIGHTS`, temperature in :data:`TEMPERATURES`,
    and whether logits are standardised (z-scored) before the temperature.

    ## Observation Space
    ``Box(0, inf, (6,), float32)``: :data:`OBS_FIELDS` after the last epoch (losses are
    unbounded; accuracies on the validation split, worst group of its four).

    ## Rewards
    0 per epoch; at the end the test accuracy over all fine-grained classes.

    ## Starting State
    ``reset(seed)`` draws the data set (``data_seed``, default the seed) and initialises the
    student from the seed. The visual teacher is trained on first use (KD, DKD, MLKD) and kept
    per data set in the process; ``teacher_epochs`` charges its epochs to every episode that uses it.

    ## Episode End
    Terminates after ``epochs`` epochs.

    ## Arguments
    ``n_objects`` (4), ``n_colours`` (4), ``n_materials`` (3), ``per_class`` (6),
    ``val_per_class`` (4), ``test_per_class`` (10), ``size`` (16 pixels), ``spurious`` (0.9;
    None: plain background), ``epochs`` (30), ``teacher_epochs`` (30), ``batch`` (64), ``lr``
    (3e-3), ``signature_file`` (None: the shipped sentence encoder's answers), ``data_seed``.

    ## Metrics
    ``test_accuracy``, ``worst_group_accuracy`` and ``average_group_accuracy`` (test),
    ``val_accuracy``, ``aux_share`` (share of epochs with a nonzero distillation weight).

    ## Version History
    v0: first version.
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium's convention)
    teachers: tuple[str, ...] = TEACHERS  # the soft-target sources, in action order (a later version may add some)

    def __init__(self, n_objects: int = 4, n_colours: int = 4, n_materials: int = 3, per_class: int = 6, val_per_class: int = 4,
                 test_per_class: int = 10, size: int = 16, spurious: float | None = 0.9, epochs: int = 30, teacher_epochs: int = 30,
                 batch: int = 64, lr: float = 3e-3, signature_file: str | None = None, data_seed: int | None = None) -> None:
        for name, v, lo in (("per_class", per_class, 1), ("val_per_class", val_per_class, 2), ("test_per_class", test_per_class, 2),
                            ("epochs", epochs, 1), ("teacher_epochs", teacher_epochs, 1), ("batch", batch, 1)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if not (isinstance(lr, (int, float)) and 0 < float(lr) < 1):
            raise ValueError(f"lr must be in (0, 1), got {lr!r}")
        self.kw = dict(n_objects=n_objects, n_colours=n_colours, n_materials=n_materials, size=size, spurious=spurious)
        probe = product_images("val", per_class=2, seed=0, **self.kw)  # validates the data arguments before any work
        self.class_names = list(probe.card["class_names"])
        self.attributes = np.array(probe.card["class_attributes"], dtype=np.int64)
        self.vocab = (probe.card["objects"], probe.card["colours"], probe.card["materials"])
        self.per_class, self.val_per_class, self.test_per_class = int(per_class), int(val_per_class), int(test_per_class)
        self.epochs, self.teacher_epochs, self.batch, self.lr = int(epochs), int(teacher_epochs), int(batch), float(lr)
        self.signature_file = signature_file
        self.fixed_data_seed = None if data_seed is None else int(data_seed)
        self.language = (sg.load_signature_file(signature_file, self.class_names) if signature_file is not None
                         else sg.language(self.class_names))
        self.oracle = sg.oracle(self.attributes, self.vocab)
        self.action_space = spaces.MultiDiscrete([len(self.teachers), len(WEIGHTS), len(TEMPERATURES), 2])
        self.observation_space = spaces.Box(0.0, np.inf, (len(OBS_FIELDS),), np.float32)
        self._started = False
        self._done = True

    # ------------------------------------------------------------------ data and teachers
    def _load(self, data_seed: int) -> None:
        self.data_seed = data_seed
        splits = {s: _split(s, n, data_seed, self.kw) for s, n in (("train", self.per_class), ("val", self.val_per_class),
                                                                    ("test", self.test_per_class))}
        self.x = {s: d[0] for s, d in splits.items()}
        self.y = {s: d[1] for s, d in splits.items()}
        self.groups = {s: d[2] for s, d in splits.items()}

    def _visual_teacher(self) -> torch.Tensor:
        """The visual teacher's logits on the training images: trained once per data set and kept in the process and on disk."""
        key = content_key("lavid-visual-teacher", sorted(self.kw.items(), key=str), self.per_class, self.data_seed, self.teacher_epochs,
                          self.batch, self.lr, _teacher_code(), torch.__version__)
        logits = _TEACHER_CACHE.get(key)
        if logits is None:
            cache = Cache("vision-teacher")
            with cache.lock(key):  # a second worker on the same data set waits, then reads the entry
                hit = cache.read_arrays(key)
                if hit is None:
                    with fixed_threads(1):
                        net = ks.train_teacher(self.x["train"], torch.as_tensor(self.y["train"]), len(self.class_names), self.teacher_epochs,
                                               seed=self.data_seed + 7, batch=self.batch, lr=self.lr)
                        with torch.no_grad():
                            hit = {"logits": net(self.x["train"])[0].numpy()}
                    cache.write_arrays(key, hit)
            logits = _remember(_TEACHER_CACHE, key, torch.as_tensor(hit["logits"]))
        else:
            _TEACHER_CACHE.move_to_end(key)
        self._teacher_epochs += self.teacher_epochs  # charged to every episode that uses it, trained now or kept
        self._teacher_logits = logits
        return logits

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        data_seed = self.fixed_data_seed if self.fixed_data_seed is not None else int(self.np_random.integers(2**31 - 1) if seed is None else seed)
        self._load(data_seed)
        init_seed = int(self.np_random.integers(2**31 - 1))
        self.shuffled = sg.shuffled(self.language, np.random.default_rng(init_seed))
        n_aux = max(len(self.language.probs[0]), len(self.oracle.probs[0]))
        with fixed_threads(1):
            torch.manual_seed(init_seed)
            self.net = ks.Student(len(self.class_names), n_aux)
            self.net(self.x["train"][:2])
            self.opt = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        self.gen = torch.Generator().manual_seed(init_seed)
        self._teacher_logits = None
        self._epoch = 0
        self._teacher_epochs = 0
        self._aux_epochs = 0
        self._done = False
        self._started = True
        obs = np.zeros(len(OBS_FIELDS), np.float32)
        return obs, {"cost": self._cost(), "teachers": list(self.teachers), "weights": list(WEIGHTS), "temperatures": list(TEMPERATURES),
                     "classes": list(self.class_names), "questions": list(self.language.questions), "obs_fields": list(OBS_FIELDS)}

    def _cost(self) -> dict[str, float]:
        return {"student_epochs": float(self._epoch), "teacher_epochs": float(self._teacher_epochs)}

    def _prepare(self, teacher: str) -> None:
        """Make what ``teacher``'s loss needs before the epoch (the visual teacher's logits on first use)."""
        if teacher in ("visual-kd", "dkd", "mlkd") and self._teacher_logits is None:
            self._visual_teacher()

    def _aux(self, teacher: str, logits, aux, idx, yb, w: float, t: float, std: bool):
        if teacher in ("language", "shuffled", "oracle"):
            sig = {"language": self.language, "shuffled": self.shuffled, "oracle": self.oracle}[teacher]
            target = torch.as_tensor(sig.probs[yb.numpy()], dtype=torch.float32)
            return ks.signature_loss(aux[:, : target.shape[1]], target, sig.sizes, t, std)
        if teacher == "smoothing":
            return ks.smoothing_loss(logits, yb, t, std)
        tl = self._teacher_logits[idx]
        if teacher == "visual-kd":
            return ks.kd(logits, tl, t, std)
        if teacher == "dkd":
            return ks.dkd(logits, tl, yb, t, std)
        return ks.mlkd(logits, tl, t, std)

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended (the student is trained): call reset()")
        a = np.asarray(action)
        if a.shape != (4,) or not np.issubdtype(a.dtype, np.integer) or not self.action_space.contains(a.astype(np.int64)):
            raise ValueError(f"action {a.tolist()!r} is not in the action space {self.action_space} ((teacher, weight, temperature, standardise))")
        teacher, w, t, std = self.teachers[int(a[0])], WEIGHTS[int(a[1])], TEMPERATURES[int(a[2])], bool(a[3])
        use = teacher != "none" and w > 0
        with fixed_threads(1):
            if use:
                self._prepare(teacher)
            self.net.train()
            x, y = self.x["train"], torch.as_tensor(self.y["train"])
            losses, aux_losses, right = [], [], 0
            for idx in torch.randperm(len(x), generator=self.gen).split(self.batch):
                xb, yb = ks.flip(x[idx], self.gen), y[idx]
                logits, aux = self.net(xb)
                loss = F.cross_entropy(logits, yb)
                al = self._aux(teacher, logits, aux, idx, yb, w, t, std) if use else logits.new_zeros(())
                total = loss + w * al
                self.opt.zero_grad()
                total.backward()
                self.opt.step()
                losses.append(float(loss.detach()) * len(idx))
                aux_losses.append(float(al.detach()) * len(idx))
                right += int((logits.argmax(1) == yb).sum())
            self.net.eval()
            val, val_worst, _ = ks.accuracy(self.net, self.x["val"], self.y["val"], self.groups["val"])
        self._epoch += 1
        self._aux_epochs += int(use)
        n = len(x)
        obs = np.array([self._epoch / self.epochs, sum(losses) / n, sum(aux_losses) / n, right / n, val, val_worst], dtype=np.float32)
        terminated = self._epoch >= self.epochs
        info: dict[str, Any] = {"cost": self._cost()}
        reward = 0.0
        if terminated:
            with fixed_threads(1):
                acc, worst, avg = ks.accuracy(self.net, self.x["test"], self.y["test"], self.groups["test"])
            reward = acc
            info["metrics"] = {"test_accuracy": acc, "worst_group_accuracy": worst, "average_group_accuracy": avg,
                               "val_accuracy": val, "aux_share": self._aux_epochs / self.epochs}
            self._done = True
        return obs, float(reward), terminated, False, info


__all__ = ["OBS_FIELDS", "TEACHERS", "TEMPERATURES", "WEIGHTS", "LanguageToVisualKDEnv"]
