"""Starts one container process: the private root with its volumes, the working directory, then exec.

Run as a script by the process runtime (standard library only, so it starts fast), inside a new user and
mount namespace when its spec says `isolate` (made by util-linux `unshare --user --map-root-user --mount`):

    unshare --user --map-root-user --mount -- python3 -I -S sandbox.py SPEC.json

The new root is a tmpfs holding a recursive bind of every top-level entry of the host's root, so the host's
tools run: read-only (but /dev, /proc and /sys), with a private tmpfs as /tmp; each volume is bound at its
mountPath on top. A path the host lacks is created in the tmpfs, or, inside a host directory, in a tmpfs copy of
that directory (binds of its entries), so the host is never written to but through a volume. The
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
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
# Flags of a mount a user namespace may not change: a read-only remount must repeat them.
ST_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
            (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))
WRITABLE_HOST = ("dev", "proc", "sys")  # host directories the container may write to; the others are read-only
PRIVATE = "tmp"  # a fresh tmpfs of the container's own, as an image's /tmp would be
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


def remount_read_only(target: str) -> None:
    """Remount the bind at `target` read-only, keeping the flags the namespace may not change."""
    locked = os.statvfs(target).f_flag
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | sum(ms for st, ms in ST_FLAGS if locked & st))


def recreate(host: str, copy: str, writable: bool) -> None:
    """Make `copy` stand for the host entry `host`: a symlink copied, anything else bound (directories recursively),
    read-only unless `writable`."""
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
        if not writable:
            remount_read_only(copy)
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
        self.volumes: list[str] = []  # mount paths of volumes and of the private /tmp (their content is the pod's)
        self.writable: set[str] = set()  # host directories bound writable (and what lies under them)

    def host(self, inner: str) -> str:
        return self.path + inner if inner != "/" else self.path

    def build(self) -> None:
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        mount("tmpfs", self.path, "tmpfs", 0, "mode=0755")
        for entry in sorted(os.listdir("/")):
            if entry == PRIVATE:
                os.mkdir(self.host("/" + entry))
                mount("tmpfs", self.host("/" + entry), "tmpfs", 0, "mode=1777")
                self.volumes.append("/" + entry)
                continue
            recreate("/" + entry, os.path.join(self.path, entry), entry in WRITABLE_HOST)
            if entry in WRITABLE_HOST:
                self.writable.add("/" + entry)
        unmount(self.host(self.path))  # the recursive bind of its parent brought this root into itself

    def ours_below(self, inner: str) -> bool:
        """Whether entries may be created in `inner`: a directory of the root's own, or inside a volume."""
        return inner in self.ours or any(within(inner, v) for v in self.volumes)

    def mirror(self, inner: str) -> None:
        """Replace the bound host directory `inner` by a tmpfs holding binds of its entries."""
        entries = sorted(os.listdir(inner))
        writable = any(within(inner, w) for w in self.writable)
        mount("tmpfs", self.host(inner), "tmpfs", 0, "mode=0755")
        for entry in entries:
            recreate(os.path.join(inner, entry), os.path.join(self.host(inner), entry), writable)
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
                if not self.ours_below(current):
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
            remount_read_only(self.host(target))


def within(inner: str, folder: str) -> bool:
    return inner == folder or inner.startswith(folder.rstrip("/") + "/")


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
