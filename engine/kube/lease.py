"""LeaderElector: leader election on a coordination.k8s.io/v1 Lease, with optimistic concurrency."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engine.errors import KplanError
from engine.kube.fence import Fence, LeadershipLost

if TYPE_CHECKING:
    from engine.kube.client import Kube

__all__ = ["LeaderElector"]

log = logging.getLogger(__name__)

LEASE = ("coordination.k8s.io/v1", "Lease")


def micro_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# Why not kubernetes.leaderelection: its LeaseLock builds its own CoordinationV1Api on the global default
# client (so it ignores this Kube's kubeconfig and escapes the request counters), its loop cannot be
# stopped (no stop signal; it sleeps on time.sleep and exits the process on bad settings), it never
# releases the lease on shutdown, and it refuses retry periods under a second, which tests need.
class LeaderElector:
    """Campaigns for the Lease `namespace/name` as `identity` and renews it while leading.

    A leader that cannot renew within `renew_deadline` seconds stops leading (and campaigns again); a
    candidate takes over a lease not renewed for `lease_duration` seconds, as observed on its own clock.
    `fence` (engine.kube.fence) is granted until each successful renewal's start plus `renew_deadline`; the
    leader's renewals keep to it too, so one blocked by a partition gives up in time to step down.
    """

    def __init__(
        self,
        kube: Kube,
        name: str,
        namespace: str,
        identity: str,
        *,
        lease_duration: float = 15,
        renew_deadline: float = 10,
        retry_period: float = 2,
        release_on_stop: bool = True,
        fence: Fence | None = None,
    ) -> None:
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError("need lease_duration > renew_deadline > retry_period > 0")
        self.name, self.namespace, self.identity = name, namespace, identity
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.release_on_stop = release_on_stop
        self.is_leader = False
        self.fence = fence or Fence(kube.clock)
        self._kube = kube
        self._renewing = kube.fenced(self.fence)
        self._observed: tuple[Any, ...] | None = None  # (holder, renewTime) last seen
        self._observed_at = 0.0
        self._renewed_at = 0.0

    def run(
        self, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None], stop: threading.Event
    ) -> None:
        """Campaign and lead until `stop` is set. Callbacks run on this thread and must not block."""
        try:
            while not stop.is_set():
                self._campaign(on_started_leading, on_stopped_leading)
                self._kube.clock.wait(stop, self.retry_period)
        finally:
            if self.is_leader:
                self._step_down(on_stopped_leading)
                if self.release_on_stop:
                    self._release()

    def _campaign(self, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None]) -> None:
        """One round: acquire or renew; start leading on success, stop when renewals failed too long."""
        clock = self._kube.clock
        started = clock.monotonic()
        if self._try_acquire_or_renew():
            self._renewed_at = started
            self.fence.grant(started + self.renew_deadline)
            if not self.is_leader and self.fence.remaining() > 0:  # not when the answer came too late to act on
                self.is_leader = True
                on_started_leading()
        elif self.is_leader and clock.monotonic() - self._renewed_at >= self.renew_deadline:
            self._step_down(on_stopped_leading)

    def _step_down(self, on_stopped_leading: Callable[[], None]) -> None:
        self.fence.revoke()
        self.is_leader = False
        log.info("lease lost", extra={"lease": self.name, "identity": self.identity})
        on_stopped_leading()

    def _try_acquire_or_renew(self) -> bool:
        kube = self._renewing if self.is_leader else self._kube  # a renewal must not outlast the fence
        try:
            lease = kube.get(*LEASE, self.name, self.namespace)
            if lease is None:
                kube.create(self._lease(None))
                return True
            if not self._may_take(lease):
                return False
            kube.replace(self._lease(lease))
            return True
        except (KplanError, LeadershipLost) as exc:  # a lost race (409), an unavailable server, a spent fence
            log.info("lease not acquired: %s", exc, extra={"lease": self.name, "identity": self.identity})
            return False

    def _may_take(self, lease: dict[str, Any]) -> bool:
        """True when we hold the lease, nobody does, or the holder has not renewed for its duration."""
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        observed = (holder, spec.get("renewTime"), lease["metadata"].get("resourceVersion"))
        now = self._kube.clock.monotonic()
        if observed != self._observed:
            self._observed, self._observed_at = observed, now
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        return holder in ("", self.identity) or now - self._observed_at >= duration

    def _lease(self, current: dict[str, Any] | None) -> dict[str, Any]:
        """The Lease held by us as of now, keeping acquireTime while we already held it."""
        now = micro_time(self._kube.clock.now())
        spec = dict((current or {}).get("spec") or {})
        transitions = int(spec.get("leaseTransitions") or 0)
        if spec.get("holderIdentity") != self.identity:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = transitions + 1 if current is not None else 0
        spec.update(holderIdentity=self.identity, leaseDurationSeconds=max(1, round(self.lease_duration)),
                    renewTime=now)
        metadata = (current or {}).get("metadata") or {"name": self.name, "namespace": self.namespace}
        return {"apiVersion": LEASE[0], "kind": LEASE[1], "metadata": metadata, "spec": spec}

    def _release(self) -> None:
        """Hand the lease back so another candidate need not wait for it to expire."""
        try:
            lease = self._kube.get(*LEASE, self.name, self.namespace)
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            spec = {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}
            self._kube.replace({**lease, "spec": spec})
        except KplanError as exc:
            log.info("lease not released: %s", exc, extra={"lease": self.name, "identity": self.identity})
