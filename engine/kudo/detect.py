"""Whether files are a KUDO package: read by every command that loads a local package, so it imports nothing
of the converter."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["is_kudo_package"]


def is_kudo_package(files: Mapping[str, str]) -> bool:
    """True when operator.yaml or params.yaml says kudo.dev, or operator.yaml has KUDO's own fields."""
    for name in ("operator.yaml", "params.yaml"):
        text = files.get(name, "")
        if re.search(r"^apiVersion:\s*[\"']?kudo\.dev/", text, re.MULTILINE):
            return True
    operator = files.get("operator.yaml", "")
    return not re.search(r"^apiVersion:", operator, re.MULTILINE) and bool(
        re.search(r"^(kudoVersion|kubernetesVersion):|^\s+kind:\s*KudoOperator\b", operator, re.MULTILINE))
