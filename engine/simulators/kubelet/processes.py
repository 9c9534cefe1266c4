"""One run of one container as a local process group: started through the sandbox, its output pumped into the
log, bounded in time, and killed as a group.

The sandbox helper (`sandbox.py`) execs the container's command; its status pipe tells a start from a start error.
A thread per run reads that pipe, then stdout and stderr into the run's `ContainerLog`, waits for the exit, kills
what is left of the process group, and calls `on_exit`.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.simulators.conditions import timestamp
from engine.simulators.kubelet.containerlogs import ContainerLog
from engine.simulators.kubelet.volumes import Mount

SANDBOX = Path(__file__).with_name("sandbox.py")
UNSHARE = ("unshare", "--user", "--map-root-user", "--mount", "--")
START_FAILED = 128
KILLED = 137
READ_SIZE = 65536
NEVER_STARTED = "1970-01-01T00:00:00Z"


@dataclass(frozen=True)
class Launch:
    """Everything a run needs: the command line, environment, working directory, binds and where its files go."""

    argv: Sequence[str]
    env: dict[str, str]
    working_dir: str
    mounts: Sequence[Mount]
    folder: Path  # the run's own directory (its spec and private root)
    isolate: bool  # in a private user and mount namespace (the mounts need it)
    container_id: str = ""  # the run's ID in the pod's status (its log's key)


@dataclass(frozen=True)
class Exit:
    code: int
    reason: str  # Completed, Error, StartError, DeadlineExceeded (time bound) or Killed (stopped)
    message: str
    started_at: str
    finished_at: str
    container_id: str = ""


def sandbox_command(launch: Launch, status_fd: int) -> list[str]:
    """The command that starts the run (writing its spec into its folder)."""
    launch.folder.mkdir(parents=True, exist_ok=True)
    root = launch.folder / "root"
    root.mkdir(exist_ok=True)
    spec = {"isolate": launch.isolate, "root": str(root), "statusFd": status_fd, "workingDir": launch.working_dir,
            "argv": list(launch.argv), "env": launch.env,
            "mounts": [{"source": m.source, "target": m.target, "readOnly": m.read_only} for m in launch.mounts]}
    path = launch.folder / "spec.json"
    path.write_text(json.dumps(spec))
    helper = [sys.executable, "-I", "-S", str(SANDBOX), str(path)]
    return [*UNSHARE, *helper] if launch.isolate else helper


class Process:
    """A started run; `exit` is set once it has ended (or could not start)."""

    def __init__(self, launch: Launch, log: ContainerLog, max_seconds: float, on_exit: Callable[[], None]) -> None:
        self.log = log
        self.container_id = launch.container_id
        self.started_at = timestamp()
        self.running = False  # the command was exec'd
        self.exit: Exit | None = None
        self._on_exit = on_exit
        self._deadline = time.monotonic() + max_seconds
        self._max_seconds = max_seconds
        self._stopping: str | None = None
        self._kill_at: float | None = None
        read, write = os.pipe()
        try:
            self._popen = subprocess.Popen(
                sandbox_command(launch, write), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, pass_fds=(write,), start_new_session=True)
        except OSError as e:
            os.close(read)
            self._finish(START_FAILED, "StartError", f"the process runtime could not start: {e}")
            return
        finally:
            os.close(write)
        self._status = read
        self._thread = threading.Thread(target=self._watch, name="process-runtime", daemon=True)
        self._thread.start()

    @property
    def pid(self) -> int:
        return self._popen.pid

    def stop(self, grace: float) -> None:
        """SIGTERM the command now (as a runtime signals a container's first process), SIGKILL its whole process
        group after `grace` seconds or as soon as the command has ended."""
        if self.exit is not None or self._stopping:
            return
        self._stopping = "Killed"
        self._kill_at = time.monotonic() + max(0.0, grace)
        if grace > 0:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._popen.pid, signal.SIGTERM)
        else:
            self._signal(signal.SIGKILL)

    def join(self, timeout: float) -> None:
        thread = getattr(self, "_thread", None)
        if thread is not None:
            thread.join(timeout)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._popen.pid, sig)

    def _watch(self) -> None:
        with os.fdopen(self._status, "rb") as status:
            failure = status.read().decode("utf-8", errors="replace").strip()
        if failure:
            self._popen.wait()
            self._close_pipes()
            self._finish(START_FAILED, "StartError", failure)
            return
        self.running = True
        self._on_exit()  # running now: let the kubelet report it
        self._pump()
        code = self._popen.wait()
        self._signal(signal.SIGKILL)  # what the command left behind goes with it, as with a container
        self._finish(*self._classify(code))

    def _classify(self, code: int) -> tuple[int, str, str]:
        if code < 0:
            code = 128 - code
        if self._stopping == "DeadlineExceeded":
            return code, "DeadlineExceeded", f"the process runtime stopped it after {self._max_seconds:g}s"
        if self._stopping:
            return code, "Error" if code else "Completed", ""
        return code, "Completed" if code == 0 else "Error", ""

    def _pump(self) -> None:
        """Copy stdout and stderr into the log until both end, enforcing the time bound and stop requests."""
        selector = selectors.DefaultSelector()
        assert self._popen.stdout is not None and self._popen.stderr is not None
        selector.register(self._popen.stdout, selectors.EVENT_READ, "stdout")
        selector.register(self._popen.stderr, selectors.EVENT_READ, "stderr")
        while selector.get_map():
            for key, _ in selector.select(timeout=0.2):
                data = os.read(key.fd, READ_SIZE)
                if data:
                    self.log.write(str(key.data), data)
                else:
                    selector.unregister(key.fileobj)
            self._enforce()
        selector.close()
        self._close_pipes()

    def _enforce(self) -> None:
        now = time.monotonic()
        if self._stopping is None and now >= self._deadline:
            self._stopping = "DeadlineExceeded"
            self._kill_at = now
        if self._kill_at is not None and now >= self._kill_at:
            self._signal(signal.SIGKILL)
        if self._popen.poll() is not None:
            self._signal(signal.SIGKILL)  # the command ended: what it left holding its output goes too

    def _close_pipes(self) -> None:
        for pipe in (self._popen.stdout, self._popen.stderr):
            if pipe is not None:
                pipe.close()

    def _finish(self, code: int, reason: str, message: str) -> None:
        self.log.close()
        started = NEVER_STARTED if reason == "StartError" else self.started_at  # as containerd reports it
        self.exit = Exit(code, reason, message, started, timestamp(), self.container_id)
        self._on_exit()
