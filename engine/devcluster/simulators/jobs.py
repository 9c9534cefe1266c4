"""The Job controller: creates the Job's pods, counts how they end, and completes or fails the Job."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.devcluster.simulators import conditions, events, steering
from engine.devcluster.simulators.api import JOB, POD, Api, JsonDict
from engine.devcluster.simulators.podsets import new_pod
from engine.devcluster.simulators.runtime import EVERYTHING, Ref, Stopwatch
from engine.devcluster.simulators.workloads import MANAGER, controlled_by, controller_of, ref_of

TRACKING = "batch.kubernetes.io/job-tracking"
JOB_NAME = "batch.kubernetes.io/job-name"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
INDEX = "batch.kubernetes.io/job-completion-index"
COMPLETED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE = ("DeadlineExceeded", "Job was active longer than specified deadline")
STAMPS = ("lastProbeTime",)
COMPONENT = "job-controller"


@dataclass(frozen=True)
class Census:
    """The Job's pods by how far they got."""

    active: tuple[JsonDict, ...]
    succeeded: tuple[JsonDict, ...]
    failed: tuple[JsonDict, ...]
    terminating: int

    @classmethod
    def of(cls, pods: Sequence[JsonDict]) -> Census:
        phase = [(p, (p.get("status") or {}).get("phase")) for p in pods]
        live = [p for p, ph in phase if ph not in ("Succeeded", "Failed")]
        return cls(active=tuple(p for p in live if not p["metadata"].get("deletionTimestamp")),
                   succeeded=tuple(p for p, ph in phase if ph == "Succeeded"),
                   failed=tuple(p for p, ph in phase if ph == "Failed"),
                   terminating=sum(1 for p in live if p["metadata"].get("deletionTimestamp")))

    @property
    def ready(self) -> int:
        return sum(1 for p in self.active if conditions.is_true((p.get("status") or {}).get("conditions") or [],
                                                                "Ready"))


def index_of(pod: JsonDict) -> int | None:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(INDEX)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def compress(indexes: Iterable[int]) -> str:
    """1,2,3,5 → "1-3,5" (status.completedIndexes)."""
    runs: list[list[int]] = []
    for i in sorted(set(indexes)):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def job_pod(job: JsonDict, index: int | None) -> JsonDict:
    """A pod from the Job's template, owned and tracked by the Job, named `<job>-<random>`."""
    meta = job["metadata"]
    labels = {CONTROLLER_UID: meta["uid"], JOB_NAME: meta["name"], "controller-uid": meta["uid"],
              "job-name": meta["name"]}
    notes: dict[str, str] = {}
    prefix = f"{meta['name']}-"
    if index is not None:
        labels[INDEX] = notes[INDEX] = str(index)
        prefix = f"{meta['name']}-{index}-"
    return new_pod(JOB, job, generate_name=prefix, labels=labels, annotations=notes, finalizers=[TRACKING])


def verdict(job: JsonDict, census: Census, elapsed: float) -> tuple[str, tuple[str, str]] | None:
    """("SuccessCriteriaMet" | "FailureTarget", (reason, message)) once the Job's outcome is decided."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    for type_ in ("SuccessCriteriaMet", "FailureTarget"):
        found = conditions.find(status.get("conditions") or [], type_)
        if found is not None and found.get("status") == "True":
            return type_, (str(found.get("reason", "")), str(found.get("message", "")))
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and elapsed >= deadline:
        return "FailureTarget", DEADLINE
    if failed_count(job, census) > int(spec.get("backoffLimit", 6)):
        return "FailureTarget", BACKOFF
    if succeeded_count(job, census) >= completions(job):
        return "SuccessCriteriaMet", COMPLETED
    return None


def completions(job: JsonDict) -> int:
    value = (job.get("spec") or {}).get("completions")
    return int(value) if isinstance(value, int) else 1


def succeeded_count(job: JsonDict, census: Census) -> int:
    return max(int((job.get("status") or {}).get("succeeded") or 0), len(census.succeeded))


def failed_count(job: JsonDict, census: Census) -> int:
    """Failed pods; with the fail annotation every retry would fail too, so one failure counts for them all."""
    failed = max(int((job.get("status") or {}).get("failed") or 0), len(census.failed))
    if failed and steering.fails(job):
        return max(failed, int((job.get("spec") or {}).get("backoffLimit", 6)) + 1)
    return failed


def job_status(job: JsonDict, census: Census, decided: tuple[str, tuple[str, str]] | None, now: str) -> JsonDict:
    spec, old = job.get("spec") or {}, job.get("status") or {}
    conds = list(old.get("conditions") or [])
    status: JsonDict = {}
    if spec.get("suspend"):
        conds = conditions.put(conds, "Suspended", True, "JobSuspended", "Job suspended", now=now, stamps=STAMPS)
    else:
        if conditions.find(conds, "Suspended"):
            conds = conditions.put(conds, "Suspended", False, "JobResumed", "Job resumed", now=now, stamps=STAMPS)
        status["startTime"] = old.get("startTime") or now
    if decided is not None:
        target, (reason, message) = decided
        recorded = conditions.is_true(conds, target)  # the outcome was written before: the Job may now finish
        conds = conditions.put(conds, target, True, reason, message, now=now, stamps=STAMPS)
        if recorded and not census.active and not census.terminating:
            final = "Complete" if target == "SuccessCriteriaMet" else "Failed"
            conds = conditions.put(conds, final, True, reason, message, now=now, stamps=STAMPS)
            if final == "Complete":
                status["completionTime"] = old.get("completionTime") or now
    counts = {"active": len(census.active), "succeeded": succeeded_count(job, census),
              "failed": failed_count(job, census)}
    status.update({k: v for k, v in counts.items() if v})
    if spec.get("completionMode") == "Indexed":
        done = [i for i in map(index_of, census.succeeded) if i is not None]
        if done:
            status["completedIndexes"] = compress(done)
    status.update({"ready": census.ready, "terminating": census.terminating, "uncountedTerminatedPods": {}})
    if conds:
        status["conditions"] = conds
    return status


def is_finished(job: JsonDict) -> bool:
    conds = (job.get("status") or {}).get("conditions") or []
    return conditions.is_true(conds, "Complete") or conditions.is_true(conds, "Failed")


class JobController:
    name = "jobs"

    def __init__(self, api: Api) -> None:
        self._api = api
        self._clock = Stopwatch()

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if JOB.describes(obj):
            yield ref_of(obj)
        elif POD.describes(obj):
            owner = controller_of(obj, JOB)
            if owner:
                yield ref_of(obj)[0], owner

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(j) for j in self._api.objects(JOB)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        job = self._api.get(JOB, namespace, name)
        if job is None:
            self._clock.forget((namespace, name))
            orphans = [p for p in self._api.objects(POD, namespace) if controller_of(p, JOB) == name]
            self._release(orphans, everything=True)
            return None
        uid = str(job["metadata"]["uid"])
        pods = [p for p in self._api.owned_by(POD, uid) if controlled_by(p, uid)]
        if job["metadata"].get("deletionTimestamp") or is_finished(job):
            self._release(pods, everything=True)
            return None
        census = Census.of(pods)
        suspended = bool((job.get("spec") or {}).get("suspend"))
        elapsed = 0.0 if suspended else self._clock.elapsed((namespace, name), uid)
        decided = verdict(job, census, elapsed)
        if decided is not None or suspended:
            self._delete(census.active)
        else:
            census = self._create_missing(job, census)
        before = is_finished(job)
        job = self._api.write_status(JOB, job, job_status(job, census, decided, conditions.timestamp()), MANAGER)
        self._release(pods, everything=False)
        if is_finished(job) and not before:
            self._announce(job)
        return self._until_deadline(job, elapsed)

    def _create_missing(self, job: JsonDict, census: Census) -> Census:
        spec = job.get("spec") or {}
        left = completions(job) - succeeded_count(job, census)
        wanted = min(int(spec.get("parallelism", 1)), max(left, 0)) - len(census.active)
        indexes: Sequence[int | None] = [None] * max(wanted, 0)
        if spec.get("completionMode") == "Indexed":
            taken = {index_of(p) for p in (*census.active, *census.succeeded)}
            indexes = [i for i in range(completions(job)) if i not in taken][:max(wanted, 0)]
        created = []
        for index in indexes:
            pod = self._api.create(POD, job_pod(job, index), MANAGER)
            events.record(self._api, job, events.NORMAL, "SuccessfulCreate",
                          f"Created pod: {pod['metadata']['name']}", COMPONENT)
            created.append(pod)
        return Census((*census.active, *created), census.succeeded, census.failed, census.terminating)

    def _delete(self, pods: Sequence[JsonDict]) -> None:
        for pod in pods:
            self._api.delete(POD, *ref_of(pod), uid=str(pod["metadata"].get("uid") or ""))

    def _release(self, pods: Sequence[JsonDict], *, everything: bool) -> None:
        """Drop the tracking finalizer from pods already counted (ended or being deleted), or from all."""
        for pod in pods:
            meta = pod["metadata"]
            ended = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or meta.get("deletionTimestamp")
            if everything or ended:
                self._api.remove_finalizer(POD, pod, TRACKING, MANAGER)

    def _announce(self, job: JsonDict) -> None:
        conds = (job.get("status") or {}).get("conditions") or []
        if conditions.is_true(conds, "Complete"):
            events.record(self._api, job, events.NORMAL, "Completed", "Job completed", COMPONENT)
        else:
            failed = conditions.find(conds, "Failed") or {}
            events.record(self._api, job, events.WARNING, str(failed.get("reason", "")),
                          str(failed.get("message", "")), COMPONENT)

    def _until_deadline(self, job: JsonDict, elapsed: float) -> float | None:
        deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
        if is_finished(job) or not isinstance(deadline, int) or (job.get("spec") or {}).get("suspend"):
            return None
        return max(0.0, deadline - elapsed) or None
