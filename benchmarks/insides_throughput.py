"""The insides family's two hot paths against their plain-torch limits (docs/performance.md).

1. Sentence embeddings: :class:`icmlgym.corpora.embeddings.SentenceEncoder` with its cache
   cold (every text runs through all-MiniLM-L6-v2, then is written to the cache) and warm
   (every text read back from the cache), against the limit: the same model's forward pass
   and mean pooling in a bare torch loop over the same texts and batch size, nothing cached.
   Also the envs' reproducible mode (one text at a time on one thread), cold.
2. SAE training steps: :func:`icmlgym.zoo.sae.train_sae` (the budgeted loop: counters, FLOP
   count at the first shape, decoder renormalisation each step) against a plain torch loop
   doing the same steps (same TopK SAE, Adam, batch, renormalisation).

    python benchmarks/insides_throughput.py --texts 128 --steps 300 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import torch


def _texts(n: int) -> list[str]:
    from icmlgym.corpora.text import docstrings

    docs = sorted({d.text for d in docstrings(["network", "files", "concurrency", "data", "text", "numbers", "time", "language"])})
    if len(docs) < n:
        raise SystemExit(f"only {len(docs)} docstrings available, asked for {n}")
    return docs[:n]


def bench_embeddings(texts: list[str], batch_size: int, repeats: int) -> list[tuple[str, float]]:
    """Texts per second of each way, the best of ``repeats`` alternating rounds (each cold round on a fresh cache)."""
    from icmlgym.cache import Cache
    from icmlgym.corpora.embeddings import SentenceEncoder

    best: dict[str, float] = {}

    def record(name: str, seconds: float) -> None:
        best[name] = max(best.get(name, 0.0), len(texts) / seconds)

    loader = SentenceEncoder(cache=None)
    loader._load()  # model loading is not part of the throughput
    model, tok = loader._model, loader._tok
    with torch.no_grad():  # warm up the kernels once
        model(**tok(texts[:batch_size], padding=True, truncation=True, max_length=loader.max_length, return_tensors="pt"))
    threads = torch.get_num_threads()
    for r in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            with torch.no_grad():  # the limit: bare forward + mean pooling, same batches
                for i in range(0, len(texts), batch_size):
                    b = tok(texts[i : i + batch_size], padding=True, truncation=True, max_length=loader.max_length, return_tensors="pt")
                    h = model(**b).last_hidden_state
                    m = b["attention_mask"].unsqueeze(-1).float()
                    torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)
            record("plain torch forward + pooling, same batches (the limit)", time.perf_counter() - t0)
            enc = SentenceEncoder(batch_size=batch_size, cache=Cache("bench-emb", directory=os.path.join(tmp, "batched")))
            enc._model, enc._tok = model, tok
            t0 = time.perf_counter()
            enc.encode(texts)
            record(f"SentenceEncoder, cache cold (batch {batch_size}; encode + write)", time.perf_counter() - t0)
            t0 = time.perf_counter()
            enc.encode(texts)
            record("SentenceEncoder, cache warm (read back)", time.perf_counter() - t0)
            one = SentenceEncoder(batch_size=1, cache=Cache("bench-emb", directory=os.path.join(tmp, "one")))
            one._model, one._tok = model, tok
            torch.set_num_threads(1)
            t0 = time.perf_counter()
            one.encode(texts)
            record("SentenceEncoder, cache cold, one text at a time on one thread (the envs' reproducible mode)", time.perf_counter() - t0)
            torch.set_num_threads(threads)
    return list(best.items())


def bench_sae(steps: int, repeats: int, d_in: int = 384, d_latent: int = 128, k: int = 8, batch: int = 64) -> list[tuple[str, float]]:
    """Steps per second, the best of ``repeats`` alternating rounds of both loops."""
    from icmlgym.zoo.sae import TopKSAE, train_sae

    x = torch.randn(4096, d_in)
    train_sae(x, d_latent, k, steps=5, batch_size=batch, seed=0)  # warm-up

    def ours() -> float:
        t0 = time.perf_counter()
        train_sae(x, d_latent, k, steps=steps, batch_size=batch, seed=0)
        return steps / (time.perf_counter() - t0)

    def plain() -> float:
        gen = torch.Generator().manual_seed(0)
        torch.manual_seed(0)
        t0 = time.perf_counter()
        sae = TopKSAE(d_in, d_latent, k)
        with torch.no_grad():
            sae.dec.bias.copy_(x.mean(0))
        opt = torch.optim.Adam(sae.parameters(), 2e-3)
        for _ in range(steps):
            b = x[torch.randint(0, len(x), (batch,), generator=gen)]
            recon, _ = sae(b)
            loss = ((recon - b) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sae.normalise()
        return steps / (time.perf_counter() - t0)

    res = {"plain torch loop (the limit)": 0.0, "icmlgym.zoo.sae.train_sae (budgeted loop)": 0.0}
    for _ in range(repeats):
        res["plain torch loop (the limit)"] = max(res["plain torch loop (the limit)"], plain())
        res["icmlgym.zoo.sae.train_sae (budgeted loop)"] = max(res["icmlgym.zoo.sae.train_sae (budgeted loop)"], ours())
    return list(res.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="alternating rounds; the best of each is reported")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    texts = _texts(args.texts)
    print(f"load average {os.getloadavg()[0]:.1f}; torch threads {args.threads}; best of {args.repeats}; {len(texts)} docstrings "
          f"(mean {np.mean([len(t) for t in texts]):.0f} characters)")
    print("\n| sentence embeddings | texts/s |\n|---|---|")
    for name, v in bench_embeddings(texts, args.batch_size, args.repeats):
        print(f"| {name} | {v:,.0f} |", flush=True)
    print(f"\n| SAE training (384 -> 128, k = 8, batch 64, {args.steps} steps) | steps/s |\n|---|---|")
    for name, v in bench_sae(args.steps, args.repeats):
        print(f"| {name} | {v:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
