"""IBM's analog hardware kit (aihwkit, extra ``[cim]``) as an optional backend of CIMRobustTraining-v0.

Two uses, both through aihwkit's own code (pure-torch path; its C++ tile does not build
against our torch, docs/hardware.md has the measurements):

- :func:`hwa_noise`: aihwkit's hardware-aware-training weight modifier, additive Gaussian
  noise ``std_dev * max|W|`` per layer drawn afresh for every training forward
  (``WeightModifierType.ADD_NORMAL`` with ``rel_to_actual_wmax``, as aihwkit documents it;
  ``TorchSimulatorTile.modify_weight``). The env's ``train_noise_type="aihwkit"`` draws its
  training realisations with it.
- :func:`pcm_drift_accuracy`: deployment on aihwkit's statistical PCM model
  (``PCMLikeNoiseModel``: programming noise, power-law drift, 1/f read noise) with
  ``GlobalDriftCompensation``, through ``AnalogLinear`` layers on ``TorchInferenceRPUConfig``
  with perfect peripherals (``forward.is_perfect``: no DAC/ADC quantisation or output noise,
  so that it differs from our own model in the weight model only). The env's
  ``backend="aihwkit"`` uses it for the drift conditions.

aihwkit draws from torch's global generator: every call here runs inside
``torch.random.fork_rng`` seeded from the caller's seed, so results are reproducible and the
caller's random state is untouched.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from icmlgym.catalog import MissingExtraError, imports_available

INSTALL = "pip install --no-deps aihwkit==1.1.0 (extra [cim]; its metadata pulls torchvision, so install it without dependencies)"
G_MAX_US = 25.0  # the PCM model's maximal conductance (uS), as in our own model


def available() -> bool:
    """Whether aihwkit can be imported (without importing it)."""
    return imports_available(("aihwkit",))


class AihwkitMissingError(MissingExtraError):
    """The project's missing-extra error for ``[cim]``, naming the ``--no-deps`` install that works."""

    def __init__(self) -> None:
        super().__init__("cim", "the aihwkit backend", "aihwkit")
        self.msg = f"the aihwkit backend needs aihwkit: {INSTALL}"
        self.args = (self.msg,)


def require() -> None:
    """Raise :class:`AihwkitMissingError` (a :class:`~icmlgym.catalog.MissingExtraError`) when aihwkit is missing."""
    if not available():
        raise AihwkitMissingError()


def hwa_noise(weights: Sequence[torch.Tensor], std_dev: float, seed: int) -> list[torch.Tensor]:
    """One draw of aihwkit's ADD_NORMAL weight modifier per layer: the noise ``W_mod - W`` (no gradient)."""
    from aihwkit.simulator.parameters.enums import WeightModifierType
    from aihwkit.simulator.parameters.inference import WeightModifierParameter
    from aihwkit.simulator.tiles.torch_tile import TorchSimulatorTile

    modifier = WeightModifierParameter(type=WeightModifierType.ADD_NORMAL, std_dev=float(std_dev), rel_to_actual_wmax=True)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(int(seed))
        return [TorchSimulatorTile.modify_weight(w.detach(), modifier, 1) - w.detach() for w in weights]


def _analog_mlp(weights: Sequence[torch.Tensor], biases: Sequence[torch.Tensor]) -> torch.nn.Module:
    from aihwkit.inference import GlobalDriftCompensation, PCMLikeNoiseModel
    from aihwkit.nn import AnalogLinear, AnalogSequential
    from aihwkit.simulator.configs import TorchInferenceRPUConfig

    layers: list[torch.nn.Module] = []
    for i, (w, b) in enumerate(zip(weights, biases)):
        cfg = TorchInferenceRPUConfig()
        cfg.forward.is_perfect = True
        cfg.noise_model = PCMLikeNoiseModel(g_max=G_MAX_US)
        cfg.drift_compensation = GlobalDriftCompensation()
        lin = AnalogLinear(w.shape[1], w.shape[0], bias=True, rpu_config=cfg)
        lin.set_weights(w.detach().clone(), b.detach().clone())
        layers.append(lin)
        if i < len(weights) - 1:
            layers.append(torch.nn.ReLU())
    return AnalogSequential(*layers).eval()


def pcm_drift_accuracy(weights: Sequence[torch.Tensor], biases: Sequence[torch.Tensor], x: torch.Tensor, y: torch.Tensor,
                       seconds: Sequence[float], realisations: int, seed: int) -> list[list[float]]:
    """Accuracy ``[time][realisation]`` of the MLP deployed on aihwkit's PCM model: each realisation
    programs the weights once (programming noise) and reads them at every time of ``seconds``
    (drift and read noise from that programming, global drift compensation)."""
    model = _analog_mlp(weights, biases)
    out = [[0.0] * realisations for _ in seconds]
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(int(seed))
        for r in range(realisations):
            model.program_analog_weights()
            for i, t in enumerate(seconds):
                model.drift_analog_weights(float(t))
                pred = model(x.reshape(len(x), -1)).argmax(1)
                out[i][r] = float((pred == y).float().mean())
    return out


__all__ = ["INSTALL", "AihwkitMissingError", "available", "hwa_noise", "pcm_drift_accuracy", "require"]
