"""The kills soak's invariants (tests/soak/invariants.py) catch what they are for, on made-up change feeds: a
clean history passes; a Job re-created, a Job's pods beyond its retries, an object deleted, a step COMPLETE
before its predecessors, a step going back, a second plan uid and an Instance left unfinished are each named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .invariants import Change, expected, problems, tally

NS = "soak"
INSTANCES = {"m": "soak-mixed"}


def _obj(kind: str, name: str, uid: str = "", **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, "namespace": NS, "uid": uid or f"uid-{kind}-{name}"}, **extra}


def _status(plan_uid: str, steps: Mapping[str, str], plan: str = "IN_PROGRESS") -> dict[str, Any]:
    phases = {"prepare": ["config", "child", "pipe"], "run": ["app", "db", "job"], "finish": ["report"]}
    recorded = []
    for phase, names in phases.items():
        statuses = [steps.get(f"{phase}/{n}", "PENDING") for n in names]
        recorded.append({"name": phase, "status": "COMPLETE" if set(statuses) == {"COMPLETE"} else "IN_PROGRESS",
                         "steps": [{"name": n, "status": s} for n, s in zip(names, statuses, strict=True)]})
    return {"plans": {"deploy": {"uid": plan_uid, "status": plan, "phases": recorded}}}


ALL = {f"{p}/{s}": "COMPLETE" for p, ss in {"prepare": "config child pipe", "run": "app db job",
                                            "finish": "report"}.items() for s in ss.split()}


def clean() -> list[Change]:
    """A history in which everything happened once and in order."""
    history: list[Change] = []
    history.append(("ADDED", "Instance", "m", _obj("Instance", "m")))  # what the user creates
    for one in expected(INSTANCES, NS):
        for obj in one.objects:
            kind, name = obj["kind"], obj["metadata"]["name"]
            history.append(("ADDED", kind, name, _obj(kind, name)))
            if kind == "Job":
                pod = _obj("Pod", f"{name}-x")
                pod["metadata"]["ownerReferences"] = [{"uid": f"uid-Job-{name}"}]
                history.append(("ADDED", "Pod", f"{name}-x", pod))
    first = _status("p1", {"prepare/config": "COMPLETE"})
    history.append(("MODIFIED", "Instance", "m", _obj("Instance", "m", status=first)))
    history.append(("MODIFIED", "Instance", "m", _obj("Instance", "m", status=_status("p1", ALL, "COMPLETE"))))
    child = {"plans": {"deploy": {"uid": "p2", "status": "COMPLETE", "phases": [
        {"name": "main", "status": "COMPLETE", "steps": [{"name": "config", "status": "COMPLETE"},
                                                         {"name": "job", "status": "COMPLETE"}]}]}}}
    history.append(("MODIFIED", "Instance", "m-child", _obj("Instance", "m-child", status=child)))
    return history


def test_a_clean_history_has_no_problems() -> None:
    assert problems(INSTANCES, NS, clean()) == []


def test_a_job_created_twice_is_named() -> None:
    history = [*clean(), ("DELETED", "Job", "m-job", _obj("Job", "m-job")),
               ("ADDED", "Job", "m-job", _obj("Job", "m-job", "uid-again"))]
    assert problems(INSTANCES, NS, history) == ["Job m-job: 2 added, 1 deleted, 2 uids"]


def test_pods_beyond_a_jobs_retries_are_named() -> None:
    history = clean()
    for n in range(2):  # backoffLimit 1 allows two pods: three ran
        pod = _obj("Pod", f"m-job-{n}")
        pod["metadata"]["ownerReferences"] = [{"uid": "uid-Job-m-job"}]
        history.append(("ADDED", "Pod", f"m-job-{n}", pod))
    assert problems(INSTANCES, NS, history) == ["Job m-job: 3 pods ran, backoffLimit 1 allows 2"]


def test_a_child_instances_object_lost_is_named() -> None:
    history = [c for c in clean() if c[2] != "m-child-config"]
    assert problems(INSTANCES, NS, history) == ["ConfigMap m-child-config: 0 added, 0 deleted, 0 uids"]


def test_a_step_complete_before_its_predecessors_is_named() -> None:
    early = _status("p1", {"prepare/config": "COMPLETE", "prepare/pipe": "COMPLETE"})
    history = clean()
    history.insert(-2, ("MODIFIED", "Instance", "m", _obj("Instance", "m", status=early)))
    assert problems(INSTANCES, NS, history) == ["Instance m: deploy plan: step prepare/pipe COMPLETE before step child"]


def test_a_step_of_a_later_phase_complete_too_early_is_named() -> None:
    early = _status("p1", {"prepare/config": "COMPLETE", "run/db": "COMPLETE"})
    history = clean()
    history.insert(-2, ("MODIFIED", "Instance", "m", _obj("Instance", "m", status=early)))
    assert problems(INSTANCES, NS, history) == ["Instance m: deploy plan: step run/db COMPLETE before phase prepare"]


def test_a_step_going_back_and_an_unfinished_plan_are_named() -> None:
    back = _status("p1", {**ALL, "finish/report": "IN_PROGRESS"})
    history = [*clean(), ("MODIFIED", "Instance", "m", _obj("Instance", "m", status=back))]
    assert problems(INSTANCES, NS, history) == [
        "Instance m: step finish/report went from COMPLETE back to IN_PROGRESS",
        "Instance m: its last plan ended IN_PROGRESS",
    ]


def test_a_second_plan_uid_is_named() -> None:
    history = [*clean(), ("MODIFIED", "Instance", "m", _obj("Instance", "m", status=_status("p3", ALL, "COMPLETE")))]
    assert problems(INSTANCES, NS, history) == ["Instance m: 2 deploy plan uids, 1 runs expected"]


def test_two_instances_sharing_a_plan_uid_are_named() -> None:
    history = [c for c in clean() if not (c[0] == "MODIFIED" and c[2] == "m-child")]
    history.append(("MODIFIED", "Instance", "m-child", _obj("Instance", "m-child", status={"plans": {"deploy": {
        "uid": "p1", "status": "COMPLETE", "phases": []}}})))
    assert problems(INSTANCES, NS, history) == ["plan uid p1 shared by Instances m, m-child"]


def _load_history(value: str, update_uid: str | None, deleted: bool = False) -> list[Change]:
    """Instance `l` of soak-load installed (deploy plan p1), then updated (update plan `update_uid`) or deleted."""
    plans: dict[str, Any] = {"deploy": {"uid": "p1", "status": "COMPLETE", "phases": [
        {"name": "main", "status": "COMPLETE", "steps": [{"name": "config", "status": "COMPLETE"},
                                                         {"name": "app", "status": "COMPLETE"}]}]}}
    history: list[Change] = [("ADDED", "Instance", "l", _obj("Instance", "l")),
                             ("ADDED", "ConfigMap", "l-config", _obj("ConfigMap", "l-config", data={"value": "v1"})),
                             ("ADDED", "Deployment", "l-app", _obj("Deployment", "l-app")),
                             ("MODIFIED", "Instance", "l", _obj("Instance", "l", status={"plans": plans}))]
    if update_uid:
        plans = {**plans, "update": {"uid": update_uid, "status": "COMPLETE", "phases": [
            {"name": "main", "status": "COMPLETE", "steps": [{"name": "config", "status": "COMPLETE"}]}]}}
        history += [("MODIFIED", "ConfigMap", "l-config", _obj("ConfigMap", "l-config", data={"value": value})),
                    ("MODIFIED", "Instance", "l", _obj("Instance", "l", status={"plans": plans,
                                                                                 "activePlan": {"name": "update"}}))]
    if deleted:
        history += [("DELETED", kind, name, _obj(kind, name))
                    for kind, name in (("ConfigMap", "l-config"), ("Deployment", "l-app"), ("Instance", "l"))]
    return history


def test_an_update_that_ran_once_and_changed_the_data_has_no_problems() -> None:
    assert problems({"l": "soak-load"}, NS, _load_history("v2", "p2"), updated={"l": {"value": "v2"}}) == []


def test_an_update_that_never_ran_or_left_the_old_data_is_named() -> None:
    assert problems({"l": "soak-load"}, NS, _load_history("v1", None), updated={"l": {"value": "v2"}}) == [
        "ConfigMap l-config: data {'value': 'v1'} after the update, not {'value': 'v2'}",
        "Instance l: 0 update plan uids, 1 runs expected"]
    assert problems({"l": "soak-load"}, NS, _load_history("v1", "p2"), updated={"l": {"value": "v2"}}) == [
        "ConfigMap l-config: data {'value': 'v1'} after the update, not {'value': 'v2'}"]


def test_an_uninstall_that_deleted_everything_once_has_no_problems() -> None:
    assert problems({"l": "soak-load"}, NS, _load_history("", None, deleted=True), uninstalled=["l"]) == []


def test_an_object_an_uninstall_left_or_re_created_is_named() -> None:
    left = [c for c in _load_history("", None, deleted=True) if c[:3] != ("DELETED", "Deployment", "l-app")]
    assert problems({"l": "soak-load"}, NS, left, uninstalled=["l"]) == [
        "Deployment l-app of uninstalled l: changes ADDED"]
    again = [*_load_history("", None, deleted=True), ("ADDED", "ConfigMap", "l-config", _obj("ConfigMap", "l-config"))]
    assert problems({"l": "soak-load"}, NS, again, uninstalled=["l"]) == [
        "ConfigMap l-config of uninstalled l: changes ADDED DELETED ADDED"]


def test_problems_are_tallied_as_the_figures_name_them() -> None:
    assert tally(["Job j: 2 added, 1 deleted, 2 uids", "ConfigMap c: 0 added, 0 deleted, 0 uids",
                  "ConfigMap d: 1 added, 1 deleted, 1 uids", "Job j: 3 pods ran, backoffLimit 1 allows 2",
                  "Instance m: 2 deploy plan uids, 1 runs expected"]) == {
        "duplicates": 1, "objects_lost": 2, "jobs_beyond_retries": 1, "other": 1}
