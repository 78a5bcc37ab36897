"""One interface for language models, whatever serves them: a zoo model, a local ``transformers`` model, an HTTP endpoint.

:class:`LanguageModel` is what the neural families program against:

- ``generate(prompt, max_new_tokens, temperature, seed) -> str`` (stops at the end-of-text token);
- ``logprobs(prompt, continuation) -> array``: the log-probability of each token of the
  continuation given the prompt and the tokens before it;
- ``hidden_states(text) -> array (layers + 1, tokens, width)``: every layer's states
  (local models only; an HTTP endpoint raises :class:`NotImplementedError`);
- ``name`` and ``tokenizer_name`` (a target and its draft must share the tokenizer:
  :func:`check_same_tokenizer`).

Plugs:

- :class:`ZooLM`: a zoo :class:`~icmlgym.zoo.transformer.GPT` with the corpus tokenizer.
- :class:`HFLocalLM`: a ``transformers`` causal LM saved on disk, loaded with
  ``local_files_only=True`` (nothing is downloaded; a folder without weights is a clear error).
- :class:`HTTPLM`: an OpenAI-compatible ``/completions`` endpoint through the shared HTTP
  client (:mod:`icmlgym.zoo.http`: retries, timeouts, an answer cache); log-probabilities
  come from the endpoint's ``echo`` + ``logprobs`` support.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np


class LanguageModel:
    """The zoo-facing interface of a language model (see the module docstring)."""

    name: str = "lm"
    tokenizer_name: str = ""

    def generate(self, prompt: str, max_new_tokens: int = 64, temperature: float = 0.0, seed: int | None = None) -> str:
        raise NotImplementedError

    def logprobs(self, prompt: str, continuation: str) -> np.ndarray:
        raise NotImplementedError

    def hidden_states(self, text: str) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} does not expose hidden states")


def check_same_tokenizer(a: LanguageModel, b: LanguageModel) -> None:
    """Raise ValueError when two models (a target and its draft) do not share a tokenizer."""
    if a.tokenizer_name != b.tokenizer_name:
        raise ValueError(f"models {a.name!r} and {b.name!r} use different tokenizers ({a.tokenizer_name!r} vs {b.tokenizer_name!r}); a draft must share its target's tokenizer")


class ZooLM(LanguageModel):
    """A zoo GPT with the corpus's character tokenizer (texts start with the begin-of-text token)."""

    def __init__(self, model: Any, tokenizer: Any, name: str = "zoo") -> None:
        self.model = model
        self.tok = tokenizer
        self.name = name
        self.tokenizer_name = tokenizer.name

    @classmethod
    def from_zoo(cls, member: str = "reasoner", size: str = "smoke", device: str = "cpu", **kw: Any) -> "ZooLM":
        from icmlgym.zoo.registry import load

        zm = load(member, size, device=device, **kw)
        return cls(zm.model, zm.tokenizer, f"{member}-{size}")

    def _ids(self, text: str) -> list[int]:
        return self.tok.encode(text, bos=True)

    def generate(self, prompt: str, max_new_tokens: int = 64, temperature: float = 0.0, seed: int | None = None) -> str:
        import torch

        gen = torch.Generator(device=self.model.wte.weight.device).manual_seed(int(seed)) if seed is not None else None
        room = self.model.config.block_size - len(self._ids(prompt))
        out = self.model.generate(self._ids(prompt), max(0, min(max_new_tokens, room)), temperature, stop=self.tok.eos_id, generator=gen)
        return self.tok.decode(out)

    def logprobs(self, prompt: str, continuation: str) -> np.ndarray:
        import torch

        p, c = self._ids(prompt), self.tok.encode(continuation)
        ids = torch.tensor([p + c], device=self.model.wte.weight.device)
        with torch.no_grad():
            logp = torch.log_softmax(self.model(ids)[0].float(), -1)
        pos = torch.arange(len(p) - 1, len(p) + len(c) - 1)
        return logp[pos, torch.tensor(c)].cpu().numpy()

    def hidden_states(self, text: str) -> np.ndarray:
        import torch

        ids = torch.tensor([self._ids(text)], device=self.model.wte.weight.device)
        with torch.no_grad():
            _, states = self.model(ids, hidden=True)
        return torch.stack([s[0] for s in states]).cpu().numpy()


def check_model_folder(path: str | os.PathLike) -> Path:
    """``path`` as a Path when it is a ``save_pretrained`` folder: it exists, holds weights and a config.

    Raises:
        FileNotFoundError: the folder is missing, or holds no weights or no config.json.
    """
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"no model folder at {path}")
    weights = [p.name for p in path.iterdir() if p.suffix in (".safetensors", ".bin") or p.name.endswith(".safetensors.index.json")]
    if not weights:
        raise FileNotFoundError(f"{path} holds no model weights (*.safetensors or *.bin); save the model there with save_pretrained")
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{path} has no config.json")
    return path


class HFLocalLM(LanguageModel):
    """A ``transformers`` causal language model from a local folder (``save_pretrained`` output).

    Raises:
        FileNotFoundError: the folder is missing or holds no weights / no tokenizer.
        MissingExtraError: ``transformers`` is not installed (extra ``[text]``).
    """

    def __init__(self, path: str | os.PathLike, device: str = "cpu") -> None:
        from icmlgym.catalog import require_extra
        from icmlgym.nn.runtime import resolve_device

        require_extra("text", "a local transformers model")
        path = check_model_folder(path)
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        try:
            self.tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        except Exception as err:  # noqa: BLE001
            raise FileNotFoundError(f"{path} has no loadable tokenizer ({type(err).__name__}: {err})") from None
        self.device = resolve_device(device)
        self.model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True).to(self.device).eval()
        self.name = path.name
        vocab = self.tok.get_vocab()
        import hashlib

        self.tokenizer_name = "hf-" + hashlib.sha256(repr(sorted(vocab.items())).encode()).hexdigest()[:12]

    def _ids(self, text: str) -> list[int]:
        ids = self.tok(text, add_special_tokens=False)["input_ids"]
        bos = self.tok.bos_token_id
        return ([bos] if bos is not None else []) + list(ids)

    def generate(self, prompt: str, max_new_tokens: int = 64, temperature: float = 0.0, seed: int | None = None) -> str:
        import torch

        ids = torch.tensor([self._ids(prompt)], device=self.device)
        kw: dict[str, Any] = {"max_new_tokens": int(max_new_tokens), "pad_token_id": self.tok.pad_token_id or self.tok.eos_token_id}
        if temperature > 0:
            if seed is not None:
                torch.manual_seed(int(seed))
            kw.update(do_sample=True, temperature=float(temperature))
        else:
            kw.update(do_sample=False)
        with torch.no_grad():
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), **kw)
        return self.tok.decode(out[0, ids.shape[1] :], skip_special_tokens=True)

    def logprobs(self, prompt: str, continuation: str) -> np.ndarray:
        import torch

        p = self._ids(prompt)
        c = list(self.tok(continuation, add_special_tokens=False)["input_ids"])
        ids = torch.tensor([p + c], device=self.device)
        with torch.no_grad():
            logp = torch.log_softmax(self.model(ids).logits[0].float(), -1)
        pos = torch.arange(len(p) - 1, len(p) + len(c) - 1)
        return logp[pos, torch.tensor(c)].cpu().numpy()

    def hidden_states(self, text: str) -> np.ndarray:
        import torch

        ids = torch.tensor([self._ids(text)], device=self.device)
        with torch.no_grad():
            out = self.model(ids, output_hidden_states=True)
        return torch.stack([h[0] for h in out.hidden_states]).float().cpu().numpy()


class HTTPLM(LanguageModel):
    """An OpenAI-compatible ``/completions`` endpoint (vLLM, llama.cpp's server, ...).

    Args:
        endpoint: base URL (``http://127.0.0.1:8000/v1``) or the full ``/completions`` URL.
        model: the served model's name.
        api_key, timeout, max_retries, backoff, cache: as :class:`~icmlgym.zoo.http.HTTPClient`
            (default cache: the shared cache's ``http-lm`` namespace; None disables it).
        tokenizer_name: what the server's tokenizer is called (for :func:`check_same_tokenizer`).
    """

    _UNSET: Any = object()

    def __init__(
        self,
        endpoint: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        cache: Any = _UNSET,
        tokenizer_name: str = "",
    ) -> None:
        from icmlgym.cache import Cache
        from icmlgym.zoo.http import HTTPClient, completions_url

        if not model:
            raise ValueError("HTTPLM needs the served model's name")
        if cache is HTTPLM._UNSET:
            cache = Cache("http-lm")
        self.client = HTTPClient(completions_url(endpoint), api_key, timeout, max_retries, backoff, cache)
        self.model = model
        self.name = model
        self.tokenizer_name = tokenizer_name or f"http:{model}"

    def _complete(self, body: dict[str, Any], repeat: bool) -> dict[str, Any]:
        from icmlgym.zoo.http import MalformedResponseError

        key = self.client.key(body, repeat=repeat)
        hit = self.client.cached(key)
        if hit is not None:
            return hit
        data = self.client.post_json(body)
        try:
            choice = data["choices"][0]
            _ = choice["text"]
        except (KeyError, IndexError, TypeError) as err:
            raise MalformedResponseError(f"response has no choices[0].text: {str(data)[:200]}") from err
        self.client.store(key, data)
        return data

    def generate(self, prompt: str, max_new_tokens: int = 64, temperature: float = 0.0, seed: int | None = None) -> str:
        body: dict[str, Any] = {"model": self.model, "prompt": prompt, "max_tokens": int(max_new_tokens), "temperature": float(temperature)}
        if seed is not None:
            body["seed"] = int(seed)
        return self._complete(body, repeat=temperature > 0 and seed is None)["choices"][0]["text"]

    def logprobs(self, prompt: str, continuation: str) -> np.ndarray:
        from icmlgym.zoo.http import MalformedResponseError

        body = {"model": self.model, "prompt": prompt + continuation, "max_tokens": 0, "echo": True, "logprobs": 1, "temperature": 0.0}
        data = self._complete(body, repeat=False)
        try:
            lp = data["choices"][0]["logprobs"]
            offsets, values = lp["text_offset"], lp["token_logprobs"]
        except (KeyError, IndexError, TypeError) as err:
            raise MalformedResponseError(f"response has no echoed logprobs: {str(data)[:200]}") from err
        return np.array([v for o, v in zip(offsets, values) if o >= len(prompt) and v is not None], dtype=np.float64)


__all__ = ["HFLocalLM", "HTTPLM", "LanguageModel", "ZooLM", "check_model_folder", "check_same_tokenizer"]
