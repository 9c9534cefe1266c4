"""A plan compiled to a DAG of its steps, and what can be read off it: layers, frontier, critical path, drawings.

Edges (DESIGN §4 "DAG"): in a serial plan every step of phase i precedes every step of
phase i+1; in a serial phase every step precedes the next one; `dependsOn` adds an edge
from each named step. Parallel plans and phases add nothing.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Collection, Iterator, Mapping
from typing import Any

import networkx as nx

from engine.errors import CycleError, PackageInvalid, Problem
from engine.model import Plan, Strategy

__all__ = ["build", "critical_path", "find_cycle", "frontier", "layers", "to_dot", "to_mermaid", "to_text"]

_FILE = "operator.yaml"


def build(plan: Plan) -> nx.DiGraph:
    """The DAG of the plan's steps: nodes are step names (attributes `step` and `phase`).

    Raises PackageInvalid for duplicate step names or unknown `dependsOn` names (all of them),
    and CycleError naming the cycle, starting from its smallest step name.
    """
    graph, problems = _compile(plan)
    if problems:
        raise PackageInvalid(problems)
    cycle = _cycle(graph)
    if cycle:
        raise CycleError(plan.name, cycle)
    return graph


def find_cycle(plan: Plan) -> list[str] | None:
    """A cycle of the plan's steps (from its smallest name), or None; unknown names are ignored."""
    graph, _problems = _compile(plan)
    return _cycle(graph)


def layers(graph: nx.DiGraph) -> list[list[str]]:
    """Topological generations: steps whose predecessors are all in earlier layers, each layer sorted."""
    return [sorted(generation) for generation in nx.topological_generations(graph)]


def frontier(graph: nx.DiGraph, completed: Collection[str], started: Collection[str] = (),
             depths: Mapping[str, int] | None = None) -> list[str]:
    """Steps neither completed nor started whose predecessors are all completed (ready to run),
    sorted by layer then name (`depths`: each step's layer, when the caller keeps them)."""
    done, busy = set(completed), set(started)
    depth = _depths(graph) if depths is None else depths
    ready = [
        step
        for step in graph.nodes
        if step not in done and step not in busy and all(pred in done for pred in graph.predecessors(step))
    ]
    return sorted(ready, key=lambda step: (depth[step], step))


def critical_path(graph: nx.DiGraph, weights: Mapping[str, float] | None = None) -> tuple[list[str], float]:
    """The heaviest path through the DAG and its weight; a step weighs `weights[step]`, or 1.

    Ties go to the smallest step names, so the answer is deterministic.
    """
    weight = {step: float((weights or {}).get(step, 1.0)) for step in graph.nodes}
    best: dict[str, tuple[float, str | None]] = {}
    for step in nx.lexicographical_topological_sort(graph):
        preds = sorted(graph.predecessors(step), key=lambda pred: (-best[pred][0], pred))
        start = best[preds[0]][0] if preds else 0.0
        best[step] = (start + weight[step], preds[0] if preds else None)
    if not best:
        return [], 0.0
    end = min(best, key=lambda step: (-best[step][0], step))
    path: list[str] = []
    node: str | None = end
    while node is not None:
        path.append(node)
        node = best[node][1]
    return path[::-1], best[end][0]


def to_text(graph: nx.DiGraph, title: str) -> str:
    """One line per step, layer by layer: `[layer] step  (phase)  after a, b`."""
    path, length = critical_path(graph)
    lines = [f"{title}: {graph.number_of_nodes()} steps, {len(layers(graph))} layers"]
    if path:
        lines[0] += f", critical path {' -> '.join(path)} ({length:g})"
    phases = {step: str(data.get("phase", "-")) for step, data in graph.nodes(data=True)}
    width = max((len(step) for step in graph.nodes), default=0)
    phase_width = max((len(phase) for phase in phases.values()), default=0)
    drawn = _drawn(graph)
    for index, layer in enumerate(layers(graph), start=1):
        for step in layer:
            after = sorted(drawn.predecessors(step))
            line = f"  [{index}] {step.ljust(width)}  phase {phases[step].ljust(phase_width)}"
            lines.append(f"{line}  after {', '.join(after)}" if after else line.rstrip())
    return "\n".join(lines) + "\n"


def to_dot(graph: nx.DiGraph, title: str) -> str:
    """Graphviz source: a cluster per phase, the edges not implied by others."""
    lines = [f"digraph {_quote(title)} {{", f"  label={_quote(title)};", "  labelloc=t;", "  rankdir=LR;"]
    lines.append("  node [shape=box, style=rounded];")
    for index, (phase, steps) in enumerate(_phases(graph)):
        if phase is None:
            lines.extend(f"  {_quote(step)};" for step in steps)
            continue
        lines.append(f"  subgraph {_quote(f'cluster_{index}')} {{")
        lines.append(f"    label={_quote(phase)};")
        lines.extend(f"    {_quote(step)};" for step in steps)
        lines.append("  }")
    lines.extend(f"  {_quote(src)} -> {_quote(dst)};" for src, dst in _edges(graph))
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_mermaid(graph: nx.DiGraph, title: str) -> str:
    """A Mermaid flowchart: a subgraph per phase, the edges not implied by others."""
    ids = {step: f"s{index}" for index, step in enumerate(graph.nodes)}
    lines = ["---", f"title: {_quote(title)}", "---", "flowchart LR"]
    for index, (phase, steps) in enumerate(_phases(graph)):
        indent = "  "
        if phase is not None:
            lines.append(f"  subgraph p{index}[{_mermaid_label(phase)}]")
            indent = "    "
        lines.extend(f"{indent}{ids[step]}[{_mermaid_label(step)}]" for step in steps)
        if phase is not None:
            lines.append("  end")
    lines.extend(f"  {ids[src]} --> {ids[dst]}" for src, dst in _edges(graph))
    return "\n".join(lines) + "\n"


def _compile(plan: Plan) -> tuple[nx.DiGraph, list[Problem]]:
    graph = nx.DiGraph()
    problems: list[Problem] = []
    for p, phase in enumerate(plan.phases):
        for s, step in enumerate(phase.steps):
            if step.name in graph:
                problems.append(_problem(plan, p, s, "name", f"step {step.name!r} appears more than once in the plan"))
            graph.add_node(step.name, step=step, phase=phase.name)
    graph.add_edges_from(_serial_edges(plan))
    for p, phase in enumerate(plan.phases):
        for s, step in enumerate(phase.steps):
            for dep in step.depends_on:
                if dep in graph:
                    graph.add_edge(dep, step.name)
                else:
                    message = f"step {step.name!r} depends on {dep!r}, which is not a step of plan {plan.name!r}"
                    problems.append(_problem(plan, p, s, "dependsOn", message))
    return graph, problems


def _serial_edges(plan: Plan) -> Iterator[tuple[str, str]]:
    for phase in plan.phases:
        if phase.strategy is Strategy.SERIAL:
            yield from ((a.name, b.name) for a, b in zip(phase.steps, phase.steps[1:], strict=False))
    if plan.strategy is Strategy.SERIAL:
        for before, after in zip(plan.phases, plan.phases[1:], strict=False):
            yield from ((a.name, b.name) for a in before.steps for b in after.steps)


def _problem(plan: Plan, phase: int, step: int, field: str, message: str) -> Problem:
    return Problem(_FILE, None, f"plans.{plan.name}.phases[{phase}].steps[{step}].{field}", message)


def _cycle(graph: nx.DiGraph) -> list[str] | None:
    """The shortest cycle through the smallest step name that lies on any cycle."""
    on_cycles = [
        node
        for component in nx.strongly_connected_components(graph)
        for node in component
        if len(component) > 1 or graph.has_edge(node, node)
    ]
    if not on_cycles:
        return None
    start = min(on_cycles)
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for succ in sorted(graph.successors(node)):
            if succ == start:
                return _path_to(parent, node, start)
            if succ not in parent:
                parent[succ] = node
                queue.append(succ)
    return None  # unreachable: start lies on a cycle


def _path_to(parent: Mapping[str, str], node: str, start: str) -> list[str]:
    path = [node]
    while path[-1] != start:
        path.append(parent[path[-1]])
    return path[::-1]


def depths(graph: nx.DiGraph) -> dict[str, int]:
    """Each step's layer (its index in `layers`)."""
    return _depths(graph)


def _depths(graph: nx.DiGraph) -> dict[str, int]:
    return {step: index for index, layer in enumerate(layers(graph)) for step in layer}


def _drawn(graph: nx.DiGraph) -> nx.DiGraph:
    """The transitive reduction: only the edges that no longer path implies."""
    reduced = nx.transitive_reduction(graph)
    reduced.add_nodes_from(graph.nodes(data=True))
    return reduced


def _edges(graph: nx.DiGraph) -> list[tuple[str, str]]:
    order = {step: index for index, step in enumerate(graph.nodes)}
    return sorted(_drawn(graph).edges, key=lambda edge: (order[edge[0]], order[edge[1]]))


def _phases(graph: nx.DiGraph) -> list[tuple[str | None, list[str]]]:
    """Steps grouped by phase, phases and steps in declaration order."""
    groups: dict[str | None, list[str]] = {}
    for step, data in graph.nodes(data=True):
        groups.setdefault(data.get("phase"), []).append(step)
    return list(groups.items())


def _quote(text: Any) -> str:
    return json.dumps(str(text), ensure_ascii=False)


def _mermaid_label(text: str) -> str:
    return '"' + text.replace('"', "#quot;") + '"'
