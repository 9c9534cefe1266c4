"""`kplan manager`: runs the engine against a cluster until SIGTERM or SIGINT (in-cluster or from a kubeconfig)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from engine.cli.flags import positive_int
from engine.controller import Manager, ManagerSettings, Shard, default_identity, parse_address
from engine.errors import PermanentError
from engine.kube import connect
from engine.planner import Settings

__all__ = ["KeyValueFormatter", "register", "run"]

# LogRecord's own attributes; anything else on a record came in through `extra=` and is printed as key=value.
RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class KeyValueFormatter(logging.Formatter):
    """`time level logger message key=value ...`: constant messages, the variable part in fields."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = " ".join(f"{k}={quoted(v)}" for k, v in sorted(vars(record).items()) if k not in RECORD_FIELDS)
        if not fields:
            return line
        head, newline, rest = line.partition("\n")  # a traceback goes after the fields
        return f"{head} {fields}{newline}{rest}"


def quoted(value: Any) -> str:
    text = str(value)
    if text and not any(c in text for c in ' "=\\\n'):
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("manager", help="run the engine: reconcile every Instance (leader-elected)",
                                   parents=parents)
    parser.add_argument("--workers", type=positive_int, default=2, help="Instances reconciled at once (default 2)")
    parser.add_argument("--metrics-addr", default="127.0.0.1:8080", type=address,
                        help="host:port of /metrics, /healthz and /readyz; port 0 picks a free one")
    parser.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=True,
                        help="hold a Lease so that only one manager reconciles (default: on)")
    parser.add_argument("--watch-namespace", help="reconcile only the Instances of this namespace (default: all)")
    parser.add_argument("--shards", type=positive_int, default=1,
                        help="split the Instances into this many shards by the hash of namespace/name (default 1)")
    parser.add_argument("--shard-index", type=int, default=0, help="the shard this manager reconciles: 0..shards-1")
    parser.add_argument("--selector", help="reconcile only the Instances whose labels match (a label selector)")
    parser.add_argument("--lease-name", default="kplan-manager",
                        help="name of the Lease (default kplan-manager; a shard adds its index and selector)")
    parser.add_argument("--lease-namespace", help="namespace of the Lease (default: the context's namespace)")
    parser.add_argument("--identity", help="this manager's name in the Lease (default: hostname_random)")
    parser.add_argument("--lease-duration", type=positive_float, default=15.0, help="seconds (default 15)")
    parser.add_argument("--renew-deadline", type=positive_float, default=10.0, help="seconds (default 10)")
    parser.add_argument("--retry-period", type=positive_float, default=2.0, help="seconds (default 2)")
    parser.add_argument("--backoff-base", type=positive_float, default=1.0,
                        help="seconds before a failed step is retried, doubling per attempt (default 1)")
    parser.add_argument("--backoff-max", type=positive_float, default=60.0, help="longest retry delay (default 60)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also log retries, failed actions and lease changes")
    parser.set_defaults(func=run, manager_parser=parser)


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.shard_index < args.shards:
        args.manager_parser.error(f"--shard-index must be one of 0..{args.shards - 1}, got {args.shard_index}")
    configure_logging(verbose=args.verbose)
    settings = settings_from(args)
    kube = connect(args.kubeconfig, args.context, namespace=args.namespace)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        manager = Manager(kube, settings)
    except OSError as err:
        raise PermanentError(f"cannot serve metrics on {args.metrics_addr[0]}:{args.metrics_addr[1]}: {err}") from err
    if manager.address is not None:
        host, port = manager.address
        print(f"listening on http://{host}:{port}", flush=True)
    with kube:
        manager.run(stop)
    return 0


def settings_from(args: argparse.Namespace) -> ManagerSettings:
    if not args.lease_duration > args.renew_deadline > args.retry_period:
        raise PermanentError("lease timing must satisfy --lease-duration > --renew-deadline > --retry-period")
    return ManagerSettings(
        shard=Shard(args.shards, args.shard_index, args.selector or None),
        workers=args.workers, metrics_address=args.metrics_addr, leader_elect=args.leader_elect,
        lease_name=args.lease_name, lease_namespace=args.lease_namespace, identity=args.identity or default_identity(),
        lease_duration=args.lease_duration, renew_deadline=args.renew_deadline, retry_period=args.retry_period,
        planner=Settings(backoff_base=args.backoff_base, backoff_max=args.backoff_max),
        watch_namespace=args.watch_namespace,
    )


def configure_logging(*, verbose: bool, lifecycle: bool = True) -> None:
    """Key/value lines on stderr: warnings (everything with `verbose`), and the manager's start, lead and stop
    with `lifecycle`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KeyValueFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    if lifecycle:
        logging.getLogger("engine.controller.manager").setLevel(logging.INFO)
    # urllib3 warns of each connection retry and of a full pool; kplan reports what failed in its own words.
    logging.getLogger("urllib3").setLevel(logging.ERROR)


def address(text: str) -> tuple[str, int]:
    try:
        return parse_address(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text}")
    return value
