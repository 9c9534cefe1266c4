"""The process runtime: runs each scheduled pod's containers as local processes and reports their states.

`ProcessRuntime.sync(pod)` is the kubelet's pod worker, called on every reconcile of a pod bound to a node: it
sets up the volumes once, runs the init containers one after the other, then the containers, restarts them as
the restartPolicy says (with the kubelet's back-off), and answers with what each container is doing. The image
is not pulled: the host's tools run. `stop` kills a pod's process groups (its deletion), `close` every one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.simulators.kubelet.containerlogs import LogStore, container_id
from engine.simulators.kubelet.environment import ConfigError, JsonDict, Lookup, command_line, environment
from engine.simulators.kubelet.processes import UNSHARE, Exit, Launch, Process
from engine.simulators.kubelet.volumes import PodVolumes, container_mounts

MESSAGE_LIMIT = 4096  # bytes of a termination message the kubelet keeps
FALLBACK_LINES = 80  # FallbackToLogsOnError: the last lines of the log
RECHECK = 2.0  # seconds before a pod whose volumes or environment do not resolve is tried again


@dataclass(frozen=True)
class Limits:
    """Bounds of every container run: wall time, bytes of output kept, first restart back-off, stop grace."""

    max_seconds: float = 3600.0
    max_log_bytes: int = 10 * 2**20
    backoff: float = 10.0
    max_backoff: float = 300.0
    grace: float = 2.0


@dataclass(frozen=True)
class ContainerState:
    """What one container is doing, as containerStatuses show it."""

    name: str
    waiting: tuple[str, str] | None = None  # reason, message
    running_since: str = ""
    terminated: Exit | None = None
    last: Exit | None = None
    restarts: int = 0
    container_id: str = ""  # the current run's (or, between runs, the last one's)

    @property
    def succeeded(self) -> bool:
        return self.terminated is not None and self.terminated.code == 0


@dataclass(frozen=True)
class Observation:
    init: list[ContainerState]
    main: list[ContainerState]
    recheck: float | None = None  # seconds until the runtime must look again (a back-off, a retry)


CONSEQUENCE = ("so containers that mount volumes cannot start (they wait with CreateContainerError) and no "
               "container gets a termination message file")


def isolation_problem() -> str:
    """Why this host cannot give a container a private mount namespace, in one sentence ("" when it can)."""
    if shutil.which(UNSHARE[0]) is None:
        return f"util-linux `unshare` is not on PATH, {CONSEQUENCE}"
    try:
        done = subprocess.run([*UNSHARE, "true"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"`unshare` could not run ({e}), {CONSEQUENCE}"
    if done.returncode != 0:
        why = " ".join(done.stderr.split()) or f"exit code {done.returncode}"
        return f"this host does not let this user create user and mount namespaces ({why}), {CONSEQUENCE}"
    return ""


@dataclass
class ContainerRun:
    """The runs of one container of a pod."""

    spec: JsonDict
    process: Process | None = None
    restarts: int = 0
    last: Exit | None = None
    waiting: tuple[str, str] | None = None
    not_before: float = 0.0  # monotonic time of the next start (back-off)

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")

    @property
    def ended(self) -> Exit | None:
        return self.process.exit if self.process is not None else None

    def state(self, termination: Exit | None) -> ContainerState:
        last_id = self.last.container_id if self.last is not None else ""
        if self.waiting is not None or self.process is None:
            return ContainerState(self.name, self.waiting or ("ContainerCreating", ""), last=self.last,
                                  restarts=self.restarts, container_id=last_id)
        cid = self.process.container_id
        if termination is not None:
            return ContainerState(self.name, terminated=termination, last=self.last, restarts=self.restarts,
                                  container_id=cid)
        if not self.process.running:
            return ContainerState(self.name, ("ContainerCreating", ""), last=self.last, restarts=self.restarts,
                                  container_id=last_id)
        return ContainerState(self.name, running_since=self.process.started_at, last=self.last,
                              restarts=self.restarts, container_id=cid)


@dataclass
class PodRun:
    """One pod's containers on this node."""

    uid: str
    folder: Path
    inits: list[ContainerRun]
    mains: list[ContainerRun]
    volumes: dict[str, str] | None = None
    messages: dict[str, tuple[Process, Exit]] = field(default_factory=dict)  # per container: last run, its exit

    def runs(self) -> list[ContainerRun]:
        return [*self.inits, *self.mains]


class ProcessRuntime:
    """Runs pods' containers as local process groups under `root`; `notify(namespace, name)` asks for a sync."""

    def __init__(self, lookup: Lookup, limits: Limits | None = None, root: Path | None = None) -> None:
        self.lookup = lookup
        self.limits = limits or Limits()
        self.logs = LogStore(self.limits.max_log_bytes)  # the kubelet's, which serves them
        self.notify: Callable[[str, str], None] = lambda namespace, name: None
        self.problem = isolation_problem()
        self._root = root or Path(tempfile.mkdtemp(prefix="kplan-runtime-"))
        self._owns_root = root is None
        self._pods: dict[str, PodRun] = {}
        self._lock = threading.Lock()

    # the kubelet's side

    def sync(self, pod: JsonDict, base_env: dict[str, str]) -> Observation:
        """Start, restart or leave each container as the pod needs; what each is doing now."""
        run = self._pod_run(pod)
        if run.volumes is None:
            try:
                run.volumes = PodVolumes(pod, run.folder, self._root / "claims", self.lookup).prepare()
            except ConfigError as e:
                waiting = ("ContainerCreating", str(e))
                states = [ContainerState(c.name, waiting) for c in run.runs()]
                return Observation(states[:len(run.inits)], states[len(run.inits):], RECHECK)
        policy = str((pod.get("spec") or {}).get("restartPolicy") or "Always")
        rechecks: list[float] = []
        init_states = self._sync_inits(pod, run, policy, base_env, rechecks)
        if all(s.succeeded for s in init_states):
            main_states = [self._sync_one(pod, run, c, policy, base_env, rechecks) for c in run.mains]
        else:
            main_states = [ContainerState(c.name, ("PodInitializing", "")) for c in run.mains]
        return Observation(init_states, main_states, min(rechecks) if rechecks else None)

    def _sync_inits(self, pod: JsonDict, run: PodRun, policy: str, base_env: dict[str, str],
                    rechecks: list[float]) -> list[ContainerState]:
        states: list[ContainerState] = []
        for container in run.inits:
            if states and not states[-1].succeeded:
                states.append(ContainerState(container.name, ("PodInitializing", "")))
                continue
            init_policy = "Never" if policy == "Never" else "OnFailure"
            states.append(self._sync_one(pod, run, container, init_policy, base_env, rechecks))
        return states

    def _sync_one(self, pod: JsonDict, run: PodRun, container: ContainerRun, policy: str, base_env: dict[str, str],
                  rechecks: list[float]) -> ContainerState:
        ended = container.ended
        if ended is not None:
            ended = self._with_message(run, container, ended)
            again = policy == "Always" or (policy == "OnFailure" and ended.code != 0)
            if not again:
                return container.state(ended)
            if container.not_before == 0.0:
                delay = 0.0 if container.restarts == 0 else min(
                    self.limits.backoff * 2 ** (container.restarts - 1), self.limits.max_backoff)
                container.not_before = time.monotonic() + delay
            wait = container.not_before - time.monotonic()
            if wait > 0:
                rechecks.append(wait)
                message = (f"back-off {wait:.0f}s restarting failed container={container.name} pod="
                           f"{pod['metadata']['name']}_{pod['metadata'].get('namespace', '')}({run.uid})")
                return ContainerState(container.name, ("CrashLoopBackOff", message), last=ended,
                                      restarts=container.restarts, container_id=ended.container_id)
            container.last, container.restarts, container.not_before = ended, container.restarts + 1, 0.0
            container.process = None
        if container.process is None:
            self._start(pod, run, container, base_env)
            if container.waiting is not None:
                rechecks.append(RECHECK)
        return container.state(None)

    def _start(self, pod: JsonDict, run: PodRun, container: ContainerRun, base_env: dict[str, str]) -> None:
        spec = container.spec
        folder = run.folder / "containers" / f"{container.name}-{container.restarts}"
        try:
            env = environment(pod, spec, self.lookup, base_env)
            mounts = container_mounts(pod, spec, run.volumes or {}, folder / "termination-log")
        except ConfigError as e:
            container.waiting = ("CreateContainerConfigError", str(e))
            return
        if self.problem:
            if spec.get("volumeMounts"):
                container.waiting = ("CreateContainerError", self.problem)
                return
            mounts = []  # no private mount namespace: no termination message file either
        container.waiting = None
        namespace, name = str(pod["metadata"].get("namespace") or ""), str(pod["metadata"]["name"])
        cid = container_id(run.uid, container.name, container.restarts)
        launch = Launch(command_line(spec, env), env, str(spec.get("workingDir") or ""), mounts, folder,
                        isolate=not self.problem, container_id=cid)
        log = self.logs.open(run.uid, cid)
        container.process = Process(launch, log, self._max_seconds(pod),
                                    lambda: self.notify(namespace, name))

    def _max_seconds(self, pod: JsonDict) -> float:
        deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
        bound = self.limits.max_seconds
        return min(bound, float(deadline)) if isinstance(deadline, int) and deadline > 0 else bound

    def _with_message(self, run: PodRun, container: ContainerRun, ended: Exit) -> Exit:
        """The exit with its termination message: the file the container wrote, or its log's tail on error."""
        known = run.messages.get(container.name)
        if known is not None and known[0] is container.process:
            return known[1]
        message = ended.message
        if not message:
            path = run.folder / "containers" / f"{container.name}-{container.restarts}" / "termination-log"
            if path.is_file():
                message = path.read_bytes()[:MESSAGE_LIMIT].decode("utf-8", errors="replace")
        policy = str(container.spec.get("terminationMessagePolicy") or "File")
        if not message and ended.code != 0 and policy == "FallbackToLogsOnError" and container.process is not None:
            tail = container.process.log.text().splitlines()[-FALLBACK_LINES:]
            message = "\n".join(tail)[-2048:]
        result = Exit(ended.code, ended.reason, message, ended.started_at, ended.finished_at, ended.container_id)
        if container.process is not None:
            run.messages[container.name] = (container.process, result)
        return result

    def _pod_run(self, pod: JsonDict) -> PodRun:
        uid = str(pod["metadata"].get("uid") or "")
        with self._lock:
            run = self._pods.get(uid)
            if run is None:
                spec = pod.get("spec") or {}
                folder = self._root / "pods" / uid
                folder.mkdir(parents=True, exist_ok=True)
                run = self._pods[uid] = PodRun(uid, folder, [ContainerRun(c) for c in spec.get("initContainers") or []],
                                               [ContainerRun(c) for c in spec.get("containers") or []])
            return run

    # stopping

    def stop(self, uid: str, grace: float | None = None) -> bool:
        """Stop the pod's processes (SIGTERM, SIGKILL after the pod's grace period, at most the runtime's);
        True once none is left."""
        with self._lock:
            run = self._pods.get(uid)
        if run is None:
            return True
        left = False
        for container in run.runs():
            if container.process is not None and container.process.exit is None:
                container.process.stop(self.limits.grace if grace is None else min(grace, self.limits.grace))
                left = True
        return not left

    def forget(self, uid: str) -> None:
        """Drop a pod that is gone: its processes (killed), its files and its logs."""
        self.stop(uid, 0)
        with self._lock:
            run = self._pods.pop(uid, None)
        if run is not None:
            for container in run.runs():
                if container.process is not None:
                    container.process.join(self.limits.grace + 5)
            shutil.rmtree(run.folder, ignore_errors=True)
        self.logs.forget(uid)

    def close(self) -> None:
        """Kill every process group and wait for them; remove the runtime's files."""
        with self._lock:
            runs = list(self._pods.values())
        for run in runs:
            self.stop(run.uid, 0)
        for run in runs:
            for container in run.runs():
                if container.process is not None:
                    container.process.join(10)
        if self._owns_root:
            shutil.rmtree(self._root, ignore_errors=True)


def host_environment(pod: JsonDict) -> dict[str, str]:
    """What the "image" gives every container: the host's PATH, and HOSTNAME as the pod's name."""
    return {"PATH": os.environ.get("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
            "HOSTNAME": str(pod["metadata"]["name"])}
