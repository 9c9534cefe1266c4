"""The CLI shell: the command map matches what the command modules register, and a command loads only its module."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from engine.cli.main import COMMANDS, build_parser, command_of, main


def registered(parser: argparse.ArgumentParser) -> set[str]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def test_the_full_parser_registers_exactly_the_mapped_commands() -> None:
    assert registered(build_parser()) == {"version", *COMMANDS}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_is_registered_by_the_module_the_map_names(command: str) -> None:
    assert command in registered(build_parser(command))


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["install", "pkg"], "install"),
        (["-n", "shop", "--kubeconfig", "k.yaml", "update", "--instance", "x"], "update"),
        (["-o", "yaml", "get", "instances"], "get"),
        (["--help"], None),
        ([], None),
    ],
)
def test_the_command_word_is_found_after_global_flags(argv: list[str], command: str | None) -> None:
    assert command_of(argv) == command


def test_an_unknown_command_is_a_usage_error_listing_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bogus"])
    assert exit_.value.code == 2
    assert "'uninstall'" in capsys.readouterr().err


def test_version_does_not_load_the_kubernetes_client() -> None:
    code = "import sys; from engine.cli.main import main; main(['version']); print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["kplan 0.1.0", "False"]
