"""Precision fixes found on real code, each pinned by the smallest case that showed it.

Every test holds a false positive that must stay gone and, beside it, the true positive
of the same rule that must stay (so a fix cannot pass by silencing the rule).
"""

from __future__ import annotations

import os
from pathlib import Path

from hipport.analyze import analyze
from hipport.options import DEFAULT_HIP_GUARDS, Options


def found(src: str, options: Options = Options(), path: str = "t.cu") -> list[tuple[str, int]]:
    return sorted((f.code, f.line) for f in analyze(src.encode(), path, options).findings)


def codes_on(src: str, code: str, **kw) -> list[int]:
    return [line for c, line in found(src, **kw) if c == code]


def test_amd_assembly_is_not_ptx() -> None:
    src = ('__device__ void mad(float &acc, unsigned v, unsigned u) {\n'
           '  asm volatile("v_dot2_f32_f16 %0, %1, %2, %0" : "+v"(acc) : "v"(v), "v"(u));\n'
           '  asm volatile("s_waitcnt vmcnt(0)\\n ds_read_b128 %0, %1" : "=v"(acc) : "v"(v));\n'
           '  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}, {%1}, {%2}, {%0};"'
           ' : "+f"(acc) : "r"(v), "r"(u));\n'
           '}\n')
    assert codes_on(src, "HP301") == [4]


def test_pointer_arithmetic_on_half_pointers_is_not_a_half_operator() -> None:
    src = ('#include <cuda_fp16.h>\n'
           '__global__ void k(const half2 *xs0, half2 *dst, int stride, half2 y) {\n'
           '  const half2 *row = xs0 + threadIdx.x * stride;\n'
           '  const __half *h = (const __half *) row;\n'
           '  dst[0] = xs0[threadIdx.x] * y;\n'
           '}\n')
    assert codes_on(src, "HP311") == [5]  # the element product, not the address sums


def test_half_operators_kept_by_the_build_are_no_finding() -> None:
    """DeepSpeed's op builder passes -U__HIP_NO_HALF_OPERATORS__ -U__HIP_NO_HALF2_OPERATORS__
    on ROCm (op_builder/builder.py nvcc_args), so normalize_kernels.cu's ``vals_arr[i] * …`` on
    __half2 values compiles: HP311 is for builds that take the operators away. A bfloat16
    value keeps it unless __HIP_NO_BFLOAT16_OPERATORS__ is undefined too."""
    half = ('#include <cuda_fp16.h>\n__global__ void k(__half2 *v, __half2 g) {\n'
            '  __half2 x = v[0];\n  v[1] = x * g;\n}\n')
    bf16 = half.replace("cuda_fp16", "cuda_bf16").replace("__half2", "__nv_bfloat16")
    kept = Options(undefines=("__HIP_NO_HALF_OPERATORS__",))
    assert codes_on(half, "HP311") == [4] and codes_on(bf16, "HP311") == [4]
    assert codes_on(half, "HP311", options=kept) == [] and codes_on(bf16, "HP311", options=kept) == [4]
    both = Options(undefines=("__HIP_NO_HALF_OPERATORS__", "__HIP_NO_BFLOAT16_OPERATORS__"))
    assert codes_on(bf16, "HP311", options=both) == []


def test_bit_twiddling_of_a_loaded_word_is_not_lane_arithmetic() -> None:
    src = ('__device__ int get_int(const int *p, int i);\n'
           '__global__ void k(const int *q, int *out) {\n'
           '  const int kqsx = threadIdx.x % 8;\n'
           '  const int qh = get_int(q, 0) >> (4 * kqsx);\n'
           '  int qs1 = (qh >> 5) & 0x00001000;\n'
           '  int warp = threadIdx.x >> 5;\n'
           '  out[warp] = qs1;\n'
           '}\n')
    assert codes_on(src, "HP204") == [6]


def test_launch_bounds_with_one_block_is_not_reported() -> None:
    src = ('__global__ void __launch_bounds__(256, 1) a(float *x) {}\n'
           '__global__ void __launch_bounds__(256, 4) b(float *x) {}\n')
    assert codes_on(src, "HP212") == [2]


def test_warp_matrix_code_is_reported_in_each_function_that_uses_it() -> None:
    src = ('#include <mma.h>\n'
           'using namespace nvcuda;\n'
           '__global__ void a(half *p) {\n'
           '  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n'
           '  wmma::load_matrix_sync(fa, p, 16);\n'
           '}\n'
           '__global__ void b(half *p) {\n'
           '  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;\n'
           '}\n')
    assert codes_on(src, "HP304") == [1, 2, 4, 8]


def test_first_warp_test_before_warp_work_is_reported() -> None:
    src = ('__global__ void reduce(float *s) {\n'
           '  unsigned tid = threadIdx.x;\n'
           '  if (tid < 32) {\n'
           '    float v = s[tid];\n'
           '    v += __shfl_down_sync(0xffffffffffffffffull, v, 8);\n'
           '    s[tid] = v;\n'
           '  }\n'
           '  if (threadIdx.x < 32) s[threadIdx.x] = 0.f;\n'  # no warp work: a plain bound
           '}\n')
    assert codes_on(src, "HP204") == [3]


def test_a_compat_header_that_redefines_a_warp_builtin_owns_its_mask(tmp_path: Path) -> None:
    (tmp_path / "vendor.h").write_text(
        "#ifdef MY_HIP\n#define __shfl_xor_sync(mask, var, lane, width) __shfl_xor(var, lane, width)\n"
        "typedef __hip_bfloat162 nv_bfloat162;\n#endif\n")
    src = ('#include "vendor.h"\n'
           '__global__ void k(float *v, nv_bfloat162 *b) {\n'
           '  float x = v[0];\n'
           '  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffff, x, o, 32);\n'
           '  v[0] = x;\n'
           '}\n')
    path = str(tmp_path / "k.cu")
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("MY_HIP",))
    ported = {code for code, _ in found(src, guarded, path)}
    assert "HP201" not in ported and "HP101" not in ported  # the project's macro and typedef
    assert {"HP213", "HP214"} <= ported  # its width and its ladder still reach HIP's shuffle
    plain = {code for code, _ in found(src, Options(), path)}
    assert {"HP201", "HP101"} <= plain  # without the guard the header's branch is unknown


def test_an_alias_of_a_mapped_name_is_told_its_hip_spelling() -> None:
    src = "#include <cuda_bf16.h>\n__global__ void k(nv_bfloat162 *p) { p[0] = p[1]; }\n"
    (finding,) = [f for f in analyze(src.encode(), "t.cu", Options()).findings if f.code == "HP101"]
    assert "__hip_bfloat162" in finding.message and "no HIP equivalent" not in finding.message
    assert "__hip_bfloat162" in finding.suggestion


def test_deep_mode_judges_hip_builtins_by_hip_declarations(tmp_path: Path) -> None:
    import pytest

    try:
        from hipport.deep import ensure_available

        ensure_available()
    except Exception:  # noqa: BLE001 - no libclang: nothing to judge
        pytest.skip("libclang (hipport[clang]) not installed")
    from hipport.pipeline import transform

    src = (b"__global__ void k(float *v) {\n"
           b"  float x = v[threadIdx.x];\n"
           b"  x += __shfl_down_sync(__activemask(), x, 1);\n"  # HIP's __activemask is 64-bit
           b"  unsigned m = __activemask();\n"  # a 32-bit variable truncates it
           b"  x += __shfl_down_sync(m, x, 1);\n"
           b"  v[threadIdx.x] = x;\n"
           b"}\n")
    f = tmp_path / "k.cu"
    f.write_bytes(src)
    findings = transform(src, str(f), Options(engine="clang", jobs=1))[1]
    assert 3 not in {x.line for x in findings if x.code in ("HP201", "HP202")}
    assert 4 in {x.line for x in findings if x.code == "HP202"}


def test_a_ported_projects_cuda_version_tests_are_its_hip_path(tmp_path: Path) -> None:
    # llama.cpp: `#if CUDART_VERSION >= 12000 || defined(GGML_USE_MUSA)` ... `#else` (the HIP
    # path: its HIP build never defines CUDART_VERSION), and `#ifdef __CUDA_ARCH_LIST__`.
    (tmp_path / "compat.h").write_text("#ifdef MY_HIP\n#define cudaStream_t hipStream_t\n#endif\n")
    src = ('#include "compat.h"\n'
           '#if CUDART_VERSION >= 12000 || defined(OTHER_VENDOR)\n'
           '#define NEW_API 1\n'
           '#endif\n'
           '#ifdef __CUDA_ARCH_LIST__\n'
           '#define ARCHS __CUDA_ARCH_LIST__\n'
           '#endif\n')
    path = str(tmp_path / "k.cu")
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("MY_HIP",))
    assert codes_on(src, "HP106", options=guarded, path=path) == []
    assert codes_on(src, "HP106", path=path) == [2, 5, 6]  # unported: tests to rewrite


def test_a_cuda_version_the_compat_header_may_define_stays_a_finding(tmp_path: Path) -> None:
    # Only a test the HIP build surely decides is the project's: a CUDART_VERSION its header
    # defines under a condition the model cannot decide is still a test to look at.
    (tmp_path / "compat.h").write_text("#ifdef SOMETIMES\n#define CUDART_VERSION 12000\n#endif\n")
    src = '#include "compat.h"\n#if CUDART_VERSION >= 12000\n#define NEW_API 1\n#endif\n'
    path = str(tmp_path / "k.cu")
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("MY_HIP",))
    assert codes_on(src, "HP106", options=guarded, path=path) == [2]


def test_lane_arithmetic_written_for_amd_is_not_a_warp_size_hazard(tmp_path: Path) -> None:
    # llama.cpp's mma.cuh: MFMA tile layouts inside `#if defined(AMD_MFMA_AVAILABLE)`, which
    # common.cuh defines only for its HIP build on CDNA. A CUDA build never compiles them.
    (tmp_path / "common.cuh").write_text(
        "#if defined(MY_HIP)\n#define AMD_MFMA_AVAILABLE\n#endif\n")
    src = ('#include "common.cuh"\n'
           '__device__ int get_i() {\n'
           '#if defined(AMD_MFMA_AVAILABLE)\n'
           '  int lane = threadIdx.x % 32; return lane;\n'
           '#else\n'
           '  int warp = threadIdx.x / 32; return warp;\n'
           '#endif\n'
           '}\n'
           '__device__ int lane_amd() {\n'
           '#ifdef __HIP_PLATFORM_AMD__\n'
           '  int lane = threadIdx.x & 31; return lane;\n'
           '#endif\n'
           '  int lane = threadIdx.x % 32; return lane;\n'
           '}\n')
    path = str(tmp_path / "k.cu")
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("MY_HIP",))
    # line 6 is the CUDA side (never compiled by HIP); 13 is compiled by both: a hazard
    assert codes_on(src, "HP204", options=guarded, path=path) == [13]
    # without the guard nothing says which side is AMD's; AMD's own macro still does
    assert codes_on(src, "HP204", path=path) == [4, 6, 13]


def test_a_ballot_cut_to_32_bits_in_code_written_for_amd_is_still_a_hazard() -> None:
    # HIP's own __ballot is 64-bit: __popc of it, or a cast to unsigned, keeps lanes 0-31 on
    # a wave of 64 in an AMD-only branch as anywhere (the branch excuses lane arithmetic only)
    src = ('__device__ int votes(int p) {\n'
           '#ifdef __HIP_PLATFORM_AMD__\n'
           '  int n = __popc(__ballot(p));\n'
           '  unsigned m = (unsigned)__ballot(p);\n'
           '  int lane = threadIdx.x & 31;\n'
           '  return n + m + lane;\n'
           '#else\n'
           '  return __popc(__ballot_sync(0xffffffff, p));\n'
           '#endif\n'
           '}\n')
    assert codes_on(src, "HP203") == [3]
    assert codes_on(src, "HP219") == [4]
    assert codes_on(src, "HP204") == []
    # all targets wave32 (RDNA): the low 32 bits hold the whole vote
    assert codes_on(src, "HP203", options=Options(offload_arch=("gfx1100",))) == []



def test_an_include_guarded_header_and_a_source_root_include_are_followed(tmp_path: Path) -> None:
    # llama.cpp: ggml-cuda.cu includes "ggml-cuda/common.cuh" (its build has -I ggml/src);
    # conv3d.cuh has an #ifndef/#define include guard. Both reach vendors/hip.h, which
    # #defines CUBLAS_GEMM_DEFAULT_TENSOR_OP for the HIP build.
    src_dir = tmp_path / "src" / "cuda"
    src_dir.mkdir(parents=True)
    (src_dir / "compat.h").write_text("#ifdef MY_HIP\n#define CUBLAS_GEMM_DFALT_TENSOR_OP HIPBLAS_GEMM_DEFAULT\n#endif\n")
    (src_dir / "op.cuh").write_text('#ifndef OP_CUH\n#define OP_CUH\n#include "compat.h"\n#endif\n')
    use = "int algo = CUBLAS_GEMM_DFALT_TENSOR_OP;\n"
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("MY_HIP",))
    assert codes_on('#include "op.cuh"\n' + use, "HP101", options=guarded, path=str(src_dir / "k.cu")) == []
    assert codes_on('#include "cuda/op.cuh"\n' + use, "HP101", options=guarded,
                    path=str(src_dir / "k.cu")) == []
    # a header that is not there: the name is the CUDA one, reported
    assert codes_on('#include "cuda/none.cuh"\n' + use, "HP101", options=guarded,
                    path=str(src_dir / "k.cu")) == [2]


def test_float_classification_clang_hip_declares_is_not_unsupported() -> None:
    """llama.cpp's topk-moe.cu: ``__isnanf`` is in clang's HIP math header (timeline.toml);
    the long-double form is not, and stays reported."""
    src = ('__global__ void k(float *x, long double *y) {\n'
           '  if (__isnanf(x[0]) || __isinff(x[1]) || !__finitef(x[2])) x[0] = 0;\n'
           '  if (__isnanl(y[0])) y[0] = 0;\n'
           '}\n')
    assert codes_on(src, "HP101") == [3]


def test_a_chunk_index_in_a_helper_given_the_thread_index_is_not_a_warp_id() -> None:
    """llama.cpp's dequantize_q2_K/q6_K (dequantize.cuh; stable-diffusion.cpp's older
    convert.cu kernels): a thread index split into 32-value chunks of a quant block, each
    part scaled by a stride, in code with no warp-level work."""
    src = ('__device__ void dq(const unsigned char *qs, float *yy, const int tid) {\n'
           '  const long n = tid/32;\n'
           '  const long l = tid - 32*n;\n'
           '  float *y = yy + 128*n;\n'
           '  y[l] = qs[32*n + l];\n'
           '}\n'
           '__device__ void warp_of(float *out, const int tid) {\n'
           '  const int w = tid/32;\n'                    # 8: compared: a warp id
           '  if (w == 0) out[tid] = 0;\n'
           '}\n'
           '__device__ void red(float *s, const int tid) {\n'
           '  const int w = tid/32;\n'                    # 12: a function with warp work
           '  s[32*w] = __shfl_down_sync(0xffffffffu, s[0], 1);\n'
           '}\n'
           '__global__ void k(float *yy) {\n'
           '  const int n = threadIdx.x/32;\n'            # 16: an index itself
           '  yy[n] = 0;\n'
           '}\n'
           '__global__ void q2(const unsigned char *qs, float *yy) {\n'
           '  const int tid = threadIdx.x;\n'
           '  const int n = tid/32;\n'                   # the older kernel form: a chunk
           '  yy[128*n + tid - 32*n] = qs[32*n];\n'
           '}\n')
    assert codes_on(src, "HP204") == [8, 12, 16]


def test_a_header_included_only_by_the_cuda_build_is_not_reported(tmp_path: Path, monkeypatch) -> None:
    """llama.cpp's vendors/cuda.h: common.cuh includes it in the #else of its HIP guard, so
    its CUDA names (no HIP counterpart) are no finding of the HIP build."""
    from click.testing import CliRunner

    from hipport.cli import main

    (tmp_path / "vendors").mkdir()
    (tmp_path / "vendors" / "cuda.h").write_text(
        "#pragma once\n#include <cuda.h>\n"
        "#define COMP_ATTR CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED\n")
    (tmp_path / "vendors" / "hip.h").write_text("#pragma once\n#include <hip/hip_runtime.h>\n")
    (tmp_path / "common.cuh").write_text(
        '#pragma once\n#if defined(GGML_USE_HIP)\n#include "vendors/hip.h"\n#else\n'
        '#include "vendors/cuda.h"\n#endif\n')
    (tmp_path / "k.cu").write_text('#include "common.cuh"\n__global__ void k() {}\n')

    def lines(*args: str, guard: tuple[str, ...] = ("--hip-guard", "GGML_USE_HIP")) -> list[str]:
        out = CliRunner().invoke(main, ["scan", "-q", "--color", "never", *guard, *args],
                                 catch_exceptions=False).stdout
        return [ln for ln in out.splitlines() if "cuda.h:3:" in ln]

    assert lines(str(tmp_path)) == []
    assert [ln.split(": ")[1] for ln in lines(str(tmp_path), "--all-branches")] == ["HP101 info"]
    assert len(lines(str(tmp_path / "vendors"))) == 1  # its includer not scanned: judged alone
    assert len(lines(str(tmp_path), guard=())) == 1  # the guard unknown: maybe included
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "cache"))  # check's cache keeps includes
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    gate = ["check", "-q", "--hip-guard", "GGML_USE_HIP", str(tmp_path / "vendors"), str(tmp_path / "common.cuh")]
    assert [CliRunner().invoke(main, gate).exit_code for _ in range(2)] == [0, 0]
    (tmp_path / "cuda_only.cu").write_text('#include "vendors/cuda.h"\n')  # also included as is
    assert len(lines(str(tmp_path))) == 1


def test_a_ladder_that_stops_before_offset_one_is_a_layout_group_not_a_warp() -> None:
    """llama.cpp's fattn-mma-f16.cuh: ``for (offset = 16; offset >= 4; offset >>= 1)``
    combines the 8 lanes that hold one column, in wave64 as in wave32."""
    src = ('__device__ float f(float v, float w) {\n'
           '  for (int o = 16; o >= 4; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, 32));\n'
           '  for (int o = 16; o > 2; o >>= 1) w += __shfl_xor_sync(0xffffffffu, w, o, 32);\n'
           '  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, 32);\n'
           '  for (int o = 16; o >= 1; o >>= 1) w += __shfl_down_sync(0xffffffffu, w, o);\n'
           '  return v + w;\n'
           '}\n')
    assert codes_on(src, "HP214") == [4, 5]


def test_an_arch_branch_of_gpu_only_code_is_judged_by_the_gpu_passes() -> None:
    """stable-diffusion.cpp's ggml_cuda_ue4m3_to_fp32: `#if defined(CDNA3)` (the project's
    macro for __gfx942__) reads FNUZ bytes, the #else CUDA's OCP type. Only the host pass,
    where no arch macro is defined, takes the #else; it never generates a __device__
    function's code, so the OCP read is no finding on gfx942. In a __host__ __device__
    function the host pass runs it, and a name rule still judges the host pass's parse."""
    src = ('#include <cuda_fp8.h>\n'
           '#if defined(__gfx942__)\n#define CDNA3\n#endif\n'
           '__device__ float f(unsigned bits) {\n'
           '#if defined(CDNA3)\n'
           '  return 0.f;\n'
           '#else\n'
           '  return float(*reinterpret_cast<const __nv_fp8_e4m3 *>(&bits));\n'       # 9
           '#endif\n'
           '}\n'
           '__host__ __device__ float g(unsigned bits) {\n'
           '#if defined(CDNA3)\n'
           '  return 0.f;\n'
           '#else\n'
           '  return float(*reinterpret_cast<const __nv_fp8_e4m3 *>(&bits));\n'       # 16
           '#endif\n'
           '}\n')
    assert codes_on(src, "HP321") == [16]


def test_one_library_finding_explains_every_include_of_that_library() -> None:
    """DeepSpeed's evoformer headers: HP401 at the first CUTLASS include, then one HP333 per
    other cutlass/ include (334 highs on the tree); the other headers stay HP333."""
    src = ('#include "cutlass/aligned_buffer.h"\n'
           '#include <cutlass/array.h>\n'
           '#include <cutlass/gemm/gemm.h>\n'
           '#include <cudaEGL.h>\n')
    assert found(src, path="t.h") == [("HP333", 4), ("HP401", 1)]


def test_a_sycl_source_is_not_a_cuda_source(tmp_path: Path) -> None:
    """ggml-sycl's presets.hpp (only `#define QK_WARP_SIZE 32`) and kernels using
    sycl::half: another GPU dialect, not a CUDA port. A file that also spells CUDA stays."""
    from hipport.pipeline import process
    from hipport.files import SourceFile

    def codes(name: str, text: str) -> list[str]:
        f = tmp_path / name
        f.write_text(text)
        return [x.code for x in process(SourceFile(f, Path(name), tmp_path, True), Options()).findings]

    assert codes("presets.hpp", "#define GGML_SYCL_MAX_STREAMS 8\n#define QK_WARP_SIZE 32\n") == []
    assert codes("k.hpp", "#include <sycl/sycl.hpp>\nsycl::half f(sycl::half a, sycl::half b) { return a * b; }\n"
                 "#define WARP_SIZE 32\n") == []
    assert codes("mixed.cuh", "// SYCL and CUDA\n#define WARP_SIZE 32\n__global__ void k() {}\n") == ["HP209"]


def test_the_deprecated_tensor_op_gemm_default_maps_to_hipblas_default() -> None:
    """DeepSpeed's pt_binding.cpp (17 highs): CUBLAS_GEMM_DEFAULT_TENSOR_OP is written
    HIPBLAS_GEMM_DEFAULT, as PyTorch's hipify and llama.cpp's compat header write it."""
    from hipport.pipeline import transform

    src = b'#include <cublas_v2.h>\ncublasGemmAlgo_t a = CUBLAS_GEMM_DEFAULT_TENSOR_OP;\n'
    out, findings, _ = transform(src, "t.cu", Options(apply_fixes=True))
    assert b"hipblasGemmAlgo_t a = HIPBLAS_GEMM_DEFAULT;" in out
    assert not [f for f in findings if f.code == "HP101"]


def test_the_name_a_typedef_or_struct_definition_declares_is_the_projects_own() -> None:
    """llama.cpp's vendors/hip.h: `typedef __hip_bfloat16 nv_bfloat16;` was converted to
    `typedef __hip_bfloat16 hip_bfloat16;` (HIP's unrelated struct), `typedef __hip_fp8_e4m3
    __nv_fp8_e4m3;` to a redefinition of HIP's FNUZ type; ggml-sycl's stand-in `struct
    __nv_fp8_e4m3 {…}` likewise. Uses of those names are still renamed."""
    from hipport.pipeline import transform

    src = (b'#include <cuda_bf16.h>\n'
           b'typedef __hip_bfloat16 nv_bfloat16;\n'
           b'struct cudaFoo_ours { int x; };\n'
           b'struct __nv_fp8_e4m3 { unsigned char raw; };\n'
           b'__device__ nv_bfloat16 f(struct cudaGraphicsResource *r, nv_bfloat16 x) { return x; }\n')
    out = transform(src, "t.cu", Options(apply_fixes=True))[0].decode()
    assert "typedef __hip_bfloat16 nv_bfloat16;" in out
    assert "struct __nv_fp8_e4m3 { unsigned char raw; };" in out
    assert "__device__ __hip_bfloat16 f(" in out and "hipGraphicsResource" in out  # uses: renamed


def test_nv_bfloat16_is_the_same_hip_type_as_its_target() -> None:
    """cuda_bf16.h's typedef of __nv_bfloat16: written __hip_bfloat16 (hip_bf16.h), not
    hip_bfloat16, the unrelated struct of hip_bfloat16.h that hip_bf16.h does not declare."""
    from hipport.pipeline import transform

    out = transform(b'#include <cuda_bf16.h>\n__device__ nv_bfloat16 f(__nv_bfloat16 x) { return x; }\n',
                    "t.cu", Options(apply_fixes=True))[0]
    assert b"__device__ __hip_bfloat16 f(__hip_bfloat16 x)" in out


def test_a_name_without_hip_counterpart_tested_by_the_preprocessor_is_a_macro_test() -> None:
    """CUB's ``#ifdef CUB_USE_COOPERATIVE_GROUPS`` (20 high HP101 in the labelled set): at the
    test nothing fails to compile, the HIP build takes the other branch (HP106, medium); the
    same name used in code still has no HIP counterpart (HP101)."""
    src = ('#include <cub/cub.cuh>\n'
           '#ifdef CUB_USE_COOPERATIVE_GROUPS\n'
           'int a;\n'
           '#elif defined(CUB_USE_COOPERATIVE_GROUPS) && 1\n'
           'int b;\n'
           '#endif\n'
           '__global__ void k(int *o) { *o = CUB_USE_COOPERATIVE_GROUPS; }\n')
    assert codes_on(src, "HP106") == [2, 4]
    assert codes_on(src, "HP101") == [7]


def test_a_builtin_guard_the_user_names_makes_the_project_ported() -> None:
    """vLLM's quantization/activation_kernels.cu: cp.async under ``#if __CUDACC_VER_MAJOR__
    >= 11 && __CUDA_ARCH__ >= 800`` with a plain copy in the #else, in a tree whose HIP
    build is ``USE_ROCM`` (also a built-in guard, PyTorch's). Named with --hip-guard, the
    project is ported and means its CUDA tests: the HIP build compiles the #else."""
    src = ('__device__ void cp4(int4 *s, const int4 *g) {\n'
           '#if __CUDACC_VER_MAJOR__ >= 11 && __CUDA_ARCH__ >= 800\n'
           '  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" :: "r"(s), "l"(g));\n'
           '#else\n'
           '  s[0] = g[0];\n'
           '#endif\n'
           '}\n'
           '__device__ void fence() { asm volatile("cp.async.commit_group;\\n" ::); }\n')
    named = Options(hip_guards=DEFAULT_HIP_GUARDS + ("USE_ROCM",))
    assert codes_on(src, "HP301", options=named) == [8]  # the unguarded one stays
    assert codes_on(src, "HP309", options=named) == []
    assert codes_on(src, "HP301") == [3, 8]  # not named: a test the port rewrites
    assert codes_on(src, "HP309") == [2]


def test_a_header_only_cuda_build_headers_include_is_not_reported(tmp_path: Path) -> None:
    """vLLM's topk.cu includes persistent_topk.cuh under ``#ifndef USE_ROCM``, and that one
    includes topk_histogram_4096.cuh (PTX, 32-bit ballots) as it is: no HIP build compiles
    either. A header a compiled file also includes stays reported."""
    from click.testing import CliRunner

    from hipport.cli import main

    ptx = '__device__ void f() { asm volatile("fence.acq_rel.gpu;" ::); }\n'
    (tmp_path / "hist.cuh").write_text("#pragma once\n" + ptx)
    (tmp_path / "shared.cuh").write_text("#pragma once\n" + ptx.replace("f()", "g()"))
    (tmp_path / "persistent.cuh").write_text('#pragma once\n#include "hist.cuh"\n#include "shared.cuh"\n')
    kernel = "__global__ void k() {}\n"
    (tmp_path / "topk.cu").write_text('#ifndef USE_ROCM\n#include "persistent.cuh"\n#endif\n' + kernel)
    (tmp_path / "other.cu").write_text('#include "shared.cuh"\n' + kernel)
    (tmp_path / "a.cuh").write_text('#pragma once\n#include "b.cuh"\n' + ptx.replace("f()", "h()"))
    (tmp_path / "b.cuh").write_text('#pragma once\n#include "a.cuh"\n')  # a cycle no file enters

    def files(*args: str) -> list[str]:
        out = CliRunner().invoke(main, ["scan", "-q", "--color", "never", "--hip-guard", "USE_ROCM",
                                        *args, str(tmp_path)], catch_exceptions=False).stdout
        return sorted(ln.split(":")[0].rsplit("/", 1)[-1] for ln in out.splitlines() if " HP301 " in ln)

    assert files() == ["a.cuh", "shared.cuh"]
    out = CliRunner().invoke(main, ["scan", "-q", "--color", "never", "--hip-guard", "USE_ROCM",
                                    "--all-branches", str(tmp_path)]).stdout
    assert 'only by headers only the CUDA build includes (persistent.cuh: #include "hist.cuh")' in out


def test_a_logical_warp_beside_the_physical_wave_of_64_is_the_authors_choice(tmp_path: Path) -> None:
    """llama.cpp's common.cuh: ``#define WARP_SIZE 32`` beside
    ``ggml_cuda_get_physical_warp_size()``, which returns 64 on GFX9; quantize.cu reduces a
    32-value MXFP4 group with ``__shfl_xor_sync(…, mask, WARP_SIZE)``; fattn-tile's
    ``constexpr int warp_size = 32``. The project knows waves are 64: its 32 is a logical
    warp. Without the 64 (the rules' fixtures), the constant and the ladder stay reported."""
    common = ("#pragma once\n"
              "#define WARP_SIZE 32\n"
              "static constexpr __device__ int ggml_cuda_get_physical_warp_size() {\n"
              "#if defined(GGML_USE_HIP) && defined(__GFX9__)\n"
              "    return 64;\n"
              "#else\n"
              "    return 32;\n"
              "#endif\n"
              "}\n")
    kernel = ('#include "common.cuh"\n'
              "__global__ void q(const float *x, float *y) {\n"
              "    constexpr int warp_size = 32;\n"
              "    float amax = fabsf(x[threadIdx.x]);\n"
              "    for (int mask = 16; mask > 0; mask >>= 1) {\n"
              "        amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFF, amax, mask, WARP_SIZE));\n"
              "    }\n"
              "    float s = amax;\n"
              "    for (int mask = 16; mask > 0; mask >>= 1) s += __shfl_xor_sync(0xFFFFFFFF, s, mask);\n"
              "    y[threadIdx.x / warp_size] = s;\n"
              "}\n")
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("GGML_USE_HIP",))
    for name, header in (("aware", common), ("unaware", common.replace("return 64", "return 32"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "common.cuh").write_text(header)
        (tmp_path / name / "quantize.cu").write_text(kernel)

    def codes(name: str) -> list[tuple[str, int]]:
        path = tmp_path / name
        return [(c, n) for c, n in found(path.read_text(), guarded, str(path)) if c in ("HP209", "HP214")]

    assert codes("aware/common.cuh") == []
    assert codes("aware/quantize.cu") == [("HP214", 9)]  # the ladder without a width: 32 of 64 lanes
    assert codes("unaware/common.cuh") == [("HP209", 2)]
    assert codes("unaware/quantize.cu") == [("HP209", 3), ("HP214", 5), ("HP214", 9)]


def test_thirty_two_thread_groups_of_a_wave64_aware_project_are_its_choice() -> None:
    """vLLM's cache_kernels.cu (core/cuda_compat.h's get_warp_size() returns 64 on GFX9):
    ``lane = threadIdx.x & 31``, ``warp_id = threadIdx.x >> 5``, one 32-thread group per
    head, no warp operation: a 64-lane wave runs two groups, each right. A broadcast
    without a width (lane 0 of the wave, not of the group), or a file that never writes
    the 64, keeps the finding."""
    aware = ("static __device__ constexpr int get_warp_size() {\n"
             "#ifdef __GFX9__\n  return 64;\n#else\n  return 32;\n#endif\n}\n")
    kernel = ("__global__ void copy(const float *src, float *dst, int heads, int hs) {\n"
              "  const int lane = threadIdx.x & 31;\n"
              "  const int warp_id = threadIdx.x >> 5;\n"
              "  for (int h = warp_id; h < heads; h += blockDim.x >> 5)\n"
              "    for (int i = lane; i < hs; i += 32) dst[h * hs + i] = src[h * hs + i];\n"
              "}\n")
    broadcast = kernel.replace("dst[h * hs + i] = src[h * hs + i]",
                               "dst[h * hs + i] = __shfl_sync(~0ull, src[i], 0)")
    assert codes_on(aware + kernel, "HP204") == []
    assert codes_on(aware + broadcast, "HP204") == [9, 10, 11]
    assert codes_on(kernel, "HP204") == [2, 3, 4]


def test_a_template_the_hip_build_never_instantiates_runs_nothing() -> None:
    """vLLM's quantization/activation_kernels.cu: ``warp_expert_search<Idx_t>`` (a 32-bit
    ballot loop) is called only from kernels under ``#ifndef USE_ROCM``: the HIP build
    never instantiates it. Called from compiled code too, or in a header (another file may
    call it), its findings stay."""
    helper = ("template <typename T>\n"
              "__device__ int search(const T *p, T v) {\n"
              "  unsigned mask = __ballot_sync(~0ull, *p <= v);\n"
              "  return __popc(mask);\n"
              "}\n")
    cuda_only = "#ifndef USE_ROCM\n__global__ void k(int *p) { *p = search<int>(p, 3); }\n#endif\n"
    live = "__global__ void h(int *p) { *p = search(p, 4); }\n"
    named = Options(hip_guards=DEFAULT_HIP_GUARDS + ("USE_ROCM",))
    assert codes_on(helper + cuda_only, "HP202", options=named) == []
    assert codes_on(helper + cuda_only, "HP203", options=named) == []
    assert codes_on(helper + cuda_only + live, "HP202", options=named) == [3]
    assert codes_on(helper + cuda_only, "HP202", options=named, path="t.cuh") == [3]
    assert codes_on(helper.replace("template <typename T>\n", "#define T int\n") + cuda_only,
                    "HP202", options=named) == [3]  # not a template: compiled, and it runs


def test_project_headers_found_through_the_builds_include_dirs(tmp_path: Path) -> None:
    """DeepSpeed 0.19.8's transformer/inference/csrc/softmax.cu includes
    ``"inference_cuda_layers.h"`` (``#define WARP_SIZE 32``), which includes
    ``"ds_kernel_utils.h"`` (``constexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;`` for HIP):
    both live in directories its op builder passes as ``-I``, not beside the kernel. Its
    ``lane = threadIdx.x & 0x1f`` indexes a ``tiled_partition<WARP_SIZE>`` tile, a 32-lane
    group of a project that names AMD's wave. Found through ``-I`` (or ``[tool.hipport]
    include-dirs``, relative to the pyproject.toml), the finding goes; not found, or with a
    tile of another size, it stays."""
    from click.testing import CliRunner

    from hipport.cli import main

    (tmp_path / "layers").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "layers" / "layers.h").write_text('#pragma once\n#include "utils.h"\n#define WARP_SIZE 32\n')
    (tmp_path / "utils" / "utils.h").write_text(
        "#pragma once\n#ifdef __HIP_PLATFORM_AMD__\nconstexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n"
        "#else\nconstexpr int hw_warp_size = 32;\n#endif\n")
    (tmp_path / "src" / "softmax.cu").write_text(
        '#include "layers.h"\n'
        "__global__ void k(float *x) {\n"
        "  cg::thread_block_tile<WARP_SIZE> g = cg::tiled_partition<WARP_SIZE>(cg::this_thread_block());\n"
        "  int lane = threadIdx.x & 0x1f;\n"
        "  float v = x[lane];\n"
        "  for (int i = 1; i < WARP_SIZE; i *= 2) v += g.shfl_xor(v, i);\n"
        "  x[lane] = v;\n"
        "}\n")
    kernel = tmp_path / "src" / "softmax.cu"
    dirs = (tmp_path / "layers", tmp_path / "utils")

    def scan(*args: str) -> list[str]:
        out = CliRunner().invoke(main, ["scan", "-q", "--color", "never", *args, str(kernel)]).stdout
        return [ln.split(": ")[1].split()[0] for ln in out.splitlines() if ": HP2" in ln]

    assert codes_on(kernel.read_text(), "HP204", path=str(kernel)) == [4]
    assert codes_on(kernel.read_text(), "HP204", path=str(kernel), options=Options(include_dirs=dirs)) == []
    # the header not found (one of the two directories): "maybe", as before
    assert codes_on(kernel.read_text(), "HP204", path=str(kernel), options=Options(include_dirs=dirs[:1])) == [4]
    assert scan() == ["HP204"]
    assert scan("-I", str(dirs[0]), "-I", str(dirs[1])) == []
    (tmp_path / "pyproject.toml").write_text('[tool.hipport]\ninclude-dirs = ["layers", "utils"]\n')
    assert scan() == []
    # a tile of the wave itself (fp_quantize_impl.cu: tiled_partition<hw_warp_size>, 64 on
    # ROCm) beside lane = tid & 0x1f: the 32 is not the tile's, the finding stays
    kernel.write_text(kernel.read_text().replace("<WARP_SIZE>", "<hw_warp_size>"))
    assert scan() == ["HP204"]


def test_a_32_bit_mask_in_a_template_the_hip_build_never_instantiates_is_moot(tmp_path: Path) -> None:
    """vLLM's quantization/activation_kernels.cu:241, ``__ballot_sync(0xffffffff, move_on)``
    in ``warp_expert_search<Idx_t>``, which only ``#ifndef USE_ROCM`` kernels call: clang 19
    with the HIP 7.1 headers compiles it (the mask's ``static_assert`` is in a template
    the call never instantiates). Called from compiled code, or in a header, HP201 stays,
    and convert widens the mask there."""
    helper = ("template <typename T>\n"
              "__device__ int search(const T *p, T v) {\n"
              "  bool on = *p <= v;\n"
              "  return __popcll(__ballot_sync(0xffffffff, on));\n"
              "}\n")
    cuda_only = "#ifndef USE_ROCM\n__global__ void k(int *p) { *p = search<int>(p, 3); }\n#endif\n"
    live = "__global__ void h(int *p) { *p = search(p, 4); }\n"
    named = Options(hip_guards=DEFAULT_HIP_GUARDS + ("USE_ROCM",))
    assert codes_on(helper + cuda_only, "HP201", options=named) == []
    assert codes_on(helper + cuda_only + live, "HP201", options=named) == [4]
    assert codes_on(helper + cuda_only, "HP201", options=named, path="t.cuh") == [4]
    converted = analyze((helper + cuda_only + live).encode(), "t.cu", named.with_(apply_fixes=True))
    assert [f.fixed for f in converted.findings if f.code == "HP201"] == [True]


def test_xor_shuffles_under_32_keep_to_a_32_lane_group_of_a_wave64_aware_project() -> None:
    """vLLM's rocm/skinny_gemms.cu (LLGemm1_kernel; core/cuda_compat.h's get_warp_size()
    returns 64 on GFX9): a reduction over the wave (``mask = WARP_SIZE / 2``), then in one
    block ``for (mask = 16 / 2; mask >= 1; mask /= 2) acc += __shfl_xor(acc, mask)``,
    ``float oval2 = __shfl_xor(acc, 16)`` and ``if (lane % 32 == 0)`` writing both: xor by
    offsets under 32 keeps each half of a 64-lane wave to itself, so the 32-lane groups are
    right. A ``__shfl_down`` there (lane 31 reads lane 47), an offset not bounded under 32,
    the partner folded back into the sum, or a file that never names the 64: findings stay."""
    aware = ("#define WARP_SIZE 64\n"
             "static __device__ constexpr int get_warp_size() {\n#ifdef __GFX9__\n  return 64;\n"
             "#else\n  return 32;\n#endif\n}\n")
    kernel = ("__global__ void gemv(float *c, const float *a, int r) {\n"
              "  const int lane = threadIdx.x % WARP_SIZE;\n"
              "  float acc = a[threadIdx.x];\n"
              "  for (int mask = WARP_SIZE / 2; mask >= 1; mask /= 2) acc += __shfl_xor(acc, mask);\n"
              "  if (threadIdx.x / 16 < r) {\n"
              "    for (int mask = 16 / 2; mask >= 1; mask /= 2) {\n"
              "      acc += __shfl_xor(acc, mask);\n"
              "    }\n"
              "    float oval2 = __shfl_xor(acc, 16);\n"
              "    if (lane % 32 == 0) {\n"
              "      c[threadIdx.x / 32] = acc + 2 * oval2;\n"
              "    }\n"
              "  }\n"
              "}\n")
    at = len(aware.splitlines())

    def highs(src: str) -> list[tuple[str, int]]:
        return [(c, n - at) for c, n in found(src) if c in ("HP204", "HP214")]

    assert highs(aware + kernel) == []
    lanes = [("HP204", 10), ("HP204", 11)]
    assert highs(aware + kernel.replace("__shfl_xor(acc, mask);\n    }", "__shfl_down(acc, mask);\n    }")) \
        == [*lanes, ("HP214", 9)]
    assert highs(aware + kernel.replace("mask = 16 / 2", "mask = r")) == [*lanes, ("HP214", 9)]
    assert highs(aware + kernel.replace("2 * oval2;", "oval2;\n      acc += oval2;")) == [("HP214", 9)]
    assert highs(aware.replace("64", "32") + kernel) == [*lanes, ("HP214", 9)]


def test_an_xor_ladder_in_code_that_never_spells_the_wave_reduces_each_half() -> None:
    """vLLM's cache_kernels.cu ``indexer_k_quant_and_cache_kernel`` (launched with a (32, 4)
    block; core/cuda_compat.h names the 64): ``for (int mask = 16; mask > 0; mask /= 2)
    amax = fmaxf(amax, __shfl_xor_sync(~0ull, amax, mask))``, then every thread scales by
    its row's amax and ``threadIdx.x == 0`` writes it. No vote, only xors under 32 and no
    wave-size name: a 64-lane wave runs it as two 32-lane warps, each reduced whole. A
    ``__shfl_down`` ladder, a broadcast, a ``warpSize`` index, a ``__device__`` helper
    (whose callers use the sum) or a file that never names the 64 keep HP214."""
    aware = ("static __device__ constexpr int get_warp_size() {\n#ifdef __GFX9__\n  return 64;\n"
             "#else\n  return 32;\n#endif\n}\n")
    kernel = ("__global__ void quant(const float *k, float *out, float *scales) {\n"
              "  float amax = fabsf(k[threadIdx.y * 32 + threadIdx.x]);\n"
              "  for (int mask = 16; mask > 0; mask /= 2) {\n"
              "    amax = fmaxf(amax, __shfl_xor_sync(~0ull, amax, mask));\n"
              "  }\n"
              "  out[threadIdx.y * 32 + threadIdx.x] = k[threadIdx.x] / amax;\n"
              "  if (threadIdx.x == 0) scales[threadIdx.y] = amax;\n"
              "}\n")
    at = len(aware.splitlines())

    def ladders(src: str) -> list[int]:
        return [n - at for n in codes_on(src, "HP214")]

    assert ladders(aware + kernel) == []
    assert ladders(aware + kernel.replace("__shfl_xor_sync", "__shfl_down_sync")) == [3]
    assert ladders(aware + kernel.replace("  if (threadIdx.x == 0)",
                                          "  amax = __shfl_sync(~0ull, amax, 0);\n  if (threadIdx.x == 0)")) == [3]
    assert ladders(aware + kernel.replace("threadIdx.x == 0", "threadIdx.x % warpSize == 0")) == [3]
    assert ladders(aware.replace("64", "32") + kernel) == [3]
    # a __device__ helper: its callers decide what the sum means (gdn's warp_reduce_sum)
    assert ladders(aware + kernel.replace("__global__", "__device__")) == [3]


def test_a_headers_32_lane_groups_are_its_includers_choice_when_they_name_the_wave(tmp_path: Path) -> None:
    """vLLM's concat_mla_q.cuh: ``flat_warp_id = (blockIdx.x * blockDim.x + threadIdx.x) >> 5``
    and ``lane_id = threadIdx.x & 31``, one 32-thread group per (token, head) doing vector
    copies, no warp operation; the header names no wave itself, but its one includer,
    cache_kernels.cu, includes core/cuda_compat.h first (get_warp_size() returns 64 on
    GFX9). Scanned with its includers, every one naming the 64, the findings go; alone, or
    with one includer that does not name it, they stay."""
    from hipport.pipeline import collect, scan_paths

    compat = ("#pragma once\nstatic __device__ constexpr int get_warp_size() {\n#ifdef __GFX9__\n"
              "  return 64;\n#else\n  return 32;\n#endif\n}\n")
    header = ("#pragma once\n"
              "__global__ void concat(float4 *dst, const float4 *src, int n) {\n"
              "  const int flat_warp_id = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;\n"
              "  if (flat_warp_id >= n) return;\n"
              "  const int lane = threadIdx.x & 31;\n"
              "  dst[flat_warp_id * 32 + lane] = src[flat_warp_id * 32 + lane];\n"
              "}\n")
    (tmp_path / "compat.h").write_text(compat)
    (tmp_path / "concat.cuh").write_text(header)
    (tmp_path / "cache.cu").write_text('#include "compat.h"\n#include "concat.cuh"\n')

    def lanes(*paths: Path) -> list[tuple[str, int]]:
        opts = Options(jobs=1)
        return sorted((Path(f.path).name, f.line) for f in collect(scan_paths(list(paths), opts), opts, "scan").findings
                      if f.code == "HP204")

    assert lanes(tmp_path) == []
    assert lanes(tmp_path / "concat.cuh") == [("concat.cuh", 3), ("concat.cuh", 5)]
    (tmp_path / "other.cu").write_text('#include "concat.cuh"\n')
    assert lanes(tmp_path) == [("concat.cuh", 3), ("concat.cuh", 5)]


def test_a_cuda_build_header_found_through_the_include_dirs_is_one(tmp_path: Path) -> None:
    """A header the run includes only under ``#ifndef USE_ROCM``, found through the build's
    ``-I`` rather than beside its includer (DeepSpeed's layout): a CUDA-build header, its
    findings dropped. Without the directory the include names no file of the run, and the
    header is judged as it is."""
    from hipport.pipeline import collect, scan_paths

    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "cuda_only.cuh").write_text(
        "#pragma once\n__device__ int lane() { return threadIdx.x & 31; }\n")
    (tmp_path / "k.cu").write_text('#ifndef USE_ROCM\n#include "cuda_only.cuh"\n#endif\n'
                                   "__global__ void k(int *p) { *p = 1; }\n")

    def lanes(opts: Options) -> list[int]:
        return [f.line for f in collect(scan_paths([tmp_path], opts), opts, "scan").findings if f.code == "HP204"]

    named = Options(jobs=1, hip_guards=DEFAULT_HIP_GUARDS + ("USE_ROCM",))
    assert lanes(named) == [2]
    assert lanes(named.with_(include_dirs=(tmp_path / "inc",))) == []


def test_a_warp_size_defined_as_32_only_for_the_cuda_build_is_no_logical_width(tmp_path: Path) -> None:
    """vLLM's core/cuda_compat.h: ``#define WARP_SIZE Utils::get_warp_size()`` under ``#ifdef
    USE_ROCM`` (64 on GFX9), ``#define WARP_SIZE 32`` in its ``#else``. A ``__shfl_down`` of
    width WARP_SIZE spans the whole 64-lane wave in the HIP build (lane 31 reads lane 32), so
    ``threadIdx.x / 32`` beside it is no 32-lane group of the author's: HP204 stays. The same
    header defining WARP_SIZE 32 for every build (llama.cpp's logical warp) makes the width 32
    and the group deliberate."""
    compat = ("#pragma once\n"
              "static __device__ constexpr int get_warp_size() {\n"
              "#ifdef __GFX9__\n  return 64;\n#else\n  return 32;\n#endif\n}\n"
              "#ifdef USE_ROCM\n  #define WARP_SIZE get_warp_size()\n#else\n  #define WARP_SIZE 32\n#endif\n")
    kernel = ('#include "compat.h"\n'
              "__global__ void k(float *v) {\n"
              "  const int warp = threadIdx.x / 32;\n"
              "  float x = v[threadIdx.x];\n"
              "  x += __shfl_down_sync(~0ull, x, 1, WARP_SIZE);\n"
              "  v[warp] = x;\n"
              "}\n")
    rocm = Options(hip_guards=DEFAULT_HIP_GUARDS + ("USE_ROCM",))
    for name, header in (("vllm", compat), ("logical", compat.replace("get_warp_size()\n#else", "32\n#else"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "compat.h").write_text(header)
    assert codes_on(kernel, "HP204", options=rocm, path=str(tmp_path / "vllm" / "k.cu")) == [3]
    assert codes_on(kernel, "HP204", options=rocm, path=str(tmp_path / "logical" / "k.cu")) == []
    # a file without any conditional or project include: each of its #defines is compiled
    alone = "#define WARP_SIZE 32\nconstexpr int kWaveSize = 64;\n" + kernel.replace('#include "compat.h"\n', "")
    assert codes_on(alone, "HP204", options=rocm) == []
    assert codes_on(alone.replace("WARP_SIZE 32", "WARP_SIZE 64"), "HP204", options=rocm) == [4]


def test_an_xor_offset_the_platform_cannot_change_keeps_to_a_32_lane_group() -> None:
    """vLLM's fused_qknorm_rope_kernel.cu (fusedQKNormRopeKernelNTokenHeads): one 32-lane
    group per token-head (``warpId = threadIdx.x / 32``, ``laneId = threadIdx.x % 32``),
    and ``__shfl_xor_sync(FINAL_MASK, e, pairOffset)`` with ``pairOffset = (rotary_dim / 2)
    / numElemsPerThread``, ``numElemsPerThread = head_dim / 32``: a parameter and a template
    parameter. Where the file's launches give them constants that keep the offset under 32,
    each half of a 64-lane wave exchanges within itself (vLLM's own launch passes the
    tensor's rotary_dim through a helper: there HP204 stays, see the next test). An offset from the wave's size, from the thread
    index, or assigned again could be 32 or more on HIP alone: HP204 stays."""
    aware = ("static __device__ constexpr int get_warp_size() {\n#ifdef __GFX9__\n  return 64;\n"
             "#else\n  return 32;\n#endif\n}\n")
    kernel = ("template <int head_dim>\n"
              "__global__ void rope(float *qkv, int const rotary_dim) {\n"
              "  int const warpId = threadIdx.x / 32;\n"
              "  int const laneId = threadIdx.x % 32;\n"
              "  constexpr int numElemsPerThread = head_dim / 32;\n"
              "  float e = qkv[warpId * head_dim + laneId];\n"
              "  int pairOffset = (rotary_dim / 2) / numElemsPerThread;\n"
              "  float other = __shfl_xor_sync(~0ull, e, pairOffset);\n"
              "  if (laneId < pairOffset) other = -other;\n"
              "  qkv[warpId * head_dim + laneId] = e + other;\n"
              "}\n")
    at = len(aware.splitlines())
    launched = kernel + "void host(float *q) { rope<128><<<1, 256>>>(q, 64); rope<64><<<1, 256>>>(q, 32); }\n"

    def lanes(src: str) -> list[int]:
        return [n - at for c, n in found(aware + src) if c == "HP204"]

    assert lanes(launched) == []  # offsets 64/2/4 = 8 and 32/2/2 = 8
    assert lanes(kernel.replace("(rotary_dim / 2)", "(warpSize / 2)")) == [3, 4]
    assert lanes(kernel.replace("int const rotary_dim", "int const warp_size").replace(
        "(rotary_dim / 2)", "(warp_size / 2)")) == [3, 4]
    assert lanes(kernel.replace("(rotary_dim / 2)", "(threadIdx.x / 2)")) == [3, 4]
    assert lanes(kernel.replace("  float other", "  pairOffset *= 2;\n  float other")) == [3, 4]
    assert lanes(kernel.replace("(rotary_dim / 2)", "(heads / 2)")) == [3, 4]  # declared nowhere here
    # a __device__ helper's parameter: its caller may pass warpSize / 2
    assert lanes(launched.replace("__global__ void rope", "__device__ void rope")) == [3, 4]
    assert [n for c, n in found(launched) if c == "HP204"] == [3, 4]  # a file that never names the 64


def test_a_template_a_macro_launches_is_instantiated_however_the_tree_is_recovered() -> None:
    """vLLM 0.33.0's fused_qknorm_rope_kernel.cu (verbatim, tests/precision/vllm): the first
    kernel's ``#if`` holds an unbalanced ``}``, and tree-sitter's error recovery stretches the
    next template, fusedQKNormRopeKernelNTokenHeads, to the end of the file, over the
    ``LAUNCH_N_TOKEN_HEADS`` macro that instantiates it. ``instances.never_instantiated``
    looked for the name outside that range only, took the kernel for one no unit
    instantiates, and dropped its HP204 (364-366: its xor offset reads rotary_dim, which
    hipport cannot see; labelled false, but a true one would have gone the same way)."""
    path = Path(__file__).parent / "precision" / "vllm" / "csrc" / "fused_qknorm_rope_kernel.cu"
    rocm = Options(hip_guards=DEFAULT_HIP_GUARDS + ("USE_ROCM",))
    from hipport.pipeline import collect, run_paths

    report = collect(run_paths([path], rocm), rocm, "scan")
    assert sorted(f.line for f in report.findings if f.code == "HP204") == [364, 365, 366]


def test_an_xor_offset_from_a_kernel_argument_needs_every_launch_to_show_it() -> None:
    """A kernel's argument or template argument is what its host passes: ``prop.warpSize /
    2`` is 16 on CUDA and 32 on a wave of 64, where ``lane ^ 32`` crosses into the other
    32-lane half and ``threadIdx.x % 32`` no longer names the lane of the group (found in
    review of e29773e). The xor keeps to its half only when every launch and instantiation
    the file spells gives values that keep the offset under 32; an unseen launch (none in
    the file, one through a function pointer or a macro, a kernel in a header) or a
    non-constant argument keeps HP204."""
    aware = ("static __device__ constexpr int get_warp_size() {\n#ifdef __GFX9__\n  return 64;\n"
             "#else\n  return 32;\n#endif\n}\n")
    kernel = ("template <int span>\n"
              "__global__ void pair(float *v, int half) {\n"
              "  int const laneId = threadIdx.x % 32;\n"
              "  float e = v[threadIdx.x];\n"
              "  int const off = half / span;\n"
              "  e += __shfl_xor_sync(~0u, e, off);\n"
              "  if (laneId == 0) v[blockIdx.x] = e;\n"
              "}\n")
    at = len(aware.splitlines())

    def lanes(host: str, path: str = "t.cu") -> list[int]:
        return [n - at for c, n in found(aware + kernel + host, path=path) if c == "HP204"]

    assert lanes("") == [3]  # no launch spelled: the host may pass anything
    assert lanes("void h(float *v) { pair<1><<<1, 64>>>(v, 16); pair<2><<<1, 64>>>(v, 32); }\n") == []
    warp = "void h(float *v, cudaDeviceProp p) { pair<1><<<1, 64>>>(v, p.warpSize / 2); }\n"
    assert lanes(warp) == [3]
    assert lanes("void h(float *v) { pair<1><<<1, 64>>>(v, 64); }\n") == [3]  # an offset of 64
    assert lanes("void h(float *v) { pair<1><<<1, 64>>>(v, 16); pair<1><<<1, 64>>>(v, 32); }\n") == [3]
    assert lanes("void h(float *v, int n) { pair<1><<<1, 64>>>(v, 16); pair<n><<<1, 64>>>(v, 16); }\n") == [3]
    assert lanes("void h(float *v) { pair<1><<<1, 64>>>(v, 16); auto f = pair<1>; }\n") == [3]  # a pointer
    assert lanes("#define GO(n) pair<1><<<1, 64>>>(v, n)\nvoid h(float *v) { pair<1><<<1, 64>>>(v, 16); }\n") == [3]
    # a kernel in a header: its includers launch it
    assert lanes("void h(float *v) { pair<1><<<1, 64>>>(v, 16); }\n", path="t.cuh") == [3]
    # a macro pasting the kernel's name launches it where the file never spells it
    assert lanes("#define GO(k, n) k##r<1><<<1, 64>>>(v, n)\n"
                 "void h(float *v) { pair<1><<<1, 64>>>(v, 16); GO(pai, 64); }\n") == [3]


def test_a_template_a_pasted_name_instantiates_keeps_its_findings(tmp_path: Path) -> None:
    """``instances.never_instantiated`` took a source's template kernel whose name the file
    spells only in its definition for one no unit instantiates; a macro that builds the
    name by pasting (``#define LAUNCH(name, n) name##_kernel<n><<<…>>>``, then
    ``LAUNCH(softmax_fwd, 4)``) launches it all the same (nvcc compiles this file), and its
    true HP204 was dropped."""
    kernel = ("template <int N>\n__global__ void softmax_fwd_kernel(float *v) {\n"
              "  int lane = threadIdx.x & 0x1f;\n"
              "  v[lane] = __shfl_down_sync(~0ull, v[threadIdx.x], 1);\n}\n")
    from hipport.pipeline import collect, run_paths

    def lanes(host: str) -> list[int]:
        (tmp_path / "t.cu").write_bytes((kernel + host).encode())
        report = collect(run_paths([tmp_path / "t.cu"], Options()), Options(), "scan")
        return [f.line for f in report.findings if f.code == "HP204"]

    launcher = "#define LAUNCH(name, n) \\\n  name##_kernel<n><<<1, 64>>>(v)\nvoid go(float *v) { LAUNCH(softmax_fwd, 4); }\n"
    assert lanes(launcher) == [3]
    assert lanes(launcher.replace("\n", "\r\n")) == [3]
    assert lanes("void go(float *v) { softmax_fwd_kernel<4><<<1, 64>>>(v); }\n") == [3]
    assert lanes("#define TWICE(x) x##x\n") == [3]  # any paste: hipport cannot tell
    assert lanes("// ## not a paste\n") == []  # named nowhere: never instantiated
    (tmp_path / "launch.h").write_text("#define LAUNCH(name, n) name##_kernel<n><<<1, 64>>>(v)\n")
    assert lanes('#include "launch.h"\nvoid go(float *v) { LAUNCH(softmax_fwd, 4); }\n') == [3]


def test_a_ladder_over_a_32_lane_tile_reduces_the_whole_tile() -> None:
    """DeepSpeed's transformer/normalize_kernels.cu (built for ROCm): ``cg::thread_block_tile
    <WARP_SIZE> g = cg::tiled_partition<WARP_SIZE>(b)`` with WARP_SIZE 32, then ``for (i = 1;
    i < 32; i *= 2) sum += g.shfl_down(sum, i)``; its ds_kernel_utils.h gives hw_warp_size
    AMD's wavefront size. HIP's tile shuffles within its 32 lanes, so the ladder reduces the
    tile on wave64 too. A tile of the wave's size, a raw shuffle, or a file that never names
    the wave keep HP214."""
    aware = ("#define WARP_SIZE 32\n"
             "#if defined(__HIP_PLATFORM_AMD__)\nconstexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n"
             "#else\nconstexpr int hw_warp_size = 32;\n#endif\n")
    kernel = ("__global__ void norm(float *v) {\n"
              "  cg::thread_block b = cg::this_thread_block();\n"
              "  cg::thread_block_tile<WARP_SIZE> g = cg::tiled_partition<WARP_SIZE>(b);\n"
              "  float sum = v[threadIdx.x];\n"
              "  for (int i = 1; i < 32; i *= 2) { sum += g.shfl_down(sum, i); }\n"
              "  v[threadIdx.x] = sum;\n"
              "}\n")
    at = len(aware.splitlines())

    def ladders(src: str, head: str = aware) -> list[int]:
        return [n - at for c, n in found(head + src) if c == "HP214"]

    assert ladders(kernel) == []
    assert ladders(kernel.replace("<WARP_SIZE>", "<hw_warp_size>")) == [5]
    assert ladders(kernel.replace("g.shfl_down(sum, i)", "__shfl_down_sync(~0ull, sum, i)")) == [5]
    assert ladders(kernel, aware.replace("ROCM_WAVEFRONT_SIZE", "32")) == [5]


def test_a_headers_warp_size_of_32_is_its_includers_choice_when_they_name_the_wave(tmp_path: Path) -> None:
    """DeepSpeed's transformer/inference/includes/inference_context.h: ``#define WARP_SIZE 32``
    in a header that names no wave itself; its includer pt_binding.cpp also includes
    inference_cuda_layers.h, whose ds_kernel_utils.h gives hw_warp_size AMD's wavefront size.
    Scanned with every includer naming the wave, HP209 goes (the logical warp of one file);
    alone, or with an includer that does not name it but spells WARP_SIZE, it stays."""
    from hipport.pipeline import collect, scan_paths

    (tmp_path / "utils.h").write_text("#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n"
                                      "constexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n#endif\n")
    (tmp_path / "context.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    (tmp_path / "binding.cu").write_text('#include "context.h"\n#include "utils.h"\n')

    def constants(*paths: Path) -> list[tuple[str, int]]:
        opts = Options(jobs=1)
        return sorted((Path(f.path).name, f.line) for f in collect(scan_paths(list(paths), opts), opts, "scan").findings
                      if f.code == "HP209")

    assert constants(tmp_path) == []
    assert constants(tmp_path / "context.h") == [("context.h", 2)]
    (tmp_path / "other.cu").write_text('#include "context.h"\n__global__ void k(int *o) { o[0] = WARP_SIZE; }\n')
    assert constants(tmp_path) == [("context.h", 2)]
    (tmp_path / "other.cu").write_text('#include "context.h"\n')  # never spells WARP_SIZE
    assert constants(tmp_path) == []


def test_lanes_of_tiles_a_template_sizes_at_most_32_are_the_tiles() -> None:
    """DeepSpeed's transformer/softmax_kernels.cu (built for ROCm): ``cg::tiled_partition<tbSize>``
    with ``tbSize`` a template parameter the file launches only as 2 … 32, ``lane = threadIdx.x
    & 0x1f`` and ``wid = threadIdx.x >> 5`` for its per-tile partial sums, only tile shuffles:
    every tile shuffles within its own lanes on a wave of 64 as on a warp of 32. A launch with a
    tile of 64, one whose size is no constant, one through a macro, a use without template
    arguments, none at all, or a kernel in a header (its includers instantiate it too) keeps
    HP204."""
    aware = ("#if defined(__HIP_PLATFORM_AMD__)\nconstexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n"
             "#else\nconstexpr int hw_warp_size = 32;\n#endif\n")
    kernel = ("template <int tbSize, int blockStride>\n"
              "__global__ void attn_softmax(float *vals) {\n"
              "  __shared__ float partialSum[32];\n"
              "  cg::thread_block b = cg::this_thread_block();\n"
              "  cg::thread_block_tile<tbSize> g = cg::tiled_partition<tbSize>(b);\n"
              "  int wid = threadIdx.x >> 5;\n"
              "  int lane = threadIdx.x & 0x1f;\n"
              "  float m = vals[threadIdx.x];\n"
              "  for (int i = 1; i < tbSize; i *= 2) m = fmaxf(m, g.shfl_xor(m, i));\n"
              "  if (lane == 0) partialSum[wid] = m;\n"
              "  b.sync();\n"
              "  vals[threadIdx.x] = partialSum[lane];\n"
              "}\n")
    launch = ("void launch(float *v, int t) {\n"
              "  attn_softmax<16, (1024 / 16)><<<1, 1024>>>(v);\n"
              "  attn_softmax<32, 1><<<1, 1024>>>(v);\n"
              "}\n")
    at = len(aware.splitlines())

    def lanes(src: str) -> list[int]:
        return [n - at for c, n in found(aware + src) if c == "HP204"]

    assert lanes(kernel + launch) == []
    assert lanes(kernel + launch.replace("<32, 1>", "<64, 1>")) == [6, 7]
    assert lanes(kernel + launch.replace("<32, 1>", "<t, 1>")) == [6, 7]
    assert lanes(kernel) == [6, 7]
    # a launch through a macro (LAUNCH(64)): the tree shows no value for it (template_values)
    macro = "#define LAUNCH(n) attn_softmax<n, 1><<<1, 1024>>>(v)\n"
    assert lanes(kernel + macro + launch.replace("attn_softmax<32, 1><<<1, 1024>>>(v)", "LAUNCH(64)")) == [6, 7]
    # a header's includers may instantiate it with a tile of 64, out of sight
    assert [n - at for c, n in found(aware + kernel + launch, path="softmax.cuh") if c == "HP204"] == [6, 7]
    # a use that names no template arguments (a call that deduces them, a pointer) tells no size
    assert lanes(kernel + launch + "auto *f = &attn_softmax;\n") == [6, 7]


def test_lanes_in_a_template_no_file_instantiates_are_no_finding(tmp_path: Path) -> None:
    """DeepSpeed 0.19.8 transformer/softmax_kernels.cu (built for ROCm) defines the template
    ``softmax_backward_kernel`` (``int lane = id & 0x1f``) and never names it again: its
    launchers call ``softmax_backward_kernel_v2``. A template defined in a .cu is seen by no
    other unit, so no HIP build instantiates it. Launched, defined in a header (its includers
    instantiate it), or in a .cu another file of the run includes, it keeps HP204."""
    from hipport.pipeline import collect, scan_paths

    kernel = ("template <typename T, int tbSize>\n"
              "__global__ void softmax_backward_kernel(T *out_grad) {\n"
              "  __shared__ float partialSum[32];\n"
              "  cg::thread_block b = cg::this_thread_block();\n"
              "  cg::thread_block_tile<tbSize> g = cg::tiled_partition<tbSize>(b);\n"
              "  int id = threadIdx.x;\n"
              "  int wid = id >> 5;\n"
              "  int lane = id & 0x1f;\n"
              "  float sum = out_grad[id];\n"
              "  for (int i = 1; i < tbSize; i *= 2) sum += g.shfl_xor(sum, i);\n"
              "  if (lane == 0) partialSum[wid] = sum;\n"
              "  b.sync();\n"
              "  out_grad[id] = partialSum[lane];\n"
              "}\n"
              "__global__ void softmax_backward_kernel_v2(float *out_grad) { out_grad[threadIdx.x] = 0; }\n"
              "void launch(float *v) { softmax_backward_kernel_v2<<<1, 256>>>(v); }\n")

    def lanes(**files: str) -> list[tuple[str, int]]:
        for f in tmp_path.iterdir():
            f.unlink()
        for name, text in files.items():
            (tmp_path / name.replace("_", ".")).write_text(text)
        opts = Options(jobs=1)
        return sorted((Path(f.path).name, f.line) for f in collect(scan_paths([tmp_path], opts), opts, "scan").findings
                      if f.code == "HP204")

    assert lanes(softmax_cu=kernel) == []
    launched = kernel + "void more(float *v) { softmax_backward_kernel<float, 64><<<1, 256>>>(v); }\n"
    assert lanes(softmax_cu=launched) == [("softmax.cu", 7), ("softmax.cu", 8)]
    assert lanes(softmax_cuh=kernel) == [("softmax.cuh", 7), ("softmax.cuh", 8)]
    assert lanes(softmax_cu=kernel, all_cu='#include "softmax.cu"\n') == [("softmax.cu", 7), ("softmax.cu", 8)]


def test_a_header_included_only_by_headers_is_answered_by_their_includers(tmp_path: Path) -> None:
    """DeepSpeed's csrc/includes/context.h (``#define WARP_SIZE 32``) is included by
    general_kernels.h, a header naming no wave, which the transformer's .cu files include
    beside ds_kernel_utils.h (hw_warp_size = ROCM_WAVEFRONT_SIZE): the header's includers
    answer through their own includers. A .cu that includes general_kernels.h, names no
    wave and spells WARP_SIZE, itself or in a header its compile reaches, keeps the finding;
    one that never spells it (DeepSpeed's general_kernels.cu) cannot be changed by its value,
    unless the header uses the name itself beyond its definition."""
    from hipport.pipeline import collect, scan_paths

    (tmp_path / "utils.h").write_text("#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n"
                                      "constexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n#endif\n")
    (tmp_path / "context.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    (tmp_path / "general.h").write_text('#pragma once\n#include "context.h"\n')
    (tmp_path / "softmax.cu").write_text('#include "utils.h"\n#include "general.h"\n')

    def constants() -> list[tuple[str, int]]:
        opts = Options(jobs=1)
        return sorted((Path(f.path).name, f.line) for f in collect(scan_paths([tmp_path], opts), opts, "scan").findings
                      if f.code == "HP209")

    assert constants() == []
    (tmp_path / "general.cu").write_text('#include "general.h"\n')
    assert constants() == []  # general.cu never spells WARP_SIZE
    (tmp_path / "general.cu").write_text('#include "general.h"\n__global__ void k(int *o) { o[0] = WARP_SIZE; }\n')
    assert constants() == [("context.h", 2)]
    (tmp_path / "general.cu").write_text('#include "general.h"\n#include "tile.h"\n')
    (tmp_path / "tile.h").write_text("#pragma once\nconstexpr int tile = WARP_SIZE;\n")
    assert constants() == [("context.h", 2)]  # through a header of its compile
    (tmp_path / "tile.h").write_text("#pragma once\nconstexpr int tile = 4;\n")
    assert constants() == []
    (tmp_path / "context.h").write_text("#pragma once\n#define WARP_SIZE 32\n#define LANES (WARP_SIZE)\n")
    assert constants() == [("context.h", 2)]  # the header uses it: only the wave answers


def test_a_file_of_continued_defines_is_read_for_pastes_in_linear_time(tmp_path: Path) -> None:
    """``instances.pastes`` searched with a regex from every line starting a ``#define``
    through its continued lines: 5,000 lines that each start one and continue it (one
    logical define, as the preprocessor reads them), in a file spelling ``##`` only in a
    comment, took 17 s and more per question, asked once per HP204 of a template. Read as
    the branch model reads directives, it takes milliseconds; a paste at the end of that
    one define counts, the comment does not."""
    import time

    from hipport.pipeline import collect, run_paths

    kernel = ("template <int N>\n__global__ void softmax_fwd_kernel(float *v) {\n"
              "  int lane = threadIdx.x & 0x1f;\n"
              "  v[lane] = __shfl_down_sync(~0ull, v[threadIdx.x], 1);\n}\n")
    def lanes(tail: str) -> list[int]:
        (tmp_path / "t.cu").write_text(kernel + "#define X a \\\n" * 5000 + tail)
        started = time.perf_counter()
        report = collect(run_paths([tmp_path / "t.cu"], Options()), Options(), "scan")
        assert time.perf_counter() - started < 5  # 17 s and more before
        return [f.line for f in report.findings if f.code == "HP204"]

    assert lanes("#define LAUNCH(k) k##_kernel<4><<<1, 64>>>(v)\n") == [3]
    assert lanes("\n// ## is no paste here\n") == []  # the kernel is named nowhere else


def test_the_units_of_one_header_read_each_file_of_their_compiles_once(
        tmp_path: Path, monkeypatch) -> None:
    """Each unit of a header's HP209 asks whether its compile spells the constant; asked unit
    by unit, every unit re-keyed the run's includes and re-read every header it reaches, so
    the cost grew with units × files (1,600 units of context.h and a chain of 61 headers:
    15.1 s user against 1.4 s without the finding). The answers are the same; each file is
    now opened once."""
    from hipport.pipeline import collect, scan_paths
    from hipport.preprocessor import includers

    (tmp_path / "context.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    for n in range(1, 6):
        (tmp_path / f"h{n}.h").write_text(f'#pragma once\n#include "h{n + 1}.h"\n' if n < 5 else "#pragma once\n")
    for n in range(20):
        (tmp_path / f"u{n}.cu").write_text('#include "context.h"\n#include "h1.h"\n'
                                           f"__global__ void k{n}(int *p) {{ p[0] = {n}; }}\n")
    opened: list[str] = []

    def counting(path, *args, **kw):
        opened.append(str(path))
        return open(path, *args, **kw)

    monkeypatch.setattr(includers, "open", counting, raising=False)
    opts = Options(jobs=1)
    report = collect(scan_paths([tmp_path], opts), opts, "scan")
    assert [f.code for f in report.findings if f.code == "HP209"] == []  # no unit spells WARP_SIZE
    assert len(opened) == len(set(opened)) == 26  # 20 units, context.h, h1-h5


def test_the_includers_of_many_headers_cost_one_pass_over_the_includes(
        tmp_path: Path, monkeypatch) -> None:
    """Each header deferring HP204 to its includers asked for them with a walk of every
    include of the run (``compiled_includers``): O(headers × includes), 400 headers and
    3,200 units of ten includes each took 5.9 s more than without the findings. The
    includes are now indexed once per collect (``includers.Includers``); the answers are
    the same: every header is included by a unit that names no wave, so each keeps HP204."""
    import types

    from hipport.pipeline import collect, scan_paths
    from hipport.preprocessor import includers

    headers, units = 30, 60
    for h in range(headers):
        (tmp_path / f"h{h}.cuh").write_text(f"#pragma once\n__device__ inline int w{h}() {{ return threadIdx.x / 32; }}\n")
    for u in range(units):
        (tmp_path / f"u{u}.cu").write_text("".join(f'#include "h{(u + j * 7) % headers}.cuh"\n' for j in range(10))
                                           + f"__global__ void k{u}(int *p) {{ p[0] = 1; }}\n")
    opts = Options(jobs=1)
    results = list(scan_paths([tmp_path], opts))
    asked: list[str] = []

    def basename(p: str) -> str:
        asked.append(p)
        return os.path.basename(p)

    monkeypatch.setattr(includers, "os", types.SimpleNamespace(
        path=types.SimpleNamespace(**{**vars(os.path), "basename": basename})))
    report = collect(results, opts, "scan")
    assert sorted(f.path for f in report.findings if f.code == "HP204") == sorted(
        str(tmp_path / f"h{h}.cuh") for h in range(headers))
    assert len(asked) < 4 * units * 10  # a few per include, not one per include and header


def test_a_header_the_build_finds_through_an_angled_include_spells_the_constant(tmp_path: Path) -> None:
    """``includers.spelled_in_compile`` (now ``CompileReach.spelled``) followed only ``#include "…"``: a unit including
    context.h (``#define WARP_SIZE 32``) and ``<proj/reduce.h>`` found through -I, whose
    warp sum shuffles ``WARP_SIZE`` lanes, counted as never spelling the constant, and
    context.h's true HP209 was dropped (the same unit with ``"../inc/proj/reduce.h"`` kept it)."""
    from hipport.pipeline import collect, scan_paths

    (tmp_path / "inc" / "proj").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "inc" / "proj" / "reduce.h").write_text(
        "#pragma once\n__device__ inline float warp_sum(float v) {\n"
        "  return v + __shfl_xor_sync(~0ull, v, 1, WARP_SIZE);\n}\n")
    (tmp_path / "src" / "context.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    (tmp_path / "src" / "k.cu").write_text('#include "context.h"\n#include <proj/reduce.h>\n'
                                           "__global__ void k(float *v) { v[0] = warp_sum(v[0]); }\n")

    def constants(*dirs: str) -> list[tuple[str, int]]:
        opts = Options(jobs=1, include_dirs=tuple(str(tmp_path / d) for d in dirs))
        return sorted((Path(f.path).name, f.line) for f in collect(
            scan_paths([tmp_path / "src"], opts), opts, "scan").findings if f.code == "HP209")

    assert constants("inc") == [("context.h", 2)]
    (tmp_path / "inc" / "proj" / "reduce.h").write_text("#pragma once\n")
    assert constants("inc") == []  # found, and it does not spell it


def test_a_project_header_in_a_folder_named_cuda_is_not_libcudacxx(tmp_path: Path) -> None:
    """exllamav2 0.0.4's exllamav2_ext/ext.cpp (and auto-gptq 0.7.1's copy of it) includes its
    own kernels' headers as ``"cuda/q_matrix.cuh"``: the file beside it, not libcu++ (one HP333
    per include, 8 highs on exllamav2). A name the build finds nowhere, libcu++'s own
    headers (exact entries, the catalogue's ``cuda/std/``) and ``<...>`` stay reported."""
    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda" / "std").mkdir()
    for name in ("q_matrix.cuh", "std/atomic"):  # a vendored libcu++ header is found too
        (tmp_path / "cuda" / name).write_text("#pragma once\n")
    src = ('#include "cuda/q_matrix.cuh"\n'   # the project's
           '#include "cuda/missing.cuh"\n'    # found nowhere: libcu++'s as far as hipport knows
           '#include <cuda/q_matrix.cuh>\n')  # <...>: not looked for beside the file
    path = str(tmp_path / "ext.cpp")
    assert codes_on(src, "HP333", path=path) == [2, 3]
    assert codes_on('#include "cuda/std/atomic"\n', "HP403", path=path) == [1]  # the catalogue's libcu++
    (tmp_path / "inc" / "cuda").mkdir(parents=True)
    (tmp_path / "inc" / "cuda" / "rope.cuh").write_text("#pragma once\n")
    src = '#include "cuda/rope.cuh"\n'
    assert codes_on(src, "HP333", path=str(tmp_path / "ext.cpp")) == [1]
    assert codes_on(src, "HP333", path=str(tmp_path / "ext.cpp"),
                    options=Options(include_dirs=(tmp_path / "inc",))) == []


def test_a_vendored_libcudacxx_header_the_catalogue_does_not_list_stays_hp333(tmp_path: Path) -> None:
    """A project that vendors CCCL on its -I (libcudacxx/include/cuda/ptx, cuda/cmath…) and
    includes ``"cuda/ptx"`` is using libcu++, whose public headers have no extension; the
    catalogue lists only some of them (cuda/atomic, cuda/std/…), so the found copy must not
    make it the project's own header."""
    inc = tmp_path / "third_party" / "libcudacxx" / "include"
    (inc / "cuda").mkdir(parents=True)
    for name in ("ptx", "cmath", "q_matrix.cuh"):
        (inc / "cuda" / name).write_text("#pragma once\n")
    src = '#include "cuda/ptx"\n#include "cuda/cmath"\n#include "cuda/q_matrix.cuh"\n'
    options = Options(include_dirs=(inc,))
    assert codes_on(src, "HP333", path=str(tmp_path / "k.cu"), options=options) == [1, 2]


def test_row_and_column_of_a_table_32_wide_are_not_a_lane_and_a_warp() -> None:
    """auto-gptq 0.7.1's VecQuant3MatMulKernelFaster_old (built for ROCm) fills its
    ``__shared__ half2 deq2[64][32]`` lookup table with ``val = threadIdx.x / 32`` and
    ``off = threadIdx.x % 32``: the table's row length, no warp. A table of another width,
    a column also compared, or a function with warp work keep HP204."""
    src = ('__global__ void fill(half2 *out, int n) {\n'
           '  __shared__ half2 deq2[64][32];\n'
           '  int val = threadIdx.x / 32;\n'
           '  int off = threadIdx.x % 32;\n'
           '  for (; val < 64; val += 128 / 32)\n'
           '    deq2[val][off] = __halves2half2(__int2half_rn(val & 0x7), __int2half_rn(val >> 3));\n'
           '  __syncthreads();\n'
           '  out[threadIdx.x] = deq2[n & 63][off];\n'
           '}\n')
    assert codes_on(src, "HP204") == []
    narrow = src.replace("deq2[64][32]", "deq2[64][16]")
    compared = src.replace("  __syncthreads();\n", "  if (off == 0) out[val] = deq2[0][0];\n")
    shuffled = src.replace("  __syncthreads();\n", "  out[0] = __shfl_xor_sync(0xffffffff, out[1], 1);\n")
    for other in (narrow, compared, shuffled):
        assert codes_on(other, "HP204") == [3, 4]


def test_a_namespace_alias_the_hip_build_defines_is_not_libcudacxx() -> None:
    """mamba-ssm 2.3.2's uninitialized_copy.cuh (its ROCm build): ``namespace cuda { namespace
    std = ::std; }`` under ``#ifndef USE_ROCM … #else``, so ``::cuda::std::forward`` is
    std::forward there. The alias under the CUDA side only, or of another name, keeps HP403."""
    src = ('#ifndef USE_ROCM\n#include <cuda/std/type_traits>\n#else\n#include <hipcub/hipcub.hpp>\n'
           'namespace cuda {\n  namespace std = ::std;\n}\n#endif\n'
           'template <typename T, typename U>\n'
           '__device__ void copy(T *p, U &&v) { *p = ::cuda::std::forward<U>(v); }\n')
    assert codes_on(src, "HP403", path="u.cuh") == []
    assert codes_on(src.replace("namespace cuda {", "namespace mine {"), "HP403", path="u.cuh") == [10]
    cuda_side = src.replace("#else\n#include <hipcub/hipcub.hpp>\n", "").replace("#endif\n", "#else\n#endif\n")
    assert codes_on(cuda_side, "HP403", path="u.cuh") == [9]  # the alias on the CUDA side only
    hipcub = ('#include <hipcub/hipcub.hpp>\nnamespace cub = hipcub;\n'
              'using Load = cub::BlockLoad<float, 128, 4>;\n')  # hipCUB's: its notes hold
    assert codes_on(hipcub, "HP409", path="u.cuh") == [3]


def test_a_ladder_only_the_first_lane_of_each_32_lane_group_reads_is_not_half_a_wave() -> None:
    """torch-sparse 0.6.18's spmm_value_bw_kernel (built for ROCm): 32 threads per edge,
    ``lane_idx = thread_idx & (32 - 1)``, a down ladder from 16, then only ``lane_idx == 0``
    reads the sum. On a wave of 64 lanes 0 and 32 each hold their own group's sum, as on
    CUDA (its comment "inside a warp" names no warp size). A sum every lane reads, one the
    wave's id indexes (warpSize) and a helper that returns it keep HP214."""
    src = ('#define FULL_MASK 0xffffffff\n'
           '__global__ void per_edge(const float *m, float *out, int E, int K) {\n'
           '  int thread_idx = blockDim.x * blockIdx.x + threadIdx.x;\n'
           '  int index_idx = (thread_idx >> 5);\n'
           '  int lane_idx = thread_idx & (32 - 1);\n'
           '  if (index_idx < E) {\n'
           '    float val = 0.f;\n'
           '    for (int k = lane_idx; k < K; k += 32) val += m[index_idx * K + k];\n'
           '    for (int i = 32 / 2; i > 0; i /= 2) val += __shfl_down_sync(FULL_MASK, val, i);  // in a warp\n'
           '    if (lane_idx == 0) { out[index_idx] = val; }\n'
           '  }\n'
           '}\n')
    assert codes_on(src, "HP214") == []
    every_lane = src.replace("if (lane_idx == 0) { out[index_idx] = val; }", "out[thread_idx] = val;")
    by_wave = src.replace("out[index_idx] = val;", "out[thread_idx / warpSize] = val;")
    helper = src.replace("__global__ void", "__device__ float").replace(
        "if (lane_idx == 0) { out[index_idx] = val; }", "if (lane_idx == 0) return val;")
    for other in (every_lane, by_wave, helper):
        assert codes_on(other, "HP214") == [9]


def test_an_up_ladder_guarded_by_the_32_lane_index_stays_in_its_group() -> None:
    """torch-scatter 2.1.2's segment_coo_kernel (built for ROCm): ``tmp = SHFL_UP_SYNC(…, val,
    i)`` for i = 1 … 16, used only under ``if (lane_idx >= i && …)`` with ``lane_idx =
    row_idx & (32 - 1)``: each lane reads lane - i of its own 32-lane group, on a wave of 64
    too. Without the guard, or with a value read after the loop, HP214 stays."""
    src = ('#define FULL_MASK 0xffffffff\n'
           '__global__ void scan(const float *in, const long *index, float *out, int E) {\n'
           '  int row_idx = blockIdx.x * blockDim.x + threadIdx.x;\n'
           '  int lane_idx = row_idx & (32 - 1);\n'
           '  if (row_idx < E) {\n'
           '    float val = in[row_idx], tmp;\n'
           '    long idx = index[row_idx], next_idx;\n'
           '    for (int i = 1; i < 32; i *= 2) {\n'
           '      tmp = __shfl_up_sync(FULL_MASK, val, i);\n'
           '      next_idx = __shfl_up_sync(FULL_MASK, idx, i);\n'
           '      if (lane_idx >= i && idx == next_idx) val += tmp;\n'
           '    }\n'
           '    next_idx = __shfl_down_sync(FULL_MASK, idx, 1);\n'
           '    if (lane_idx == 31 || idx != next_idx) atomicAdd(out + idx, val);\n'
           '  }\n'
           '}\n')
    assert codes_on(src, "HP214") == []
    unguarded = src.replace("if (lane_idx >= i && idx == next_idx)", "if (idx == next_idx)")
    read_after = src.replace("atomicAdd(out + idx, val);", "atomicAdd(out + idx, val + tmp);")
    for other in (unguarded, read_after):
        assert codes_on(other, "HP214") == [8]


def test_an_up_ladder_whose_scan_a_later_indexed_shuffle_reads_keeps_hp214() -> None:
    """The guarded up ladder stays in its group, but ``__shfl_sync(m, v, 31)`` after it
    (the warp's total, a common end of a warp scan) reads lane 31 by its number in the
    wave: on a wave of 64 lanes 32-63 get the first group's total. With width 32 it is the
    group's lane 31 again."""
    src = ('__global__ void k(const float *in, float *out, int n) {\n'
           '  int row = blockIdx.x * blockDim.x + threadIdx.x;\n'
           '  int lane = row & (32 - 1);\n'
           '  float v = row < n ? in[row] : 0.f, t;\n'
           '  for (int i = 1; i < 32; i *= 2) {\n'
           '    t = __shfl_up_sync(0xffffffffu, v, i);\n'
           '    if (lane >= i) v += t;\n'
           '  }\n'
           '  float total = __shfl_sync(0xffffffffu, v, 31);\n'
           '  if (row < n) out[row] = v / total;\n'
           '}\n')
    assert codes_on(src, "HP214") == [5]
    assert codes_on(src.replace("v, 31)", "v * 2.f, 31)"), "HP214") == [5]
    assert codes_on(src.replace("v, 31)", "v, 31, 32)"), "HP214") == []


def test_a_table_filled_by_warp_work_through_a_helper_or_macro_keeps_hp204() -> None:
    """The table case's "no warp-level work" must see through the file's helpers and
    macros: ``tile[tid / 32][tid % 32] = warp_scan(v)`` (a __device__ helper that scans
    with __shfl_up_sync) or ``= WARP_BCAST(v)`` (a #define around __shfl_sync(…, v, 0))
    stores each warp's row of lanes; on a wave of 64 lanes 32-63 read lanes 0-31. In a file
    with a quoted include, a callee hipport cannot see (a header's warp_bcast) may be one."""
    kernel = ('__global__ void k(const float *in, float *out) {\n'
              '  __shared__ float tile[8][32];\n'
              '  int w = threadIdx.x / 32;\n'
              '  int l = threadIdx.x % 32;\n'
              '  tile[w][l] = WORK(in[threadIdx.x]);\n'
              '  __syncthreads();\n'
              '  out[threadIdx.x] = tile[w][l];\n'
              '}\n')
    helper = ('template <int N> __device__ float warp_scan(float v) {\n'
              '  for (int i = 1; i < N; i *= 2) { float t = __shfl_up_sync(0xffffffffu, v, i);'
              ' if ((threadIdx.x & 31) >= i) v += t; }\n'
              '  return v;\n'
              '}\n')
    macro = '#define WARP_BCAST(v) __shfl_sync(0xffffffffu, (v), 0)\n'
    assert codes_on(kernel.replace("WORK", "(float)"), "HP204") == []
    assert codes_on(helper + kernel.replace("WORK", "warp_scan<32>"), "HP204") == [2, 7, 8]
    assert codes_on(macro + kernel.replace("WORK", "WARP_BCAST"), "HP204") == [4, 5]
    # a helper of an included header hipport does not read: it may shuffle, so HP204 stays
    assert codes_on('#include "reduce.cuh"\n' + kernel.replace("WORK", "warp_bcast"), "HP204") == [4, 5]
    included = '#include "reduce.cuh"\n'
    assert codes_on(included + kernel.replace("WORK", "expf"), "HP204") == []  # a CUDA API of the tables
    assert codes_on(included + kernel.replace("WORK", "std::abs"), "HP204") == []  # the standard library's
    cast = included + "template <typename scalar_t>\n" + kernel.replace("WORK", "scalar_t")
    assert codes_on(cast, "HP204") == []  # a cast to the template's type
    assert codes_on(kernel.replace("WORK", "warp_bcast"), "HP204") == []  # only <...> headers: not a helper
