"""The resource quota controller of the dev backend: each quota's `status.hard` and `status.used`, recomputed
after every change in its namespace (as kube-controller-manager's resourcequota-controller does shortly after)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.apiserver import quotas
from engine.apiserver.objects import copy_json, name_of
from engine.apiserver.routing import Target
from engine.apiserver.writes import WriteOptions, commit_update

if TYPE_CHECKING:
    from engine.apiserver.api import Api

MANAGER = "kube-controller-manager"


def sync(api: Api, namespace: str) -> None:
    """Write the status of every quota of the namespace whose usage or limits changed."""
    if not namespace or not api.store.count(quotas.QUOTAS, namespace):
        return
    quota_types = api.registry.by_key(quotas.QUOTAS)
    with api.store.lock:
        for quota in api.store.items(quotas.QUOTAS, namespace):
            keys = {key for name in (quota.get("spec") or {}).get("hard") or {} for key in quotas.keys_for(name)}
            status = quotas.status_of(quota, {key: api.store.items(key, namespace) for key in keys})
            if status == quota.get("status") or not quota_types:
                continue
            new = copy_json(quota)
            new["status"] = status
            target = Target(quota_types[0], namespace, name_of(quota), "status")
            commit_update(api, target, quota, new, WriteOptions(False, MANAGER, "Ignore"))
