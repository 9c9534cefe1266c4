"""networkx as the console script imports it (engine.cli.leannetworkx): kplan's graph code runs without the deferred
subpackages ever loading and gives the answers of a plain import; anything else of networkx completes the package,
which then equals a plain import name for name, module for module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine import graph
from engine.package import loader
from engine.planner.indexing import dag_of

OPERATORS = Path(__file__).resolve().parents[2] / "operators"

# Run in a fresh interpreter: networkx is imported in this one already, whole.
LEAN = """
import json, sys
from engine.cli import leannetworkx
leannetworkx.install()
from pathlib import Path
from engine import graph
from engine.package import loader
from engine.planner.indexing import dag_of
answers = {}
for folder in sorted(Path(sys.argv[1]).glob("*/operator.yaml")):
    pkg = loader.load(str(folder.parent))
    for name, plan in sorted(pkg.plans.items()):
        g = graph.build(plan)
        dag = dag_of(plan)
        answers[f"{pkg.name}/{name}"] = [graph.layers(g), graph.critical_path(g), graph.to_text(g, "t"),
                                          graph.to_dot(g, "t"), graph.to_mermaid(g, "t"),
                                          {k: sorted(v) for k, v in dag.descendants.items()}]
loaded = sorted(m for m in sys.modules if m.startswith("networkx"))
import networkx as nx
bound = {name: id(value) for name, value in vars(nx).items()}
nx.pagerank  # a name kplan does not use: the whole package
# argmap_* are the wrappers networkx compiles at a decorated function's first call, numbered in call order
names = {m: sorted(n for n in vars(sys.modules[m]) if not n.startswith("argmap_"))
         for m in sys.modules if m.startswith("networkx")}
rebound = sorted(n for n, i in bound.items() if n != "__getattr__" and id(vars(nx)[n]) != i)
from networkx.algorithms import bipartite
print(json.dumps({"answers": answers, "loaded": loaded, "names": names, "rebound": rebound,
                  "bipartite": bipartite.__name__}))
"""

PLAIN = """
import json, sys
import networkx
print(json.dumps({m: sorted(vars(sys.modules[m])) for m in sys.modules if m.startswith("networkx")}))
"""


def run(code: str, *args: str) -> Any:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def answers_here() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for folder in sorted(OPERATORS.glob("*/operator.yaml")):
        pkg = loader.load(str(folder.parent))
        for name, plan in sorted(pkg.plans.items()):
            g = graph.build(plan)
            found[f"{pkg.name}/{name}"] = [graph.layers(g), list(graph.critical_path(g)), graph.to_text(g, "t"),
                                           graph.to_dot(g, "t"), graph.to_mermaid(g, "t"),
                                           {k: sorted(v) for k, v in dag_of(plan).descendants.items()}]
    return found


def test_graph_code_runs_on_the_lean_import_and_answers_as_the_plain_one() -> None:
    lean = run(LEAN, str(OPERATORS))
    assert lean["answers"] == json.loads(json.dumps(answers_here()))
    assert len(lean["answers"]) > 10
    assert "networkx.algorithms.dag" in lean["loaded"]
    for never in ("networkx.algorithms.centrality", "networkx.generators.classic", "networkx.readwrite.gml",
                  "networkx.linalg.graphmatrix", "networkx.drawing.layout", "networkx.algorithms.shortest_paths"):
        assert never not in lean["loaded"]


def test_any_other_name_completes_networkx_as_a_plain_import_has_it() -> None:
    lean = run(LEAN, str(OPERATORS))
    assert lean["names"] == run(PLAIN)
    assert lean["rebound"] == []  # what the lean import bound is what the whole import binds
    assert lean["bipartite"] == "networkx.algorithms.bipartite"
