"""Packages whose names are imported at their first use (engine.exports): each exported name is its module's object,
importing one module of such a package leaves the others unloaded, and a submodule named like its export leaves the
package's name to the export, whichever is imported first."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

DEFERRING = ("engine.planner", "engine.runner", "engine.kube")


@pytest.mark.parametrize("name", DEFERRING)
def test_every_exported_name_is_the_object_of_the_module_it_lives_in(name: str) -> None:
    package = importlib.import_module(name)
    homes = vars(package)["__homes__"]
    assert sorted(homes) == sorted(package.__all__)
    for exported, home in homes.items():
        assert getattr(package, exported) is getattr(importlib.import_module(f"{name}.{home}"), exported)
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018


def fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_importing_one_module_of_the_planner_loads_no_other() -> None:
    loaded = fresh("import sys\nfrom engine.planner import pipes, secrets\nfrom engine.runner import events\n"
                   "print(sorted(m for m in sys.modules if m.startswith(('engine.planner.', 'engine.runner.'))))")
    assert "engine.planner.decide" not in loaded and "engine.runner.runner" not in loaded
    assert "engine.planner.pipes" in loaded and "engine.runner.events" in loaded


@pytest.mark.parametrize(("submodule", "name"),
                         [("engine.planner.decide", "decide"), ("engine.kube.connect", "connect")])
def test_a_submodule_named_like_its_export_leaves_the_name_to_the_export(submodule: str, name: str) -> None:
    package = submodule.rpartition(".")[0]
    for first in (f"import {submodule}", f"from {package} import {name}"):
        code = f"{first}\nimport {submodule}\nfrom {package} import {name}\nprint(type({name}).__name__)"
        assert fresh(code) == "function"
