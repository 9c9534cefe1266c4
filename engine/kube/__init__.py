"""The only package that talks to the Kubernetes API (server-side apply, caches, watch, status, events)."""

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
