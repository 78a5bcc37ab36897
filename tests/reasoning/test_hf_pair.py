"""Both reasoning envs run a ``transformers`` model pair from local folders (small random pairs the test
saves itself: GPT-2 shapes over a character tokenizer); bad folders and mismatched tokenizers are clear errors."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers", reason="needs the [text] extra (transformers)")

from icmlgym.corpora.reasoning import CharTokenizer  # noqa: E402


def _save_tokenizer(path, chars):
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<bos>": 1, "<eos>": 2, "<unk>": 3}
    for c in chars:
        vocab.setdefault(c, len(vocab))
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))  # no merges: one token per character
    PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                            unk_token="<unk>").save_pretrained(path)
    return len(vocab)


def _save_model(path, vocab, layers, width, seed):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=vocab, n_positions=64, n_embd=width, n_layer=layers, n_head=2, bos_token_id=1, eos_token_id=2)
    GPT2LMHeadModel(cfg).save_pretrained(path)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("hfpair")
    chars = CharTokenizer().chars
    out = {}
    for name, layers, width, seed in (("target", 2, 32, 0), ("draft", 1, 16, 1)):
        vocab = _save_tokenizer(root / name, chars)
        _save_model(root / name, vocab, layers, width, seed)
        out[name] = root / name
    vocab = _save_tokenizer(root / "other", chars[::-1])  # the same characters, other ids
    _save_model(root / "other", vocab, 1, 16, 2)
    out["other"] = root / "other"
    (root / "empty").mkdir()
    out["empty"] = root / "empty"
    return out


def test_early_exit_runs_a_transformers_pair(folders):
    from icmlgym.envs.reasoning.early_exit import CONTINUE, EXIT, EarlyExitEnv
    from icmlgym.envs.reasoning.hf_pair import hf_pair

    pair = hf_pair(folders["target"], folders["draft"])
    env = EarlyExitEnv(model_pair=pair)
    assert env.observation_space["draft_hidden"].shape == (16,) and env.observation_space["target_hidden"].shape == (32,)
    for seed, policy in ((0, lambda i: CONTINUE), (1, lambda i: EXIT if i == 1 else CONTINUE)):
        obs, info = env.reset(seed=seed)
        done, i = False, 0
        while not done:
            obs, r, done, trunc, info = env.step(policy(i))
            assert env.observation_space.contains(obs)
            i += 1
        m = info["metrics"]
        assert m["target_forwards"] > 0 and m["draft_forwards"] > 0 and np.isfinite(m["score"])


def test_speculative_reasoning_runs_a_transformers_pair_and_greedy_rejection_is_the_targets_decoding(folders):
    from icmlgym.envs.reasoning.hf_pair import hf_pair
    from icmlgym.envs.reasoning.spec_reasoning import REJECT, SpeculativeReasoningEnv

    pair = hf_pair(folders["target"], folders["draft"])
    env = SpeculativeReasoningEnv(model_pair=pair, temperature=0.0, reference=False)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, r, done, trunc, info = env.step(REJECT)
    import torch

    prompt = pair.tokenizer.encode(env.problem.prompt, bos=True)
    with torch.no_grad():
        out = pair.target.model.generate(torch.tensor([prompt]), max_new_tokens=len(env._dec.tokens) - len(prompt), do_sample=False,
                                         pad_token_id=0, eos_token_id=2)
    assert out[0].tolist() == env._dec.tokens


def test_a_folder_without_weights_is_a_clear_error(folders):
    from icmlgym.envs.reasoning.hf_pair import hf_pair

    with pytest.raises(FileNotFoundError, match="no model weights"):
        hf_pair(folders["empty"], folders["draft"])


def test_mismatched_tokenizers_are_a_clear_error(folders):
    from icmlgym.envs.reasoning.hf_pair import hf_pair

    with pytest.raises(ValueError, match="different tokenizers"):
        hf_pair(folders["target"], folders["other"])
