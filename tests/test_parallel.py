"""The process pool changes nothing but speed: same order, same bytes, same report."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main
from hipport.options import Options
from hipport.pipeline import POOL_THRESHOLD, run_paths

KERNEL = """#include <cuda_runtime.h>
__global__ void k{i}(float* p, int n) {{
  int lane = threadIdx.x % 32;
  float v = p[lane];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  if (lane == 0) p[blockIdx.x] = v;
}}
void launch{i}(float* p, int n, cudaStream_t s) {{
  float* d; cudaMalloc(&d, n * sizeof(float));
  k{i}<<<(n + 255) / 256, 256, 0, s>>>(d, n);
  cudaFree(d);
}}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """More files than the pool threshold, of every kind the pipeline tells apart."""
    src = tmp_path / "src"
    for i in range(3 * POOL_THRESHOLD):
        d = src / f"d{i % 5}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"k{i}.cu").write_text(KERNEL.format(i=i) * (1 + i % 4))
    (src / "plain.cpp").write_text("int add(int a, int b) { return a + b; }\n")
    (src / "blob.cu").write_bytes(b"\0\1\2binary")
    (src / "CMakeLists.txt").write_text("project(x CUDA)\n")
    return src


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_results_come_in_the_same_order_with_the_same_content(tree: Path) -> None:
    def results(jobs: int) -> list[tuple]:
        opts = Options(jobs=jobs, apply_fixes=True)
        return [(r.path, r.status, r.output, r.findings, r.rewrites, r.error, r.note)
                for r in run_paths([tree], opts)]

    serial = results(1)
    assert len(serial) > POOL_THRESHOLD
    assert results(2) == serial


def test_convert_and_scan_outputs_are_identical_for_any_job_count(tree: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    outputs, reports = [], []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        res = runner.invoke(main, ["convert", str(tree), "-o", str(out), "-q", "--jobs", jobs,
                                   "--no-report"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        outputs.append(_snapshot(out))
        res = runner.invoke(main, ["scan", str(tree), "-f", "json", "--jobs", jobs],
                            catch_exceptions=False)
        reports.append(res.output)
    assert outputs[0] == outputs[1]
    assert outputs[0]["d0/k0.cu"] != (tree / "d0" / "k0.cu").read_bytes()  # it did convert
    assert reports[0] == reports[1]


def test_leaving_a_pooled_run_early_does_not_hang(tree: Path) -> None:
    results = run_paths([tree], Options(jobs=2))
    first = [next(results) for _ in range(3)]
    results.close()
    assert [r.status for r in first]
