"""Every extra a family (or the core) declares matches pyproject.toml, and every declared provenance
package is a dependency the project installs."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest
import tomllib

from icmlgym.catalog import CORE_PROVENANCE, EXTRAS
from icmlgym.registry import FAMILIES, provenance_packages

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
OPTIONAL = PYPROJECT["project"]["optional-dependencies"]
# extras of pyproject that no family or core code checks with require_extra (with the reason)
NOT_RUNTIME_EXTRAS = {"test": "the test suite's own tools", "all": "the union of the others"}
# declared extras that [all] leaves out (with the reason)
NOT_IN_ALL = {"minerl": "MineRL 0.4.4 cannot be built offline (its build downloads gradle and Minecraft)",
              "cim": "aihwkit 1.1.0's metadata requires torchvision (and cmake, pybind11, mypy): it installs only with --no-deps"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _requirements(extra: str) -> set[str]:
    return {_name(r) for r in OPTIONAL[extra]}


def _distributions(module: str) -> set[str]:
    return {d.lower().replace("_", "-") for d in importlib.metadata.packages_distributions().get(module, [])}


def test_declared_extras_and_pyproject_agree_both_ways():
    assert set(EXTRAS) == set(OPTIONAL) - set(NOT_RUNTIME_EXTRAS), "pyproject's extras and the declared ones differ"


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_every_import_of_an_extra_comes_from_that_extra(extra):
    reqs = _requirements(extra)
    for module in EXTRAS[extra]:
        dists = _distributions(module)
        if not dists:
            pytest.skip(f"{module} is not installed here, so its distribution is unknown")
        assert dists & reqs, f"extra [{extra}] checks `import {module}` (from {sorted(dists)}) but pyproject's [{extra}] lists {sorted(reqs)}"


def test_all_holds_every_extra_but_the_unbuildable():
    (spec,) = OPTIONAL["all"]
    in_all = set(re.search(r"\[(.*)\]", spec).group(1).split(","))
    assert in_all == set(EXTRAS) - set(NOT_IN_ALL)


def test_provenance_packages_are_dependencies():
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]} | {"icmlgym"}
    for fam in FAMILIES.values():
        allowed = core.union(*(_requirements(e) for e in fam.extras)) | _requirements("rl")
        for dist in fam.provenance:
            assert dist in allowed, f"family {fam.name} records {dist}, which none of its extras {sorted(fam.extras)} installs"
    all_reqs = core.union(*(_requirements(e) for e in OPTIONAL if e not in NOT_RUNTIME_EXTRAS))
    assert set(CORE_PROVENANCE) <= all_reqs
    assert len(provenance_packages()) == len(set(provenance_packages()))
