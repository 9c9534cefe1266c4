"""The Job controller: creates the Job's pods, counts how they end, and completes or fails the Job."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.simulators import conditions, events
from engine.simulators.api import JOB, POD, Api, JsonDict, ref_of
from engine.simulators.controllers import jobstatus
from engine.simulators.controllers.jobstatus import INDEX, Census, is_finished
from engine.simulators.controllers.podsets import new_pod
from engine.simulators.controllers.workloads import MANAGER, controlled_by, controller_of, keys_for
from engine.simulators.runtime import EVERYTHING, Ref, Stopwatch

TRACKING = "batch.kubernetes.io/job-tracking"
JOB_NAME = "batch.kubernetes.io/job-name"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
COMPONENT = "job-controller"


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


class JobController:
    name = "jobs"

    def __init__(self, api: Api) -> None:
        self._api = api
        self._clock = Stopwatch()

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        return keys_for(obj, JOB, POD)

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
        decided = jobstatus.verdict(job, census, elapsed)
        if decided is not None or suspended:
            self._delete(census.active)
        else:
            census = self._create_missing(job, census)
        before = is_finished(job)
        status = jobstatus.job_status(job, census, decided, conditions.timestamp())
        job = self._api.write_status(JOB, job, status, MANAGER)
        self._release(pods, everything=False)
        if is_finished(job) and not before:
            self._announce(job)
        return self._until_deadline(job, elapsed)

    def _create_missing(self, job: JsonDict, census: Census) -> Census:
        spec = job.get("spec") or {}
        left = jobstatus.completions(job) - jobstatus.succeeded_count(job, census)
        wanted = min(int(spec.get("parallelism", 1)), max(left, 0)) - len(census.active)
        indexes: Sequence[int | None] = [None] * max(wanted, 0)
        if spec.get("completionMode") == "Indexed":
            taken = {jobstatus.index_of(p) for p in (*census.active, *census.succeeded)}
            indexes = [i for i in range(jobstatus.completions(job)) if i not in taken][:max(wanted, 0)]
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
