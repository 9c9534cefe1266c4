"""Where the pinned control-plane binaries are: the cache `make control-plane` builds into, keyed by version."""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import PermanentError

__all__ = ["KUBERNETES_VERSION", "NAMES", "BinariesMissing", "directory", "locate"]

KUBERNETES_VERSION = "v1.37.2"
NAMES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


class BinariesMissing(PermanentError):
    def __init__(self, folder: Path, missing: list[str]) -> None:
        super().__init__(f"the real control plane is not built ({', '.join(missing)} missing in {folder}): "
                         "run `make control-plane` (needs Go >= 1.26 on PATH) or set KPLAN_KUBE_DIR")
        self.missing = missing


def directory() -> Path:
    """KPLAN_KUBE_DIR, else ~/.cache/kplan/kube-<version> (under XDG_CACHE_HOME when set), as tools/kube/build.sh."""
    explicit = os.environ.get("KPLAN_KUBE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "kplan" / f"kube-{KUBERNETES_VERSION}"


def locate(folder: Path | None = None) -> dict[str, Path]:
    """Each binary's path; BinariesMissing naming `make control-plane` when any is absent."""
    folder = folder or directory()
    paths = {name: folder / name for name in NAMES}
    missing = [name for name, path in paths.items() if not os.access(path, os.X_OK)]
    if missing:
        raise BinariesMissing(folder, missing)
    return paths
