"""Starts one container process: the private root with its volumes, the working directory, then exec.

Run as a script by the process runtime (standard library only, so it starts fast), inside a new user and
mount namespace when its spec says `isolate` (made by util-linux `unshare --user --map-root-user --mount`):

    unshare --user --map-root-user --mount -- python3 -I -S sandbox.py SPEC.json

The new root is a tmpfs holding a recursive bind of every top-level entry of the host's root, so the host's
tools run; each volume is bound at its mountPath on top. A path the host lacks is created in the tmpfs, or, inside
a host directory, in a tmpfs copy of that directory (binds of its entries), so the host is never written to. The
spec's status descriptor stays open until exec: it closes (on exec) with nothing written when the command
started, or carries one line, the runtime's reason the container could not start, as the kubelet reports it.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import stat
import sys
from typing import Any

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
ST_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC))
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
START_FAILED = 128  # exit code of a container that could not start
OCI_PREFIX = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
              "create failed: unable to start container process: error during container init: ")

_libc = ctypes.CDLL(None, use_errno=True)


class StartError(Exception):
    """Why the container could not start, in the words of the container runtime."""


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encoded = [v.encode() if v is not None else None for v in (source, target, fstype, data)]
    if _libc.mount(encoded[0], encoded[1], encoded[2], ctypes.c_ulong(flags), encoded[3]) != 0:
        err = ctypes.get_errno()
        raise StartError(f"error mounting {source!r} to rootfs at {target!r}: {os.strerror(err)}")


def unmount(target: str) -> None:
    _libc.umount2(target.encode(), MNT_DETACH)


def recreate(host: str, copy: str) -> None:
    """Make `copy` stand for the host entry `host`: a symlink copied, anything else bound (directories recursively)."""
    info = os.lstat(host)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(host), copy)
        return
    if stat.S_ISDIR(info.st_mode):
        os.mkdir(copy)
    else:
        with open(copy, "w"):
            pass
    try:
        mount(host, copy, None, MS_BIND | MS_REC)
    except StartError:
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(copy)  # a socket or device the namespace may not bind: left out
        else:
            os.rmdir(copy)


class Root:
    """The container's root directory being assembled at `path` (a tmpfs), with the paths it may write in."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.ours: set[str] = {"/"}  # directories that are the tmpfs's own (creating entries there is safe)
        self.volumes: list[str] = []  # mount paths of volumes (their content is the pod's)

    def host(self, inner: str) -> str:
        return self.path + inner if inner != "/" else self.path

    def build(self) -> None:
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        mount("tmpfs", self.path, "tmpfs", 0, "mode=0755")
        for entry in sorted(os.listdir("/")):
            recreate("/" + entry, os.path.join(self.path, entry))
        unmount(self.host(self.path))  # the recursive bind of its parent brought this root into itself

    def writable(self, inner: str) -> bool:
        return inner in self.ours or any(inner == v or inner.startswith(v.rstrip("/") + "/") for v in self.volumes)

    def mirror(self, inner: str) -> None:
        """Replace the bound host directory `inner` by a tmpfs holding binds of its entries."""
        entries = sorted(os.listdir(inner))
        mount("tmpfs", self.host(inner), "tmpfs", 0, "mode=0755")
        for entry in entries:
            recreate(os.path.join(inner, entry), os.path.join(self.host(inner), entry))
        self.ours.add(inner)

    def resolve(self, inner: str) -> str:
        """`inner` with every symlink on its way followed inside the root (`/var/run/x` → `/run/x`)."""
        pending = [p for p in inner.split("/") if p]
        current, hops = "/", 0
        while pending:
            part = pending.pop(0)
            following = os.path.normpath(os.path.join(current, part))
            if os.path.islink(self.host(following)):
                hops += 1
                if hops > 40:
                    raise StartError(f"too many levels of symbolic links in {inner!r}")
                target = os.readlink(self.host(following))
                pending = [p for p in target.split("/") if p] + pending
                current = "/" if target.startswith("/") else current
                continue
            current = following
        return current

    def ensure(self, inner: str, directory: bool) -> str:
        """Make `inner` exist in the root (a directory, or an empty file), never writing to the host; its path
        with symlinks resolved."""
        inner = self.resolve(inner)
        parts = [p for p in inner.split("/") if p]
        current = "/"
        for index, part in enumerate(parts):
            following = os.path.join(current, part)
            if not os.path.lexists(self.host(following)):
                if not self.writable(current):
                    self.mirror(current)
                if index < len(parts) - 1 or directory:
                    os.mkdir(self.host(following))
                    self.ours.add(following)
                else:
                    with open(self.host(following), "w"):
                        pass
            current = following
        return inner

    def bind(self, source: str, target: str, read_only: bool) -> None:
        target = self.ensure(target, os.path.isdir(source))
        mount(source, self.host(target), None, MS_BIND | MS_REC)
        if os.path.isdir(source):
            self.volumes.append(target)
        if read_only:
            locked = os.statvfs(self.host(target)).f_flag
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | sum(ms for st, ms in ST_FLAGS if locked & st)
            mount(None, self.host(target), None, flags)


def executable(name: str, env: dict[str, str]) -> str:
    """The file `name` runs, looked up in the container's PATH as runc does."""
    if "/" in name:
        if not os.path.exists(name):
            raise StartError(f"exec: {json.dumps(name)}: stat {name}: no such file or directory")
        return name
    for folder in (env.get("PATH") or DEFAULT_PATH).split(":"):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise StartError(f"exec: {json.dumps(name)}: executable file not found in $PATH")


def prepare(spec: dict[str, Any]) -> None:
    working = str(spec.get("workingDir") or "")
    if spec.get("isolate"):
        root = Root(str(spec["root"]))
        root.build()
        for m in sorted(spec.get("mounts") or [], key=lambda m: str(m["target"]).count("/")):
            root.bind(str(m["source"]), str(m["target"]), bool(m.get("readOnly")))
        if working:
            root.ensure(working, True)
        os.chroot(root.path)
    try:
        os.chdir(working or "/")
    except OSError as e:
        raise StartError(f"chdir to cwd ({json.dumps(working)}) set in config.json failed: {e.strerror}") from e


def main(argv: list[str]) -> int:
    with open(argv[1]) as f:
        spec = json.load(f)
    status = int(spec["statusFd"])
    env = {str(k): str(v) for k, v in (spec.get("env") or {}).items()}
    command = [str(a) for a in spec["argv"]]
    try:
        if not command:
            raise StartError("no command specified")
        prepare(spec)
        path = executable(command[0], env)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the dev cluster's process dies: so does the container
        os.set_inheritable(status, False)
        os.execve(path, command, env)
    except StartError as e:
        reason = str(e)
    except OSError as e:
        reason = f"exec: {json.dumps(command[0] if command else '')}: {e.strerror}"
    os.write(status, (OCI_PREFIX + reason + ": unknown\n").encode())
    return START_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
