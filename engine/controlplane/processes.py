"""The control plane's processes: each in its own process group with a log file; stopped by SIGTERM, then SIGKILL."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from engine.errors import PermanentError

__all__ = ["Component", "ComponentFailed", "free_port"]

STOP_GRACE = 10.0  # seconds a component has to exit after SIGTERM before it is killed
POLL = 0.1  # seconds between readiness checks while a component starts (there is nothing to watch yet)


class ComponentFailed(PermanentError):
    def __init__(self, name: str, reason: str, log: Path) -> None:
        tail = ""
        with contextlib.suppress(OSError):
            lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
            tail = f"; last log line: {lines[-1][:300]}" if lines else ""
        super().__init__(f"{name} {reason} (log: {log}){tail}")


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Runs in the child before exec: the kernel kills it when the process that started it dies, so a killed
    `kplan devcluster` or test run leaves no control plane behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Component:
    """One binary of the control plane, running until `stop`."""

    def __init__(self, name: str, command: Sequence[str], log: Path) -> None:
        self.name = name
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True,
                                            preexec_fn=die_with_parent)

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Return once `ready()` is true; ComponentFailed when the process exits first or the deadline passes."""
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() >= deadline:
                raise ComponentFailed(self.name, f"did not become {what} within {timeout:.0f}s", self.log)
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.process.wait(POLL)
                raise ComponentFailed(self.name, f"exited with code {code} while starting", self.log)

    def running(self) -> bool:
        return self.process.poll() is None

    def signal(self, signum: int) -> None:
        """Send a signal to the component's whole process group (SIGSTOP/SIGCONT to pause it, for fault tests)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)

    def stop(self) -> None:
        if not self.running():
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.process.wait(STOP_GRACE)
