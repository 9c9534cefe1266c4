"""Package repositories for the e2e tests: a folder of archives indexed by `kplan repo index`, served over HTTP
on 127.0.0.1 by a server the test starts, and a `kubectl kplan` whose configuration and cache are the test's."""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

from cli_harness import Cli

OPERATORS = Path(__file__).resolve().parents[2] / "operators"
ETCD_FOLDERS = (OPERATORS / "etcd", OPERATORS / "etcd" / "versions" / "0.1.0")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """`folder` served over HTTP on 127.0.0.1 (a free port) while the block runs; its base URL."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="repo-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def repo_cli(kubeconfig: Path, namespace: str, home: Path) -> Cli:
    """`kubectl kplan` with its configuration, cache and Docker config in `home`, a folder of the test's own."""
    return Cli(kubeconfig, namespace, home=home)


def archives(cli: Cli, folder: Path, *packages: Path) -> list[Path]:
    """`kplan package create` of each package folder into `folder`."""
    made = []
    for pkg in packages:
        result = cli("package", "create", str(pkg), "-d", str(folder), namespaced=False)
        assert result.code == 0, result.text
        made.append(Path(result.out.strip()))
    return made


def bumped(source: Path, into: Path, version: str, upgradable_from: str) -> Path:
    """A copy of the package folder `source` at `version`, upgradable from `upgradable_from` only."""
    target = into / f"{source.name}-{version}"
    shutil.copytree(source, target)
    operator = target / "operator.yaml"
    lines = operator.read_text().splitlines()
    kept = [line for line in lines if not line.startswith(("operatorVersion:", "upgradableFrom:"))]
    operator.write_text("\n".join([*kept, f"operatorVersion: {version}", f'upgradableFrom: ["{upgradable_from}"]'])
                        + "\n")
    return target
