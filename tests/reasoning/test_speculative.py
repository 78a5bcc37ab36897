"""Speculative decoding is lossless: greedy verification reproduces the target's greedy text, and
sampled verification reproduces the target's own distribution (checked exactly on a tiny pair)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icmlgym.envs.reasoning.speculative import SpeculativeDecoder  # noqa: E402
from icmlgym.zoo.transformer import GPT, GPTConfig  # noqa: E402


@pytest.fixture(autouse=True)
def one_thread():
    from icmlgym.nn.runtime import fixed_threads

    with fixed_threads(1):
        yield


def _pair(vocab: int = 6, block: int = 12, seed: int = 0, gain: float = 8.0):
    """A random target and draft; the final LayerNorm's gain sharpens their (otherwise near-uniform) distributions."""
    torch.manual_seed(seed)
    target = GPT(GPTConfig(vocab_size=vocab, block_size=block, n_layer=2, n_head=2, n_embd=16)).eval()
    draft = GPT(GPTConfig(vocab_size=vocab, block_size=block, n_layer=1, n_head=1, n_embd=8)).eval()
    with torch.no_grad():
        target.ln_f.weight.mul_(gain)
        draft.ln_f.weight.mul_(gain)
    return target, draft


@pytest.mark.parametrize("k", [1, 2, 4])
def test_greedy_speculative_decoding_equals_the_targets_greedy_decoding(k):
    target, draft = _pair(vocab=9, block=24)
    for seed in range(5):
        prompt = [1] + list(np.random.default_rng(seed).integers(3, 9, size=3))
        dec = SpeculativeDecoder(target, draft, prompt, k, 0.0, np.random.default_rng(0), newline=99, eos=2)
        got = dec.decode_line(stop_at_newline=False)
        want = target.generate(prompt, 24 - len(prompt), 0.0, stop=2)
        assert got == want
        assert dec.counters.proposed >= dec.counters.accepted


def test_sampled_speculative_decoding_has_the_targets_distribution():
    """The first two tokens' joint distribution: speculative sampling against the target's exact
    probabilities (chi-square), where the draft's own distribution is clearly different."""
    from scipy.stats import chisquare

    vocab, n = 4, 2000
    target, draft = _pair(vocab=vocab, block=8, seed=1, gain=4.0)

    def joint(model):
        with torch.no_grad():
            out = np.zeros((vocab, vocab))
            for a in range(vocab):
                logp = torch.log_softmax(model(torch.tensor([[1, a]]))[0].double(), -1)
                out[a] = np.exp(logp[0, a].item() + logp[1].numpy())
        return out.ravel()

    exact, drafted = joint(target), joint(draft)
    assert 0.5 * np.abs(exact - drafted).sum() > 0.2  # the draft alone would be far off
    rng = np.random.default_rng(0)
    counts = np.zeros(vocab * vocab)
    for _ in range(n):
        dec = SpeculativeDecoder(target, draft, [1], 2, 1.0, rng, newline=99, eos=99)
        a, b = dec.decode_line(max_tokens=2, stop_at_newline=False)
        counts[a * vocab + b] += 1
    assert chisquare(counts, exact * n / exact.sum()).pvalue > 1e-3
    assert chisquare(counts, drafted * n / drafted.sum()).pvalue < 1e-6


def test_kv_caches_stay_consistent_with_a_full_recompute():
    target, draft = _pair(vocab=9, block=24)
    dec = SpeculativeDecoder(target, draft, [1, 4, 5], 3, 1.0, np.random.default_rng(1), newline=7, eos=2)
    for _ in range(3):
        dec.decode_line()
        if dec.ended:
            break
        dec.boundary_state(read_target=True)
        assert dec.target.cache.length == dec.length and not dec.target.pending
        with torch.no_grad():
            full = target(torch.tensor([dec.tokens]))[0, -1]
        assert torch.allclose(full, dec.target.logits, atol=1e-4)


def test_a_pair_with_different_vocabularies_is_refused():
    torch.manual_seed(0)
    target = GPT(GPTConfig(vocab_size=9, block_size=16, n_layer=1, n_head=1, n_embd=8))
    draft = GPT(GPTConfig(vocab_size=7, block_size=16, n_layer=1, n_head=1, n_embd=8))
    with pytest.raises(ValueError, match="vocabularies differ"):
        SpeculativeDecoder(target, draft, [1], 2, 1.0, np.random.default_rng(0), newline=3, eos=2)
