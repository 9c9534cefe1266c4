"""YAML loaders from PyPI against PyYAML on the same rendered manifests; prints one JSON object.

Inputs: the outputs of `render.py`'s small and large templates (rendered once). For every loader that is
importable: documents read per second of each input, and how it reads the scalars where YAML 1.1 (PyYAML,
kubectl) and YAML 1.2 differ, and a duplicate key. kplan's own reader (`engine.render.documents.parse_objects`:
yaml-rs where it provably agrees with PyYAML, else PyYAML) and its PyYAML-only path are measured too. yaml-rs is
a dependency of kplan; the others are measured when installed (`pip install rapidyaml ryaml pyfastyaml` in a
scratch venv).
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from collections.abc import Callable
from typing import Any

import yaml
from _common import add_backend_flag, machine
from render import SETTINGS, synthetic_package

from engine import params, render
from engine.render.context import template_variables
from engine.render.documents import parse_objects, pyyaml_objects
from engine.render.limits import DEFAULT_LIMITS, Budget
from engine.render.rendering import _render_text
from engine.render.sandbox import environment

BUDGET = 0.5  # seconds each rate is measured for
PROBES = {"yes": "a: yes", "on": "a: on", "0777": "a: 0777", "0o17": "a: 0o17", "1e3": "a: 1e3",
          "1:20": "a: 1:20", "2024-01-01": "a: 2024-01-01", "duplicate key": "a: 1\na: 2"}
Loader = Callable[[str], Any]


def rate(load: Loader, text: str) -> float:
    load(text)
    start, done = time.perf_counter(), 0
    while time.perf_counter() - start < BUDGET:
        load(text)
        done += 1
    return round(done / (time.perf_counter() - start), 1)


def loaders() -> dict[str, Loader]:
    found: dict[str, Loader] = {
        "kplan parse_objects": lambda t: parse_objects(t, "t.yaml", Budget(DEFAULT_LIMITS)),
        "kplan PyYAML path": lambda t: pyyaml_objects(t, "t.yaml", Budget(DEFAULT_LIMITS)),
        "PyYAML CSafeLoader": lambda t: list(yaml.load_all(t, Loader=yaml.CSafeLoader)),
        "PyYAML SafeLoader": lambda t: list(yaml.load_all(t, Loader=yaml.SafeLoader)),
    }
    optional: dict[str, Callable[[Any], Loader]] = {
        "yaml_rs": lambda m: lambda t: m.loads(t, parse_datetime=False),
        "ryaml": lambda m: m.loads_all,
        "pyfastyaml": lambda m: m.loads,
        "ryml": lambda m: lambda t: m.parse_in_arena(t.encode()),  # a tree: building the objects is left to Python
    }
    for module, make in optional.items():
        try:
            found[f"{module} (rapidyaml, parse only)" if module == "ryml" else module] = \
                make(importlib.import_module(module))
        except ImportError:
            continue
    return found


def reading(load: Loader, text: str) -> str:
    try:
        return repr(load(text))
    except Exception as exc:
        return f"error: {type(exc).__name__}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_backend_flag(parser)  # no cluster is used; accepted so that every benchmark takes the same flags
    parser.parse_args()
    pkg = synthetic_package()
    ctx = render.RenderContext(instance="bench", namespace="default", params=params.resolve(
        pkg, {"settings": {f"key-{i}": f"value {i}" for i in range(SETTINGS)}}))
    texts = {f: _render_text(environment(templates=pkg.templates), f, template_variables(ctx, pkg))
             for f in ("small.yaml", "large.yaml")}
    found = loaders()
    figures: dict[str, Any] = {"bench": "yaml_loaders", **machine(),
                               "input_chars": {f: len(t) for f, t in texts.items()}}
    figures["documents_per_second"] = {f: {name: rate(load, text) for name, load in found.items()}
                                       for f, text in texts.items()}
    figures["readings"] = {case: {name: reading(load, text) for name, load in found.items()
                                  if not name.startswith("kplan") and "parse only" not in name}
                           for case, text in PROBES.items()}
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
