"""The real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) as local processes."""

from engine.controlplane.binaries import KUBERNETES_VERSION, BinariesMissing
from engine.controlplane.plane import ControlPlane

__all__ = ["KUBERNETES_VERSION", "BinariesMissing", "ControlPlane"]
