"""One zoo-facing language-model interface, three plugs: a zoo GPT, a local transformers GPT-2, an HTTP endpoint.

The HTTP endpoint is a fake OpenAI-compatible /v1/completions server on 127.0.0.1 that serves the
zoo model itself, so the HTTP plug must reproduce the zoo plug's generations and log-probabilities.
No network is used: the transformers model is a randomly initialised GPT-2 this test saves itself.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import torch

from icmlgym.corpora.reasoning import CharTokenizer, generate
from icmlgym.zoo.builtin import solve_rate
from icmlgym.zoo.lm import HFLocalLM, HTTPLM, LanguageModel, ZooLM, check_same_tokenizer
from icmlgym.zoo.transformer import GPT, GPTConfig

pytest.importorskip("transformers", reason="the [text] extra provides transformers")

PROBLEMS = generate(4, seed=5, split="test", levels=(1,))


@pytest.fixture(scope="module")
def zoo_lm() -> ZooLM:
    torch.manual_seed(0)
    tok = CharTokenizer()
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=64, n_layer=2, n_head=2, n_embd=32)).eval()
    return ZooLM(model, tok, "tiny")


class FakeCompletions:
    """/v1/completions backed by a LanguageModel: text for generation, echoed log-probs for scoring."""

    def __init__(self, lm: ZooLM) -> None:
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "body": body})
                if body.get("echo"):
                    text = body["prompt"]
                    lp = lm.logprobs("", text)  # every character after the begin-of-text token
                    choice = {"text": text, "logprobs": {"text_offset": list(range(len(text))), "token_logprobs": [float(v) for v in lp],
                                                         "tokens": list(text)}}
                else:
                    choice = {"text": lm.generate(body["prompt"], body["max_tokens"], body.get("temperature", 0.0))}
                payload = json.dumps({"object": "text_completion", "choices": [choice]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    """A randomly initialised GPT-2 with a character tokenizer, saved with save_pretrained (no download)."""
    from tokenizers import Tokenizer, decoders
    from tokenizers.models import BPE
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = CharTokenizer()
    vocab = {s: i for i, s in enumerate(tok.itos)}
    fast = Tokenizer(BPE(vocab=vocab, merges=[], unk_token=None))
    fast.decoder = decoders.Fuse()  # characters join without spaces
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=fast, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_positions=96, n_embd=32, n_layer=2, n_head=2,
                                       bos_token_id=tok.bos_id, eos_token_id=tok.eos_id, pad_token_id=tok.pad_id))
    path = tmp_path_factory.mktemp("gpt2-tiny")
    model.save_pretrained(path)
    hf_tok.save_pretrained(path)
    return path


def drive(lm: LanguageModel) -> dict:
    """What a family does with any language model: solve problems, score a continuation, sample."""
    rate = solve_rate(lm, PROBLEMS, max_new_tokens=12)
    lp = lm.logprobs(PROBLEMS[0].prompt, "S:1")
    text = lm.generate(PROBLEMS[0].prompt, 8)
    assert 0.0 <= rate <= 1.0 and isinstance(text, str)
    assert lp.shape == (3,) and np.all(lp <= 0) and np.all(np.isfinite(lp))
    return {"rate": rate, "logprobs": lp, "text": text}


def test_zoo_plug(zoo_lm):
    drive(zoo_lm)
    h = zoo_lm.hidden_states(PROBLEMS[0].prompt)
    assert h.shape == (3, len(PROBLEMS[0].prompt) + 1, 32)  # embeddings + 2 layers, begin-of-text token included


def test_transformers_local_path_plug(gpt2_dir):
    lm = HFLocalLM(gpt2_dir)
    drive(lm)
    h = lm.hidden_states("Q:1+2=?\n")
    assert h.shape[0] == 3 and h.shape[2] == 32
    assert len(lm.generate("Q:1", 5)) <= 5  # one character per token
    # the same tokenizer twice: a valid target/draft pair
    check_same_tokenizer(lm, HFLocalLM(gpt2_dir))


def test_local_path_without_weights_is_a_clear_error(tmp_path, gpt2_dir):
    with pytest.raises(FileNotFoundError, match="no model folder"):
        HFLocalLM(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text((gpt2_dir / "config.json").read_text())
    with pytest.raises(FileNotFoundError, match="holds no model weights"):
        HFLocalLM(tmp_path / "empty")


def test_http_plug_reproduces_the_model_it_serves(zoo_lm, tmp_path):
    server = FakeCompletions(zoo_lm)
    try:
        lm = HTTPLM(server.url, model="tiny", cache=tmp_path / "cache", max_retries=0, timeout=30)
        via_http, direct = drive(lm), drive(zoo_lm)
        assert via_http["rate"] == direct["rate"] and via_http["text"] == direct["text"]
        np.testing.assert_allclose(via_http["logprobs"], direct["logprobs"], rtol=1e-5)
        assert server.requests[0]["path"] == "/v1/completions"
        sent = len(server.requests)
        drive(lm)  # answers come from the client's cache the second time
        assert len(server.requests) == sent
        with pytest.raises(NotImplementedError, match="hidden states"):
            lm.hidden_states("x")
        with pytest.raises(ValueError, match="different tokenizers"):
            check_same_tokenizer(lm, zoo_lm)
    finally:
        server.close()
