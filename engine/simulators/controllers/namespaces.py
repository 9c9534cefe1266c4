"""What kube-controller-manager puts in every namespace: the `default` ServiceAccount (serviceaccount-controller)
and the `kube-root-ca.crt` ConfigMap (root-ca-certificate-publisher), put back when someone deletes them."""

from __future__ import annotations

from collections.abc import Iterable

from engine.simulators.api import CONFIGMAP, NAMESPACE, SERVICEACCOUNT, Api, Conflict, JsonDict, ref_of
from engine.simulators.controllers.workloads import MANAGER
from engine.simulators.runtime import EVERYTHING, Ref

DEFAULT_ACCOUNT = "default"
ROOT_CA = "kube-root-ca.crt"
ROOT_CA_DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
                       "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
                       "guaranteed across distributions of Kubernetes clusters.")


def root_ca_configmap(namespace: str) -> JsonDict:
    """The dev cluster serves plain HTTP and has no CA: its bundle is empty."""
    return {"metadata": {"name": ROOT_CA, "namespace": namespace,
                         "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
            "data": {"ca.crt": ""}}


class NamespaceContentsController:
    name = "namespacecontents"

    def __init__(self, api: Api) -> None:
        self._api = api

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        namespace, name = ref_of(obj)
        if NAMESPACE.describes(obj):
            yield "", name
        elif (SERVICEACCOUNT.describes(obj) and name == DEFAULT_ACCOUNT) or (CONFIGMAP.describes(obj)
                                                                           and name == ROOT_CA):
            yield "", namespace

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(ns) for ns in self._api.objects(NAMESPACE)] if marker == EVERYTHING else []

    def reconcile(self, _namespace: str, name: str) -> float | None:
        namespace = self._api.get(NAMESPACE, "", name)
        if namespace is None or namespace["metadata"].get("deletionTimestamp"):
            return None
        wanted = [(SERVICEACCOUNT, DEFAULT_ACCOUNT, {"metadata": {"name": DEFAULT_ACCOUNT, "namespace": name}}),
                  (CONFIGMAP, ROOT_CA, root_ca_configmap(name))]
        for kind, object_name, obj in wanted:
            if self._api.get(kind, name, object_name) is None:
                try:
                    self._api.create(kind, obj, MANAGER)
                except Conflict:
                    continue  # made since the cache was filled
        return None
