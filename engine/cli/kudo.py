"""KUDO packages on the command line: `package convert --from kudo`, and KUDO packages accepted wherever a
package is (converted in memory, with a one-line notice), their KudoOperator children found in `--kudo-repo`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from engine.errors import PermanentError
from engine.kudo.detect import is_kudo_package
from engine.package import files as package_files
from engine.package import loader

if TYPE_CHECKING:
    from engine.kudo.convert import Conversion

__all__ = ["find_child", "is_kudo_package", "read_package_files", "register_convert", "set_repository"]

_repositories: list[Path] = []


def set_repository(folder: str | None) -> None:
    """Where KudoOperator children are looked up (the `--kudo-repo` flag), besides the parent's own folder."""
    _repositories[:] = [Path(folder)] if folder else []


def read_package_files(source: str, quiet: bool = False) -> dict[str, str]:
    """The files of the package at `source`; a KUDO package's are those of its conversion."""
    files = loader.read_files(source)
    if not is_kudo_package(files):
        return files
    conversion = convert_files(files, source)
    if not quiet:
        gaps = len(conversion.gaps)
        extra = f", {gaps} untranslated construct{'s' if gaps != 1 else ''}" if gaps else ""
        print(f"note: {source} is a KUDO package, converted in memory ({len(conversion.notes)} notes{extra}; "
              "`kplan package convert --from kudo` writes it out with them)", file=sys.stderr)
    return conversion.files


def convert_files(files: dict[str, str], source: str) -> Conversion:
    from engine.kudo.convert import convert  # the converter only for KUDO packages

    return convert(files, children=_available_children(files, source))


def _available_children(files: dict[str, str], source: str) -> dict[str, str]:
    """The version of each package a KudoOperator task names, as found beside the parent or in --kudo-repo."""
    try:
        operator = yaml.safe_load(files.get("operator.yaml", "")) or {}
    except yaml.YAMLError:
        return {}
    found: dict[str, str] = {}
    tasks = operator.get("tasks") if isinstance(operator, dict) else None
    for task in tasks if isinstance(tasks, list) else []:
        spec = task.get("spec") if isinstance(task, dict) else None
        if not isinstance(spec, dict) or task.get("kind") != "KudoOperator" or not spec.get("package"):
            continue
        folder = find_child(str(spec["package"]), source)
        child = _manifest(folder / "operator.yaml") if folder is not None else None
        if child is not None and child.get("operatorVersion"):
            found[str(spec["package"])] = str(child["operatorVersion"])
    return found


def find_child(name: str, parent: str) -> Path | None:
    """The folder of package `name`: beside the parent, else in --kudo-repo as `NAME/operator`, `NAME` or
    any folder whose operator.yaml is named so."""
    parent_folder = Path(parent) if Path(parent).is_dir() else None
    candidates = [parent_folder / name, parent_folder.parent / name] if parent_folder else []
    for repo in _repositories:
        candidates += [repo / name / "operator", repo / name]
    for candidate in candidates:
        if name and (candidate / "operator.yaml").is_file():
            return candidate
    for repo in _repositories:
        for manifest in sorted(repo.glob("**/operator.yaml")):
            if _name_of(manifest) == name:
                return manifest.parent
    return None


def _manifest(path: Path) -> dict[str, Any] | None:
    """An operator.yaml as a mapping; None when it cannot be read (loading the package reports why)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None


def _name_of(manifest: Path) -> str | None:
    data = _manifest(manifest)
    return str(data.get("name")) if data is not None else None


# -- `kplan package convert`

def register_convert(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("convert", help="convert a KUDO package into a kplan package", parents=parents)
    parser.add_argument("--from", dest="source_format", required=True, choices=["kudo"],
                        help="the format of SRC (only kudo)")
    parser.add_argument("source", metavar="SRC", help="the KUDO package: a folder or .tgz")
    parser.add_argument("dest", metavar="DEST", help="the folder to write the kplan package into")
    parser.set_defaults(func=run_convert)


def run_convert(args: argparse.Namespace) -> int:
    files = loader.read_files(args.source)
    if not is_kudo_package(files):
        raise PermanentError(f"{args.source} is not a KUDO package: its operator.yaml does not say kudo.dev/v1beta1")
    conversion = convert_files(files, args.source)
    dest = Path(args.dest)
    if dest.exists() and any(dest.iterdir()):
        raise PermanentError(f"{dest} is not empty; give a new or empty folder")
    for name, text in conversion.files.items():
        if not package_files.is_package_file(name):
            continue
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for note in conversion.notes:
        print(note)
    gaps = len(conversion.gaps)
    summary = f"{len(conversion.notes)} notes, {gaps} untranslated construct{'s' if gaps != 1 else ''}"
    print(f"converted {args.source} into {dest} ({summary})")
    return 0
