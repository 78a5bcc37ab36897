"""Arena throughput: choices per second with the synthetic chooser, and edit + feature time per image.

Run: ``/work/venv/bin/python benchmarks/arena_throughput.py [--size 224] [--n 200]``

Measures, at ``--size`` pixels (224 by default):

- edit time per image: :func:`apply_edits` with all seven edits on, against a reference
  chain of PIL operations doing comparable work (ImageEnhance brightness / contrast /
  colour, a resize for the zoom, a Gaussian blur for the shadow), in the same run;
- feature time per image: :func:`extract_features` (on a 64 px analysis copy) against the
  same features computed at full resolution with scikit-image (rgb2gray, sobel, laplace);
- choices per second of the synthetic chooser on pairs: with fresh images every query
  (features computed each time, as for new edits) and with repeated images (feature cache);
- ChoiceArena-v0 env steps per second at the smoke tier with random actions.

Prints one Markdown table; the figures go to docs/performance.md (arena section).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter


def _cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _time(fn, n: int) -> float:
    fn()  # warm-up
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    from skimage import color, filters

    from icmlgym.envs.arena.choice_arena import ChoiceArenaEnv
    from icmlgym.envs.arena.choosers import SyntheticChooser
    from icmlgym.envs.arena.editors import EDITS, apply_edits
    from icmlgym.envs.arena.features import extract_features, reference_stats
    from icmlgym.envs.arena.images import ProductCatalog

    S, n = args.size, args.n
    cat = ProductCatalog()
    reference_stats()
    imgs = [cat.render(i, S) for i in range(64)]
    rng = np.random.default_rng(0)
    thetas = rng.uniform(-1, 1, (n, len(EDITS))).astype(np.float32)
    k = iter(range(10**9))

    def ours_edit():
        i = next(k)
        return apply_edits(imgs[i % 64], thetas[i % n])

    def pil_edit():
        i = next(k)
        im = Image.fromarray(imgs[i % 64].composite())
        im = ImageEnhance.Brightness(im).enhance(1.3)
        im = ImageEnhance.Contrast(im).enhance(1.2)
        im = ImageEnhance.Color(im).enhance(1.4)
        im = im.resize((int(S * 1.2), int(S * 1.2)), Image.BILINEAR).crop((S // 10, S // 10, S // 10 + S, S // 10 + S))
        shadow = im.convert("L").filter(ImageFilter.GaussianBlur(S * 0.04))
        return np.asarray(Image.composite(im, Image.new("RGB", im.size), shadow))

    edited = [apply_edits(imgs[i % 64], thetas[i]) for i in range(n)]

    def ours_feat():
        return extract_features(edited[next(k) % n])

    def skimage_feat():
        x = edited[next(k) % n]
        g = color.rgb2gray(x)
        return np.array([g.mean(), g.std(), (filters.sobel(g) > 0.1).mean(), np.abs(filters.laplace(g)).mean()])

    t_edit = _time(ours_edit, n)
    t_pil = _time(pil_edit, n)
    t_feat = _time(ours_feat, n)
    t_skf = _time(skimage_feat, n)

    ch = SyntheticChooser(seed=0)
    pairs = [(edited[i], edited[(i + 1) % n]) for i in range(n)]
    ch._zcache.clear()
    t0 = time.perf_counter()
    for a, b in pairs:
        ch.choose([a, b])
    fresh = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    reps = 5 * n
    for q in range(reps):
        a, b = pairs[q % n]
        ch.choose([a, b])
    cached = reps / (time.perf_counter() - t0)

    env = ChoiceArenaEnv(image_size=64, edit_budget=20, queries_per_step=24)
    env.action_space.seed(0)
    env.reset(seed=0)
    steps = 0
    t0 = time.perf_counter()
    while steps < 200:
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        steps += 1
        if term or trunc:
            env.reset()
    env_sps = steps / (time.perf_counter() - t0)

    print(f"machine: {os.cpu_count()} cores, {_cpu()}; load average {os.getloadavg()[0]:.1f}; image size {S}x{S}; n={n}")
    print()
    print("| measure | ours | reference (same run) | ratio ref/ours |")
    print("|---|---|---|---|")
    print(f"| edit time per image (7 edits) | {t_edit * 1e3:.2f} ms | PIL enhance chain {t_pil * 1e3:.2f} ms | {t_pil / t_edit:.2f} |")
    print(f"| feature time per image (9 features) | {t_feat * 1e3:.2f} ms | scikit-image at full size (4 features) {t_skf * 1e3:.2f} ms | {t_skf / t_feat:.2f} |")
    print(f"| edit + features per image | {(t_edit + t_feat) * 1e3:.2f} ms | | |")
    print(f"| synthetic choices/s, fresh {S}px pairs | {fresh:,.0f} | | |")
    print(f"| synthetic choices/s, repeated {S}px pairs (feature cache) | {cached:,.0f} | | |")
    print(f"| ChoiceArena-v0 steps/s (smoke tier, 64 px, 24 queries/step) | {env_sps:,.1f} | | |")


if __name__ == "__main__":
    main()
