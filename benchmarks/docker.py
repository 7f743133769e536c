"""`make perf-docker`: the Docker path's figures, each against its target.

1. Image builds (compose/images/build.sh): cold — a fresh rootfs, fresh downloads and no layer cache, under a
   throwaway tag prefix that is removed afterwards — and warm (`make images` again: every layer reused).
2. Container start to healthy, per service: the testcontainers stack (median of ``--repeat``; from each
   container's start until it answers) and the compose stack of `stack up --provider docker` (from each
   container's start to its first passing health check).
3. `bench` on the default corpus with ``--provider docker`` beside ``--provider embedded``, split by stage (from
   each run's runinfo.json); the ratio that matters is after the stack is up (load, answers, run, score).
   Both claims are compared byte for byte on the way.

Needs an engine (DOCKER_HOST), the compose v2 plugin, and the images TURNBENCH_OPENSEARCH_IMAGE /
TURNBENCH_POSTGRES_IMAGE name (`make images` prints them). Figures only; nothing is committed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "compose" / "images" / "build.sh"
TARGET_WARM_BUILD_S = 90.0
TARGET_HEALTHY_S = 30.0
TARGET_AFTER_START_RATIO = 1.5
COLD_PREFIX = "turnbench-bench-cold"
STAGES = ("stack", "load", "answers", "run", "judge_and_score")


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def timed_build(env: dict[str, str]) -> tuple[float, list[str]]:
    """Seconds for build.sh all, and its lines that say what each step took."""
    t0 = time.monotonic()
    out = subprocess.run([str(BUILD), "all"], env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    steps = [line for line in out.splitlines() if " built in " in line or "rootfs " in line]
    return time.monotonic() - t0, steps


def builds(skip_cold: bool) -> None:
    cold, steps = None, []
    if not skip_cold:
        with tempfile.TemporaryDirectory(prefix="turnbench-bench-images-") as cache:
            env = {**os.environ, "TURNBENCH_IMAGE_CACHE": cache, "TURNBENCH_IMAGE_PREFIX": COLD_PREFIX,
                   "TURNBENCH_BUILD_NO_CACHE": "1"}
            try:
                cold, steps = timed_build(env)
            finally:
                names = subprocess.run(["docker", "images", "--format", "{{.Repository}}:{{.Tag}}",
                                        f"{COLD_PREFIX}/*"], capture_output=True, text=True).stdout.split()
                if names:
                    subprocess.run(["docker", "rmi", *names], capture_output=True)
                subprocess.run(["docker", "image", "prune", "-f"], capture_output=True)
    warm, _ = timed_build(dict(os.environ))
    if cold is not None:
        print(f"images, cold (debootstrap, downloads, no layer cache): {cold:.1f} s")
        for step in steps:
            print(f"  {step}")
    print(f"images, warm (every layer reused): {warm:.1f} s (target <= {TARGET_WARM_BUILD_S:.0f} s: "
          f"{verdict(warm <= TARGET_WARM_BUILD_S)})")


def healthy(repeat: int) -> None:
    from turnbench.stack import open_stack

    runs: dict[str, list[float]] = {"postgres": [], "opensearch": []}
    for _ in range(repeat):
        with open_stack("docker") as info:
            timings = info.details["timings_s"]
        for service in runs:
            runs[service].append(float(timings[f"{service}_ready_s"]))
    for service, values in runs.items():
        median = statistics.median(values)
        print(f"testcontainers {service}: start to answering, median of {repeat}: {median:.1f} s "
              f"(runs {', '.join(f'{v:.1f}' for v in values)}; target <= {TARGET_HEALTHY_S:.0f} s: "
              f"{verdict(median <= TARGET_HEALTHY_S)})")
    with tempfile.TemporaryDirectory(prefix="turnbench-bench-compose-") as state:
        env = {**os.environ, "TURNBENCH_STATE_DIR": state}
        turnbench = str(Path(sys.executable).with_name("turnbench"))
        t0 = time.monotonic()
        up = subprocess.run([turnbench, "stack", "up", "--provider", "docker"], env=env, capture_output=True,
                            text=True)
        up_s = time.monotonic() - t0
        if up.returncode != 0:
            raise SystemExit(up.stderr)
        try:
            timings = json.loads(up.stdout)["details"]["timings_s"]
        finally:
            t0 = time.monotonic()
            subprocess.run([turnbench, "stack", "down"], env=env, check=True, capture_output=True)
            down_s = time.monotonic() - t0
    for service in ("postgres", "opensearch"):
        took = timings.get(f"{service}_healthy_s")
        print(f"compose {service}: start to healthy: {took:.1f} s (target <= {TARGET_HEALTHY_S:.0f} s: "
              f"{verdict(took is not None and took <= TARGET_HEALTHY_S)})")
    print(f"compose: `stack up --provider docker` {up_s:.1f} s, `stack down` {down_s:.1f} s")


def bench_both(corpus: Path) -> None:
    turnbench = str(Path(sys.executable).with_name("turnbench"))
    elapsed: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="turnbench-bench-docker-") as out:
        for provider in ("embedded", "docker"):
            target = Path(out) / provider
            subprocess.run([turnbench, "bench", "--corpus", str(corpus), "--arm", "bm25", "--provider", provider,
                            "--out", str(target)], check=True, capture_output=True, text=True)
            elapsed[provider] = json.loads((target / "bm25" / "runinfo.json").read_text())["elapsed_seconds"]
        a, b = Path(out) / "embedded" / "bm25", Path(out) / "docker" / "bm25"
        same = all((a / f).read_bytes() == (b / f).read_bytes()
                   for f in ("metrics.json", "metrics.md", "answers.md", "claim.sha256"))
    print(f"`bench` on {corpus}, seconds by stage:")
    print(f"  {'stage':<16}{'embedded':>10}{'docker':>10}{'ratio':>8}")
    for stage in STAGES:
        e, d = elapsed["embedded"].get(stage, 0.0), elapsed["docker"].get(stage, 0.0)
        print(f"  {stage:<16}{e:>10.1f}{d:>10.1f}{d / e if e else float('nan'):>8.2f}")
    after = {p: sum(v for k, v in elapsed[p].items() if k != "stack") for p in elapsed}
    ratio = after["docker"] / after["embedded"]
    print(f"  {'after start':<16}{after['embedded']:>10.1f}{after['docker']:>10.1f}{ratio:>8.2f}  "
          f"(target <= {TARGET_AFTER_START_RATIO}: {verdict(ratio <= TARGET_AFTER_START_RATIO)})")
    print(f"claim files (metrics.json, metrics.md, answers.md, claim.sha256) byte-identical: {same}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_docker", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="corpora/default")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-cold", action="store_true", help="skip the cold image build (several minutes)")
    args = ap.parse_args(argv)
    if shutil.which("docker") is None or subprocess.run(["docker", "version"], capture_output=True).returncode:
        raise SystemExit("perf-docker: no Docker engine answers (DOCKER_HOST)")
    if not (Path(args.corpus) / "manifest.json").is_file():
        raise SystemExit(f"{args.corpus}: no corpus there; `make corpus` regenerates the default one")
    builds(args.skip_cold)
    healthy(args.repeat)
    bench_both(Path(args.corpus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
