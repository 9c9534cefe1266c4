"""Which Instances a manager reconciles when the work is split into shards, the way Flux and Argo CD split it.

A shard owns an Instance when the hash of its `namespace/name` falls on the shard's index (`--shards N
--shard-index I`) and, with `--selector`, when the Instance's labels match the selector too (the manager caches
only those Instances, so a shard also holds only its share in memory). Each shard holds a Lease of its own, so
several replicas of one shard stand by for each other, and shards never wait for one another.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = ["Shard", "shard_of"]


def shard_of(namespace: str, name: str, shards: int) -> int:
    """The shard of the Instance `namespace/name` among `shards`: stable across processes and versions."""
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shards


@dataclass(frozen=True)
class Shard:
    """One share of the Instances: index `index` of `count` by hash, and those matching `selector` (if any)."""

    count: int = 1
    index: int = 0
    selector: str | None = None

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard index {self.index} is not one of 0..{self.count - 1}")

    @property
    def whole(self) -> bool:
        """Not sharded at all: every Instance is this manager's."""
        return self.count == 1 and not self.selector

    def owns(self, namespace: str, name: str) -> bool:
        """Whether the hash of `namespace/name` falls on this shard (the selector is the Instance cache's to apply)."""
        return self.count == 1 or shard_of(namespace, name, self.count) == self.index

    def lease_name(self, base: str) -> str:
        """The Lease of this shard: `base` alone when not sharded, else with the shard's index and selector."""
        if self.whole:
            return base
        parts = [base]
        if self.count > 1:
            parts.append(f"shard-{self.index}")
        if self.selector:
            parts.append(hashlib.sha256(self.selector.encode()).hexdigest()[:8])
        return "-".join(parts)
