"""Model-inversion attacks on a split point and the Gaussian-noise defence.

The edge runs blocks ``0..b`` and sends ``z = f_b(x)`` (plus noise ``sigma * rms(z) * N(0, I)``
when defended, ``rms`` the root mean square of ``z`` over the defender's training split,
so one ``sigma`` means the same relative perturbation at every block). The attacker sees
``z`` and wants ``x``.

Attackers (He et al., 2019, "Model inversion attacks against collaborative inference"):

- ``inverse-net`` (black box, the default): the attacker queries the edge with its own
  auxiliary data (the corpus' validation split, disjoint from the classifier's training
  data and from the targets), and trains an MLP decoder ``z -> x`` with MSE
  (:func:`icmlgym.nn.train.train_loop`, so its gradient steps and FLOPs are counted);
- ``decoder-large``: the same with a wider, deeper decoder and three times the steps;
- ``rmle`` (white box): the attacker knows the edge's weights and, for each target,
  optimises an input ``x^`` (started at the auxiliary mean) so that ``f_b(x^)`` matches ``z``;
- ``glass`` (white box with a generative prior, after GLASS, Li et al. 2023, "GAN you see
  me?"): the attacker trains a GAN on its auxiliary data (an MLP generator and
  discriminator, non-saturating loss, ``10 x attack_steps`` steps; it depends on the auxiliary
  data only, so one GAN serves every split and classifier of a process), then searches the
  generator's latent space: for each target, ``GLASS_RESTARTS`` latents start from the prior
  and Adam minimises ``||f_b(G(w)) - z||^2 + 1e-3 ||w||^2`` for ``attack_steps`` steps; the
  restart with the smallest feature mismatch gives ``x^ = G(w)``. The reconstruction stays
  on the generator's image of the auxiliary distribution, which is what makes GLASS strong
  against deep splits where rMLE's pixel search wanders off the data.

The score is the *normalised* reconstruction error on the target split (the corpus' test
split): ``mean((x^ - x)^2) / mean((x - mean x)^2)``; 1 is what guessing the mean achieves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from icmlgym.nn.counters import CostMeter
from icmlgym.nn.runtime import fixed_threads

ATTACKERS: tuple[str, ...] = ("inverse-net", "decoder-large", "rmle", "glass")
GLASS_LATENT, GLASS_RESTARTS = 16, 2


@dataclass(frozen=True)
class AttackResult:
    """What one attack achieved: normalised and raw reconstruction MSE, and its training cost."""

    normalised_error: float
    mse: float
    gradient_steps: int


def represent(net, x: torch.Tensor, block: int, sigma: float, rms: float, gen: torch.Generator | None) -> torch.Tensor:
    """The (defended) representation sent after block ``block`` (0-based)."""
    z = net(x, upto=block + 1)
    if sigma > 0:
        z = z + sigma * rms * torch.randn(z.shape, generator=gen)
    return z


def defended_accuracy(net, x: torch.Tensor, y: np.ndarray, block: int, sigma: float, rms: float, seed: int) -> float:
    """Test accuracy when the representation after ``block`` carries the defence noise."""
    gen = torch.Generator().manual_seed(int(seed))
    with torch.no_grad():
        z = represent(net, x, block, sigma, rms, gen)
        pred = net(z, start=block + 1).argmax(-1).numpy()
    return float((pred == y).mean())


def _decoder(d_in: int, d_out: int, hidden: int, layers: int) -> nn.Module:
    mods: list[nn.Module] = []
    prev = d_in
    for _ in range(layers):
        mods += [nn.Linear(prev, hidden), nn.ReLU()]
        prev = hidden
    mods.append(nn.Linear(prev, d_out))
    return nn.Sequential(*mods)


def inverse_network(z_aux: torch.Tensor, x_aux: torch.Tensor, steps: int, seed: int, hidden: int = 128, layers: int = 2,
                    batch_size: int = 64, lr: float = 2e-3, meter: CostMeter | None = None) -> tuple[nn.Module, int]:
    """Train a decoder ``z -> x`` (flattened) on auxiliary pairs; returns it and its gradient steps."""
    from icmlgym.nn.train import Budget, train_loop

    zf, xf = z_aux.reshape(len(z_aux), -1), x_aux.reshape(len(x_aux), -1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        dec = _decoder(zf.shape[1], xf.shape[1], hidden, layers)
    gen = torch.Generator().manual_seed(int(seed) + 1)

    def batch(step: int):
        idx = torch.randint(0, len(zf), (batch_size,), generator=gen)
        return zf[idx], xf[idx]

    def loss_fn(m, b):
        return ((m(b[0]) - b[1]) ** 2).mean(), len(b[0]), 0

    res = train_loop(dec, batch, loss_fn, torch.optim.Adam(dec.parameters(), lr), Budget(int(steps)),
                     meter=meter if meter is not None else CostMeter(), grad_clip=None)
    return dec, res.steps


def rmle(net, block: int, z_target: torch.Tensor, x_init: torch.Tensor, steps: int, lr: float = 0.05) -> torch.Tensor:
    """White-box regularised MLE inversion: optimise inputs so the edge maps them onto ``z_target``."""
    xh = x_init.expand(len(z_target), *x_init.shape[1:]).clone().requires_grad_(True)
    opt = torch.optim.Adam([xh], lr)
    for _ in range(int(steps)):
        opt.zero_grad(set_to_none=True)
        loss = ((net(xh, upto=block + 1) - z_target) ** 2).sum(-1).mean()
        loss.backward()
        opt.step()
        with torch.no_grad():
            xh.clamp_(-4.0, 4.0)
    return xh.detach()


class _Generator(nn.Module):
    def __init__(self, latent: int, shape: tuple[int, ...], hidden: int = 256) -> None:
        super().__init__()
        self.shape = tuple(shape)
        d = int(np.prod(shape))
        self.net = nn.Sequential(nn.Linear(latent, hidden // 2), nn.ReLU(), nn.Linear(hidden // 2, hidden), nn.ReLU(), nn.Linear(hidden, d))

    def forward(self, w: torch.Tensor) -> torch.Tensor:
        return self.net(w).reshape(len(w), *self.shape)


_GANS: dict[tuple, nn.Module] = {}


def train_gan(x_aux: torch.Tensor, steps: int, seed: int = 0, latent: int = GLASS_LATENT, batch_size: int = 64,
              meter: CostMeter | None = None) -> nn.Module:
    """A GAN's generator ``w -> x`` trained on the auxiliary data (memoised per process by data, steps and seed).

    The generator ends in a linear layer (no squashing), so it serves images in [0, 1] and
    unbounded signals alike; the discriminator is an MLP with LeakyReLU. Non-saturating loss,
    Adam (1e-3, betas 0.5/0.999). Counts ``2 x steps`` gradient steps on ``meter``.
    """
    import hashlib

    key = (hashlib.sha1(x_aux.numpy().tobytes()).hexdigest(), tuple(x_aux.shape), int(steps), int(seed), int(latent))
    if key in _GANS:
        return _GANS[key]
    flat = x_aux.reshape(len(x_aux), -1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        gen_net = _Generator(latent, tuple(x_aux.shape[1:]))
        disc = nn.Sequential(nn.Linear(flat.shape[1], 256), nn.LeakyReLU(0.2), nn.Linear(256, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))
    g = torch.Generator().manual_seed(int(seed) + 1)
    opt_g = torch.optim.Adam(gen_net.parameters(), 1e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), 1e-3, betas=(0.5, 0.999))
    bce = nn.functional.binary_cross_entropy_with_logits
    ones, zeros = torch.ones(batch_size, 1), torch.zeros(batch_size, 1)
    with torch.enable_grad():
        for _ in range(int(steps)):
            real = flat[torch.randint(0, len(flat), (batch_size,), generator=g)]
            fake = gen_net(torch.randn(batch_size, latent, generator=g)).reshape(batch_size, -1)
            opt_d.zero_grad(set_to_none=True)
            (bce(disc(real), ones) + bce(disc(fake.detach()), zeros)).backward()
            opt_d.step()
            opt_g.zero_grad(set_to_none=True)
            bce(disc(fake), ones).backward()
            opt_g.step()
    if meter is not None:
        meter.add("gradient_steps", 2 * int(steps))
    gen_net.eval()
    for p in gen_net.parameters():
        p.requires_grad_(False)
    if len(_GANS) > 8:
        _GANS.clear()
    _GANS[key] = gen_net
    return gen_net


def glass(net, block: int, z_target: torch.Tensor, generator: nn.Module, steps: int, seed: int,
          restarts: int = GLASS_RESTARTS, lr: float = 0.1, prior: float = 1e-3) -> torch.Tensor:
    """GLASS-style latent search: the generator's output whose edge features best match ``z_target``."""
    n = len(z_target)
    latent = generator.net[0].in_features
    g = torch.Generator().manual_seed(int(seed))
    w = torch.randn(restarts * n, latent, generator=g).requires_grad_(True)
    tgt = z_target.repeat(restarts, *([1] * (z_target.dim() - 1)))
    opt = torch.optim.Adam([w], lr)
    for _ in range(int(steps)):
        opt.zero_grad(set_to_none=True)
        feat = net(generator(w), upto=block + 1)
        loss = ((feat - tgt) ** 2).reshape(len(w), -1).sum(-1) + prior * (w**2).sum(-1)
        loss.mean().backward()
        opt.step()
    with torch.no_grad():
        xs = generator(w)
        mismatch = ((net(xs, upto=block + 1) - tgt) ** 2).reshape(restarts, n, -1).sum(-1)
        best = mismatch.argmin(0)
        return xs.reshape(restarts, n, *xs.shape[1:])[best, torch.arange(n)]


def attack(net, x_aux: torch.Tensor, x_target: torch.Tensor, block: int, sigma: float, rms: float, attacker: str,
           steps: int, seed: int, meter: CostMeter | None = None) -> AttackResult:
    """Run ``attacker`` against the split after ``block`` with defence ``sigma``; see the module docstring."""
    if attacker not in ATTACKERS:
        raise ValueError(f"attacker must be one of {ATTACKERS}, got {attacker!r}")
    with fixed_threads():  # the attack's outcome is part of the env's behaviour: not the process's thread count
        return _attack(net, x_aux, x_target, block, sigma, rms, attacker, steps, seed, meter)


def _attack(net, x_aux: torch.Tensor, x_target: torch.Tensor, block: int, sigma: float, rms: float, attacker: str,
            steps: int, seed: int, meter: CostMeter | None) -> AttackResult:
    gen = torch.Generator().manual_seed(int(seed) + 2)
    with torch.no_grad():
        z_aux = represent(net, x_aux, block, sigma, rms, gen)
        z_tgt = represent(net, x_target, block, sigma, rms, gen)
    flat = x_target.reshape(len(x_target), -1)
    if attacker == "rmle":
        with torch.enable_grad():
            xh = rmle(net, block, z_tgt, x_aux.mean(0, keepdim=True), steps).reshape(len(flat), -1)
        used = int(steps)
        if meter is not None:
            meter.add("gradient_steps", used)
    elif attacker == "glass":
        generator = train_gan(x_aux, 10 * int(steps), meter=meter)
        with torch.enable_grad():
            xh = glass(net, block, z_tgt, generator, steps, seed).reshape(len(flat), -1)
        used = 20 * int(steps) + int(steps)
        if meter is not None:
            meter.add("gradient_steps", int(steps))
    else:
        hidden, layers, mult = (128, 2, 1) if attacker == "inverse-net" else (256, 3, 3)
        dec, used = inverse_network(z_aux, x_aux, steps * mult, seed, hidden, layers, meter=meter)
        with torch.no_grad():
            xh = dec(z_tgt.reshape(len(z_tgt), -1))
    mse = float(((xh - flat) ** 2).mean())
    var = float(((flat - flat.mean(0)) ** 2).mean())
    return AttackResult(mse / max(var, 1e-12), mse, used)


def cached_attack(env, block: int, sigma: float, seed: int) -> AttackResult:
    """``env.run_attack`` through the on-disk cache (namespace ``split``), keyed by everything the outcome depends on."""
    from icmlgym.cache import Cache, content_key, file_hash

    m = env.model
    key = content_key("split-attack", m.zoo_key, env.attacker, env.attack_steps, int(block), float(sigma), int(seed), file_hash(__file__))
    cache = Cache("split")
    hit = cache.read_json(key)
    if isinstance(hit, dict) and set(hit) == {"normalised_error", "mse", "gradient_steps"}:
        return AttackResult(float(hit["normalised_error"]), float(hit["mse"]), int(hit["gradient_steps"]))
    res = env.run_attack(block, sigma, seed)
    cache.write_json(key, {"normalised_error": res.normalised_error, "mse": res.mse, "gradient_steps": res.gradient_steps})
    return res


__all__ = ["ATTACKERS", "AttackResult", "attack", "cached_attack", "defended_accuracy", "glass", "inverse_network", "represent", "rmle", "train_gan"]
