"""The status the Job controller writes, computed from the Job and a census of its pods."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.simulators import conditions, steering
from engine.simulators.api import JsonDict
from engine.simulators.controllers.podsets import is_ready

INDEX = "batch.kubernetes.io/job-completion-index"
COMPLETED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE = ("DeadlineExceeded", "Job was active longer than specified deadline")
STAMPS = ("lastProbeTime",)
Verdict = tuple[str, tuple[str, str]]  # "SuccessCriteriaMet" | "FailureTarget", (reason, message)


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
        return sum(1 for p in self.active if is_ready(p))


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


def verdict(job: JsonDict, census: Census, elapsed: float) -> Verdict | None:
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


def job_status(job: JsonDict, census: Census, decided: Verdict | None, now: str) -> JsonDict:
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
