"""The engine run as a manager: watch-driven work queue, reconcile, leader election, metrics."""

from engine.controller.keys import InstanceKeys
from engine.controller.manager import Manager, ManagerSettings, default_identity
from engine.controller.metrics import Metrics
from engine.controller.probes import ProbeServer, parse_address
from engine.controller.queue import WorkQueue
from engine.controller.sharding import Shard, shard_of
from engine.controller.workers import Workers

__all__ = [
    "InstanceKeys",
    "Manager",
    "ManagerSettings",
    "Metrics",
    "ProbeServer",
    "Shard",
    "WorkQueue",
    "Workers",
    "default_identity",
    "parse_address",
    "shard_of",
]
