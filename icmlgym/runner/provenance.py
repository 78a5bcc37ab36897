"""Provenance for run records: hardware, device, package versions, git commit."""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from icmlgym.nn.runtime import cpu_model


@functools.lru_cache(maxsize=1)
def nvidia_gpus() -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def gpu_name() -> str | None:
    """The first CUDA GPU torch sees (if torch is loaded), else what nvidia-smi lists, else None."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                return torch.cuda.get_device_name(0)
        except Exception:  # a broken CUDA setup must not fail a run
            pass
    gpus = nvidia_gpus()
    return gpus[0].split(",")[0].strip() if gpus else None


@functools.lru_cache(maxsize=1)
def hardware() -> dict[str, Any]:
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count() or 0,
        "gpu": gpu_name(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def device_info(requested: str = "cpu") -> dict[str, Any]:
    """The device an agent actually used: torch's view if torch is loaded, else the CPU."""
    torch = sys.modules.get("torch")
    info: dict[str, Any] = {"requested": requested, "type": "cpu", "name": cpu_model()}
    if torch is not None:
        try:
            # "auto" means CUDA when torch sees it (as in stable-baselines3). A CPU run's record
            # does not name torch: whether this process happened to import it earlier is not a
            # property of the run (torch's version is in the record's package versions anyway).
            if (requested.startswith("cuda") or requested == "auto") and torch.cuda.is_available():
                idx = torch.cuda.current_device()
                info["torch"] = getattr(torch, "__version__", "")
                info.update(type="cuda", name=torch.cuda.get_device_name(idx), cuda=torch.version.cuda)
                gpus = nvidia_gpus()
                if gpus and "," in gpus[0]:
                    info["driver"] = gpus[0].split(",")[1].strip()
        except Exception:
            pass
    return info


@functools.lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    from icmlgym.registry import provenance_packages

    out = {}
    for name in provenance_packages():  # the core's and every family's declared distributions
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    out["python"] = platform.python_version()
    return out


def icmlgym_version() -> str:
    """The installed icmlgym's version ("0.0.0" when running from a source tree that is not installed)."""
    try:
        return importlib.metadata.version("icmlgym")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or shutil.which("git") is None:
        return ""
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""
