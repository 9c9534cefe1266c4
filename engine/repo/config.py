"""The user's repositories (`$XDG_CONFIG_HOME/kplan/repositories.yaml`) and their cached indexes
(`$XDG_CACHE_HOME/kplan/repositories/NAME-index.yaml`); without the variables, ~/.config and ~/.cache."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engine.errors import PermanentError
from engine.repo import index

__all__ = ["Repository", "add", "cache_file", "cached_index", "load", "remove", "save_index"]

API_VERSION = "kplan.dev/v1alpha1"
KIND = "Repositories"


@dataclass(frozen=True)
class Repository:
    name: str
    url: str


def config_dir() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "kplan"


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kplan" / "repositories"


def config_file() -> Path:
    return config_dir() / "repositories.yaml"


def cache_file(name: str) -> Path:
    return cache_dir() / f"{name}-index.yaml"


def load() -> list[Repository]:
    """The configured repositories, in the order they were added."""
    path = config_file()
    if not path.is_file():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise PermanentError(f"{path} is not valid YAML: {str(err).splitlines()[0]}") from None
    items = data.get("repositories") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) and i.get("name") and i.get("url") for i in items):
        raise PermanentError(f"{path} must hold `repositories:`, a list of entries with name and url")
    return [Repository(str(i["name"]), str(i["url"])) for i in items]


def save(repositories: list[Repository]) -> None:
    data: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND,
                            "repositories": [{"name": r.name, "url": r.url} for r in repositories]}
    write(config_file(), yaml.safe_dump(data, sort_keys=False))


def add(repository: Repository) -> None:
    """Add or replace the repository of that name."""
    kept = [r for r in load() if r.name != repository.name]
    save([*kept, repository])


def remove(name: str) -> None:
    kept = [r for r in load() if r.name != name]
    if len(kept) == len(load()):
        raise PermanentError(f"no repository named {name!r} is configured (see `kplan repo list`)")
    save(kept)
    cache_file(name).unlink(missing_ok=True)


def save_index(name: str, text: str) -> None:
    write(cache_file(name), text)


def cached_index(repository: Repository) -> dict[str, Any]:
    path = cache_file(repository.name)
    if not path.is_file():
        raise PermanentError(f"repository {repository.name!r} has no cached index; run `kplan repo update`")
    return index.load(path.read_text(encoding="utf-8"), str(path))


def write(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
