"""The soak, long form (issue 12); prints one JSON object. `make soak` runs it.

Hostile packages: `--mutants N` mutated packages (tests/soak/hostile.py: 17 mutations of four valid packages,
chosen by hypothesis from `--seed`) through `kplan package verify` and `kplan template` in this process, and every
`--install-every`-th of them through `kplan install` against a dev cluster of its own. Figures: mutants tried,
outcomes by command (clean / traceback / unnamed / hang / memory / bad-exit / leftover: see hostile.py), mutants that
verify calls valid but template refuses, the slowest command, peak RSS (the process runs under an address-space
limit of `--memory-mib`, so a runaway allocation shows as an error instead of swapping), and the first findings.
Stops after `--budget` seconds even if fewer mutants were tried.

Kills (`--kills N`): rounds of six Instances (two of tests/e2e/packages/chain: four serial ConfigMap + 1 s Job
steps; one of parallel: three 1 s Jobs in a parallel phase; three of soak-mixed: a serial phase of a ConfigMap,
an Operator-task child Instance and a Pipe task, a parallel phase of a Deployment, a StatefulSet and a 1 s Job
with a retry, then a ConfigMap from the Pipe's output) installed with `kplan install` into a simulating dev
cluster while `kplan manager` processes are SIGKILLed after a seeded random number (1-12) of further commits and
restarted, three times in ten with a rival racing for the Lease, until N kills or `--kill-budget` seconds. After
each round converges, tests/soak/invariants.py's invariants (each rendered object, child Instances' too, added
once, never deleted, one uid; Job pods within backoffLimit + 1; one deploy plan uid per Instance, none shared;
plan order kept and no step going back in every recorded status; every Instance COMPLETE). Figures: kills,
rounds, Instances converged, problems (0) tallied as duplicates / objects lost / Jobs beyond retries / other,
and the first of them.

Load (`--load N`): N/3 Instances of soak-load installed and converged, then at once (the CLI in four threads, in
a seeded order) N/3 more installed, the first N/3 updated and the second N/3 uninstalled, while the managers are
SIGKILLed every `--load-kill-every` seconds (three times in ten with a rival), `--load-kills` times or until all
converged; then the last managers alone until all converged or `--load-budget` seconds; then the same invariants
over the whole change feed. Figures: kills, how many Instances had settled when the storm ended, seconds to
converge (after the storm and in all), commands (failed), problems tallied as above.

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
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
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
from soak.invariants import PACKAGES, problems, tally
from soak_faults import Feed

KPLAN = str(Path(sys.executable).with_name("kplan"))
SOAK_NAMESPACE = "soak"
SHORT_LEASE = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
ROUND = {"chain": 2, "parallel": 1, "soak-mixed": 3}  # Instances of each package per round


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
        "verify_passes_template_refuses_first": tally.disagreements,
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


def restart_managers(managers: list[subprocess.Popen[bytes]], kubeconfig: Path, identity: str, log: Path,
                     rng: random.Random) -> list[subprocess.Popen[bytes]]:
    """SIGKILL every manager and start one anew, three times in ten with a rival racing it for the Lease."""
    for process in managers:
        process.kill()
        process.wait()
    started = [start_manager(kubeconfig, identity, log)]
    if rng.random() < 0.3:
        started.append(start_manager(kubeconfig, f"{identity}-rival", log))
    return started


def fed_complete(feed: Feed, names: dict[str, str]) -> bool:
    """Whether the feed, which the invariants judge and which lags behind a GET, has seen each Instance COMPLETE."""
    last: dict[str, Any] = {}
    for _, kind, name, obj in list(feed.changes):
        if kind == "Instance" and name in names:
            last[name] = obj
    return all(((((last.get(name) or {}).get("status") or {}).get("plans") or {}).get("deploy") or {}).get("status")
               == "COMPLETE" for name in names)


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
                    killed += 1
                    managers = restart_managers(managers, kubeconfig, f"m{killed}", work / "managers.log", rng)
                if not feed.wait(complete, 180) or not feed.wait(lambda names=instances: fed_complete(feed, names), 30):
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
            "problems": len(found), **tally(found), "first_problems": found[:10]}


def instances_now(cluster: DevCluster) -> dict[str, dict[str, Any]]:
    code, body = cluster.request("GET", f"/apis/kplan.dev/v1alpha1/namespaces/{SOAK_NAMESPACE}/instances")
    assert code == 200, body
    return {item["metadata"]["name"]: item for item in body.get("items") or []}


def plan_status(instance: dict[str, Any] | None, plan: str) -> str:
    if instance is None:
        return ""
    meta, status = instance.get("metadata") or {}, instance.get("status") or {}
    if status.get("observedGeneration") != meta.get("generation"):
        return ""
    return str(((status.get("plans") or {}).get(plan) or {}).get("status") or "")


def load(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """A third of `--load` Instances of soak-load installed, a third updated and a third uninstalled at once with
    the CLI (four threads) while the managers are SIGKILLed every `--load-kill-every` seconds; the invariants."""
    rng = random.Random(args.seed)
    each = -(-args.load // 3)  # at least --load Instances in all
    installed, updated, uninstalled = ([f"{group}{i}" for i in range(each)] for group in ("new", "upd", "del"))
    package = str(PACKAGES / "soak-load")
    deadline = time.monotonic() + args.load_budget
    figures: dict[str, Any] = {"instances": 3 * each}
    with DevCluster(port=0, simulate=True, nodes=("node-1", "node-2")) as cluster, \
            contextlib.redirect_stdout(io.StringIO()):
        kubeconfig = cluster.write_kubeconfig(work / "load-kubeconfig")
        assert main(["init", "--kubeconfig", str(kubeconfig)]) == 0
        cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": SOAK_NAMESPACE}})
        feed = Feed(cluster, SOAK_NAMESPACE)

        def kplan(*argv: str) -> int:
            return main([*argv, "--kubeconfig", str(kubeconfig), "-n", SOAK_NAMESPACE])

        def wait(predicate: Callable[[dict[str, dict[str, Any]]], bool]) -> bool:
            while time.monotonic() < deadline:
                if predicate(instances_now(cluster)):
                    return True
                time.sleep(1)
            return False

        managers = [start_manager(kubeconfig, "l0", work / "load-managers.log")]
        killed = 0
        try:
            started = time.monotonic()
            earlier = updated + uninstalled
            assert all(kplan("install", package, "--instance", name) == 0 for name in earlier)
            ready = wait(lambda now: all(plan_status(now.get(n), "deploy") == "COMPLETE" for n in earlier))
            figures["seconds_to_install_the_first_two_thirds"] = round(time.monotonic() - started, 1)
            if not ready:
                return {**figures, "problems": 1, "first_problems": ["the first two thirds did not converge in time"]}

            commands = [("install", package, "--instance", new) for new in installed] \
                + [("update", "--instance", name, "-p", "value=v2") for name in updated] \
                + [("uninstall", "--instance", name) for name in uninstalled]
            rng.shuffle(commands)
            started = time.monotonic()
            with ThreadPoolExecutor(4) as pool:
                running = [pool.submit(kplan, *command) for command in commands]

                def settled(now: dict[str, dict[str, Any]]) -> int:
                    return sum(plan_status(now.get(n), "deploy") == "COMPLETE" for n in installed) \
                        + sum(plan_status(now.get(n), "update") == "COMPLETE" for n in updated) \
                        + sum(n not in now for n in uninstalled)

                def converged(now: dict[str, dict[str, Any]]) -> bool:
                    return all(r.done() for r in running) and settled(now) == 3 * each

                # The storm: a SIGKILL every --load-kill-every seconds, up to --load-kills of them.
                next_kill = time.monotonic() + args.load_kill_every
                while not (done := converged(now := instances_now(cluster))) and killed < args.load_kills \
                        and time.monotonic() < deadline:
                    if time.monotonic() >= next_kill:
                        killed += 1
                        managers = restart_managers(managers, kubeconfig, f"l{killed}", work / "load-managers.log",
                                                    rng)
                        next_kill = time.monotonic() + args.load_kill_every
                    time.sleep(2)
                figures.update({"kills": killed, "seconds_of_storm": round(time.monotonic() - started, 1),
                                "settled_when_the_storm_ended": settled(now)})
                # Then the last managers alone, until everything converged.
                calm = time.monotonic()
                while not done and time.monotonic() < deadline:
                    time.sleep(2)
                    done = converged(instances_now(cluster))
                failed = [" ".join(c) for c, r in zip(commands, running, strict=True) if r.done() and r.result() != 0]
            figures.update({"commands": len(commands), "commands_failed": len(failed), "converged": done,
                            "seconds_to_converge_after_the_storm": round(time.monotonic() - calm, 1),
                            "seconds_to_converge": round(time.monotonic() - started, 1)})
        finally:
            for process in managers:
                process.kill()
                process.wait()
            feed.close()
        found = problems(dict.fromkeys(installed + updated + uninstalled, "soak-load"), SOAK_NAMESPACE,
                         list(feed.changes), updated={name: {"value": "v2"} for name in updated},
                         uninstalled=uninstalled)
        found = [f"kplan {command} failed" for command in failed[:5]] + found
    return {**figures, "changes_recorded": len(feed.changes), "problems": len(found), **tally(found),
            "first_problems": found[:10]}


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
    parser.add_argument("--load", type=int, default=0, help="Instances of the load soak (0: no load soak)")
    parser.add_argument("--load-kill-every", type=float, default=10.0, help="seconds between SIGKILLs")
    parser.add_argument("--load-kills", type=int, default=30, help="SIGKILLs of the load storm")
    parser.add_argument("--load-budget", type=float, default=1800.0, help="seconds")
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
        if args.load:
            report["load"] = load(args, Path(work))
    report["wall_seconds"] = round(time.monotonic() - started, 1)
    report["max_rss_mib"] = max_rss_mib()
    print(json.dumps(report))


if __name__ == "__main__":
    main_()
