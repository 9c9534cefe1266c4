"""What every pass reads of one plan and its render, worked out once: the DAG, each step's tasks and objects, the
objects a later step renders again, and every object the plan keeps (what pruning spares).

A pass over a long plan reads all of this for every step; built per pass, it cost in proportion to the plan's length
even when nothing changed. It is kept per render (`INDEXES`), keyed by the identity of the render (the planner's plan
memo hands out the same render while package, values and pipe outputs are the same) and by everything else it reads
(the owner, the values a Toggle's kind depends on), so a kept index is never stale.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from engine import graph
from engine.model import Package, Plan, Step, Task, TaskKind
from engine.planner import tasks
from engine.planner.refs import Ref
from engine.planner.rendering import Rendered, TaskRender
from engine.planner.stamping import Owner
from engine.render.cache import Lru

__all__ = ["NOTHING", "Dag", "Healed", "PlanIndex", "dag_of", "plan_index"]

NOTHING: frozenset[Ref] = frozenset()


@dataclass(frozen=True)
class Dag:
    """A plan's DAG with what every pass reads of it: each step's descendants, predecessors and layer."""

    graph: nx.DiGraph
    descendants: Mapping[str, frozenset[str]]
    predecessors: Mapping[str, tuple[str, ...]]
    depths: Mapping[str, int]


@functools.lru_cache(maxsize=256)
def dag_of(plan: Plan) -> Dag:
    """The plan's DAG, built once per plan (shared by every pass: read only)."""
    dag = graph.build(plan)
    return Dag(dag, {name: frozenset(nx.descendants(dag, name)) for name in dag},
               {name: tuple(dag.predecessors(name)) for name in dag}, graph.depths(dag))


@dataclass(frozen=True)
class Healed:
    """What drift repair reads of one step: its task renders (their ids name them in a memo's key), the kind each task
    acts as, and the objects it keeps as rendered, in order."""

    renders: tuple[TaskRender, ...]
    ids: tuple[int, ...]
    kinds: tuple[TaskKind, ...]
    refs: tuple[Ref, ...]


@dataclass(frozen=True)
class PlanIndex:
    """One render of a plan, indexed. `steps`: the plan's steps in order; `dag`: its DAG; `tasks`: each step's tasks;
    `kinds`: the kind each task acts as (a Toggle's Apply
    or Delete); `refs`: the objects each step renders; `healed`: what drift repair reads of each step; `overlaps`: per
    step, the later steps (in the DAG) that render some of its objects too, with those objects; `desired`: every
    object the plan keeps in the cluster, started or not."""

    steps: tuple[Step, ...]
    dag: Dag
    tasks: Mapping[str, tuple[Task, ...]]
    kinds: Mapping[str, TaskKind]
    refs: Mapping[str, frozenset[Ref]]
    healed: Mapping[str, Healed]
    overlaps: Mapping[str, tuple[tuple[str, frozenset[Ref]], ...]]
    desired: frozenset[Ref]


# Indexes by (package, plan, render, owner); an entry holds its package, plan and render (so their ids are not reused
# while it lives) and the values it was made with (a Toggle's kind depends on them). Shared: read only.
INDEXES: Lru[tuple[Package, Plan, Rendered, Mapping[str, Any], PlanIndex]] = Lru(256)


def plan_index(pkg: Package, plan: Plan, rendered: Rendered, values: Mapping[str, Any], owner: Owner) -> PlanIndex:
    """The index of `rendered` (the render of `plan` with `values` for `owner`), the same one while they are."""
    key = (id(pkg), id(plan), id(rendered), owner.namespace, owner.name)
    kept = INDEXES.get(key)
    if kept is not None and kept[0] is pkg and kept[1] is plan and kept[2] is rendered and kept[3] == values:
        return kept[4]
    found = indexed(pkg, plan, rendered, values, owner)
    INDEXES.put(key, (pkg, plan, rendered, dict(values), found))
    return found


def indexed(pkg: Package, plan: Plan, rendered: Rendered, values: Mapping[str, Any], owner: Owner) -> PlanIndex:
    by_name = {t.name: t for t in pkg.tasks}
    steps = plan.steps
    step_tasks = {step.name: tuple(by_name[name] for name in step.tasks) for step in steps}
    kinds = {t.name: tasks.mode(t, values) for found in step_tasks.values() for t in found}
    refs = {step.name: frozenset(r for name in step.tasks for r in rendered[(step.name, name)].refs) for step in steps}
    healed = {step.name: healed_of(step, rendered, kinds) for step in steps}
    desired = frozenset(r for step in steps for t in step_tasks[step.name]
                        for r in tasks.kept(t, kinds[t.name], rendered[(step.name, t.name)], owner))
    dag = dag_of(plan)
    return PlanIndex(steps, dag, step_tasks, kinds, refs, healed, overlaps(dag, refs), desired)


def healed_of(step: Step, rendered: Rendered, kinds: Mapping[str, TaskKind]) -> Healed:
    renders = tuple(rendered[(step.name, name)] for name in step.tasks)
    step_kinds = tuple(kinds[name] for name in step.tasks)
    refs = tuple(r for render, kind in zip(renders, step_kinds, strict=True) if kind in tasks.HEALED
                 for r in render.refs)
    return Healed(renders, tuple(map(id, renders)), step_kinds, refs)


def overlaps(dag: Dag, refs: Mapping[str, frozenset[Ref]]) -> dict[str, tuple[tuple[str, frozenset[Ref]], ...]]:
    """Per step rendering an object that a step after it renders too: (that later step, the objects they share)."""
    steps_of: dict[Ref, list[str]] = {}
    for name, found in refs.items():
        for ref in found:
            steps_of.setdefault(ref, []).append(name)
    shared = {r: names for r, names in steps_of.items() if len(names) > 1}
    if not shared:
        return {}
    descendants = dag.descendants
    pairs: dict[str, dict[str, set[Ref]]] = {}
    for ref, names in shared.items():
        for name in names:
            for after in names:
                if after in descendants[name]:
                    pairs.setdefault(name, {}).setdefault(after, set()).add(ref)
    return {name: tuple((after, frozenset(common)) for after, common in sorted(later.items()))
            for name, later in pairs.items()}
