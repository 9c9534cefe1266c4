"""The volume controllers: provision a PersistentVolume per claim, bind both, and clean up after the claim.

With `bind=False` (a real control plane, whose PV controller binds and protects claims) they are only the
dynamic provisioner of the simulated StorageClass: a pre-bound volume per claim, deleted once it is Released.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.simulators import steering
from engine.simulators.api import POD, PV, PVC, Api, Conflict, JsonDict, ref_of
from engine.simulators.runtime import EVERYTHING, Ref, Stopwatch

MANAGER = "kube-controller-manager"  # the PV binder and pvc-protection are its controllers
PROVISIONER_MANAGER = "devcluster-provisioner"
PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
PROVISIONER = "devcluster.kplan.dev/hostpath"
STORAGE_CLASS = "standard"  # the default StorageClass a real backend gets, provisioned by PROVISIONER
BOUND_NOTES = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
               "volume.kubernetes.io/storage-provisioner": PROVISIONER,
               "volume.beta.kubernetes.io/storage-provisioner": PROVISIONER}


def volume_name(claim: JsonDict) -> str:
    return f"pvc-{claim['metadata']['uid']}"


def requested_storage(claim: JsonDict) -> str:
    return str((((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage") or "1Gi")


def volume_for(claim: JsonDict) -> JsonDict:
    """A PersistentVolume provisioned for the claim, as a dynamic provisioner would create it."""
    meta, spec = claim["metadata"], claim.get("spec") or {}
    pv_spec: JsonDict = {
        "capacity": {"storage": requested_storage(claim)},
        "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
        "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": meta["name"],
                     "namespace": meta.get("namespace"), "uid": meta["uid"],
                     "resourceVersion": meta.get("resourceVersion")},
        "persistentVolumeReclaimPolicy": "Delete",
        "volumeMode": spec.get("volumeMode", "Filesystem"),
        "hostPath": {"path": f"/var/lib/devcluster/{volume_name(claim)}", "type": ""},
    }
    if spec.get("storageClassName"):
        pv_spec["storageClassName"] = spec["storageClassName"]
    return {"metadata": {"name": volume_name(claim), "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
                         "finalizers": [PV_PROTECTION]}, "spec": pv_spec}


def ours(claim: JsonDict) -> bool:
    """A claim for this provisioner: of the simulated StorageClass, or annotated for it by the PV controller."""
    notes = claim["metadata"].get("annotations") or {}
    chosen = (notes.get("volume.kubernetes.io/storage-provisioner"),
              notes.get("volume.beta.kubernetes.io/storage-provisioner"))
    return (claim.get("spec") or {}).get("storageClassName") == STORAGE_CLASS or PROVISIONER in chosen


def storage_class() -> JsonDict:
    """The default StorageClass of a real backend, whose claims the simulated provisioner serves."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": STORAGE_CLASS, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": PROVISIONER, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"}


def claims_of(pod: JsonDict) -> list[str]:
    volumes = (pod.get("spec") or {}).get("volumes") or []
    return [str(v["persistentVolumeClaim"].get("claimName")) for v in volumes
            if isinstance(v, dict) and isinstance(v.get("persistentVolumeClaim"), dict)]


def in_use(claim: JsonDict, pods: Iterable[JsonDict]) -> bool:
    name = claim["metadata"]["name"]
    return any(name in claims_of(p) and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
               for p in pods)


class ClaimController:
    """Binds each claim (after its simulated duration) and lifts its protection once no running pod uses it."""

    name = "persistentvolumeclaims"

    def __init__(self, api: Api, *, bind: bool = True) -> None:
        self._api = api
        self._binding = bind
        self._clock = Stopwatch()

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if PVC.describes(obj):
            yield ref_of(obj)
        elif POD.describes(obj):
            namespace = ref_of(obj)[0]
            yield from ((namespace, claim) for claim in claims_of(obj))

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(c) for c in self._api.objects(PVC)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        claim = self._api.get(PVC, namespace, name)
        if claim is None:
            self._clock.forget((namespace, name))
            return None
        meta = claim["metadata"]
        if meta.get("deletionTimestamp"):
            if self._binding:
                self._unprotect(claim)
            return None
        if (claim.get("status") or {}).get("phase") == "Bound":
            return None
        if not self._binding and not ours(claim):
            return None
        remaining = self._clock.remaining((namespace, name), meta["uid"], steering.duration_of(claim))
        if remaining > 0:
            return remaining
        self._bind(claim)
        return None

    def _bind(self, claim: JsonDict) -> None:
        meta = claim["metadata"]
        volume = self._api.get(PV, "", volume_name(claim))
        if volume is None:
            try:
                volume = self._api.create(PV, volume_for(claim), MANAGER if self._binding else PROVISIONER_MANAGER)
            except Conflict:
                volume = self._api.get(PV, "", volume_name(claim)) or {}
        if not self._binding:
            return
        if volume and (volume.get("status") or {}).get("phase") != "Bound":
            self._api.write_status(PV, volume, {"phase": "Bound"}, MANAGER)
        bound = self._api.patch(PVC, meta.get("namespace", ""), meta["name"], {
            "metadata": {"annotations": BOUND_NOTES, "resourceVersion": meta["resourceVersion"]},
            "spec": {"volumeName": volume_name(claim)}}, MANAGER)
        spec = claim.get("spec") or {}
        status = {"phase": "Bound", "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
                  "capacity": {"storage": requested_storage(claim)}}
        self._api.write_status(PVC, bound, status, MANAGER)

    def _unprotect(self, claim: JsonDict) -> None:
        meta = claim["metadata"]
        if PROTECTION not in (meta.get("finalizers") or []):
            return
        if not in_use(claim, self._api.objects(POD, str(meta.get("namespace") or ""))):
            self._api.remove_finalizer(PVC, claim, PROTECTION, MANAGER)


class VolumeController:
    """Deletes a provisioned volume once its claim is gone (reclaim policy Delete); Retain releases it."""

    name = "persistentvolumes"

    def __init__(self, api: Api, *, bind: bool = True) -> None:
        self._api = api
        self._binding = bind

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if PV.describes(obj):
            yield ref_of(obj)
        elif PVC.describes(obj) and event == "DELETED":
            yield "", volume_name(obj)

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(v) for v in self._api.objects(PV)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        volume = self._api.get(PV, "", name)
        if volume is None:
            return None
        if volume["metadata"].get("deletionTimestamp"):
            if self._binding:
                self._unprotect(volume)
            return None
        if not self._binding:  # the real PV controller releases it; the provisioner deletes what it made
            notes = volume["metadata"].get("annotations") or {}
            released = (volume.get("status") or {}).get("phase") == "Released"
            if released and notes.get("pv.kubernetes.io/provisioned-by") == PROVISIONER and (
                    (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy") == "Delete"):
                self._api.delete(PV, "", name)
            return None
        claim_ref = (volume.get("spec") or {}).get("claimRef") or {}
        if not claim_ref or (volume.get("status") or {}).get("phase") != "Bound":
            return None
        claim = self._api.get(PVC, str(claim_ref.get("namespace") or ""), str(claim_ref.get("name") or ""))
        if claim is not None and claim["metadata"].get("uid") == claim_ref.get("uid"):
            return None
        if (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy") == "Delete":
            self._api.delete(PV, "", name)
        else:
            self._api.write_status(PV, volume, {"phase": "Released"}, MANAGER)
        return None

    def _unprotect(self, volume: JsonDict) -> None:
        self._api.remove_finalizer(PV, volume, PV_PROTECTION, MANAGER)
