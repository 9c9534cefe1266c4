"""The hostile packages fuzzer, short form (issue 12): seeded hypothesis examples of mutated packages through
`package verify` and `template`, and a sample through `install` against a dev cluster of the test's own.
Every mutant ends with exit 0 or a clear error naming a file, never a traceback, never past the hang bound nor
the memory bound (peak RSS); a refused install leaves no Operator, OperatorVersion or Instance behind. Besides the
seeded sample, each 50 MB file (params.yaml, a template, a non-UTF-8 blob) through all three commands.
bench/soak.py is the long form."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli.main import main
from engine.devcluster.cluster import DevCluster

from .hostile import BASES, HUGE_FILES, MUTATIONS, Tally, mutant, try_install, try_mutant, write_huge

EXAMPLES = settings(
    derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
bases = st.sampled_from(sorted(BASES))
mutations = st.sampled_from(sorted(MUTATIONS))
seeds = st.integers(0, 2**31)


@settings(EXAMPLES, max_examples=80)
@given(base=bases, mutation=mutations, seed=seeds)
def test_verify_and_template_end_every_mutant_cleanly(tmp_path: Path, base: str, mutation: str, seed: int) -> None:
    tally = Tally()
    try_mutant(mutant(base, mutation, seed, tmp_path / "pkg"), f"{base}/{mutation}/{seed}", tally)
    assert tally.bad() == 0, tally.findings


@pytest.fixture(scope="module")
def fuzz_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevCluster, Path]]:
    with DevCluster(port=0) as cluster:
        kubeconfig = cluster.write_kubeconfig(tmp_path_factory.mktemp("fuzz") / "kubeconfig")
        assert main(["init", "--kubeconfig", str(kubeconfig)]) == 0
        yield cluster, kubeconfig


@settings(EXAMPLES, max_examples=16)
@given(base=bases, mutation=mutations, seed=seeds)
def test_a_refused_install_leaves_nothing_in_the_cluster(
    fuzz_cluster: tuple[DevCluster, Path], tmp_path: Path, base: str, mutation: str, seed: int
) -> None:
    cluster, kubeconfig = fuzz_cluster
    tally = Tally()
    folder = mutant(base, mutation, seed, tmp_path / f"m{seed}")
    try_install(cluster, kubeconfig, folder, f"m{seed}", tally)
    assert tally.bad() == 0, tally.findings


@pytest.mark.parametrize("what", HUGE_FILES)
def test_a_50_mb_file_is_refused_clearly_within_the_bounds_and_installs_nothing(
    fuzz_cluster: tuple[DevCluster, Path], tmp_path: Path, what: str
) -> None:
    cluster, kubeconfig = fuzz_cluster
    folder = tmp_path / "huge"
    shutil.copytree(BASES["redis"], folder)
    write_huge(folder, what, random.Random(12))
    tally = Tally()
    outcomes = [*try_mutant(folder, f"huge {what}", tally), try_install(cluster, kubeconfig, folder, "huge", tally)]
    assert tally.bad() == 0, tally.findings
    assert [(o.code, "is larger than 1024 KiB" in o.message) for o in outcomes] == [(1, True)] * 3, outcomes


def test_a_required_parameter_without_default_is_no_disagreement(tmp_path: Path) -> None:
    folder = tmp_path / "package"
    shutil.copytree(BASES["minimal"], folder)
    params = folder / "params.yaml"
    params.write_text(params.read_text(encoding="utf-8").replace("    default: 1\n", "    required: true\n"),
                      encoding="utf-8")
    tally = Tally()
    verified, rendered = try_mutant(folder, "minimal/required", tally)
    assert (verified.code, rendered.code) == (0, 1)  # valid, but template needs the value a user must give
    assert "is required and has no default" in rendered.message
    assert tally.verify_passes_template_refuses == 0 and not tally.disagreements
