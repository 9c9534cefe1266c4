"""Running `kubectl kplan ...` as a user does: the real kubectl binary finding `kubectl-kplan` on PATH.

`Cli(kubeconfig, namespace)(*args)` runs one command in the test's namespace and returns its exit code and
output. Every output is checked for the secret parameter value the tests use, so no command can print it
unnoticed; `Cli.outputs` keeps everything printed for assertions over a whole flow. The user's configuration
(repositories), cache and Docker config are folders of the test's (`home`), never the machine's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

BIN = Path(sys.executable).parent
KUBECTL = str(BIN / "kubectl")
PACKAGES = Path(__file__).parent / "packages"
SECRET = "Sesame-7f3a9c"  # the value of the secret parameter `password` in every CLI test
TIMEOUT = 120  # seconds one command may take before the test fails
INSTANCE = ("kplan.dev/v1alpha1", "Instance")


def package(name: str) -> str:
    return str(PACKAGES / name)


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def yaml(self) -> Any:
        return yaml.safe_load(self.out)


@dataclass
class Cli:
    """`kubectl kplan ARGS -n NAMESPACE` against the dev cluster of `kubeconfig`."""

    kubeconfig: Path
    namespace: str
    outputs: list[str] = field(default_factory=list)
    home: Path | None = None  # XDG_CONFIG_HOME, XDG_CACHE_HOME and DOCKER_CONFIG live here (default: beside kubeconfig)

    def __call__(self, *args: str, namespaced: bool = True, env: dict[str, str] | None = None) -> Result:
        command = [KUBECTL, "kplan", *args, *(["-n", self.namespace] if namespaced else [])]
        return self.run(command, env)

    def kubectl(self, *args: str, env: dict[str, str] | None = None) -> Result:
        """Plain kubectl in the test's namespace (e.g. `edit`, as a person changes an object)."""
        return self.run([KUBECTL, *args, "-n", self.namespace], env)

    def run(self, command: list[str], env: dict[str, str] | None) -> Result:
        home = self.home or self.kubeconfig.parent / "home"
        environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                       "KUBECONFIG": str(self.kubeconfig), "XDG_CONFIG_HOME": str(home / "config"),
                       "XDG_CACHE_HOME": str(home / "cache"), "DOCKER_CONFIG": str(home / "docker"), **(env or {})}
        done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=TIMEOUT, check=False)
        result = Result(done.returncode, done.stdout, done.stderr)
        self.outputs.append(result.text)
        assert SECRET not in result.text, f"{' '.join(command[1:])} printed the secret value"
        assert "Traceback" not in result.err, result.err
        return result

    def ok(self, *args: str) -> Result:
        """Run a command that must succeed."""
        result = self(*args)
        assert result.code == 0, result.text
        return result


def one_sentence_error(result: Result) -> str:
    """The error line of a failed command: exit 1, one line on stderr starting with `error:`."""
    assert result.code == 1, result.text
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    return lines[0]
