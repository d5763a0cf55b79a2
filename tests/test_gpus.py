"""The GPU as a parameter: --offload-arch, -D, --all-branches, and the rules that read them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport import gpus
from hipport.analyze import analyze
from hipport.cli import main
from hipport.options import Options

FP8 = """#include <cuda_fp8.h>
__global__ void k(const __nv_fp8_e4m3 *q, const unsigned char *raw, float *out) {
  const __nv_fp8_storage_t b = q[0].__x;
  if (b != 0x7F && b != 0xFF) out[0] = float(q[0]);
  const __nv_fp8_e4m3 *view = reinterpret_cast<const __nv_fp8_e4m3 *>(raw);
  out[1] = float(view[1]) + float(q[1]);
}
"""


def run(src: str, **options):
    ctx = analyze(src.encode(), "t.cu", Options(apply_fixes=True, **options))
    return ctx


def lines(ctx, code: str) -> list[int]:
    return sorted(f.line for f in ctx.findings if f.code == code)


def test_the_gpu_table() -> None:
    assert gpus.parse_archs(["gfx942,gfx1100", "gfx950"]) == ("gfx942", "gfx1100", "gfx950")
    assert gpus.wave_sizes(("gfx942", "gfx1100")) == {64, 32}
    assert gpus.wave_sizes(("gfx1100:wave64",)) == {64}
    assert gpus.lds_limit(("gfx950",)) == 160 * 1024 and gpus.lds_limit(("gfx950", "gfx942")) == 64 * 1024
    assert gpus.fp8_formats(("gfx942", "gfx950", "gfx90a")) == {"fnuz", "ocp"}
    with pytest.raises(ValueError, match="unknown GPU 'gfx999'"):
        gpus.parse_archs("gfx999")


def test_lds_per_block_follows_the_gpus() -> None:
    src = "__global__ void k(float *o) { __shared__ float t[25600]; o[0] = t[threadIdx.x]; }\n"  # 100 KiB
    assert lines(run(src), "HP306") == [1]
    assert lines(run(src, offload_arch=("gfx950",)), "HP306") == []
    assert lines(run(src, offload_arch=("gfx950", "gfx942")), "HP306") == [1]


def test_fp8_is_mapped_per_encoding_and_bit_level_uses_are_reported() -> None:
    fnuz = run(FP8)
    assert b"__hip_fp8_e4m3_fnuz" in _converted(fnuz)
    assert lines(fnuz, "HP321") == [4, 4, 5]  # two bit tests, one reinterpretation
    ocp = run(FP8, offload_arch=("gfx950",))
    assert b"_fnuz" not in _converted(ocp) and lines(ocp, "HP321") == []  # OCP like CUDA
    both = run(FP8, offload_arch=("gfx950", "gfx942"))
    assert b"_fnuz" not in _converted(both) and lines(both, "HP321") == [4, 4, 5]
    (note,) = [f.message for f in both.findings if f.code == "HP310"]
    assert "left as written" in note and "gfx950" in note and "gfx942" in note


def _converted(ctx) -> bytes:
    from hipport.edits import apply_edits

    return apply_edits(ctx.src, ctx.edits)


BRANCHY = (b"#if FEATURE_X\n"
           b"__device__ void f(unsigned *m) { *m = __ballot_sync(0xffffffff, 1); }\n"
           b"#endif\n"
           b"#if defined(__gfx1100__)\n"
           b"__device__ void g(unsigned long long *m) { *m = __ballot_sync(0xffffffff, 1); }\n"
           b"#endif\n")


def check(tmp_path: Path, *args: str) -> list[str]:
    f = tmp_path / "k.cu"
    f.write_bytes(BRANCHY)
    result = CliRunner().invoke(main, ["check", str(f), "--no-cache", "-q", *args], catch_exceptions=False)
    return [line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith(str(f))]


def test_cli_targets_defines_and_all_branches(tmp_path: Path) -> None:
    assert [m[:11] for m in check(tmp_path)] == ["HP201 high:"]  # FEATURE_X unknown: kept
    assert check(tmp_path, "-D", "FEATURE_X=0") == []  # the branch is decided: never compiled
    assert check(tmp_path, "-D", "FEATURE_X") == check(tmp_path)
    rdna = check(tmp_path, "--offload-arch", "gfx1100")
    assert sum(m.startswith("HP201 high") for m in rdna) == 2  # the gfx1100 branch is compiled
    assert check(tmp_path, "-U", "FEATURE_X") == []  # surely undefined: #if 0
    assert check(tmp_path, "--undefine", "FEATURE_X", "-D", "FEATURE_X") == check(tmp_path)  # -D wins
    shown = check(tmp_path, "--all-branches")
    assert any(m.startswith("HP201 info: not compiled by the HIP build:") for m in shown)


def test_config_keys(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hipport]\noffload-arch = ["gfx1100"]\ndefines = ["FEATURE_X"]\nall-branches = false\n')
    assert sum(m.startswith("HP201 high") for m in check(tmp_path)) == 2
    (tmp_path / "pyproject.toml").write_text('[tool.hipport]\nundefines = ["FEATURE_X"]\n')
    assert check(tmp_path) == []
    (tmp_path / "pyproject.toml").write_text('[tool.hipport]\noffload-arch = ["gfx12345"]\n')
    f = tmp_path / "k.cu"
    result = CliRunner().invoke(main, ["check", str(f), "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 2 and "gfx12345" in result.output


def test_wave_size_rules_follow_the_gpus() -> None:
    src = ("__global__ void k(int *o) {\n"
           "  int lane = threadIdx.x & 31;\n"
           "  o[lane] = __shfl_down_sync(0xffffffffffffffffull, o[lane], 16);\n"
           "}\n")
    assert {"HP204", "HP214"} <= {f.code for f in run(src).findings}  # gfx942: wave64
    assert not {"HP204", "HP214"} & {f.code for f in run(src, offload_arch=("gfx1100",)).findings}
    assert {"HP204", "HP214"} <= {f.code for f in run(src, offload_arch=("gfx1100:wave64",)).findings}
    assert {"HP204", "HP214"} <= {f.code for f in run(src, offload_arch=("gfx1100", "gfx942")).findings}
