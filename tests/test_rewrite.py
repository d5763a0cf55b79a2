"""Rewriters on small inputs: identifiers, includes, launches, macro bodies, targets."""

from __future__ import annotations

import pytest

from hipport.options import Options
from hipport.pipeline import transform
from hipport.versions import parse_version

V721 = Options(apply_fixes=True)
V63 = Options(rocm=parse_version("6.3"), apply_fixes=True)
HIP_LAUNCH = Options(apply_fixes=True, launch_syntax="hip")


def conv(src: str, path: str = "t.cpp", options: Options = V721) -> str:
    out, _, _ = transform(src.encode(), path, options)
    return out.decode()


@pytest.mark.parametrize(("src", "expected"), [
    ("cudaMalloc(&p, n);", "#include <hip/hip_runtime.h>\nhipMalloc(&p, n);"),
    ("cudaStream_t s;", "#include <hip/hip_runtime.h>\nhipStream_t s;"),
    ("x = cudaMemcpyHostToDevice;", "#include <hip/hip_runtime.h>\nx = hipMemcpyHostToDevice;"),
    ("cub::DeviceScan::ExclusiveSum(a, b, c, d, n);", "hipcub::DeviceScan::ExclusiveSum(a, b, c, d, n);"),
    ('puts("cudaMalloc");', 'puts("cudaMalloc");'),
    ("// cudaMalloc\nint x;", "// cudaMalloc\nint x;"),
    ("/* cudaFree(p) */ int y;", "/* cudaFree(p) */ int y;"),
    ("s.cudaMalloc = 1;", "s.cudaMalloc = 1;"),  # a struct member keeps its name
    ("struct S { int cudaStream_t; };", "struct S { int cudaStream_t; };"),  # a member's name, even this one
    # OpenCV cuda_stream_accessor.hpp: an unknown export macro made the parser read the type
    # as a member's name (its `;` missing); it is the declaration's type
    ("struct A {\n  CV_EXPORTS static cudaStream_t getStream(const Stream& s);\n  CV_EXPORTS cudaEvent_t e();\n};",
     "#include <hip/hip_runtime.h>\nstruct A {\n  CV_EXPORTS static hipStream_t getStream(const Stream& s);\n"
     "  CV_EXPORTS hipEvent_t e();\n};"),
    ("int my_cudaMalloc_wrapper();", "int my_cudaMalloc_wrapper();"),
    ("#define ALLOC(p, n) cudaMalloc(p, n) /* cudaFree */", "#include <hip/hip_runtime.h>\n#define ALLOC(p, n) hipMalloc(p, n) /* cudaFree */"),
    ("#define ERR cudaErrorMemoryAllocation", "#include <hip/hip_runtime.h>\n#define ERR hipErrorOutOfMemory"),
    ("#if 0\ncudaFree(p);\n#else\ncudaFree(q);\n#endif\n", "#include <hip/hip_runtime.h>\n#if 0\nhipFree(p);\n#else\nhipFree(q);\n#endif\n"),
])
def test_identifiers(src: str, expected: str) -> None:
    assert conv(src) == expected


def test_target_decides_whether_a_name_is_rewritten() -> None:
    src = "void f(cudaStream_t a, cudaStream_t b) { cudaStreamCopyAttributes(a, b); }"
    assert "hipStreamCopyAttributes" in conv(src, options=V721)
    out, findings, _ = transform(src.encode(), "t.cpp", V63)
    assert b"cudaStreamCopyAttributes(a, b)" in out and b"hipStream_t a" in out
    assert [(f.code, f.line) for f in findings] == [("HP102", 1)]
    assert "exists from ROCm 7.2; target is 6.3" in findings[0].message


def test_experimental_mapping_needs_the_flag() -> None:
    from hipport.mapping import Status, load_table

    # Every experimental row in HIPIFY's tables is dated after 7.2.1: look from 7.14.
    later = (7, 14, 0)
    table = load_table()
    name = next(n for n in sorted(table.entries)
                if table.view(later).resolve(n).status is Status.EXPERIMENTAL)
    res = table.view(later, experimental=True).resolve(name)
    src = f"void f() {{ {name}; }}"
    out, findings, _ = transform(src.encode(), "t.cpp", V721.with_(rocm=later))
    assert name in out.decode() and findings[0].code == "HP105"
    out2, findings2, _ = transform(src.encode(), "t.cpp", V721.with_(rocm=later, experimental=True))
    assert res.target in out2.decode() and findings2[0].code == "HP105"


def test_roc_maps_math_libraries_to_roc_names() -> None:
    out = conv("cublasHandle_t h; cublasCreate(&h);", options=V721.with_(roc=True))
    assert out == "rocblas_handle h; rocblas_create_handle(&h);"


def test_a_library_headers_include_guard_follows_the_header_and_its_route() -> None:
    # the CUDA samples' helper_cuda.h: `#ifdef CURAND_H_` around its curandStatus_t overload
    src = "#include <curand.h>\n#ifdef CURAND_H_\nint f(curandStatus_t s);\n#endif\n"
    assert conv(src) == "#include <hiprand/hiprand.h>\n#ifdef HIPRAND_H_\nint f(hiprandStatus_t s);\n#endif\n"
    out = conv(src, options=V721.with_(roc=True))
    assert "#include <rocrand/rocrand.h>\n#ifdef ROCRAND_H_\n" in out, out


def test_a_macro_the_file_defines_itself_keeps_its_name() -> None:
    # a stand-in header guarded by the library's own guard: its #define keeps the name, so
    # its #ifndef must too (else, after hiprand.h, the whole header is skipped)
    src = "#ifndef CURAND_H_\n#define CURAND_H_\nint my_rand();\n#endif\n"
    assert conv(src, "t.h") == src
    src = "#define __CUDA_NO_HALF_OPERATORS__\n#ifdef __CUDA_NO_HALF_OPERATORS__\nint x;\n#endif\n"
    assert conv(src, "t.h") == src


def _converted(results) -> dict[str, str]:
    """Each result's text after conversion (the input's where nothing changed), by path."""
    return {r.rel: (r.output if r.output is not None else r.source.path.read_bytes()).decode() for r in results}


def test_a_bundled_copy_of_cub_is_left_whole_and_its_includes_become_hipcub(tmp_path) -> None:
    # relion 3.1.3 carries CUB 1.8 in src/acc/cuda/cub: rewritten file by file, its
    # util_arch.cuh kept '#define CUB_PTX_ARCH' while the copy's other headers tested
    # HIPCUB_ARCH, and its cub:: became hipcub:: inside its own namespace cub
    from hipport.pipeline import run_paths

    copy = tmp_path / "src" / "acc" / "cub"
    (copy / "device").mkdir(parents=True)
    arch = "#ifndef CUB_PTX_ARCH\n#define CUB_PTX_ARCH 0\n#endif\nnamespace cub { __device__ int lane(); }\n"
    scan = ('#include "../util_arch.cuh"\n#include <cuda_runtime.h>\n'
            "namespace cub { struct DeviceScan { static cudaError_t Sum(); }; }\n#if CUB_PTX_ARCH > 0\n#endif\n")
    (copy / "util_arch.cuh").write_text(arch)
    (copy / "device" / "device_scan.cuh").write_text(scan)
    (tmp_path / "src" / "k.cu").write_text(
        '#include "src/acc/cub/device/device_scan.cuh"\n#include "src/acc/cub/util_arch.cuh"\n'
        '#include "src/acc/nocub/util_arch.cuh"\nint f() { return cub::DeviceScan::Sum(); }\n')
    results = {r.rel: r for r in run_paths([tmp_path], V721)}
    out = _converted(results.values())
    assert out["src/acc/cub/util_arch.cuh"] == arch and out["src/acc/cub/device/device_scan.cuh"] == scan
    for rel in ("src/acc/cub/util_arch.cuh", "src/acc/cub/device/device_scan.cuh"):
        assert results[rel].bundled and not results[rel].findings and results[rel].status == "unchanged"
    assert out["src/k.cu"] == ('#include <hip/hip_runtime.h>\n#include "hipcub/hipcub.hpp"\n'
                               '#include "src/acc/nocub/util_arch.cuh"\nint f() { return hipcub::DeviceScan::Sum(); }\n')
    routes = [f for f in results["src/k.cu"].findings if "src/acc/cub," in f.message]
    assert len(routes) == 1 and routes[0].code == "HP409" and "delete src/acc/cub" in routes[0].suggestion
    # verify checks none of the copy's files (nothing includes them once converted)
    from hipport.verify_units import units_from_paths

    checked = {u.path.name: u.checked for u in units_from_paths([tmp_path], V721.with_(apply_fixes=False))}
    assert checked == {"util_arch.cuh": False, "device_scan.cuh": False, "k.cu": True}
    # a run given the copy itself ports CUB: its files are converted, its names kept
    own = {r.rel: r for r in run_paths([copy], V721)}
    assert not own["util_arch.cuh"].bundled and "HIPCUB_ARCH" not in _converted(own.values())["device/device_scan.cuh"]


def test_a_bundled_librarys_macro_a_file_of_the_tree_defines_keeps_its_name_in_every_file(tmp_path) -> None:
    # a CUB name that a source outside a copy of CUB defines (a project's own CUB_PTX_ARCH)
    # is the tree's: renamed only where used, every use was 'undeclared identifier
    # HIPCUB_ARCH'. The definer may come after its users.
    from hipport.pipeline import run_paths

    (tmp_path / "a_cub").mkdir()
    (tmp_path / "a_cub" / "use.cuh").write_text(
        '#include "../z_cub/util_arch.cuh"\n#if CUB_PTX_ARCH >= 200\nint x;\n#endif\n'
        "inline int f(int e) { return CubDebug(e); }\n")
    (tmp_path / "z_cub").mkdir()
    defines = "#ifndef CUB_PTX_ARCH\n#define CUB_PTX_ARCH 0\n#endif\n  #  define CubDebug(e) (e)\n"
    (tmp_path / "z_cub" / "util_arch.cuh").write_text(defines)
    out = _converted(run_paths([tmp_path], V721))
    assert "#if CUB_PTX_ARCH >= 200\n" in out["a_cub/use.cuh"] and "CubDebug(e); }" in out["a_cub/use.cuh"]
    assert out["z_cub/util_arch.cuh"] == defines
    # the same user alone, with no definer in the run: hipCUB's names, as before
    alone = _converted(run_paths([tmp_path / "a_cub"], V721))
    assert "#if HIPCUB_ARCH >= 200\n" in alone["use.cuh"] and "HipcubDebug(e)" in alone["use.cuh"]


def test_the_tree_pass_finds_directives_at_a_line_start_only() -> None:
    from hipport.names import defined_names

    names = frozenset({b"CUB_PTX_ARCH", b"CubDebug", b"_CubLog"})
    src = (b"#define CUB_PTX_ARCH 0\n\t# undef CubDebug\nx #define _CubLog 1\n"
           b"#define CUB_PTX_ARCHX 1\n#define OTHER CUB_PTX_ARCH\n// #define _CubLog\n")
    assert defined_names(src, names) == {b"CUB_PTX_ARCH", b"CubDebug"}


def test_a_stand_in_for_a_cuda_runtime_name_elsewhere_in_the_tree_keeps_the_rename(tmp_path) -> None:
    # relion's CPU-build stubs (src/acc/cpu/cuda_stubs.h) '#define cudaStreamPerThread 0';
    # the CUDA code the HIP build compiles needs HIP's name: the runtime is no bundled library
    from hipport.pipeline import run_paths

    (tmp_path / "stubs.h").write_text("#define cudaStreamPerThread 0\n")
    (tmp_path / "use.cu").write_text("#include <cuda_runtime.h>\ncudaStream_t s = cudaStreamPerThread;\n")
    out = _converted(run_paths([tmp_path], V721))
    assert "hipStream_t s = hipStreamPerThread;" in out["use.cu"]


def test_duplicate_includes_merge_within_one_branch_only() -> None:
    src = "#include <cuda.h>\n#include <cuda_runtime.h>\n#if X\n#include <cuda_runtime_api.h>\n#endif\n"
    out = conv(src, "t.cpp")
    assert out.count("#include <hip/hip_runtime.h>\n") == 1
    assert "#if X\n#include <hip/hip_runtime_api.h>\n#endif\n" in out


def test_include_delimiters_and_comments_kept() -> None:
    assert conv('#include "cublas_v2.h" // blas\n') == '#include "hipblas/hipblas.h" // blas\n'


@pytest.mark.parametrize(("src", "expected"), [
    # nvcc's implicit cuda_runtime.h: added before the first include of a .cu file
    ("// header comment\n#include <cstdio>\n__global__ void k() {}\n",
     "// header comment\n#include <hip/hip_runtime.h>\n#include <cstdio>\n__global__ void k() {}\n"),
    # after a header guard's #define when nothing is included
    ("#ifndef A_CUH\n#define A_CUH\n__device__ int f();\n#endif\n",
     "#ifndef A_CUH\n#define A_CUH\n#include <hip/hip_runtime.h>\n__device__ int f();\n#endif\n"),
    # after #pragma once
    ("#pragma once\n__device__ int f();\n", "#pragma once\n#include <hip/hip_runtime.h>\n__device__ int f();\n"),
    # CRLF files get a CRLF include
    ("__global__ void k() {}\r\n", "#include <hip/hip_runtime.h>\r\n__global__ void k() {}\r\n"),
    # a .cu whose CUDA is all in the project headers it includes (OpenCV's color.cu):
    # nvcc included cuda_runtime.h before them, hipcc does not
    ('#include "opencv2/opencv_modules.hpp"\n#include "cudev.hpp"\nOPENCV_CUDA_IMPL(bgr_to_rgb)\n',
     '#include <hip/hip_runtime.h>\n#include "opencv2/opencv_modules.hpp"\n#include "cudev.hpp"\nOPENCV_CUDA_IMPL(bgr_to_rgb)\n'),
    # already there (through a mapped include): nothing added
    ("#include <cuda_runtime.h>\n__global__ void k() {}\n", "#include <hip/hip_runtime.h>\n__global__ void k() {}\n"),
])
def test_hip_runtime_include_added_once_to_cu_files(src: str, expected: str) -> None:
    assert conv(src, "k.cu") == expected
    assert conv(expected, "k.cu") == expected


def test_a_cpp_file_calling_the_runtime_gets_hip_runtime_unless_it_includes_a_hip_header() -> None:
    assert conv('#include "common.h"\nvoid f(float* p) { cudaMalloc(&p, 4); }\n', "a.cpp") == (
        '#include <hip/hip_runtime.h>\n#include "common.h"\nvoid f(float* p) { hipMalloc(&p, 4); }\n')
    src = "#include <cublas_v2.h>\nvoid f(cublasHandle_t h) { cublasCreate(&h); }\n"
    assert conv(src, "b.cpp") == "#include <hipblas/hipblas.h>\nvoid f(hipblasHandle_t h) { hipblasCreate(&h); }\n"
    src = "#include <cuda_runtime_api.h>\nvoid f(float* p) { cudaFree(p); }\n"
    assert conv(src, "c.h") == "#include <hip/hip_runtime_api.h>\nvoid f(float* p) { hipFree(p); }\n"


def test_plain_cpp_without_cuda_gets_no_include() -> None:
    assert conv("int main() { return 0; }\n", "k.cu") == "int main() { return 0; }\n"
    assert conv("__global__ void k() {}\n", "k.cpp") == "__global__ void k() {}\n"


@pytest.mark.parametrize(("src", "expected"), [
    ("k<<<g, b>>>(x);", "hipLaunchKernelGGL(k, dim3(g), dim3(b), 0, 0, x);"),
    ("k<<<g, b, shm>>>();", "hipLaunchKernelGGL(k, dim3(g), dim3(b), shm, 0);"),
    ("k<<<g, b, 0, s>>>(a, b);", "hipLaunchKernelGGL(k, dim3(g), dim3(b), 0, s, a, b);"),
    ("k<float, 4><<<dim3(1, 2), 64>>>(p);",
     "hipLaunchKernelGGL(HIP_KERNEL_NAME(k<float, 4>), dim3(1, 2), dim3(64), 0, 0, p);"),
    ("k<<<dim3{2}, dim3(b)>>>();", "hipLaunchKernelGGL(k, dim3{2}, dim3(b), 0, 0);"),
    ("template <typename T> __global__ void tk(T*);\nvoid g(float* p) { tk<<<1, 2>>>(p); }",
     "hipLaunchKernelGGL(HIP_KERNEL_NAME(tk), dim3(1), dim3(2), 0, 0, p);"),
    ("ns::k<T><<<1, 1, 0, st>>>(cudaStreamPerThread);",
     "hipLaunchKernelGGL(HIP_KERNEL_NAME(ns::k<T>), dim3(1), dim3(1), 0, st, hipStreamPerThread);"),
    ("#define L(k) k<<<1, 32>>>(0)", "#define L(k) hipLaunchKernelGGL(k, dim3(1), dim3(32), 0, 0, 0)"),
])
def test_hip_launch_syntax(src: str, expected: str) -> None:
    body = f"void f() {{ {src} }}" if not src.startswith("#") else src
    out = conv(body, options=HIP_LAUNCH)
    assert expected in out
    assert conv(out, options=HIP_LAUNCH) == out


def test_cuda_launch_syntax_is_kept_by_default() -> None:
    assert conv("void f() { k<<<g, b>>>(x); }") == "void f() { k<<<g, b>>>(x); }"


def test_non_utf8_bytes_survive() -> None:
    src = b"// caf\xe9 (latin-1)\ncudaFree(p);\n"
    out, _, _ = transform(src, "t.cpp", V721)
    assert out == b"// caf\xe9 (latin-1)\n#include <hip/hip_runtime.h>\nhipFree(p);\n"


def test_call_with_the_newer_cuda_signature_maps_to_the_matching_hip_function() -> None:
    src = ("void f(cudaGraphExec_t* e, cudaGraph_t g) {\n"
           "  cudaGraphInstantiate(e, g, 0);\n"
           "  cudaGraphInstantiate(e, g, nullptr, nullptr, 0);\n}\n")
    out = conv(src)
    assert "  hipGraphInstantiateWithFlags(e, g, 0);\n" in out
    assert "  hipGraphInstantiate(e, g, nullptr, nullptr, 0);\n" in out


def test_mapping_unsupported_for_newer_cuda_is_reported() -> None:
    _, findings, _ = transform(b"void f(void* p, size_t n, cudaStream_t s) { cudaMemPrefetchAsync(p, n, 0, s); }",
                               "t.cpp", V721)
    hp107 = [f for f in findings if f.code == "HP107"]
    assert len(hp107) == 1 and "CUDA 13" in hp107[0].message


def test_hip_runtime_comes_before_other_hip_headers_in_cu_files() -> None:
    src = "#include <cooperative_groups.h>\n#include <cuda.h>\n__global__ void k() {}\n"
    out = conv(src, "k.cu")
    assert out.startswith("#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n")
    assert conv(out, "k.cu") == out


def test_no_second_hip_runtime_when_the_hip_header_before_it_is_in_a_branch() -> None:
    """Found by the idempotence property: a HIP header inside an #if before the top-level
    runtime include; the only place hipport could insert hip_runtime.h is that include
    itself, and each conversion added one more copy."""
    src = ("k<<<g, b>>>(x);\n#if defined(__HIP_PLATFORM_AMD__)\n#include \"cublas_v2.h\"\n#endif\n"
           "#include <cuda_runtime.h>\n")
    out = conv(src, "k.cu")
    assert out.count("#include <hip/hip_runtime.h>") == 1
    assert conv(out, "k.cu") == out


def test_include_recovered_inside_a_parse_error_is_converted() -> None:
    """Found by the idempotence property: unbalanced code before an include at the end of
    a file (no newline) leaves only loose ``#include`` tokens in an ERROR node."""
    src = "(\ncudaMalloc(&p, n);\n#include <cuda_runtime.h> "
    out = conv(src, "a.cu")
    assert out == "(\nhipMalloc(&p, n);\n#include <hip/hip_runtime.h> "
    assert conv(out, "a.cu") == out


def test_define_recovered_inside_a_parse_error_is_converted() -> None:
    """Found by the idempotence property: a #define after unbalanced code, at the end of a
    file, is only loose tokens in an ERROR node; its body is still reparsed as code."""
    src = "(\n#define L(k) k<<<1, 32>>>(cudaGetLastError()) "
    out = conv(src, "a.cu")
    assert "(hipGetLastError())" in out
    assert conv(out, "a.cu") == out


def test_a_duplicate_include_in_mid_line_is_not_removed_and_joins_no_tokens() -> None:
    """Found by the seeded fuzz run (seed 17): removing a merged duplicate include that the
    parser recovered from the middle of a line joined ``c`` and ``udaError_t`` into a
    ``cudaError_t`` only a second conversion renamed. In the middle of a line it is no
    directive at all (C's rule; parse.starts_line), so it stays as it is."""
    src = "// a\r\n#include <cuda_runtime.h>\n\nc#include <cuda.h>\nudaError_t f();\n"
    out = conv(src, "c.cpp")
    assert out == "// a\r\n#include <hip/hip_runtime.h>\n\nc#include <cuda.h>\nudaError_t f();\n"
    assert conv(out, "c.cpp") == out
