"""hipport's throughput benchmark: a large generated corpus through convert, scan and check.

    python bench/bench.py             # 2,000 files, ~525,000 lines (~18 MB); a few minutes
    python bench/bench.py --quick     # 200 files, for a smoke run
    python bench/bench.py --json      # machine-readable results on stdout

Every command runs as a subprocess of the installed ``hipport`` (what a user runs,
start-up included). Wall time gives files/s, lines/s and MB/s (10^6 bytes; MiB/s beside
it); each convert/scan configuration runs ``--repeat`` times and the median is shown.
CPU time (user + system of the whole process tree) is reported too, because on a shared
machine wall time also measures the neighbours. Peak memory is the largest sum of RSS
over the process tree (parent and workers), sampled from /proc every 20 ms in one more
run (sampling costs CPU, so the timed runs are not sampled), and the largest single
process (``ru_maxrss``). The per-stage split comes from one instrumented in-process run
(``stages.py``). Not part of the test suite.
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
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from corpus import CorpusStats, generate  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def hipport_command() -> list[str]:
    """The console script beside this interpreter, else ``python -m hipport``."""
    script = Path(sys.executable).with_name("hipport")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hipport"]


def _tree_rss(root: int) -> int:
    """Sum of RSS (bytes) of ``root`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)  # fields[1] is the ppid
        rss[pid] = int(fields[21]) * PAGE  # fields[21] is rss in pages
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total


def measure(argv: list[str], cwd: Path, *, sample_memory: bool = False) -> dict:
    """Run ``argv`` once: wall seconds, CPU seconds, the largest process's peak RSS (MiB)
    and, with ``sample_memory``, the peak RSS of the whole process tree (MiB).

    Sampling reads every process's stat in /proc every 20 ms: a few percent of a core,
    which on a 2-core machine busy with two workers shows in the wall time. So timed runs
    do not sample; ``median_run`` measures the tree's memory in a run of its own."""
    peak = 0
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.02):
            peak = max(peak, _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    if sample_memory:
        sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    if sample_memory:
        sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{stderr}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_tree_mib": peak / 2**20 if sample_memory else None,
            "peak_process_mib": usage.ru_maxrss / 1024}


def throughput(stats: CorpusStats, wall: float) -> dict:
    """Rates over the whole corpus. MB is 10^6 bytes (the unit of the targets); MiB, 2^20."""
    return {"files_s": stats.files / wall, "lines_s": stats.lines / wall,
            "mb_s": stats.bytes / 1e6 / wall, "mib_s": stats.bytes / 2**20 / wall}


def median_run(argv: list[str], cwd: Path, out: Path | None, repeat: int) -> dict:
    """``measure`` ``repeat`` times (fresh output each time) and keep the run with the
    median wall time, with every wall time, because a shared machine is noisy; then one
    more run, sampled, for the process tree's peak memory."""
    runs = []
    for _ in range(repeat + 1):
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
        runs.append(measure(argv, cwd, sample_memory=len(runs) == repeat))
    sampled = runs.pop()
    runs.sort(key=lambda m: m["wall"])
    return {**runs[len(runs) // 2], "walls": [m["wall"] for m in runs],
            "peak_tree_mib": sampled["peak_tree_mib"]}


def run_bulk(work: Path, corpus: Path, stats: CorpusStats, jobs: tuple[int, ...],
             repeat: int) -> list[dict]:
    hipport = hipport_command()
    rows = []
    for command in ("convert", "scan"):
        for j in jobs:
            out = work / f"out-{command}-{j}"
            argv = [*hipport, command, str(corpus), "-q", "--jobs", str(j)]
            argv += ["-o", str(out), "--no-report"] if command == "convert" else ["-o", str(out)]
            m = median_run(argv, work, out, repeat)
            rows.append({"command": command, "jobs": j, **m, **throughput(stats, m["wall"])})
    return rows


def run_startup(work: Path, runs: int) -> list[dict]:
    """``--version`` and ``check`` of one small file: median wall over ``runs``."""
    small = work / "small.cu"
    small.write_text("#include <cuda_runtime.h>\n"
                     "__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n"
                     "void f(float** p) { cudaMalloc(p, 4 * sizeof(float)); }\n")
    hipport = hipport_command()
    env_cache = work / "cache"
    rows = []
    for label, argv in (("--version", [*hipport, "--version"]),
                        ("check small.cu --no-cache", [*hipport, "check", "--no-cache", str(small)]),
                        ("check small.cu (cached)", [*hipport, "check", str(small)])):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(argv, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, "HIPPORT_CACHE_DIR": str(env_cache)})
            times.append(time.perf_counter() - start)
        rows.append({"command": label, "median_s": statistics.median(times), "min_s": min(times)})
    return rows


def run_stages(work: Path, corpus: Path) -> dict:
    out = work / "out-stages"
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.run([sys.executable, str(HERE / "stages.py"), str(corpus), str(out)],
                          check=True, capture_output=True, text=True)
    return json.loads(proc.stdout)


def print_table(stats: CorpusStats, bulk: list[dict], startup: list[dict], stages: dict) -> None:
    print(f"corpus: {stats.files} files ({stats.plain_files} without CUDA), {stats.lines:,} lines, "
          f"{stats.bytes / 1e6:.1f} MB ({stats.bytes / 2**20:.1f} MiB); {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"\n{'command':10} {'jobs':>4} {'wall s':>7} {'cpu s':>7} {'files/s':>8} {'lines/s':>9} "
          f"{'MB/s':>6} {'MiB/s':>6} {'peak tree MiB':>14} {'peak proc MiB':>14}  walls (s)")
    for r in bulk:
        walls = " ".join(f"{w:.2f}" for w in r["walls"])
        print(f"{r['command']:10} {r['jobs']:>4} {r['wall']:7.2f} {r['cpu']:7.2f} {r['files_s']:8.0f} "
              f"{r['lines_s']:9.0f} {r['mb_s']:6.2f} {r['mib_s']:6.2f} {r['peak_tree_mib']:14.0f} "
              f"{r['peak_process_mib']:14.0f}  {walls}")
    print(f"\n{'start-up':28} {'median s':>9} {'min s':>7}")
    for r in startup:
        print(f"{r['command']:28} {r['median_s']:9.3f} {r['min_s']:7.3f}")
    wall = stages["wall"]
    print(f"\nstages (instrumented convert, --jobs 1, in-process: {wall:.2f} s)")
    for name, seconds in stages["stages"].items():
        print(f"  {name:28} {seconds:7.2f} s {100 * seconds / wall:5.1f} %")
    print("\nslowest visitors (included in rewrite/rules above)")
    for name, seconds in list(stages["visitors"].items())[:12]:
        print(f"  {name:44} {seconds:7.2f} s {100 * seconds / wall:5.1f} %")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="200 files instead of 2,000")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--jobs", default="1,2", help="job counts to run (default 1,2)")
    ap.add_argument("--runs", type=int, default=7, help="start-up runs per command (median)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per convert/scan configuration; the median is shown (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="build the corpus here and keep it")
    args = ap.parse_args()
    jobs = tuple(int(j) for j in args.jobs.split(","))
    work = args.keep or Path(tempfile.mkdtemp(prefix="hipport-bench-"))
    try:
        corpus = work / "corpus"
        shutil.rmtree(corpus, ignore_errors=True)
        files = 200 if args.quick else 2000
        stats = generate(corpus, REPO, files=files, mean_lines=260, seed=args.seed)
        bulk = run_bulk(work, corpus, stats, jobs, args.repeat)
        startup = run_startup(work, args.runs)
        stages = run_stages(work, corpus)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"corpus": stats.__dict__, "bulk": bulk, "startup": startup,
                          "stages": stages, "load_average": os.getloadavg()[0]}, indent=2))
    else:
        print_table(stats, bulk, startup, stages)


if __name__ == "__main__":
    main()
