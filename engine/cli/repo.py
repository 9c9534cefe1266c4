"""`kplan repo index|add|list|remove|update` and `kplan search`: Helm-style package repositories.

A repository is a folder of package archives with an `index.yaml` (`repo index` writes it), served over
http(s):// or read from file://. `repo add` keeps its URL in the user's configuration and a copy of its
index in the user's cache; `search` and `install NAME` read those copies, `repo update` refreshes them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.cli import flags, output
from engine.cli.preflight import DNS_LABEL
from engine.errors import PermanentError
from engine.repo import config, fetching, index, selection

__all__ = ["register"]


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("repo", help="package repositories: index, add, list, remove, update",
                                   parents=parents)
    sub = parser.add_subparsers(dest="repo_command", metavar="COMMAND", required=True)

    build = sub.add_parser("index", help="write DIR/index.yaml for every .tgz in DIR", parents=parents)
    build.add_argument("dir", metavar="DIR")
    build.add_argument("--url", help="base URL the archives will be served from (default: relative to the index)")
    build.add_argument("--merge", metavar="OLD", help="keep the versions of this existing index.yaml too")
    build.set_defaults(func=run_index)

    add = sub.add_parser("add", help="add a repository (its index is fetched now)", parents=parents)
    add.add_argument("name", metavar="NAME")
    add.add_argument("url", metavar="URL", help="http(s):// or file:// URL of the folder holding index.yaml")
    add.set_defaults(func=run_add)

    listing = sub.add_parser("list", help="list the configured repositories", parents=parents)
    flags.accepts_output(listing, "table", "yaml", "json")
    listing.set_defaults(func=run_list)

    remove = sub.add_parser("remove", help="remove a repository", parents=parents)
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(func=run_remove)

    update = sub.add_parser("update", help="fetch the indexes again", parents=parents)
    update.add_argument("names", metavar="NAME", nargs="*", help="only these repositories (default: all)")
    update.set_defaults(func=run_update)


def register_search(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    search = subparsers.add_parser("search", help="search the repositories' packages by name and description",
                                   parents=parents)
    search.add_argument("word", metavar="WORD", nargs="?", default="", help="text to look for (default: list all)")
    search.add_argument("--versions", action="store_true", help="list every version, not only the newest")
    flags.accepts_output(search, "table", "yaml", "json")
    search.set_defaults(func=run_search)


# --- index ----------------------------------------------------------------------------------------


def run_index(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not folder.is_dir():
        raise PermanentError(f"{folder} is not a folder")
    archives = [index.Archive(p.name, p.read_bytes(), modified(p)) for p in sorted(folder.glob("*.tgz"))]
    built = index.build(archives, args.url)
    if args.merge:
        old = Path(args.merge)
        built = index.merge(built, index.load(old.read_text(encoding="utf-8"), str(old)))
    target = folder / "index.yaml"
    config.write(target, index.dump(built))
    count = len(index.entries_of(built))
    print(f"{target}: {count} {'version' if count == 1 else 'versions'} of {len(built['entries'])} "
          f"{'package' if len(built['entries']) == 1 else 'packages'}")
    return 0


def modified(path: Path) -> str:
    """The file's modification time, RFC 3339 in UTC to the second (the `created` time of its entry)."""
    return datetime.fromtimestamp(int(path.stat().st_mtime), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the user's repositories -----------------------------------------------------------------------


def run_add(args: argparse.Namespace) -> int:
    if not DNS_LABEL.fullmatch(args.name):
        print(f"error: repository name {args.name!r} is not valid: use lower-case letters, digits and '-'",
              file=sys.stderr)
        return 2
    if not args.url.startswith(fetching.URL_SCHEMES):
        print(f"error: {args.url!r} is not an http://, https:// or file:// URL", file=sys.stderr)
        return 2
    repository = config.Repository(args.name, args.url)
    text = fetching.fetch_index(repository)
    config.save_index(repository.name, text)
    config.add(repository)
    print(f"repository {args.name!r} added ({args.url})")
    return 0


def run_list(args: argparse.Namespace) -> int:
    repositories = config.load()
    if not repositories and args.output not in ("yaml", "json"):
        print("No repositories configured; add one with `kplan repo add NAME URL`.", file=sys.stderr)
        return 0
    data = [{"name": r.name, "url": r.url} for r in repositories]
    output.emit(data, args.output, sys.stdout, ("name", "url"), [[r.name, r.url] for r in repositories])
    return 0


def run_remove(args: argparse.Namespace) -> int:
    config.remove(args.name)
    print(f"repository {args.name!r} removed")
    return 0


def run_update(args: argparse.Namespace) -> int:
    repositories = config.load()
    unknown = sorted(set(args.names) - {r.name for r in repositories})
    if unknown:
        raise PermanentError(f"no repository named {unknown[0]!r} is configured (see `kplan repo list`)")
    chosen = [r for r in repositories if not args.names or r.name in args.names]
    if not chosen:
        raise PermanentError("no repositories are configured; add one with `kplan repo add NAME URL`")
    texts = {r.name: fetching.fetch_index(r) for r in chosen}  # every index fetched before any is replaced
    for name, text in texts.items():
        config.save_index(name, text)
        print(f"repository {name!r} updated")
    return 0


# --- search ---------------------------------------------------------------------------------------


def run_search(args: argparse.Namespace) -> int:
    word = args.word.lower()
    rows: list[list[Any]] = []
    for repository in config.load():
        entries = config.cached_index(repository).get("entries") or {}
        for name in sorted(entries):
            versions = selection.ordered(entries[name])
            shown = versions if args.versions else versions[:1]
            rows += [[f"{repository.name}/{name}", e["version"], e.get("appVersion") or "",
                      e.get("description") or ""] for e in shown if matches(word, name, e)]
    if not rows and args.output not in ("yaml", "json"):
        print(f"No packages match {args.word!r}." if args.word else "No packages found.", file=sys.stderr)
        return 0
    headers = ("name", "version", "app version", "description")
    data = [dict(zip(("name", "version", "appVersion", "description"), r, strict=True)) for r in rows]
    output.emit(data, args.output, sys.stdout, headers, rows)
    return 0


def matches(word: str, name: str, entry: Mapping[str, Any]) -> bool:
    return word in name.lower() or word in str(entry.get("description") or "").lower()
