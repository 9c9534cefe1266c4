"""Warming: an OperatorVersion that arrives while the manager runs has its package parsed and the caches of the kinds
its deploy plan applies (and the pods of its Jobs, which a pass waiting on a Job reads) filled before an Instance of
it exists.

`kplan install` creates the OperatorVersion just before the Instance. Without warming, the first pass of that Instance
parses and verifies the package, then starts the cache of each kind it reads one after another, each waiting for its
first list (~20 ms on the dev cluster for six kinds, on the pass's critical path). Here the parse starts as the
OperatorVersion's watch event arrives (a pass that needs the package meanwhile waits for this parse instead of making
its own), and the kinds' first lists run side by side. The pods' cluster-wide list was otherwise made by whichever
pass first found a Job still running, in the middle of some later plan. It is only a head start: a kind that is not
found here (its template computes the kind, or its CRD is not installed yet) is cached by the pass that reads it, as
before.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from engine.kube import Caches
from engine.model import Package

__all__ = ["Warming", "deploy_templates", "template_kinds"]

log = logging.getLogger(__name__)

Kind = tuple[str, str]  # (apiVersion, kind)
Parse = Callable[[Mapping[str, Any]], Package]

# A document's own top-level `apiVersion:` and `kind:` lines, when they are plain text (not computed by the template).
API_VERSION_LINE = re.compile(r"^apiVersion:[ \t]*([A-Za-z0-9./-]+)[ \t]*$", re.MULTILINE)
KIND_LINE = re.compile(r"^kind:[ \t]*([A-Za-z0-9]+)[ \t]*$", re.MULTILINE)
DOCUMENT_START = re.compile(r"^---", re.MULTILINE)
# Kinds a pass reads beside one it applies: the pods of a Job it waits on (engine.planner.pods: why they do not run).
READ_BESIDE: dict[Kind, Kind] = {("batch/v1", "Job"): ("v1", "Pod")}


def template_kinds(templates: Iterable[str]) -> set[Kind]:
    """The (apiVersion, kind) that documents of `templates` spell out literally (a hint: computed ones are missed),
    and those a pass reads beside them."""
    found: set[Kind] = set()
    for text in templates:
        for document in DOCUMENT_START.split(text):
            api_version, kind = API_VERSION_LINE.search(document), KIND_LINE.search(document)
            if api_version and kind:
                found.add((api_version.group(1), kind.group(1)))
    return found | {READ_BESIDE[kind] for kind in found if kind in READ_BESIDE}


def deploy_templates(pkg: Package) -> list[str]:
    """The texts of the templates that the tasks of the deploy plan (the first an Instance runs) render."""
    plan = pkg.plans.get("deploy")
    names = {name for step in plan.steps for name in step.tasks} if plan is not None else set()
    files = dict.fromkeys(file for task in pkg.tasks if task.name in names for file in task.templates)
    return [pkg.templates[file] for file in files if file in pkg.templates]


class Warming:
    """`offer(operator_version)` queues a package to warm; one thread (started on first use) warms them in turn."""

    def __init__(self, caches: Caches, parse: Parse) -> None:
        self._caches, self._parse = caches, parse
        self._offered: queue.SimpleQueue[Mapping[str, Any] | None] = queue.SimpleQueue()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def offer(self, operator_version: Mapping[str, Any]) -> None:
        """Warm `operator_version`'s package soon; never blocks (called from the caches' threads)."""
        with self._lock:
            if self._stopped.is_set():
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="package-warming", daemon=True)
                self._thread.start()
        self._offered.put(operator_version)

    def stop(self) -> None:
        """Warm nothing more; returns once the package in hand is done (before the caches are stopped)."""
        with self._lock:
            self._stopped.set()
            thread = self._thread
        self._offered.put(None)
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while (operator_version := self._offered.get()) is not None and not self._stopped.is_set():
            try:
                self._warm(operator_version)
            except Exception as exc:  # a head start only: the pass that needs the package reports what is wrong
                log.debug("package not warmed", extra={"error": str(exc)})

    def _warm(self, operator_version: Mapping[str, Any]) -> None:
        pkg = self._parse(operator_version)
        kinds = sorted(kind for kind in template_kinds(deploy_templates(pkg)) if not self._caches.caching(*kind))
        starts = [threading.Thread(target=self._start, args=kind, name=f"warming-{kind[1]}", daemon=True)
                  for kind in kinds]
        for start in starts:
            start.start()
        for start in starts:
            start.join()

    def _start(self, api_version: str, kind: str) -> None:
        try:
            self._caches.ensure(api_version, kind)
        except Exception as exc:  # not served (yet), or the server fails: the pass that reads the kind tries again
            log.debug("kind not cached ahead", extra={"kind": kind, "error": str(exc)})
