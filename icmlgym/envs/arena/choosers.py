"""Choosers: the decision-maker under study, behind one interface, with a record of every query.

``chooser.choose(images, prompt, layout) -> probabilities`` shows ``images`` in
the slots of ``layout`` (a grid, filled in reading order: ``images[i]`` sits in
slot ``i``) with a shopping ``prompt``, and returns a probability vector over
the images. A chooser that answers with a single decision (a VLM's reply, one
noisy draw of the synthetic chooser) returns the one-hot vector of its choice.
Every call, including failed ones, is appended to ``chooser.log`` as a
:class:`QueryRecord`; a failure raises :class:`ChooserError` after it is
recorded, so an unusable answer is never turned into a silent choice.

Shipped choosers:

- :class:`SyntheticChooser` (the embedded default): a random-utility model with
  a known utility, ``u_i = w . z(features(image_i)) + b[slot_i]`` plus Gumbel
  noise, so its choice probabilities are the conditional logit ``softmax(u / T)``.
  Known weights make revealed-preference recovery testable.
- :class:`HTTPChooser`: an OpenAI-compatible vision chat endpoint
  (``POST {endpoint}/chat/completions``, images as ``data:image/png;base64`` parts),
  configured from ``ICMLGYM_ARENA_ENDPOINT``, ``ICMLGYM_ARENA_API_KEY`` and
  ``ICMLGYM_ARENA_MODEL``; requests go through the shared client
  (:mod:`icmlgym.zoo.http`: retries on 5xx / 429 / connection errors, a timeout
  per request, a query cache in the shared cache's ``arena`` namespace).
- :class:`ReplayChooser`: answers from a recorded query log (JSONL).
- :class:`LocalModelChooser`: the slot for a local vision model implementing
  :class:`LocalVisionModel` (one score per image).
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from icmlgym.cache import Cache
from icmlgym.envs.arena.features import FEATURES, extract_features, reference_stats
from icmlgym.envs.arena.images import image_id
from icmlgym.zoo.http import HTTPClient, HTTPClientError, MalformedResponseError, chat_url, message_text

# weights of the default synthetic chooser over z-scored FEATURES (distinct magnitudes so that a
# recovered ranking is meaningful): it likes bright, vivid, clean, centred, large product shots
DEFAULT_WEIGHTS: dict[str, float] = {
    "brightness": 0.9,
    "contrast": 0.35,
    "colourfulness": 0.7,
    "clutter": -0.8,
    "centring": 0.5,
    "bg_uniformity": 0.6,
    "object_scale": 1.0,
    "sharpness": 0.2,
    "warmth": -0.15,
}
# the default chooser favours the first slot (the primacy bias reported for VLM shopping agents)
DEFAULT_POSITION_BIAS: tuple[float, ...] = (0.4,)
DEFAULT_PROMPT = "You are shopping online for this kind of product. Which one would you buy?"


class ChooserError(RuntimeError):
    """A query that produced no usable decision (server error, timeout, malformed answer)."""


class MalformedAnswerError(ChooserError):
    """The chooser answered, but the answer names no single valid option."""


class ReplayMissError(ChooserError):
    """A replay chooser was asked a query it has no recorded decision left for."""


@dataclass(frozen=True)
class Layout:
    """A grid of ``rows x cols`` slots, filled in reading order."""

    rows: int = 1
    cols: int = 2

    def __post_init__(self) -> None:
        if self.rows < 1 or self.cols < 1:
            raise ValueError(f"a layout needs at least one row and one column, got {self.rows}x{self.cols}")

    @property
    def n_slots(self) -> int:
        return self.rows * self.cols

    def describe(self, n: int) -> str:
        if self.rows == 1:
            return f"{n} images side by side, numbered 1 to {n} from left to right"
        return f"{n} images in a {self.rows}x{self.cols} grid, numbered 1 to {n} in reading order"

    @staticmethod
    def resolve(layout: "Layout | tuple[int, int] | None", n: int) -> "Layout":
        if layout is None:
            lay = Layout(1, n)
        elif isinstance(layout, Layout):
            lay = layout
        else:
            try:
                rows, cols = layout
            except (TypeError, ValueError):
                raise ValueError(f"layout must be a Layout or (rows, cols), got {layout!r}") from None
            lay = Layout(int(rows), int(cols))
        if n > lay.n_slots:
            raise ValueError(f"{n} images do not fit the {lay.rows}x{lay.cols} layout")
        return lay


@dataclass
class QueryRecord:
    """One query: what was shown, what came back, and how.

    ``choice`` is the index into the shown images (= the slot), ``None`` when the query
    failed; ``error`` then says why. ``probabilities`` is what ``choose`` returned.
    """

    query_id: int
    chooser: str
    image_ids: list[str]
    prompt: str
    layout: tuple[int, int]
    probabilities: list[float] | None = None
    choice: int | None = None
    error: str | None = None
    cached: bool = False
    latency_s: float = 0.0
    raw_answer: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=_json_default)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "QueryRecord":
        d = dict(d)
        d["layout"] = tuple(d["layout"])
        return QueryRecord(**d)


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "item"):
        return o.item()
    return repr(o)


def save_log(records: Sequence[QueryRecord], path: str | Path) -> None:
    """Write query records as JSON lines."""
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(r.to_json() + "\n")


def load_log(path: str | Path) -> list[QueryRecord]:
    """Read a JSON-lines query log written by :func:`save_log` (errors name the bad line)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"query log {str(p)!r} does not exist")
    out = []
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(QueryRecord.from_dict(json.loads(line)))
            except (json.JSONDecodeError, TypeError, KeyError) as err:
                raise ValueError(f"{p}:{n}: not a query record ({type(err).__name__}: {err})") from err
    return out


def _check_images(images: Sequence[np.ndarray]) -> list[np.ndarray]:
    imgs = [np.asarray(im) for im in images]
    if len(imgs) < 2:
        raise ValueError(f"a choice needs at least 2 images, got {len(imgs)}")
    for k, im in enumerate(imgs):
        if im.ndim != 3 or im.shape[2] != 3 or im.dtype != np.uint8:
            raise ValueError(f"image {k} must be (H, W, 3) uint8, got shape {im.shape} dtype {im.dtype}")
    return imgs


class Chooser:
    """Base class: validates a query, calls :meth:`_decide`, records the outcome."""

    name = "chooser"

    def __init__(self) -> None:
        self.log: list[QueryRecord] = []

    def _decide(
        self, images: list[np.ndarray], ids: list[str], prompt: str, layout: Layout
    ) -> tuple[np.ndarray, int | None, bool, str | None]:
        """Return (probabilities, choice or None, served from cache, raw answer)."""
        raise NotImplementedError

    def choose(
        self,
        images: Sequence[np.ndarray],
        prompt: str = DEFAULT_PROMPT,
        layout: Layout | tuple[int, int] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> np.ndarray:
        """Show ``images`` (slot ``i`` = ``images[i]``) and return choice probabilities over them.

        Args:
            images: at least two ``(H, W, 3)`` uint8 images.
            prompt: the shopping instruction.
            layout: a :class:`Layout` or ``(rows, cols)``; default one row.
            meta: free-form tags stored with the query record (e.g. which edits the images carry).

        Raises:
            ChooserError: the query produced no usable decision (it is still recorded).
            ValueError: malformed images or layout.
        """
        imgs = _check_images(images)
        lay = Layout.resolve(layout, len(imgs))
        ids = [image_id(im) for im in imgs]
        rec = QueryRecord(len(self.log), self.name, ids, str(prompt), (lay.rows, lay.cols), meta=dict(meta or {}))
        t0 = time.perf_counter()
        try:
            probs, choice, cached, raw = self._decide(imgs, ids, str(prompt), lay)
        except ChooserError as err:
            rec.error = f"{type(err).__name__}: {err}"
            rec.latency_s = time.perf_counter() - t0
            self.log.append(rec)
            raise
        rec.latency_s = time.perf_counter() - t0
        rec.probabilities = [float(p) for p in probs]
        rec.choice = None if choice is None else int(choice)
        rec.cached = bool(cached)
        rec.raw_answer = raw
        self.log.append(rec)
        return probs

    def save_log(self, path: str | Path) -> None:
        save_log(self.log, path)


def _one_hot(n: int, k: int) -> np.ndarray:
    v = np.zeros(n)
    v[k] = 1.0
    return v


def _softmax(u: np.ndarray) -> np.ndarray:
    e = np.exp(u - u.max())
    return e / e.sum()


class SyntheticChooser(Chooser):
    """A random-utility chooser with known weights: the embedded default model under study.

    Utility of the image in slot ``s``: ``u = sum_k w_k z_k + b_s + T * Gumbel``, with
    ``z_k`` the feature ``k`` z-scored against :func:`reference_stats`. The chosen
    image is the argmax, so choice probabilities are ``softmax((w . z + b) / T)``.
    The prompt is ignored (the synthetic shopper wants the same things in every category).

    Args:
        weights: ``{feature: weight}`` over :data:`FEATURES` (missing features weigh 0);
            default :data:`DEFAULT_WEIGHTS`.
        position_bias: additive utility per slot (slots past the tuple get 0); default
            :data:`DEFAULT_POSITION_BIAS`. ``()`` is an unbiased chooser.
        temperature: scale of the Gumbel noise (> 0).
        mode: ``"sample"`` (one noisy decision per query, returned one-hot, as a VLM
            reply) or ``"exact"`` (return the logit probabilities).
        seed: seed of the decision noise.
        analysis_size: resolution the features are computed at.
    """

    name = "synthetic"

    def __init__(
        self,
        weights: dict[str, float] | None = None,
        position_bias: Sequence[float] = DEFAULT_POSITION_BIAS,
        temperature: float = 1.0,
        mode: str = "sample",
        seed: int | None = 0,
        analysis_size: int = 64,
    ) -> None:
        super().__init__()
        w = dict(DEFAULT_WEIGHTS if weights is None else weights)
        unknown = sorted(set(w) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown features {unknown}; features: {FEATURES}")
        if not float(temperature) > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if mode not in ("sample", "exact"):
            raise ValueError(f"mode must be 'sample' or 'exact', got {mode!r}")
        self.weights = np.array([float(w.get(f, 0.0)) for f in FEATURES])
        self.position_bias = tuple(float(b) for b in position_bias)
        self.temperature = float(temperature)
        self.mode = mode
        self.analysis_size = int(analysis_size)
        self.rng = np.random.default_rng(seed)
        self._mu, self._sd = reference_stats(analysis_size=self.analysis_size)
        self._zcache: dict[str, np.ndarray] = {}

    def seed(self, seed: int | None) -> None:
        """Reseed the decision noise."""
        self.rng = np.random.default_rng(seed)

    def features(self, image: np.ndarray, key: str | None = None) -> np.ndarray:
        """The z-scored features of one image (cached by content hash)."""
        key = key or image_id(image)
        z = self._zcache.get(key)
        if z is None:
            if len(self._zcache) > 50_000:
                self._zcache.clear()
            z = (extract_features(image, self.analysis_size) - self._mu) / self._sd
            self._zcache[key] = z
        return z

    def slot_bias(self, n: int) -> np.ndarray:
        b = np.zeros(n)
        k = min(n, len(self.position_bias))
        b[:k] = self.position_bias[:k]
        return b

    def utilities(self, images: Sequence[np.ndarray], ids: Sequence[str] | None = None) -> np.ndarray:
        """Deterministic utility of each image, without the slot bias (the oracle)."""
        ids = ids or [image_id(im) for im in images]
        return np.array([self.features(im, k) @ self.weights for im, k in zip(images, ids)])

    def exact_probabilities(self, images: Sequence[np.ndarray], layout: Layout | tuple[int, int] | None = None) -> np.ndarray:
        """The model's true choice probabilities for this display (not logged, no noise drawn)."""
        imgs = _check_images(images)
        Layout.resolve(layout, len(imgs))
        u = self.utilities(imgs) + self.slot_bias(len(imgs))
        return _softmax(u / self.temperature)

    def _decide(self, images, ids, prompt, layout):
        u = (self.utilities(images, ids) + self.slot_bias(len(images))) / self.temperature
        if self.mode == "exact":
            return _softmax(u), None, False, None
        k = int(np.argmax(u + self.rng.gumbel(size=len(u))))
        return _one_hot(len(u), k), k, False, None


# ----------------------------------------------------------------------------- HTTP


def encode_png_data_url(image: np.ndarray) -> str:
    """``data:image/png;base64,...`` for an (H, W, 3) uint8 image."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.asarray(image, dtype=np.uint8)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def parse_choice(text: str, n: int) -> int:
    """The 0-based option named by an answer such as "2", "Option 2." or "I choose 2".

    Raises:
        MalformedAnswerError: no number, several different numbers, or one outside 1..n.
    """
    numbers = {int(x) for x in re.findall(r"\d+", text or "")}
    if len(numbers) != 1:
        raise MalformedAnswerError(f"expected one option number in 1..{n}, got {text!r}")
    k = numbers.pop()
    if not 1 <= k <= n:
        raise MalformedAnswerError(f"option {k} is outside 1..{n} (answer {text!r})")
    return k - 1


class HTTPChooser(Chooser):
    """A vision-language model behind an OpenAI-compatible chat completions endpoint.

    Each query is one ``POST {endpoint}/chat/completions`` whose user message holds the
    prompt, then for each option a text part ``"Option k:"`` and an ``image_url`` part
    with a base64 PNG data URL; the model must answer with the option number.

    Args:
        endpoint: base URL (e.g. ``http://127.0.0.1:8000/v1``); default ``$ICMLGYM_ARENA_ENDPOINT``.
            A URL that already ends in ``/chat/completions`` is used as is.
        api_key: sent as ``Authorization: Bearer``; default ``$ICMLGYM_ARENA_API_KEY`` (may be unset).
        model: model name; default ``$ICMLGYM_ARENA_MODEL``.
        timeout: seconds per HTTP request.
        max_retries: extra attempts after a 5xx, 429, timeout or connection error.
        backoff: seconds before the first retry, doubled each time.
        cache_dir: query cache folder (default ``$ICMLGYM_ARENA_CACHE``, else the shared
            cache's ``arena`` namespace); ``None`` or ``""`` disables the cache.
            Only valid answers are cached.
        temperature, max_tokens: sampling settings sent to the endpoint. With ``temperature > 0``
            the n-th repetition of the same query has its own cache entry, so repeated queries
            stay independent draws while a rerun replays them from the cache.

    Raises:
        ValueError: no endpoint or model configured, or an endpoint that is not http(s).
    """

    name = "http"
    _UNSET: Any = object()

    def __init__(
        self,
        endpoint: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        cache_dir: str | Path | None = _UNSET,
        temperature: float = 0.0,
        max_tokens: int = 16,
        system_prompt: str = "You are a shopping assistant choosing between product photos.",
    ) -> None:
        super().__init__()
        endpoint = endpoint or os.environ.get("ICMLGYM_ARENA_ENDPOINT", "")
        if not endpoint:
            raise ValueError("HTTPChooser needs an endpoint: pass endpoint= or set ICMLGYM_ARENA_ENDPOINT")
        self.url = chat_url(endpoint)
        api_key = api_key if api_key is not None else os.environ.get("ICMLGYM_ARENA_API_KEY") or None
        self.model = model or os.environ.get("ICMLGYM_ARENA_MODEL", "")
        if not self.model:
            raise ValueError("HTTPChooser needs a model name: pass model= or set ICMLGYM_ARENA_MODEL")
        if cache_dir is HTTPChooser._UNSET:
            cache_dir = os.environ.get("ICMLGYM_ARENA_CACHE") or Cache("arena").dir
        self.client = HTTPClient(self.url, api_key, timeout, max_retries, backoff, Path(cache_dir) if cache_dir else None)
        self.api_key = self.client.api_key
        self.timeout, self.max_retries, self.backoff = self.client.timeout, self.client.max_retries, self.client.backoff
        self.cache_dir = self.client.cache_dir
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.system_prompt = system_prompt

    @property
    def requests_sent(self) -> int:
        """HTTP requests actually made (retries included)."""
        return self.client.requests_sent

    def request_body(self, images: Sequence[np.ndarray], prompt: str, layout: Layout) -> dict[str, Any]:
        """The JSON body of the chat completions request for one query."""
        n = len(images)
        content: list[dict[str, Any]] = [
            {
                "type": "text",
                "text": f"{prompt}\nThe options are {layout.describe(n)}. "
                f"Answer with the number of the option you choose (1 to {n}) and nothing else.",
            }
        ]
        for k, im in enumerate(images):
            content.append({"type": "text", "text": f"Option {k + 1}:"})
            content.append({"type": "image_url", "image_url": {"url": encode_png_data_url(im)}})
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": self.system_prompt},
                {"role": "user", "content": content},
            ],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def _decide(self, images, ids, prompt, layout):
        body = self.request_body(images, prompt, layout)
        key = self.client.key(body, repeat=self.temperature > 0)
        hit = self.client.cached(key)
        if hit is not None:
            try:
                k = parse_choice(hit["answer"], len(images))
                return _one_hot(len(images), k), k, True, hit["answer"]
            except (KeyError, TypeError, MalformedAnswerError):
                self.client.drop(key)  # a corrupt entry is dropped and re-queried
        try:
            text = message_text(self.client.post_json(body))
        except MalformedResponseError as err:
            raise MalformedAnswerError(str(err)) from None
        except HTTPClientError as err:
            raise ChooserError(str(err)) from None
        k = parse_choice(text, len(images))
        self.client.store(key, {"answer": text, "model": self.model})
        return _one_hot(len(images), k), k, False, text


# ----------------------------------------------------------------------------- replay and local


class ReplayChooser(Chooser):
    """Answers queries from a recorded log, in the order they were recorded.

    A query (the same image ids, prompt and layout) gets the next recorded decision
    for it; a recorded error is raised again as :class:`ChooserError`. A query with no
    recorded decision left raises :class:`ReplayMissError` (or, with ``cycle=True``,
    starts over from that query's first recorded decision).

    Args:
        records: query records or the path of a JSONL log.
        cycle: reuse recorded decisions once exhausted.
    """

    name = "replay"

    def __init__(self, records: Sequence[QueryRecord] | str | Path, cycle: bool = False) -> None:
        super().__init__()
        recs = load_log(records) if isinstance(records, (str, Path)) else list(records)
        self._queue: dict[tuple, list[QueryRecord]] = {}
        for r in recs:
            self._queue.setdefault(self._key(r.image_ids, r.prompt, r.layout), []).append(r)
        self._pos: dict[tuple, int] = {}
        self.cycle = bool(cycle)

    @staticmethod
    def _key(ids: Sequence[str], prompt: str, layout: Sequence[int]) -> tuple:
        return (tuple(ids), prompt, tuple(int(x) for x in layout))

    def _decide(self, images, ids, prompt, layout):
        key = self._key(ids, prompt, (layout.rows, layout.cols))
        recs = self._queue.get(key)
        if not recs:
            raise ReplayMissError(f"no recorded decision for images {ids} with this prompt and layout")
        i = self._pos.get(key, 0)
        if i >= len(recs):
            if not self.cycle:
                raise ReplayMissError(f"all {len(recs)} recorded decisions for images {ids} are used up")
            i = 0
        self._pos[key] = i + 1
        r = recs[i]
        if r.error is not None:
            raise ChooserError(f"replayed error: {r.error}")
        if r.probabilities is None:
            raise ReplayMissError(f"recorded query {r.query_id} holds neither a decision nor an error")
        return np.asarray(r.probabilities, dtype=np.float64), r.choice, True, r.raw_answer


@runtime_checkable
class LocalVisionModel(Protocol):
    """The slot for a local vision(-language) model.

    ``scores(images, prompt, layout)`` returns one real score per image (a logit:
    higher = more likely chosen), e.g. the log-probability a local VLM assigns to
    answering "k" for option k. Images are (H, W, 3) uint8 in slot order. The model
    loads its weights from a local path (nothing is downloaded at run time).
    """

    def scores(self, images: Sequence[np.ndarray], prompt: str, layout: Layout) -> np.ndarray: ...


class LocalModelChooser(Chooser):
    """Turns a :class:`LocalVisionModel` into a chooser: softmax of its scores.

    Args:
        model: the local model.
        mode: ``"exact"`` returns the softmax; ``"sample"`` draws one decision from it (one-hot).
        seed: seed of the sampled decisions.
    """

    name = "local"

    def __init__(self, model: LocalVisionModel, mode: str = "exact", seed: int | None = 0) -> None:
        super().__init__()
        if not isinstance(model, LocalVisionModel):
            raise TypeError(f"model must implement scores(images, prompt, layout), got {type(model).__name__}")
        if mode not in ("sample", "exact"):
            raise ValueError(f"mode must be 'sample' or 'exact', got {mode!r}")
        self.model = model
        self.mode = mode
        self.rng = np.random.default_rng(seed)

    def _decide(self, images, ids, prompt, layout):
        s = np.asarray(self.model.scores(images, prompt, layout), dtype=np.float64).reshape(-1)
        if s.shape != (len(images),) or not np.all(np.isfinite(s)):
            raise MalformedAnswerError(f"local model returned scores {s.tolist()} for {len(images)} images")
        p = _softmax(s)
        if self.mode == "exact":
            return p, None, False, None
        k = int(self.rng.choice(len(p), p=p))
        return _one_hot(len(p), k), k, False, None


def make_chooser(spec: "str | Chooser | dict[str, Any] | None", seed: int | None = None, **defaults: Any) -> Chooser:
    """A chooser from a name (``"synthetic"``, ``"http"``), a ``{"type": ..., **kwargs}`` dict, or an instance."""
    if isinstance(spec, Chooser):
        return spec
    if spec is None:
        spec = "synthetic"
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict) or "type" not in spec:
        raise ValueError(f"chooser must be a Chooser, a name or a dict with 'type', got {spec!r}")
    kw = {k: v for k, v in spec.items() if k != "type"}
    kind = spec["type"]
    if kind == "synthetic":
        return SyntheticChooser(**{**defaults, "seed": seed, **kw})
    if kind == "http":
        if "api_key" in kw:  # env kwargs travel with the task (records, workers): keys never do
            raise ValueError(
                "an HTTP chooser built from env kwargs takes its key from the evaluator's environment only: "
                "set $ICMLGYM_ARENA_API_KEY where the env runs instead of passing api_key"
            )
        return HTTPChooser(**kw)
    if kind == "replay":
        return ReplayChooser(**kw)
    raise ValueError(f"unknown chooser type {kind!r}; use 'synthetic', 'http', 'replay' or pass a Chooser instance")
