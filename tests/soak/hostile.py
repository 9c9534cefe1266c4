"""The hostile packages fuzzer: valid packages mutated into hostile ones, run through `kplan package verify`,
`kplan template` and (for a sample) `kplan install`, each outcome classified.

A mutation is a function `(folder, rng) -> None` that breaks one thing in a copy of a valid package: YAML
syntax, field types, unknown kinds, missing files, include cycles, undefined names, sandbox escapes, huge
loops and outputs, non-UTF-8 bytes, NUL bytes, deep nesting, alias bombs, big files (2 MB), huge files (50 MB:
params.yaml, a template, a non-UTF-8 blob), documents without kind.
Commands run in this process through `engine.cli.main.main` (as the CLI runs them) with a SIGALRM bound:
an outcome is `clean` (exit 0, or exit 1 with an error that names a file, parameter or object), `traceback`
(an exception left main, or main's catch-all "unexpected" message), `unnamed` (exit 1 naming none of those),
`hang` (past the bound), `memory` (the process's peak RSS grew by more than MEMORY_MIB during the command),
`bad-exit` (any other exit code) or, for install,
`leftover` (refused, yet objects were created).
Used by tests/soak (short) and bench/soak.py (long).
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import resource
import shutil
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from engine.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
BASES = {
    "minimal": ROOT / "tests" / "fixtures" / "packages" / "minimal",
    "valid": ROOT / "tests" / "fixtures" / "packages" / "valid",
    "hello-world": ROOT / "operators" / "hello-world",
    "redis": ROOT / "operators" / "redis",
}
HANG_SECONDS = 60  # a command still running after this long is a hang
MEMORY_MIB = 256  # a command that raises the process's peak RSS by more than this breaks the memory bound
HUGE = 50 * 1024 * 1024
# An error is clear when it names a file, the package, a parameter or the object the cluster refused.
# A package whose parameter is required and has no default is valid: `template` without -p refuses it for want of
# the value a user must give, which is no disagreement with `verify`.
NEEDS_A_VALUE = re.compile(r"^error: parameter '[^']+' is required and has no default$")
NAMED = re.compile(r"[\w.-]+\.(yaml|yml|md|txt|tgz)\b|\bpackage\b|\bparameter '|\boperatorversion \S+|\binstance '")

Mutation = Callable[[Path, random.Random], None]


class ClusterLike(Protocol):
    """What the install check needs of a cluster fixture or DevCluster: requests to its API."""

    def request(self, method: str, path: str) -> tuple[int, Any]: ...


class Hang(BaseException):
    """The command ran past HANG_SECONDS (a BaseException, so main's catch-all does not swallow it)."""


@dataclass
class Outcome:
    command: str
    kind: str  # clean | traceback | unnamed | hang | memory | bad-exit | leftover
    code: int | None
    seconds: float
    message: str


@dataclass
class Tally:
    """Counts over many mutants; `findings` keeps the first examples of every non-clean outcome."""

    mutants: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    verify_passes_template_refuses: int = 0
    disagreements: list[str] = field(default_factory=list)  # the first of those: mutant, and template's words
    refused: int = 0  # installs that ended with exit 1
    slowest_seconds: float = 0.0
    findings: list[str] = field(default_factory=list)

    def add(self, mutation: str, outcome: Outcome) -> None:
        self.outcomes[f"{outcome.command}:{outcome.kind}"] += 1
        self.slowest_seconds = max(self.slowest_seconds, outcome.seconds)
        if outcome.kind != "clean" and len(self.findings) < 20:
            self.findings.append(f"{mutation} {outcome.command}: {outcome.kind}: {outcome.message[:300]}")

    def bad(self) -> int:
        return sum(n for key, n in self.outcomes.items() if not key.endswith(":clean"))


# --- mutations ---------------------------------------------------------------------------------------------


def _yaml_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.yaml") if "tests" not in p.relative_to(folder).parts)


def _templates(folder: Path) -> list[Path]:
    return sorted((folder / "templates").glob("*.yaml"))


def _pick(rng: random.Random, paths: list[Path]) -> Path:
    return paths[rng.randrange(len(paths))]


def _append_template(folder: Path, rng: random.Random, text: str) -> None:
    target = _pick(rng, _templates(folder))
    target.write_text(target.read_text(encoding="utf-8") + text, encoding="utf-8")


def yaml_syntax(folder: Path, rng: random.Random) -> None:
    target = _pick(rng, _yaml_files(folder))
    text = target.read_text(encoding="utf-8")
    at = rng.randrange(len(text) + 1)
    junk = rng.choice([": [", "\t", "- {", "]]", "&", "*nope", "'", '"', ": : :", "\n  \tx: 1", "%YAML 9\n---"])
    target.write_text(text[:at] + junk + text[at:], encoding="utf-8")


def wrong_type(folder: Path, rng: random.Random) -> None:
    target = folder / rng.choice(["operator.yaml", "params.yaml"])
    lines = target.read_text(encoding="utf-8").splitlines()
    keyed = [i for i, line in enumerate(lines) if re.match(r"^\s*-?\s*[A-Za-z]+: \S", line)]
    index = keyed[rng.randrange(len(keyed))] if keyed else 0
    key = lines[index].split(":", 1)[0]
    lines[index] = key + ": " + rng.choice(["[1, 2]", "{a: 1}", "12", "true", "null", "-1.5e9", "''"])
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def unknown_kind(folder: Path, rng: random.Random) -> None:
    target = folder / "operator.yaml"
    text = target.read_text(encoding="utf-8")
    target.write_text(re.sub(r"kind: \w+", "kind: " + rng.choice(["Bogus", "apply", "", "Apply2"]), text, count=1),
                      encoding="utf-8")


def missing_file(folder: Path, rng: random.Random) -> None:
    choice = rng.randrange(3)
    if choice == 0:
        _pick(rng, _templates(folder)).unlink()
    elif choice == 1:
        (folder / "params.yaml").unlink()
    else:
        target = folder / "operator.yaml"
        target.write_text(re.sub(r"resources: \[", "resources: [nowhere.yaml, ", target.read_text(encoding="utf-8"),
                                 count=1), encoding="utf-8")


def include_cycle(folder: Path, rng: random.Random) -> None:
    target = _pick(rng, _templates(folder))
    target.write_text(target.read_text(encoding="utf-8") + f'\n{{% include "{target.name}" %}}\n', encoding="utf-8")


def undefined_name(folder: Path, rng: random.Random) -> None:
    _append_template(folder, rng, rng.choice([
        "\n# {{ nope }}\n", "\n# {{ Params.nope.deeper }}\n", "\n# {{ nope() }}\n", "\n# {{ Name.nope.x }}\n",
        "\n# {% for x in nope %}{{ x }}{% endfor %}\n",
    ]))


SANDBOX_ESCAPES = (
    "{{ ''.__class__.__mro__[1].__subclasses__() }}", "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ self.__init__.__globals__ }}", "{{ lipsum.__globals__['os'] }}", "{{ namespace.__init__.__globals__ }}",
    "{{ range.__class__ }}", "{% set x = ''.__class__ %}{{ x }}", "{{ Params.__class__.__base__ }}",
)
HUGE_LOOPS = (
    "{% for i in range(10**9) %}x{% endfor %}",
    "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
    "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "{% set ns = namespace(v=[1]) %}{% for i in range(60) %}{% set ns.v = ns.v + ns.v %}{% endfor %}",
)
HUGE_OUTPUTS = (
    "{{ 'x' * 10**9 }}", "{{ 'x' * 99999 * 99999 }}", "{{ ('x' * 999999) | center(10**10) }}",
    "{{ 9 ** 9 ** 9 }}", "{{ [1] * 10**9 }}", "{{ '%0999999999d' % 1 }}",
)


def sandbox_escape(folder: Path, rng: random.Random) -> None:
    _append_template(folder, rng, f"\n# {rng.choice(SANDBOX_ESCAPES)}\n")


def huge_loop(folder: Path, rng: random.Random) -> None:
    _append_template(folder, rng, f"\n# {rng.choice(HUGE_LOOPS)}\n")


def huge_output(folder: Path, rng: random.Random) -> None:
    _append_template(folder, rng, f"\n# {rng.choice(HUGE_OUTPUTS)}\n")


def non_utf8(folder: Path, rng: random.Random) -> None:
    target = _pick(rng, _yaml_files(folder))
    data = target.read_bytes()
    at = rng.randrange(len(data) + 1)
    target.write_bytes(data[:at] + rng.choice([b"\xff\xfe", b"\xc3\x28", b"\x80", b"\xed\xa0\x80"]) + data[at:])


def nul_bytes(folder: Path, rng: random.Random) -> None:
    target = _pick(rng, _yaml_files(folder))
    text = target.read_text(encoding="utf-8")
    at = rng.randrange(len(text) + 1)
    target.write_text(text[:at] + "\0" + text[at:], encoding="utf-8")


def deep_nesting(folder: Path, rng: random.Random) -> None:
    depth = rng.choice([150, 400, 999, 5000])
    if rng.random() < 0.5:
        target = folder / "params.yaml"
        target.write_text(target.read_text(encoding="utf-8") + "  - name: deep\n    type: object\n    default: "
                          + "{a: " * depth + "1" + "}" * depth + "\n", encoding="utf-8")
    else:
        _append_template(folder, rng, f"\nextra: {{% for i in range({depth}) %}}{{a: {{% endfor %}}1"
                                      f"{{% for i in range({depth}) %}}}}{{% endfor %}}\n")


def alias_bomb(folder: Path, rng: random.Random) -> None:
    lines = ['      a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"      {name}: &{name} [{', '.join([f'*{previous}'] * 9)}]")
    target = folder / "params.yaml"
    target.write_text(target.read_text(encoding="utf-8") + "  - name: lol\n    type: object\n    default:\n"
                      + "\n".join(lines) + "\n", encoding="utf-8")


def big_file(folder: Path, rng: random.Random, megabytes: int = 2) -> None:
    target = _pick(rng, _templates(folder))
    filler = "".join(f"# {rng.random()} padding padding padding\n" for _ in range(1000))
    target.write_text(target.read_text(encoding="utf-8") + filler * (megabytes * 1024 * 1024 // len(filler)),
                      encoding="utf-8")


HUGE_FILES = ("params.yaml", "template", "blob")


def huge_file(folder: Path, rng: random.Random) -> None:
    write_huge(folder, rng.choice(HUGE_FILES), rng)


def write_huge(folder: Path, what: str, rng: random.Random) -> None:
    """50 MB more of params.yaml or of a template (YAML comments), or a 50 MB template of non-UTF-8 bytes."""
    if what == "blob":
        block = bytes(rng.randrange(128, 256) for _ in range(4096))
        (folder / "templates" / "blob.yaml").write_bytes(block * (HUGE // len(block)))
        return
    target = folder / "params.yaml" if what == "params.yaml" else _pick(rng, _templates(folder))
    line = f"# {rng.random()} padding padding padding padding\n".encode()
    with target.open("ab") as out:
        out.write(b"\n" + line * (HUGE // len(line)))


def no_kind(folder: Path, rng: random.Random) -> None:
    _append_template(folder, rng, rng.choice(["\n---\napiVersion: v1\nmetadata: {name: x}\n", "\n---\n- 1\n",
                                              "\n---\njust text\n", "\n---\nkind: ConfigMap\n"]))


def byte_flip(folder: Path, rng: random.Random) -> None:
    target = _pick(rng, sorted(p for p in folder.rglob("*") if p.is_file()))
    data = bytearray(target.read_bytes())
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    target.write_bytes(bytes(data))


MUTATIONS: dict[str, Mutation] = {
    f.__name__: f
    for f in (yaml_syntax, wrong_type, unknown_kind, missing_file, include_cycle, undefined_name, sandbox_escape,
              huge_loop, huge_output, non_utf8, nul_bytes, deep_nesting, alias_bomb, big_file, huge_file, no_kind,
              byte_flip)
}


def mutant(base: str, mutation: str, seed: int, into: Path) -> Path:
    """A copy of package `base` at `into`, broken by `mutation` with the randomness of `seed`."""
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(BASES[base], into)
    MUTATIONS[mutation](into, random.Random(seed))
    return into


# --- running -----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _bounded(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: FrameType | None) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(command: str, argv: list[str], hang_seconds: int = HANG_SECONDS) -> Outcome:
    """Run `kplan argv` in this process and classify how it ended."""
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    peak = peak_rss_mib()
    code: int | None = None
    try:
        with _bounded(hang_seconds), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except Hang:
        return Outcome(command, "hang", None, time.monotonic() - started, " ".join(argv))
    except Exception as exc:  # what the fuzzer is looking for
        return Outcome(command, "traceback", None, time.monotonic() - started, f"{type(exc).__name__}: {exc}")
    seconds = time.monotonic() - started
    text = err.getvalue() + out.getvalue()
    grown = peak_rss_mib() - peak
    if grown > MEMORY_MIB:
        return Outcome(command, "memory", code, seconds, f"peak RSS grew by {grown:.0f} MiB: {' '.join(argv)}")
    return Outcome(command, _kind(code, text), code, seconds, text)


def peak_rss_mib() -> float:
    """This process's peak resident set size so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _kind(code: int, text: str) -> str:
    if "Traceback" in text or "KPLAN_DEBUG" in text:
        return "traceback"
    if code == 0:
        return "clean"
    if code != 1:
        return "bad-exit"
    return "clean" if NAMED.search(text) else "unnamed"


def try_mutant(folder: Path, mutation: str, tally: Tally, hang_seconds: int = HANG_SECONDS) -> tuple[Outcome, Outcome]:
    """verify and template of one mutant, counted in `tally`."""
    verified = run("verify", ["package", "verify", str(folder)], hang_seconds)
    rendered = run("template", ["template", str(folder)], hang_seconds)
    tally.mutants += 1
    tally.add(mutation, verified)
    tally.add(mutation, rendered)
    if verified.code == 0 and rendered.code == 1 and not NEEDS_A_VALUE.match(rendered.message.strip()):
        tally.verify_passes_template_refuses += 1
        if len(tally.disagreements) < 20:
            tally.disagreements.append(f"{mutation}: {rendered.message.strip()[:300]}")
    return verified, rendered


# --- installing --------------------------------------------------------------------------------------------

KPLAN_KINDS = ("instances", "operators", "operatorversions")


def kplan_objects(cluster: ClusterLike) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of every Instance, Operator and OperatorVersion in the cluster."""
    found = set()
    for plural in KPLAN_KINDS:
        status, body = cluster.request("GET", f"/apis/kplan.dev/v1alpha1/{plural}")
        assert status == 200, body
        for item in body.get("items") or []:
            meta = item["metadata"]
            found.add((plural, str(meta.get("namespace")), str(meta["name"])))
    return found


def try_install(
    cluster: ClusterLike, kubeconfig: Path, folder: Path, name: str, tally: Tally, hang_seconds: int = HANG_SECONDS
) -> Outcome:
    """`kplan install` of one mutant as Instance `name`; a refusal that leaves an object behind is a `leftover`."""
    before = kplan_objects(cluster)
    outcome = run("install", ["install", str(folder), "--kubeconfig", str(kubeconfig), "--instance", name],
                  hang_seconds)
    if outcome.code == 1:
        tally.refused += 1
        if kplan_objects(cluster) != before:
            outcome = Outcome("install", "leftover", 1, outcome.seconds, outcome.message)
    tally.add(name, outcome)
    return outcome
