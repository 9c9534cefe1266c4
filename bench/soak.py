"""The soak, long form (issue 12); prints one JSON object. `make soak` runs it.

Hostile packages: `--mutants N` mutated packages (tests/soak/hostile.py: 16 mutations of four valid packages,
chosen by hypothesis from `--seed`) through `kplan package verify` and `kplan template` in this process, and every
`--install-every`-th of them through `kplan install` against a dev cluster of its own. Figures: mutants tried,
outcomes by command (clean / traceback / unnamed / hang / bad-exit / leftover: see hostile.py), mutants that
verify calls valid but template refuses, the slowest command, peak RSS (the process runs under an address-space
limit of `--memory-mib`, so a runaway allocation shows as an error instead of swapping), and the first findings.
Stops after `--budget` seconds even if fewer mutants were tried.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import machine, max_rss_mib
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from engine.cli.main import main
from engine.devcluster.cluster import DevCluster

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from soak.hostile import BASES, MUTATIONS, Tally, mutant, try_install, try_mutant


class OutOfTime(HypothesisException):
    """The budget is spent; ends the hypothesis run early."""


def hostile(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    tally = Tally()
    installs = Tally()
    deadline = time.monotonic() + args.budget
    with DevCluster(port=0) as cluster:
        kubeconfig = cluster.write_kubeconfig(work / "kubeconfig")
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["init", "--kubeconfig", str(kubeconfig)]) == 0

        @seed(args.seed)
        @settings(max_examples=args.mutants, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(base=st.sampled_from(sorted(BASES)), mutation=st.sampled_from(sorted(MUTATIONS)),
               number=st.integers(0, 2**31))
        def one(base: str, mutation: str, number: int) -> None:
            if time.monotonic() > deadline:
                raise OutOfTime
            folder = mutant(base, mutation, number, work / "package")
            try_mutant(folder, f"{base}/{mutation}/{number}", tally, args.hang_seconds)
            if tally.mutants % args.install_every == 0:
                try_install(cluster, kubeconfig, folder, f"m{tally.mutants}", installs, args.hang_seconds)

        with contextlib.suppress(OutOfTime):
            one()
    return {
        "mutants": tally.mutants,
        "outcomes": dict(sorted(tally.outcomes.items())),
        "tracebacks": sum(n for k, n in tally.outcomes.items() if k.endswith(":traceback")),
        "hangs": sum(n for k, n in tally.outcomes.items() if k.endswith(":hang")),
        "verify_passes_template_refuses": tally.verify_passes_template_refuses,
        "installs": sum(installs.outcomes.values()),
        "install_outcomes": dict(sorted(installs.outcomes.items())),
        "installs_refused": installs.refused,
        "slowest_command_seconds": round(max(tally.slowest_seconds, installs.slowest_seconds), 2),
        "findings": tally.findings + installs.findings,
    }


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--install-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--budget", type=float, default=1800.0, help="seconds")
    parser.add_argument("--hang-seconds", type=int, default=60)
    parser.add_argument("--memory-mib", type=int, default=4096)
    args = parser.parse_args()
    limit = args.memory_mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    started = time.monotonic()
    report: dict[str, Any] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), **machine()}
    with tempfile.TemporaryDirectory(prefix="kplan-soak-") as work:
        report["hostile_packages"] = hostile(args, Path(work))
    report["wall_seconds"] = round(time.monotonic() - started, 1)
    report["max_rss_mib"] = max_rss_mib()
    print(json.dumps(report))


if __name__ == "__main__":
    main_()
