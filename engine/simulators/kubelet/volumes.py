"""A pod's volumes as host directories, the way the kubelet lays them out, and each container's mounts of them.

ConfigMap, Secret, downwardAPI and projected volumes are files written for the pod; an emptyDir is a directory
of the pod's; a PersistentVolumeClaim is a directory of the claim's volume, shared by every pod that mounts it
(one machine); a hostPath is the host's own path. A volume that cannot be set up raises `ConfigError` with the
kubelet's FailedMount message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.simulators.kubelet.environment import (
    ConfigError,
    JsonDict,
    Lookup,
    field_value,
    referenced,
    resource_value,
)

READ_ONLY_KINDS = ("configMap", "secret", "downwardAPI", "projected")


@dataclass(frozen=True)
class Mount:
    """A host path bound at a path inside the container."""

    source: str
    target: str
    read_only: bool = False


def write_files(folder: Path, files: dict[str, tuple[str, int]]) -> None:
    """Each relative path with its content and mode."""
    for relative, (content, mode) in sorted(files.items()):
        path = folder / relative
        if not path.resolve().is_relative_to(folder.resolve()):
            raise ConfigError(f"invalid path {relative!r}: must not contain '..'")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        path.chmod(mode)


def keyed_files(data: dict[str, str], source: JsonDict, default_mode: int) -> dict[str, tuple[str, int]]:
    """A ConfigMap's or Secret's keys as files: all of them, or the listed items at their paths."""
    items = source.get("items")
    if not items:
        return {key: (value, default_mode) for key, value in data.items()}
    files = {}
    for item in items:
        key = str(item.get("key") or "")
        if key not in data:
            if source.get("optional"):
                continue
            raise ConfigError(f"configmap references non-existent config key: {key}")
        files[str(item.get("path") or key)] = (data[key], int(item.get("mode") or default_mode))
    return files


class PodVolumes:
    """Sets up the volumes of one pod under `folder`, claims' directories under `claims`."""

    def __init__(self, pod: JsonDict, folder: Path, claims: Path, lookup: Lookup) -> None:
        self.pod, self.folder, self.claims, self.lookup = pod, folder, claims, lookup
        self.namespace = str(pod["metadata"].get("namespace") or "")

    def prepare(self) -> dict[str, str]:
        """Volume name → the host path that holds it."""
        paths = {}
        for volume in (self.pod.get("spec") or {}).get("volumes") or []:
            name = str(volume.get("name") or "")
            try:
                paths[name] = self.one(name, volume)
            except ConfigError as e:
                raise ConfigError(f'MountVolume.SetUp failed for volume "{name}" : {e}') from e
        return paths

    def one(self, name: str, volume: JsonDict) -> str:
        own = self.folder / "volumes" / name
        if "hostPath" in volume:
            return str((volume["hostPath"] or {}).get("path") or "")
        if "persistentVolumeClaim" in volume:
            return str(self.claim_folder(str((volume["persistentVolumeClaim"] or {}).get("claimName") or "")))
        own.mkdir(parents=True, exist_ok=True)
        if "emptyDir" in volume:
            return str(own)
        files = self.files_of(volume)
        if files is None:
            raise ConfigError(f"volume type {sorted(k for k in volume if k != 'name')} is not supported by the "
                              "process runtime")
        write_files(own, files)
        return str(own)

    def files_of(self, volume: JsonDict) -> dict[str, tuple[str, int]] | None:
        if "projected" in volume:
            projected = volume["projected"] or {}
            mode = int(projected.get("defaultMode") or 0o644)
            files: dict[str, tuple[str, int]] = {}
            for source in projected.get("sources") or []:
                files.update(self.projection(source, mode) or {})
            return files
        return self.projection(volume, None)

    def projection(self, source: JsonDict, mode: int | None) -> dict[str, tuple[str, int]] | None:
        if "configMap" in source:
            ref = source["configMap"] or {}
            data = referenced(self.lookup, "ConfigMap", self.namespace, str(ref.get("name") or ""),
                              bool(ref.get("optional")))
            return keyed_files(data or {}, ref, mode or int(ref.get("defaultMode") or 0o644))
        if "secret" in source:
            ref = source["secret"] or {}
            name = str(ref.get("secretName") or ref.get("name") or "")
            data = referenced(self.lookup, "Secret", self.namespace, name, bool(ref.get("optional")))
            return keyed_files(data or {}, ref, mode or int(ref.get("defaultMode") or 0o644))
        if "downwardAPI" in source:
            ref = source["downwardAPI"] or {}
            return {str(i.get("path")): (self.downward(i), int(i.get("mode") or mode or ref.get("defaultMode") or
                                                               0o644)) for i in ref.get("items") or []}
        if "serviceAccountToken" in source:
            return {str((source["serviceAccountToken"] or {}).get("path") or "token"): ("", mode or 0o644)}
        if "clusterTrustBundle" in source:
            return {str((source["clusterTrustBundle"] or {}).get("path") or "bundle.pem"): ("", mode or 0o644)}
        return None

    def downward(self, item: JsonDict) -> str:
        if "fieldRef" in item:
            path = str((item["fieldRef"] or {}).get("fieldPath") or "")
            if path in ("metadata.labels", "metadata.annotations"):
                values = (self.pod["metadata"].get(path.split(".")[1]) or {})
                return "".join(f'{k}="{v}"\n' for k, v in sorted(values.items()))
            return field_value(self.pod, path)
        ref = item.get("resourceFieldRef") or {}
        containers = (self.pod.get("spec") or {}).get("containers") or []
        container: JsonDict = next((c for c in containers if c.get("name") == ref.get("containerName")), {})
        return resource_value(container, ref)

    def claim_folder(self, claim: str) -> Path:
        """The directory of the claim's volume: one per claim (by uid, as a bound volume belongs to one claim)."""
        obj = self.lookup("PersistentVolumeClaim", self.namespace, claim)
        if obj is None:
            raise ConfigError(f'persistentvolumeclaim "{claim}" not found')
        folder = self.claims / f"{self.namespace}_{claim}_{obj['metadata'].get('uid')}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def container_mounts(pod: JsonDict, container: JsonDict, volumes: dict[str, str], termination_log: Path) -> list[Mount]:
    """The container's volumeMounts (with subPath) and its termination message file, as binds."""
    kinds = {str(v.get("name")): next((k for k in v if k != "name"), "") for v in (pod.get("spec") or {}).get(
        "volumes") or []}
    mounts = []
    for item in container.get("volumeMounts") or []:
        name = str(item.get("name") or "")
        if name not in volumes:
            raise ConfigError(f'volume "{name}" of volumeMount not found in the pod\'s volumes')
        source = volumes[name]
        sub = str(item.get("subPath") or "")
        if sub:
            source = os.path.join(source, sub)
            if not os.path.lexists(source):
                os.makedirs(source, exist_ok=True)
        read_only = bool(item.get("readOnly")) or kinds.get(name) in READ_ONLY_KINDS
        mounts.append(Mount(source, str(item.get("mountPath") or ""), read_only))
    path = str(container.get("terminationMessagePath") or "/dev/termination-log")
    termination_log.parent.mkdir(parents=True, exist_ok=True)
    termination_log.write_text("")
    mounts.append(Mount(str(termination_log), path))
    return mounts
