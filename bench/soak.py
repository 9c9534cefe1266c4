"""The soak, long form (issue 12); prints one JSON object. `make soak` runs it.

Hostile packages: `--mutants N` mutated packages (tests/soak/hostile.py: 16 mutations of four valid packages,
chosen by hypothesis from `--seed`) through `kplan package verify` and `kplan template` in this process, and every
`--install-every`-th of them through `kplan install` against a dev cluster of its own. Figures: mutants tried,
outcomes by command (clean / traceback / unnamed / hang / bad-exit / leftover: see hostile.py), mutants that
verify calls valid but template refuses, the slowest command, peak RSS (the process runs under an address-space
limit of `--memory-mib`, so a runaway allocation shows as an error instead of swapping), and the first findings.
Stops after `--budget` seconds even if fewer mutants were tried.

Kills (`--kills N`): rounds of six Instances (three of tests/e2e/packages/chain: four serial ConfigMap + 1 s Job
steps; three of parallel: three 1 s Jobs in a parallel phase) installed with `kplan install` into a simulating dev
cluster while `kplan manager` processes are SIGKILLed after a seeded random number (1-12) of further commits and
restarted, three times in ten with a rival racing for the Lease, until N kills or `--kill-budget` seconds. After
each round converges, tests/e2e/soak_checks.py's invariants (each rendered object added once, never deleted, one
uid; one deploy plan uid; serial order in every recorded status). Figures: kills, rounds, Instances converged,
problems (0) and the first of them.

API faults (`--fault-rounds N`) and partitions of the leader (`--partitions N`), on each of `--fault-backends`
(bench/faults_soak.py; the rounds are tests/e2e/soak_faults.py's, one of each is the CI short form). A faults
round: six Instances under one manager while the dev cluster answers 10 % of requests 500/429/503 with latency,
cuts each watch after five events and expires four with 410 Gone, or, on the real control plane, kube-apiserver
is restarted mid-plan and etcd paused for 25 s (past the manager's 20 s request timeout). A partition round: the
leader, through a tap (engine/devcluster/partition.py), cut off mid-pass while a standby takes over. Figures per
backend: rounds, Instances converged, problems (0: the kills invariants, Jobs re-run beyond retries, tracebacks,
manager exits, writes of two leaders in flight at once, writes past the renew deadline) and what was injected;
for partitions the failover gap (the old leader's last write to the new leader's first, seconds).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
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
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "tests" / "e2e"))
import faults_soak
from soak.hostile import BASES, MUTATIONS, Tally, mutant, try_install, try_mutant
from soak_checks import PACKAGES, problems
from soak_faults import Feed

KPLAN = str(Path(sys.executable).with_name("kplan"))
SOAK_NAMESPACE = "soak"
SHORT_LEASE = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
ROUND = {"chain": 3, "parallel": 3}  # Instances of each package per round


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


def start_manager(kubeconfig: Path, identity: str, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [KPLAN, "manager", "--kubeconfig", str(kubeconfig), "--metrics-addr", "127.0.0.1:0",
         "--watch-namespace", SOAK_NAMESPACE, "--lease-namespace", SOAK_NAMESPACE, "--identity", identity,
         "--backoff-base", "0.25", "--backoff-max", "1", *SHORT_LEASE],
        stdout=subprocess.DEVNULL, stderr=log.open("ab"),
    )


def deploy_status(cluster: DevCluster, name: str) -> str:
    code, body = cluster.request("GET", f"/apis/kplan.dev/v1alpha1/namespaces/{SOAK_NAMESPACE}/instances/{name}")
    return str(((((body or {}).get("status") or {}).get("plans") or {}).get("deploy") or {}).get("status")) \
        if code == 200 else ""


def kills(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Rounds of Instances converging while managers are SIGKILLed at seeded moments; the invariants per round."""
    rng = random.Random(args.seed)
    killed = converged = rounds = 0
    found: list[str] = []
    deadline = time.monotonic() + args.kill_budget
    with DevCluster(port=0, simulate=True, nodes=("node-1",)) as cluster:
        kubeconfig = cluster.write_kubeconfig(work / "kills-kubeconfig")
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["init", "--kubeconfig", str(kubeconfig)]) == 0
        cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": SOAK_NAMESPACE}})
        feed = Feed(cluster, SOAK_NAMESPACE)
        managers = [start_manager(kubeconfig, "m0", work / "managers.log")]
        try:
            while killed < args.kills and time.monotonic() < deadline:
                rounds += 1
                instances = {f"r{rounds}-{package}-{i}": package for package, n in ROUND.items() for i in range(n)}
                for name, package in instances.items():
                    with contextlib.redirect_stdout(io.StringIO()):
                        assert main(["install", str(PACKAGES / package), "--kubeconfig", str(kubeconfig),
                                     "-n", SOAK_NAMESPACE, "--instance", name]) == 0

                def complete(names: dict[str, str] = instances) -> bool:
                    return all(deploy_status(cluster, name) == "COMPLETE" for name in names)

                while killed < args.kills and not complete():
                    target = len(feed.changes) + rng.randint(1, 12)
                    feed.wait(lambda target=target: len(feed.changes) >= target, 30)
                    for process in managers:
                        process.kill()
                        process.wait()
                    killed += 1
                    managers = [start_manager(kubeconfig, f"m{killed}", work / "managers.log")]
                    if rng.random() < 0.3:
                        managers.append(start_manager(kubeconfig, f"m{killed}-rival", work / "managers.log"))
                if not feed.wait(complete, 180):
                    found.append(f"round {rounds}: not all COMPLETE within 180 s")
                    break
                converged += len(instances)
                found += problems(instances, SOAK_NAMESPACE, list(feed.changes))
        finally:
            for process in managers:
                process.kill()
                process.wait()
            feed.close()
    return {"kills": killed, "rounds": rounds, "instances_converged": converged,
            "problems": len(found), "first_problems": found[:10]}


@contextlib.contextmanager
def address_space(mib: int) -> Iterator[None]:
    """This process (and what it starts) under an address-space limit of `mib` MiB while the block runs: a
    runaway allocation shows as an error instead of swapping. Lifted after it: etcd maps more than that."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (mib * 1024 * 1024, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--install-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--budget", type=float, default=1800.0, help="seconds")
    parser.add_argument("--hang-seconds", type=int, default=60)
    parser.add_argument("--memory-mib", type=int, default=4096)
    parser.add_argument("--kills", type=int, default=0, help="SIGKILLs of the manager (0: no kills soak)")
    parser.add_argument("--kill-budget", type=float, default=1800.0, help="seconds")
    parser.add_argument("--fault-rounds", type=int, default=0, help="API faults rounds per backend (0: none)")
    parser.add_argument("--partitions", type=int, default=0, help="partitions of the leader per backend (0: none)")
    parser.add_argument("--fault-backends", default="dev,real", help="backends of the faults and partition soaks")
    parser.add_argument("--fault-budget", type=float, default=1800.0, help="seconds, for each of the two soaks")
    args = parser.parse_args()
    started = time.monotonic()
    report: dict[str, Any] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), **machine()}
    with tempfile.TemporaryDirectory(prefix="kplan-soak-") as work:
        if args.mutants:
            with address_space(args.memory_mib):
                report["hostile_packages"] = hostile(args, Path(work))
        if args.kills:
            report["kills"] = kills(args, Path(work))
        fault_backends = [b.strip() for b in args.fault_backends.split(",") if b.strip()]
        if args.fault_rounds:
            report["api_faults"] = faults_soak.faults(fault_backends, args.fault_rounds, args.fault_budget, Path(work))
        if args.partitions:
            report["partitions"] = faults_soak.partitions(fault_backends, args.partitions, args.fault_budget,
                                                          Path(work))
    report["wall_seconds"] = round(time.monotonic() - started, 1)
    report["max_rss_mib"] = max_rss_mib()
    print(json.dumps(report))


if __name__ == "__main__":
    main_()
