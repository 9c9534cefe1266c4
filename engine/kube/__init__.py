"""The only package that talks to the Kubernetes API (server-side apply, caches, watch, status, events)."""

from typing import TYPE_CHECKING

from engine import exports

if TYPE_CHECKING:
    from engine.kube.caches import Caches, Handler
    from engine.kube.client import APPLY_PATCH, MERGE_PATCH, Kube
    from engine.kube.clock import Clock, SystemClock
    from engine.kube.connect import connect
    from engine.kube.discovery import Resource
    from engine.kube.errors import AlreadyExists, Conflict, Expired, NotFound, NotKubernetes
    from engine.kube.fence import Fence, LeadershipLost
    from engine.kube.lease import LeaderElector
    from engine.kube.watching import Watch

__all__ = [
    "APPLY_PATCH",
    "MERGE_PATCH",
    "AlreadyExists",
    "Caches",
    "Clock",
    "Conflict",
    "Expired",
    "Fence",
    "Handler",
    "Kube",
    "LeaderElector",
    "LeadershipLost",
    "NotFound",
    "NotKubernetes",
    "Resource",
    "SystemClock",
    "Watch",
    "connect",
]

# Where each name lives: imported at its first use (engine.exports).
_HOMES = {
    "Caches": "caches",
    "Handler": "caches",
    "APPLY_PATCH": "client",
    "MERGE_PATCH": "client",
    "Kube": "client",
    "Clock": "clock",
    "SystemClock": "clock",
    "connect": "connect",
    "Resource": "discovery",
    "AlreadyExists": "errors",
    "Conflict": "errors",
    "Expired": "errors",
    "NotFound": "errors",
    "NotKubernetes": "errors",
    "Fence": "fence",
    "LeadershipLost": "fence",
    "LeaderElector": "lease",
    "Watch": "watching",
}
exports.defer(__name__, _HOMES)
