"""Where each family declares its findings: ``icmlgym/findings/<family>.py`` holds a ``FINDINGS`` list."""

from __future__ import annotations

import importlib
import pkgutil

from icmlgym.findings.claims import Finding

_FRAMEWORK = {"claims", "evaluate", "registry", "stats", "table", "testing"}


def families() -> list[str]:
    """Families that declare findings (modules of this package other than the framework's)."""
    import icmlgym.findings as pkg

    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name not in _FRAMEWORK and not m.name.startswith("_"))


def family_findings(family: str) -> list[Finding]:
    """The findings one family declares; a clear error for an unknown family."""
    known = families()
    if family not in known:
        raise ValueError(f"no findings declared for family {family!r}; families with findings: {', '.join(known)}")
    mod = importlib.import_module(f"icmlgym.findings.{family}")
    out = list(mod.FINDINGS)
    for f in out:
        if f.family != family:
            raise ValueError(f"finding {f.id} is declared in icmlgym/findings/{family}.py but says family {f.family!r}")
    return out


def all_findings() -> list[Finding]:
    out: list[Finding] = []
    for fam in families():
        out.extend(family_findings(fam))
    ids = [f.id for f in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"finding ids must be unique, repeated: {dup}")
    return out


def get(finding_id: str) -> Finding:
    for f in all_findings():
        if f.id == finding_id:
            return f
    raise KeyError(f"no finding {finding_id!r}")
