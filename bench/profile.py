"""Where a benchmark's time goes: runs one bench script under py-spy (sampling every thread of the process, and of
its child processes with --subprocesses) and prints one JSON object: the share of samples per thread role (API
server request threads, simulators, manager workers, informers, ...; those of a child process, such as the dev
cluster that instances.py starts, are named so), and per role the functions with the most samples of their own
(self) and the kplan functions with the most samples under them (inclusive).

    .venv/bin/python bench/profile.py [--gil] [--subprocesses] [--top N] -- plan.py --steps 50 --backend dev

With `--gil` only the thread holding the GIL is sampled: in one interpreter that is where CPU time goes. Left
out of `make bench` (it measures nothing new; it explains the other scripts' figures).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from _common import machine

HERE = Path(__file__).resolve().parent
ROLES = (  # the first pattern a thread's name matches names its role
    ("api server requests", re.compile(r"process_request_thread|devcluster-http|kubelet-api")),
    ("simulators", re.compile(r"devcluster-(simulators|controllers|timers|gc)")),
    ("watch fan-out", re.compile(r"devcluster-subscriber|stop-relay")),
    ("manager workers", re.compile(r"^worker")),
    ("informers", re.compile(r"^informer-")),
    ("main", re.compile(r"^MainThread")),
)
PROCESSES = re.compile(r'(process \d+:".*?";)+')  # a command line may hold ";" but not '";'
FRAME = re.compile(r"^(?P<function>.+) \((?P<file>[^()]*):\d+\)$")


def role(thread: str) -> str:
    name = re.sub(r"^thread \(\d+\): ?", "", thread)
    return next((label for label, pattern in ROLES if pattern.search(name)), "other")


def where(frame: str) -> str:
    """`function (file)` without the line, the file relative to the repository or the library."""
    match = FRAME.match(frame)
    if not match:
        return frame
    file = re.sub(r"^.*/(site-packages|lib/python3\.\d+)/", "", match["file"])
    return f"{match['function']} ({file})"


def summarise(raw: Path, top: int) -> dict[str, object]:
    samples: Counter[str] = Counter()
    own: defaultdict[str, Counter[str]] = defaultdict(Counter)
    under: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        processes = PROCESSES.match(stack)  # --subprocesses: the process, its child, ..., then the thread
        nested = processes[0].count('";') if processes else 0
        parts = stack[processes.end() if processes else 0:].split(";")
        frames = [where(f) for f in parts[1:] if f]
        label, n = ("child process: " if nested > 1 else "") + role(parts[0]), int(count)
        samples[label] += n
        if frames:
            own[label][frames[-1]] += n
        for frame in set(frames):
            if "(engine/" in frame:
                under[label][frame] += n
    total = sum(samples.values()) or 1
    return {"samples": total, "roles": {
        label: {"share": round(n / total, 3),
                "self": {f: round(c / total, 3) for f, c in own[label].most_common(top)},
                "inclusive_kplan": {f: round(c / total, 3) for f, c in under[label].most_common(top)}}
        for label, n in samples.most_common()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gil", action="store_true", help="sample only the thread holding the GIL")
    parser.add_argument("--subprocesses", action="store_true", help="sample the script's child processes too")
    parser.add_argument("--rate", type=int, default=250, help="samples per second (default 250)")
    parser.add_argument("--top", type=int, default=12, help="functions listed per role (default 12)")
    parser.add_argument("script", help="a script of bench/, e.g. plan.py")
    parser.add_argument("options", nargs=argparse.REMAINDER, help="the script's options")
    args = parser.parse_args()
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        parser.error("py-spy is not installed: make install puts it into .venv (the dev extra)")
    with tempfile.TemporaryDirectory() as folder:
        raw = Path(folder) / "profile.raw"
        command = [spy, "record", "--format", "raw", "--threads", "--rate", str(args.rate), "-o", str(raw),
                   *(["--gil"] if args.gil else []), *(["--subprocesses"] if args.subprocesses else []),
                   "--", sys.executable, str(HERE / args.script), *args.options]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not raw.exists():
            sys.exit(f"profile.py: {args.script} under py-spy failed: {done.stderr.strip()[-2000:]}")
        figures = {"bench": "profile", **machine(), "script": [args.script, *args.options], "gil_only": args.gil,
                   **summarise(raw, args.top)}
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
