"""The CLI shell: the command map matches what the command modules register, a command loads only its module,
and every failure ends as one sentence on stderr with exit 1, never a traceback."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

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


def test_version_does_not_load_the_kubernetes_client_nor_any_package_support() -> None:
    code = ("import sys; from engine.cli.main import main; main(['version']); "
            "print(sorted(m for m in ('kubernetes', 'engine.cli.kudo', 'engine.package', 'jinja2', 'networkx') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["kplan 0.1.0", "[]"]


def test_the_kudo_repository_flag_still_reaches_the_kudo_support(tmp_path: Path) -> None:
    code = ("import sys; from engine.cli.main import main; main(['--kudo-repo', sys.argv[1], 'version']); "
            "from engine.cli import kudo; print(kudo._repositories)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == ["kplan 0.1.0", f"[PosixPath({str(tmp_path)!r})]"]


def test_an_os_error_is_one_sentence_naming_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = tmp_path / "pkg"
    assert main(["package", "new", "pkg", "-d", str(tmp_path)]) == 0
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["package", "create", str(package), "-d", str(blocker / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(blocker / "out") in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_unexpected_exception_is_one_sentence_unless_debugging(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    def broken(_args: argparse.Namespace) -> int:
        raise ValueError("boom")

    parser = argparse.ArgumentParser()
    parser.set_defaults(func=broken)
    monkeypatch.setattr("engine.cli.main.build_parser", lambda _command=None: parser)
    monkeypatch.delenv("KPLAN_DEBUG", raising=False)
    assert main([]) == 1
    assert capsys.readouterr().err == "error: unexpected ValueError: boom (set KPLAN_DEBUG=1 to see where)\n"
    monkeypatch.setenv("KPLAN_DEBUG", "1")
    with pytest.raises(ValueError, match="boom"):
        main([])


def test_an_output_format_on_a_command_that_prints_none_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-o", "mermaid", "uninstall", "--instance", "x"]) == 2
    assert capsys.readouterr().err == "error: uninstall does not take -o mermaid (it has no other output format)\n"


def entry(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`code`, then the console script's entry with `args` as its command line, in a new interpreter."""
    script = f"import sys\n{code}\nsys.argv = ['kplan', *sys.argv[1:]]\nfrom engine.cli.main import entry\nentry()\n"
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=False)


def test_the_console_script_ends_with_the_commands_code_after_what_shutdown_would_do() -> None:
    code = ("import atexit, threading\n"
            "atexit.register(lambda: print('atexit ran', flush=True))\n"
            "threading.Thread(target=lambda: print('thread finished', sum(range(3_000_000)) > 0)).start()")
    done = entry(code, "version")
    assert done.returncode == 0
    assert sorted(done.stdout.splitlines()) == ["atexit ran", "kplan 0.1.0", "thread finished True"]
    assert done.stdout.splitlines()[-1] == "atexit ran"  # after the thread was joined


def test_the_console_script_keeps_argparse_exit_codes() -> None:
    assert entry("", "--help").returncode == 0
    refused = entry("", "no-such-command")
    assert refused.returncode == 2 and "invalid choice: 'no-such-command'" in refused.stderr


def test_the_console_script_collects_again_after_start_up_and_loads_networkx_lean() -> None:
    code = ("import atexit, gc\n"
            "atexit.register(lambda: print('collecting', gc.isenabled(), 'frozen', gc.get_freeze_count() > 10_000,\n"
            "                              'dag', 'networkx.algorithms.dag' in sys.modules,\n"
            "                              'centrality', 'networkx.algorithms.centrality' in sys.modules, flush=True))")
    package = Path(__file__).parent.parent / "fixtures" / "packages" / "valid"
    done = entry(code, "template", str(package))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "collecting True frozen True dag True centrality False"
