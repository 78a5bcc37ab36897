"""LayerOOD-v0 over a user's local ``transformers`` model (``source="hf:<folder>"``): a tiny random BERT
the test saves itself (no download), one episode with a real detector, and the bad folders."""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym
from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("text"), reason="needs the [text] extra (transformers, torch)")

ID = "icmlgym/LayerOOD-v0"
LAYERS, HIDDEN = 2, 32


def _save_bert(path) -> None:
    import string

    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    chars = string.ascii_lowercase + string.digits + string.punctuation
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *("##" + c for c in chars)]
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True).save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128)
    BertModel(cfg).save_pretrained(path)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    path = tmp_path_factory.mktemp("hf") / "tiny-bert"
    _save_bert(path)
    return path


def test_local_model_states_replace_the_encoders_in_an_episode(bert):
    env = icmlgym.make(ID, source=f"hf:{bert}", device="cpu")
    obs, _ = env.reset(seed=0)
    batch = env.unwrapped.batch_size
    assert obs["inputs"].shape == (batch, LAYERS + 1, HIDDEN)
    assert env.observation_space["inputs"].shape == (batch, LAYERS + 1, HIDDEN)
    # same texts and splits as v0: the local model's states are row-for-row the shipped encoder's corpus
    from icmlgym.envs.insides.local_model import LocalEncoder
    from icmlgym.envs.insides.states import IN_TOPICS, OUT_TOPICS, corpus_states, corpus_texts

    x, ood = env.unwrapped.pool("test")
    _, v0_ood, _ = corpus_states(IN_TOPICS, OUT_TOPICS)["test"]
    assert np.array_equal(ood, v0_ood[env.unwrapped._kept(v0_ood)])
    first = corpus_texts(IN_TOPICS, OUT_TOPICS)["test"][env.unwrapped._kept(v0_ood)[0]]
    assert np.allclose(LocalEncoder(bert).encode([first], layers=True)[0], x[0], atol=1e-5)
    env.close()
    rec = icmlgym.run(ID, "ood-mahalanobis-last", seeds=1, env_kwargs={"source": f"hf:{bert}"})[0]
    assert rec.status == "ok", rec.error
    assert len(rec.metric("auroc")) >= 1 and all(0.0 <= v <= 1.0 for v in rec.metric("auroc"))


def test_pooling_is_attention_masked(bert):
    """A text's pooled states do not change when it is padded in a batch with a longer one."""
    from icmlgym.envs.insides.local_model import LocalEncoder

    alone = LocalEncoder(bert).encode(["a short text"], layers=True)
    batched = LocalEncoder(bert, batch_size=2).encode(["a short text", "a much longer text " * 4], layers=True)
    assert alone.shape == (1, LAYERS + 1, HIDDEN)
    assert np.allclose(alone[0], batched[0], atol=1e-5)


def test_bad_folders_are_refused(tmp_path, bert):
    with pytest.raises(FileNotFoundError, match="no model folder"):
        icmlgym.make(ID, source=f"hf:{tmp_path / 'missing'}")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="no model weights"):
        icmlgym.make(ID, source=f"hf:{empty}")
    with pytest.raises(ValueError, match="needs a folder"):
        icmlgym.make(ID, source="hf:")
    with pytest.raises(ValueError, match="source must be"):
        icmlgym.make(ID, source="bert")


def test_a_model_without_hidden_states_is_refused(bert, monkeypatch):
    from transformers import BertModel

    from icmlgym.envs.insides.local_model import LocalEncoder

    real = BertModel.forward

    def no_states(self, *a, **kw):
        out = real(self, *a, **kw)
        out.hidden_states = None
        return out

    monkeypatch.setattr(BertModel, "forward", no_states)
    with pytest.raises(ValueError, match="no hidden_states"):
        LocalEncoder(bert)
