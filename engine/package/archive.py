"""`package create`: a verified package folder as `<name>-<operatorVersion>.tgz`, byte for byte reproducible."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

from engine.model import Package
from engine.package import loader

__all__ = ["archive_bytes", "create"]

# Fixed metadata so the same package always gives the same bytes (and the same digest in a repo index).
MTIME = 0
MODE = 0o644


def create(pkg_dir: str, out_dir: str) -> Path:
    """Verify the package in `pkg_dir` and write its archive into `out_dir`; the archive's path."""
    pkg = loader.load(pkg_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{pkg.version_name}.tgz"
    path.write_bytes(archive_bytes(pkg))
    return path


def archive_bytes(pkg: Package) -> bytes:
    """A gzipped tar of the package files under one folder named after the package, entries sorted."""
    tar_data = io.BytesIO()
    with tarfile.open(fileobj=tar_data, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, text in sorted(loader.to_files(pkg).items()):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"{pkg.name}/{name}")
            info.size, info.mtime, info.mode = len(data), MTIME, MODE
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=MTIME) as gz:
        gz.write(tar_data.getvalue())
    return out.getvalue()
