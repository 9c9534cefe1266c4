"""The Instance that owns what a plan applies, and stamping objects kplan builds itself (child Instances, pipe
outputs) exactly as `engine.render` stamps rendered ones."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.planner.ownership import field_manager
from engine.render.stamping import INSTANCE_API_VERSION as INSTANCE_API
from engine.render.stamping import stamp as render_stamp

__all__ = ["INSTANCE_API", "Owner", "stamp"]


@dataclass(frozen=True)
class Owner:
    """The Instance that owns what a plan applies; `operator` is its package name."""

    name: str
    namespace: str
    uid: str
    operator: str

    @property
    def manager(self) -> str:
        """The field manager this Instance applies with."""
        return field_manager(self.namespace, self.name)


def stamp(obj: Mapping[str, Any], owner: Owner, plan: str, step: str, operator: str | None = None) -> dict[str, Any]:
    """A copy of `obj` with kplan's labels and annotations and, in the owner's namespace, an ownerReference."""
    return render_stamp(copy.deepcopy(dict(obj)), instance=owner.name, namespace=owner.namespace,
                        operator=operator or owner.operator, plan=plan, step=step, instance_uid=owner.uid or None)
