"""`kubectl kplan devcluster` flags: a port outside 0..65535 is a usage error (exit 2) in one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import Cli


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_that_is_not_a_port_number_is_a_usage_error(port: str, tmp_path: Path) -> None:
    cli = Cli(tmp_path / "unused-kubeconfig", "default")

    result = cli("devcluster", "--port", port, "--kubeconfig", str(tmp_path / "dev.yaml"), namespaced=False)

    assert result.code == 2, result.text
    [error] = [line for line in result.err.splitlines() if "error:" in line]
    assert error.endswith(f"argument --port: '{port}' is not a port number from 0 to 65535"), result.err
    assert "OverflowError" not in result.text
    assert not (tmp_path / "dev.yaml").exists()
