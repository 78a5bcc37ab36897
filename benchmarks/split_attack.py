"""Time of one inversion attack of SplitInference-v0 against a plain torch loop training the same decoder.

    python benchmarks/split_attack.py [--steps 150] [--repeats 5] [--block 0]
    python benchmarks/split_attack.py --attackers inverse-net decoder-large rmle glass [--data products --arch cnn]

Three timings, one thread, the smoke classifier (zoo MLP 4 x 64 on digits, model_seed 0):
``plain`` is a hand-written Adam loop over the same decoder, batches and seed;
``train_loop`` is :func:`icmlgym.envs.split.attack.inverse_network` (the substrate's budgeted loop,
which counts examples and FLOPs); ``attack`` is the env's whole probe
(:meth:`SplitInferenceEnv.run_attack`: representations, decoder training, reconstruction error).
The plain loop and the library loop must end with bit-identical weights (same computation), which is checked.

With ``--attackers``: the wall time of one whole attack by each attacker at ``--block`` (one run
each, in a fresh process state: GLASS's time includes training its GAN), its counted gradient
steps and its normalised error, on ``--data`` / ``--arch``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def plain_loop(z: torch.Tensor, x: torch.Tensor, steps: int, seed: int, batch_size: int = 64, lr: float = 2e-3):
    from icmlgym.envs.split.attack import _decoder

    zf, xf = z.reshape(len(z), -1), x.reshape(len(x), -1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        dec = _decoder(zf.shape[1], xf.shape[1], 128, 2)
    gen = torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(dec.parameters(), lr)
    loss = torch.tensor(0.0)
    for _ in range(steps):
        idx = torch.randint(0, len(zf), (batch_size,), generator=gen)
        opt.zero_grad(set_to_none=True)
        loss = ((dec(zf[idx]) - xf[idx]) ** 2).mean()
        loss.backward()
        opt.step()
    return dec, float(loss.detach())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--block", type=int, default=0)
    ap.add_argument("--attackers", nargs="+", default=None, help="time each attacker's whole attack instead")
    ap.add_argument("--data", default="digits")
    ap.add_argument("--arch", default="mlp")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.attackers:
        return attackers(args)
    import icmlgym
    from icmlgym.envs.split.attack import inverse_network, represent
    from icmlgym.nn.counters import CostMeter

    env = icmlgym.make("icmlgym/SplitInference-v0", model_seed=0, attack_steps=args.steps).unwrapped
    env.reset(seed=0)
    m = env.model
    with torch.no_grad():
        z = represent(m.net, m.x["val"], args.block, 0.0, 1.0, None)
    times: dict[str, list[float]] = {"plain": [], "train_loop": [], "attack": []}
    for r in range(args.repeats):
        t = time.perf_counter()
        plain_dec, _ = plain_loop(z, m.x["val"], args.steps, seed=r)
        times["plain"].append(time.perf_counter() - t)
        meter = CostMeter()
        t = time.perf_counter()
        dec, _ = inverse_network(z, m.x["val"], args.steps, seed=r, meter=meter)
        times["train_loop"].append(time.perf_counter() - t)
        same = all(torch.equal(a, b) for a, b in zip(plain_dec.parameters(), dec.parameters()))
        if not same:
            raise SystemExit(f"repeat {r}: the plain loop and train_loop trained different decoders")
        t = time.perf_counter()
        env.run_attack(args.block, 0.0, seed=r)
        times["attack"].append(time.perf_counter() - t)
    print(f"block {args.block}, {args.steps} decoder steps, batch 64, {len(z)} auxiliary examples, {args.repeats} repeats (median)")
    for k, v in times.items():
        med = statistics.median(v)
        print(f"  {k:<11} {med * 1e3:8.1f} ms   {args.steps / med:8.0f} steps/s   ({med / statistics.median(times['plain']):.2f}x plain)")
    print(f"  counted: {meter['forward_flops'] / 1e6:.1f} MFLOP forward, {meter['backward_flops'] / 1e6:.1f} MFLOP backward, {meter['train_examples']:.0f} examples")
    print("  the plain loop and train_loop ended with bit-identical decoder weights in every repeat")


def attackers(args) -> None:
    import icmlgym

    print(f"{args.data} / {args.arch}, block {args.block}, attack_steps {args.steps}, one thread, one run each")
    for name in args.attackers:
        env = icmlgym.make("icmlgym/SplitInference-v0", data=args.data, arch=args.arch, model_seed=0,
                           attack_steps=args.steps, attacker=name).unwrapped
        env.reset(seed=0)
        t = time.perf_counter()
        res = env.run_attack(args.block, 0.0, seed=0)
        dt = time.perf_counter() - t
        print(f"  {name:<14} {dt:8.2f} s   {res.gradient_steps:6d} gradient steps   normalised error {res.normalised_error:.3f}")


if __name__ == "__main__":
    main()
