"""Argument-level rewrites (mappings/arguments.toml) and legacy cuBLAS calls, on 6.3 and
7.2.1 side by side, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipport.options import Options
from hipport.pipeline import transform
from hipport.rewrite.arguments import rewrites
from hipport.versions import parse_version

V63 = Options(rocm=parse_version("6.3"), apply_fixes=True)
V721 = Options(apply_fixes=True)
ROC721 = Options(apply_fixes=True, roc=True)
REFERENCE = next((p / "reference" / "hipify-argument-rewrites.md"
                  for p in (Path(__file__).resolve().parents[2] / "shared", Path(__file__).resolve().parents[3] / "shared")
                  if (p / "reference").is_dir()), None)


INCLUDE, HIP_INCLUDE = "#include <cuda_runtime.h>\n", "#include <hip/hip_runtime.h>\n"


def conv(src: str, options: Options) -> tuple[str, list[tuple[str, int]]]:
    """Convert one line after ``#include <cuda_runtime.h>``; the output line, and the
    findings with the line numbers of ``src``."""
    out, findings, _ = transform((INCLUDE + src).encode(), "t.cpp", options)
    text = out.decode()
    assert text.startswith(HIP_INCLUDE), text
    return text[len(HIP_INCLUDE):], [(f.code, f.line - 1) for f in findings]


#: CUDA call → (6.3 output, 7.2.1 output); neither has a finding.
SIDE_BY_SIDE = {
    "cudaFuncSetCacheConfig(kernel, cudaFuncCachePreferL1);": (
        "hipFuncSetCacheConfig(reinterpret_cast<const void*>(kernel), hipFuncCachePreferL1);",
    ) * 2,
    "cudaFuncGetAttributes(&attr, kernel<float>);": (
        "hipFuncGetAttributes(&attr, reinterpret_cast<const void*>(kernel<float>));",
    ) * 2,
    "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n);": (
        "hipFuncSetAttribute(reinterpret_cast<const void*>(k), hipFuncAttributeMaxDynamicSharedMemorySize, n);",
    ) * 2,
    "cudaFuncSetAttribute((const void*)k, cudaFuncAttributeMaxDynamicSharedMemorySize, n);": (
        "hipFuncSetAttribute((const void*)k, hipFuncAttributeMaxDynamicSharedMemorySize, n);",
    ) * 2,
    "cudaLaunchKernel(k, g, b, args, 0, s);": (
        "hipLaunchKernel(reinterpret_cast<const void*>(k), g, b, args, 0, s);",
    ) * 2,
    "cudaMemcpyToSymbol(c_table, h, n);": ("hipMemcpyToSymbol(HIP_SYMBOL(c_table), h, n);",) * 2,
    "cudaMemcpyFromSymbol(h, c_table, n);": ("hipMemcpyFromSymbol(h, HIP_SYMBOL(c_table), n);",) * 2,
    "cudaMallocHost(&p, n);": ("hipHostMalloc(&p, n, hipHostMallocDefault);",) * 2,
    "cudaMallocHost(&p, n, cudaHostAllocPortable);": ("hipHostMalloc(&p, n, hipHostMallocPortable);",) * 2,
    "cudaEventCreate(&e, cudaEventDisableTiming);": ("hipEventCreateWithFlags(&e, hipEventDisableTiming);",) * 2,
    "cudaEventCreate(&e);": ("hipEventCreate(&e);",) * 2,
    "cuOccupancyMaxPotentialBlockSize(&g, &b, f, NULL, 0, 0);": (
        "hipModuleOccupancyMaxPotentialBlockSize(&g, &b, f, 0, 0);",) * 2,
    "cuOccupancyMaxPotentialBlockSize(&g, &b, f, 0, smem, 256);": (
        "hipModuleOccupancyMaxPotentialBlockSize(&g, &b, f, smem, 256);",) * 2,
    "cudaGetDriverEntryPoint(\"cuMemAlloc\", &fn, flags, &status);": (
        "hipGetProcAddress(\"cuMemAlloc\", &fn, 603, flags, &status);",
        "hipGetDriverEntryPoint(\"cuMemAlloc\", &fn, flags, &status);",
    ),
    "cudaGetDriverEntryPoint(\"cuMemAlloc\", &fn, flags);": (
        "hipGetProcAddress(\"cuMemAlloc\", &fn, 603, flags, nullptr);",
        "hipGetDriverEntryPoint(\"cuMemAlloc\", &fn, flags, nullptr);",
    ),
    "cudaMalloc3DArray(&a, &desc, extent);": ("hipMalloc3DArray(&a, &desc, extent, 0);",) * 2,
    "cudaMalloc3DArray(&a, &desc, extent, cudaArrayLayered);": (
        "hipMalloc3DArray(&a, &desc, extent, hipArrayLayered);",) * 2,
    # CUDA 13's cuCtxCreate (_v4) has a create-parameters argument; the samples pass NULL
    "cuCtxCreate(&ctx, NULL, 0, dev);": ("hipCtxCreate(&ctx, 0, dev);",) * 2,
    "cuCtxCreate(&ctx, 0, dev);": ("hipCtxCreate(&ctx, 0, dev);",) * 2,
}


@pytest.mark.parametrize("src", sorted(SIDE_BY_SIDE))
def test_argument_rewrites_side_by_side(src: str) -> None:
    expected = SIDE_BY_SIDE[src]
    for options, want in zip((V63, V721), expected):
        out, found = conv(src, options)
        assert out == want
        assert [c for c, _ in found if c.startswith("HP11")] == []


def test_a_callback_argument_is_a_finding_not_dropped() -> None:
    src = "cuOccupancyMaxPotentialBlockSize(&g, &b, f, smemFor, 0, 0);"
    for options in (V63, V721):
        out, found = conv(src, options)
        assert out == "hipModuleOccupancyMaxPotentialBlockSize(&g, &b, f, smemFor, 0, 0);"
        assert ("HP116", 1) in found


def test_cuda_13_context_create_parameters_are_a_finding_not_dropped() -> None:
    src = "cuCtxCreate(&ctx, &params, 0, dev);"
    for options in (V63, V721):
        out, found = conv(src, options)
        assert out == "hipCtxCreate(&ctx, &params, 0, dev);"
        assert ("HP116", 1) in found


def test_cuda_13_location_prefetch_and_advice_are_the_v2_calls_from_7_1() -> None:
    decl = "cudaMemLocation loc = {};\n"
    calls = ("cudaMemPrefetchAsync(p, n, loc, 0, s);", "cudaMemAdvise(p, n, cudaMemAdviseSetAccessedBy, loc);")
    for call, v2 in zip(calls, ("hipMemPrefetchAsync_v2(p, n, loc, 0, s);",
                                "hipMemAdvise_v2(p, n, hipMemAdviseSetAccessedBy, loc);")):
        out, found = conv(decl + call, V721)
        assert out.splitlines()[1] == v2
        assert [c for c, _ in found if c in ("HP107", "HP116")] == []
        # the 6.2 headers have no _v2: the name is renamed as before and HP107 stays
        out, found = conv(decl + call, V63)
        assert "_v2" not in out
        assert ("HP107", 2) in found


@pytest.mark.parametrize("src, hip", [
    ("cudaMemPrefetchAsync_v2(p, n, loc, 0, s);", "hipMemPrefetchAsync_v2(p, n, loc, 0, s);"),
    ("cuMemPrefetchAsync_v2(d, n, loc, 0, s);", "hipMemPrefetchAsync_v2(d, n, loc, 0, s);"),
    ("cudaMemAdvise_v2(p, n, cudaMemAdviseSetReadMostly, loc);",
     "hipMemAdvise_v2(p, n, hipMemAdviseSetReadMostly, loc);"),
    ("cuMemAdvise_v2(d, n, CU_MEM_ADVISE_SET_READ_MOSTLY, loc);",
     "hipMemAdvise_v2(d, n, hipMemAdviseSetReadMostly, loc);"),
])
def test_cuda_12_v2_prefetch_and_advice_names_map_from_7_1(src: str, hip: str) -> None:
    # CUDA 12.2's explicit *_v2 spellings: HIP 7.1 has the same signatures, HIP 6.2 none
    out, found = conv(src, V721)
    assert out == hip
    assert [c for c, _ in found if c in ("HP101", "HP107")] == []
    # on 6.3 the name stays and is reported (the managed-memory note HP316 takes the first
    # managed call's place, so one comes first)
    out, found = conv("cudaMallocManaged(&p, n);\n" + src, V63)
    assert out.splitlines()[1].startswith(src.split("(")[0] + "(")
    assert ("HP101", 2) in found


@pytest.mark.parametrize("src, hip", [
    ("cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, {cudaMemLocationTypeDevice, 0});",
     "hipMemAdvise_v2(p, n, hipMemAdviseSetReadMostly, {hipMemLocationTypeDevice, 0});"),
    ("cudaMemPrefetchAsync(p, n, cudaMemLocation{cudaMemLocationTypeDevice, dev}, 0, s);",
     "hipMemPrefetchAsync_v2(p, n, hipMemLocation{hipMemLocationTypeDevice, dev}, 0, s);"),
])
def test_a_braced_or_spelled_location_is_the_v2_call_from_7_1(src: str, hip: str) -> None:
    # a two-element braced list cannot initialize CUDA 12's int device; T{...} spells its type
    out, found = conv(src, V721)
    assert out == hip
    assert [c for c, _ in found if c == "HP107"] == []
    out, found = conv(src, V63)
    assert "_v2" not in out
    assert ("HP107", 1) in found


def test_a_one_element_braced_argument_keeps_the_plain_call() -> None:
    out, found = conv("cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, {dev});", V721)
    assert out == "hipMemAdvise(p, n, hipMemAdviseSetReadMostly, {dev});"
    assert ("HP107", 1) in found


def test_cuda_13_graph_add_node_drops_null_edge_data_and_reports_any_other() -> None:
    # CUDA 13: (node, graph, deps, dependencyData, numDeps, params); HIP has no edge data
    for options in (V63, V721):
        for src, hip in (("cudaGraphAddNode(&n, g, NULL, NULL, 0, &params);", "hipGraphAddNode(&n, g, NULL, 0, &params);"),
                         ("cuGraphAddNode(&n, g, &d, nullptr, 1, &params);", "hipGraphAddNode(&n, g, &d, 1, &params);")):
            out, found = conv(src, options)
            assert out == hip
            # the call now has HIP's signature: nothing of HIPIFY's "CUDA 13 differs" is left
            assert [c for c, _ in found if c in ("HP116", "HP107")] == []
        out, found = conv("cudaGraphAddNode(&n, g, deps, edges, 1, &params);", options)
        assert out == "hipGraphAddNode(&n, g, deps, edges, 1, &params);"
        assert ("HP116", 1) in found and ("HP107", 1) in found


def test_cuda_12_graph_exec_update_result_info_is_a_finding_naming_hips_out_parameters() -> None:
    """CUDA 12's three-argument form (jacobiCudaGraphs of the samples) is reported where it
    is, naming the HIP types the four-argument hipGraphExecUpdate takes (the compiler's
    errors on the struct's uses name hipGraphExecUpdateResult); CUDA 11's form is renamed."""
    for options in (V63, V721):
        for cuda, hip in (("cudaGraphExecUpdate", "hipGraphExecUpdate"),
                          ("cuGraphExecUpdate", "hipGraphExecUpdate")):
            out, findings, _ = transform((INCLUDE + f"{cuda}(exec, graph, &info);").encode(),
                                         "t.cpp", options)
            assert out.decode().endswith(f"{hip}(exec, graph, &info);")
            reported = [f for f in findings if f.code == "HP116"]
            assert len(reported) == 1 and "hipGraphExecUpdateResult*" in reported[0].message
            out, found = conv(f"{cuda}(exec, graph, &errorNode, &result);", options)
            assert out == f"{hip}(exec, graph, &errorNode, &result);"
            assert not [c for c, _ in found if c == "HP116"]


def test_a_device_ordinal_or_an_unknown_location_keeps_the_plain_call() -> None:
    for src in ("cudaMemPrefetchAsync(p, n, device, s);", "cudaMemPrefetchAsync(p, n, where(), 0, s);"):
        out, found = conv(src, V721)
        assert out.startswith("hipMemPrefetchAsync(")
        assert ("HP107", 1) in found


def test_roc_size_t_out_parameter_is_a_finding() -> None:
    src = "cusparseScsrsv2_bufferSize(h, op, m, nnz, descr, val, rowPtr, colInd, info, &size);"
    out, found = conv(src, ROC721)
    assert out == "rocsparse_scsrsv_buffer_size(h, op, m, nnz, descr, val, rowPtr, colInd, info, &size);"
    assert ("HP116", 1) in found


def test_roc_rewrites_follow_hipify_clang() -> None:
    src = "cusparseScsrmv(h, op, m, n, nnz, &alpha, descr, val, rowPtr, colInd, x, &beta, y);"
    out, found = conv(src, Options(rocm=parse_version("6.3"), apply_fixes=True, roc=True))
    assert out == "rocsparse_scsrmv(h, op, m, n, nnz, &alpha, descr, val, rowPtr, colInd, nullptr, x, &beta, y);"
    src = "cusparseScsrilu02_analysis(h, m, nnz, descr, val, rp, ci, info, policy, buf);"
    out, found = conv(src, ROC721)
    assert out == ("rocsparse_scsrilu0_analysis(h, m, nnz, descr, val, rp, ci, info, "
                   "rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buf);")


def test_dropped_and_moved_arguments_keep_their_renames_right() -> None:
    # The removed arguments hold names the identifier rewriter renames: their renames go
    # with them; a kept one (copyValues) is renamed.
    src = ("cusparseCsr2cscEx2_bufferSize(h, m, n, nnz, val, rowPtr, colInd, cscVal, cscColPtr, "
           "cscRowInd, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, "
           "CUSPARSE_CSR2CSC_ALG1, &size);")
    out, found = conv(src, ROC721)
    assert out == "rocsparse_csr2csc_buffer_size(h, m, n, nnz, rowPtr, colInd, rocsparse_action_numeric, &size);"
    src = "cusparseSgtsvInterleavedBatch(h, algo, m, dl, d, du, x, batchCount, pBuffer);"
    out, _ = conv(src, ROC721)
    assert out == "rocsparse_sgtsv_interleaved_batch(h, algo, m, dl, d, du, x, batchCount, batchCount, pBuffer);"
    src = "cudnnGetConvolutionForwardWorkspaceSize(h, x[CUDNN_DATA_FLOAT], w, conv, y, algo, &sz);"
    out, _ = conv(src, ROC721)
    assert out == "miopenConvolutionForwardGetWorkSpaceSize(h, w, x[miopenFloat], conv, y, &sz);"


def test_a_call_is_rewritten_for_all_its_rows_or_none() -> None:
    src = "cusparseScsrilu02_analysis(h, m, nnz, descr, val, rp, ci, info);"  # two short
    out, found = conv(src, ROC721)
    assert out == "rocsparse_scsrilu0_analysis(h, m, nnz, descr, val, rp, ci, info);"
    assert ("HP116", 1) in found


def test_legacy_cublas_calls_are_reported_and_left() -> None:
    src = "#include <cublas.h>\nvoid f(float* x, float* y, int n) { cublasSaxpy(n, 2.0f, x, 1, y, 1); }\n"
    for options in (V63, V721):
        out, found = conv(src, options)
        assert out == "#include <hipblas/hipblas.h>\nvoid f(float* x, float* y, int n) { cublasSaxpy(n, 2.0f, x, 1, y, 1); }\n"
        assert ("HP117", 2) in found
    out, found = conv("void f() { cublasSgemm('N', 'N', m, n, k, 1.0f, A, m, B, k, 0.0f, C, m); }", V721)
    assert "cublasSgemm('N'" in out and ("HP117", 1) in found


def test_v2_cublas_calls_are_renamed() -> None:
    src = "#include <cublas_v2.h>\nvoid f() { cublasSaxpy(h, n, &a, x, 1, y, 1); }\n"
    out, found = conv(src, V721)
    assert "hipblasSaxpy(h, n, &a, x, 1, y, 1)" in out and "HP117" not in {c for c, _ in found}


@pytest.mark.skipif(REFERENCE is None or not REFERENCE.is_file(), reason="reference not present")
def test_the_hipify_rows_are_exactly_the_references() -> None:
    """Every FuncArgCasts row of the reference is in arguments.toml, and nothing else is,
    apart from the rows marked [hipport]."""
    assert REFERENCE is not None
    want = set()
    for line in REFERENCE.read_text(encoding="utf-8").split("## Argument rewrites")[1].splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            applies = {"always": "always", "--roc": "roc", "--roc, MIOpen": "miopen"}[cells[1]]
            want.add((cells[0].strip("`"), applies, int(cells[2]), cells[3]))
    have = {(r.cuda, r.applies, r.arg, r.transform)
            for rows in rewrites().values() for r in rows if not r.reason.startswith("[hipport]")}
    assert len(want) == 208 and have == want


def test_every_row_names_a_known_cuda_function() -> None:
    from hipport.mapping import load_table

    table = load_table()
    assert [n for n in rewrites() if n not in table.entries] == []


def test_roc_calls_with_arguments_hipport_cannot_make_exact_are_reported() -> None:
    """--roc: complex element types, rocBLAS *_ex, CUDA data types in rocSPARSE calls, and a
    rocSPARSE argument count that is not the function's (roc-arity.json)."""
    cases = {
        "cublasCaxpy(h, n, &alpha, x, 1, y, 1);": "rocblas_float_complex",
        "cublasGemmEx(h, a, b, m, n, k, &al, A, CUDA_R_16F, m, B, CUDA_R_16F, k, &be, C, "
        "CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);": "*_ex functions",
        "cusparseSpMM_bufferSize(h, opA, opB, &alpha, A, B, &beta, C, CUDA_R_32F, "
        "CUSPARSE_SPMM_ALG_DEFAULT, &sz);": "rocsparse_datatype",
        "cusparseSgthr(h, nnz, y, xVal, xInd);": "the call passes 5 arguments, rocsparse_sgthr takes 6",
    }
    for src, words in cases.items():
        out, findings, _ = transform(src.encode(), "t.cpp", ROC721)
        hp119 = [f.message for f in findings if f.code == "HP119"]
        assert len(hp119) == 1 and words in hp119[0], (src, hp119)
    for src in ("cusparseCreate(&h);", "cublasSaxpy(h, n, &alpha, x, 1, y, 1);",
                "cusparseSgthr(h, nnz, y, xVal, xInd, CUSPARSE_INDEX_BASE_ZERO);",
                "cusparseScsrmv(h, op, m, n, nnz, &alpha, descr, val, rowPtr, colInd, x, &beta, y);"):
        _, findings, _ = transform(src.encode(), "t.cpp", ROC721)
        assert "HP119" not in {f.code for f in findings}, src
        _, findings, _ = transform(src.encode(), "t.cpp", V721)  # no --roc: hip* takes CUDA's lists
        assert "HP119" not in {f.code for f in findings}, src


def test_handle_calls_are_not_complex_calls() -> None:
    for src in ("cublasCreate(&h);", "cublasScalEx(h, n, &a, CUDA_R_32F, x, CUDA_R_32F, 1, CUDA_R_32F);"):
        _, findings, _ = transform(src.encode(), "t.cpp", ROC721)
        assert not any("complex" in f.message for f in findings if f.code == "HP119"), src


def test_a_roc_call_reported_by_hp116_gets_no_hp119() -> None:
    src = "cusparseScsrsv2_bufferSize(h, op, m, nnz, descr, val, rowPtr, colInd, info, &size);"
    _, findings, _ = transform(src.encode(), "t.cpp", ROC721)
    assert [f.code for f in findings if f.code in ("HP116", "HP119")] == ["HP116"]


def test_roc_arity_counts_declared_parameters() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_roc_arity", Path(__file__).resolve().parent.parent
                                                  / "tools" / "gen_roc_arity.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    header = ("/* rocsparse_status rocsparse_fake(int a); */\n"
              "ROCSPARSE_EXPORT\nrocsparse_status rocsparse_create_handle(rocsparse_handle* handle);\n"
              "rocsparse_status rocsparse_sgthr(rocsparse_handle handle, rocsparse_int nnz,\n"
              "    const float* y, float* x_val, const rocsparse_int* x_ind, rocsparse_index_base b);\n"
              "rocsparse_status rocsparse_get_version(void);\n")
    assert tool.arities(header) == {"rocsparse_create_handle": 1, "rocsparse_sgthr": 6, "rocsparse_get_version": 0}


#: ROCm 6.x (and hiprtc's, on both headers) const-signature differences: CUDA source →
#: (6.3 output, 7.2.1 output), the casts only where the file does not declare the argument
#: with a type the HIP parameter takes; no finding either way.
CONST_SIGNATURES = {
    "void f(const char* const* h, const char* const* n) { nvrtcCreateProgram(&p, s, \"k\", 1, h, n); }": (
        "void f(const char* const* h, const char* const* n) { hiprtcCreateProgram(&p, s, \"k\", 1, "
        "const_cast<const char**>(h), const_cast<const char**>(n)); }",) * 2,
    "const char* opts[] = {\"-O3\"}; nvrtcCompileProgram(p, 1, opts);": (
        "const char* opts[] = {\"-O3\"}; hiprtcCompileProgram(p, 1, opts);",) * 2,
    "std::vector<const char*> v; nvrtcCompileProgram(p, 1, v.data()); nvrtcCompileProgram(p, 0, nullptr);": (
        "std::vector<const char*> v; hiprtcCompileProgram(p, 1, v.data()); hiprtcCompileProgram(p, 0, nullptr);",) * 2,
    "void g(char** o) { nvrtcCompileProgram(p, 1, o); }": (
        "void g(char** o) { hiprtcCompileProgram(p, 1, const_cast<const char**>(o)); }",) * 2,
    "void up(CUdeviceptr d, const float* h) { cuMemcpyHtoD(d, h, 4); cuMemcpyHtoDAsync(d, h, 4, s); }": (
        "void up(hipDeviceptr_t d, const float* h) { hipMemcpyHtoD(d, const_cast<void*>(static_cast<const void*>(h)), 4); "
        "hipMemcpyHtoDAsync(d, const_cast<void*>(static_cast<const void*>(h)), 4, s); }",
        "void up(hipDeviceptr_t d, const float* h) { hipMemcpyHtoD(d, h, 4); hipMemcpyHtoDAsync(d, h, 4, s); }"),
    "void up(CUdeviceptr d, float* h, std::vector<int> v) { cuMemcpyHtoD(d, h, 4); cuMemcpyHtoD(d, v.data(), 4); }": (
        "void up(hipDeviceptr_t d, float* h, std::vector<int> v) { hipMemcpyHtoD(d, h, 4); hipMemcpyHtoD(d, v.data(), 4); }",) * 2,
    "unsigned int v; cuCtxGetApiVersion(c, &v);": (
        "unsigned int v; hipCtxGetApiVersion(c, reinterpret_cast<int*>(&v));",
        "unsigned int v; hipCtxGetApiVersion(c, &v);"),
    "void m(const CUDA_ARRAY3D_DESCRIPTOR* d) { CUDA_ARRAY3D_DESCRIPTOR own; cuMipmappedArrayCreate(&a, d, 1); cuMipmappedArrayCreate(&a, &own, 1); }": (
        "void m(const HIP_ARRAY3D_DESCRIPTOR* d) { HIP_ARRAY3D_DESCRIPTOR own; hipMipmappedArrayCreate(&a, "
        "const_cast<HIP_ARRAY3D_DESCRIPTOR*>(d), 1); hipMipmappedArrayCreate(&a, &own, 1); }",) * 2,
    "cuuint64_t id; cuStreamGetCaptureInfo(s, &st, &id); unsigned long long f; cuGraphExecGetFlags(e, &f);": (
        "uint64_t id; hipStreamGetCaptureInfo(s, &st, reinterpret_cast<unsigned long long*>(&id)); "
        "unsigned long long f; hipGraphExecGetFlags(e, &f);",) * 2,
    "cuLinkCreate(0, nullptr, nullptr, &st);": (
        "hiprtcLinkCreate(0, nullptr, nullptr, &st);", "hipLinkCreate(0, nullptr, nullptr, &st);"),
}


@pytest.mark.parametrize("src", sorted(CONST_SIGNATURES))
def test_const_signatures_are_cast_where_the_file_does_not_say_the_type_fits(src: str) -> None:
    for options, want in zip((V63, V721), CONST_SIGNATURES[src]):
        out, found = conv(src, options)
        assert out == want
        assert [c for c, _ in found if c.startswith("HP11") and c != "HP112"] == []  # HP112: link hiprtc


def test_cuda_enable_default_is_written_zero_where_hip_has_no_name_for_it() -> None:
    src = "cudaGetDriverEntryPoint(\"cuMemAlloc\", &fn, cudaEnableDefault, &q);"
    out, found = conv(src, V63)
    assert out == "hipGetProcAddress(\"cuMemAlloc\", &fn, 603, 0, &q);"
    assert found == []  # no HP102 for the name that is gone
    out, found = conv(src, V721)
    assert out == "hipGetDriverEntryPoint(\"cuMemAlloc\", &fn, hipEnableDefault, &q);"
    out, found = conv(src.replace("cudaEnableDefault", "cudaEnableLegacyStream"), V63)
    assert out == "hipGetProcAddress(\"cuMemAlloc\", &fn, 603, cudaEnableLegacyStream, &q);"
    assert ("HP102", 1) in found


def test_a_6x_link_call_with_jit_options_is_a_finding() -> None:
    src = "cuLinkCreate(1, opts, vals, &st);"
    out, found = conv(src, V63)
    assert out == "hiprtcLinkCreate(1, opts, vals, &st);"
    assert ("HP116", 1) in found
    out, found = conv(src, V721)
    assert out == "hipLinkCreate(1, opts, vals, &st);"
    assert [c for c, _ in found if c.startswith("HP11")] == []
