"""Flags shared by the commands that change Instances: --instance, --wait, --timeout and the parameter flags."""

from __future__ import annotations

import argparse

from engine.package.durations import parse_duration

__all__ = ["PACKAGE_HELP", "accepts_output", "add_instance_flag", "add_package_argument", "add_parameter_flags",
           "add_wait_flags", "assignment", "duration", "positive_int"]

PACKAGE_HELP = ("package folder, .tgz, URL, repository package (NAME, NAME@VERSION, NAME@RANGE, REPO/NAME) or "
                "OCI artifact (oci://HOST/REPO:TAG or @sha256:DIGEST)")

DEFAULT_TIMEOUT = "5m"


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def duration(text: str) -> float:
    """An argparse type: `90s`, `5m`, `1h30m` or plain seconds, as seconds (a usage error otherwise)."""
    seconds = parse_duration(float(text) if text.replace(".", "", 1).isdigit() else text)
    if seconds is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 90s, 5m or 1h30m")
    return seconds


def assignment(text: str) -> str:
    """An argparse type: `NAME=VALUE` with a name (a usage error otherwise); typed later, by the package."""
    name, sep, _ = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
    return text


def add_instance_flag(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    help_text = "name of the Instance" if required else "name of the Instance (default: the package name)"
    parser.add_argument("--instance", required=required, metavar="NAME", help=help_text)


def add_package_argument(parser: argparse.ArgumentParser, help_text: str = PACKAGE_HELP) -> None:
    """The PKG argument, and --plain-http for OCI registries without TLS."""
    parser.add_argument("package", metavar="PKG", help=help_text)
    parser.add_argument("--plain-http", action="store_true", help="talk plain HTTP to an OCI registry (no TLS)")


def add_parameter_flags(parser: argparse.ArgumentParser) -> None:
    """`-p NAME=VALUE` (repeatable) and `-P FILE` (a YAML mapping); -p wins over -P."""
    parser.add_argument(
        "-p", "--parameter", action="append", default=[], type=assignment, metavar="NAME=VALUE",
        help="a parameter value (repeatable)",
    )
    parser.add_argument("-P", "--parameter-file", metavar="FILE", help="a YAML mapping of parameter values")


def add_wait_flags(parser: argparse.ArgumentParser, what: str = "the plan ends") -> None:
    parser.add_argument("--wait", action="store_true", help=f"wait until {what}, printing its progress")
    add_timeout_flag(parser, "how long --wait waits")


def add_timeout_flag(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--timeout", type=duration, default=duration(DEFAULT_TIMEOUT), metavar="DURATION",
                        help=f"{help_text} (default: {DEFAULT_TIMEOUT})")


def accepts_output(parser: argparse.ArgumentParser, *formats: str) -> None:
    """The `-o` formats this command prints in; `main` refuses any other as a usage error."""
    parser.set_defaults(output_formats=formats)
