"""The kubeconfig that points kubectl and the Python client at a dev cluster."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml


def document(url: str, context: str, token: str | None) -> dict[str, Any]:
    user: dict[str, Any] = {"token": token} if token else {}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": url}}],
        "users": [{"name": context, "user": user}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context, "namespace": "default"}}],
        "current-context": context,
        "preferences": {},
    }


def write(path: str | Path, url: str, context: str, token: str | None) -> Path:
    """Write the file (readable by its owner only, as it may hold a token) and return its path."""
    return save(path, document(url, context, token))


def save(path: str | Path, config: dict[str, Any]) -> Path:
    """Write a kubeconfig document readable by its owner only (it holds credentials); its path."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(config, sort_keys=False)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return target
