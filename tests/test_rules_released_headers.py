"""The rules learnt from the released HIP headers (hipport/rules/released_headers/): the
fixes convert applies, and cases the line-annotated fixtures cannot show. The fixtures
themselves (fixtures/rules/{api,warp,device}/released_*.cu, *_ok.cu) are checked by the
family harnesses in test_rules_api.py, test_rules_warp.py and test_rules_device.py."""

from __future__ import annotations

from pathlib import Path

from hipport.analyze import analyze
from hipport.options import Options
from hipport.pipeline import transform
from hipport.versions import parse_version


def findings(src: str, rocm: str = "7.2.1") -> list[tuple[int, str, str]]:
    ctx = analyze(src.encode(), "t.cu", Options(rocm=parse_version(rocm)))
    return [(f.line, f.code, f.message) for f in ctx.findings if f.code in
            ("HP120", "HP121", "HP217", "HP330", "HP331", "HP332")]


def converted(src: str, rocm: str = "7.2.1") -> str:
    out, _, _ = transform(src.encode(), "t.cu", Options(rocm=parse_version(rocm), apply_fixes=True))
    return out.decode()


def test_void_pointer_arguments_are_cast_and_void_pointers_left_alone():
    src = ("void f(float* h) {\n  float* d;\n  cudaHostGetDevicePointer(&d, h, 0);\n"
           "  void* v;\n  cudaHostGetDevicePointer(&v, h, 0);\n}\n")
    out = converted(src)
    assert "hipHostGetDevicePointer(reinterpret_cast<void**>(&d), h, 0);" in out
    assert "hipHostGetDevicePointer(&v, h, 0);" in out


def test_malloc_pitch_needs_the_cast_on_6x_only():
    src = "void f() { float* p; size_t pitch; cudaMallocPitch(&p, &pitch, 4, 4); }\n"
    assert "reinterpret_cast<void**>(&p)" in converted(src, "6.3")
    assert "reinterpret_cast<void**>" not in converted(src, "7.2.1")


def test_block_scope_atomics_become_device_scope():
    src = "__global__ void k(int* n) { atomicAdd_block(n, 1); atomicCAS_block(n, 0, 1); }\n"
    out = converted(src)
    assert "atomicAdd(n, 1); atomicCAS(n, 0, 1);" in out
    assert [code for _, code, _ in findings(src)] == ["HP332", "HP332"]


def test_overload_collapse_names_both_and_the_first_line():
    src = ("#include <cuda.h>\nconst char* e(cudaError_t x) { return 0; }\n"
           "const char* e(CUresult x) { return 0; }\n")
    [(line, code, message)] = findings(src)
    assert (line, code) == (3, "HP120")
    assert message == ("`e(CUresult)` and `e(cudaError_t)` (line 2) both become "
                       "`e(hipError_t)` on HIP: a redefinition")


def test_overloads_in_different_classes_do_not_collapse():
    src = ("struct A { int f(cudaError_t e) { return 0; } };\n"
           "struct B { int f(CUresult e) { return 0; } };\n")
    assert findings(src) == []


def test_narrow_mask_is_reported_at_the_call_with_its_declared_type():
    src = ("__device__ float r(float v, uint32_t m) {\n"
           "  return __shfl_xor_sync(m, v, 1);\n}\n")
    [(line, code, message)] = findings(src)
    assert (line, code) == (2, "HP217") and "`m` (`uint32_t`" in message


def test_syncwarp_mask_only_matters_where_syncwarp_exists():
    src = "__device__ void w(unsigned m) { __syncwarp(m); }\n"
    assert [c for _, c, _ in findings(src, "7.2.1")] == ["HP217"]
    assert findings(src, "6.3") == []


def test_surface_read_with_boundary_mode_and_value_form():
    src = ("__global__ void k(cudaSurfaceObject_t s, float* o) {\n"
           "  float a; surf2Dread(&a, s, 0, 0, cudaBoundaryModeClamp);\n"
           "  surf1Dread(&a, s, 0, cudaBoundaryModeZero);\n"
           "  o[0] = surf3Dread<float>(s, 0, 0, 0);\n}\n")
    got = [(line, code) for line, code, _ in findings(src)]
    assert (2, "HP331") in got and (4, "HP331") in got
    assert (3, "HP331") not in got  # HIP's surf1Dread does take a boundary mode


def test_cudas_default_boundary_mode_written_out_is_dropped():
    """cuda-samples simpleSurfaceWrite.cu:83: `surf2Dwrite(v, s, x * 4, y,
    cudaBoundaryModeTrap)` was 'no matching function' on HIP. Trap is CUDA's default, so the
    call is CUDA's 4-argument one: dropped (the argument's rename with it), HP331 fixed. Zero
    and Clamp have no HIP spelling: reported, left."""
    src = ("__global__ void k(cudaSurfaceObject_t s, float v) {\n"
           "  surf2Dwrite(v, s, 0, 0,\n      cudaBoundaryModeTrap);\n"
           "  surf2Dwrite(v, s, 0, 0, cudaBoundaryModeZero);\n"
           "  float a; surf3Dread(&a, s, 0, 0, 0, cudaBoundaryModeTrap);\n}\n")
    out = converted(src)
    assert "surf2Dwrite(v, s, 0, 0);\n" in out and "surf3Dread(&a, s, 0, 0, 0);\n" in out
    assert "surf2Dwrite(v, s, 0, 0, hipBoundaryModeZero);" in out
    ctx = analyze(src.encode(), "t.cu", Options(apply_fixes=True))
    assert sorted((f.line, f.fixed) for f in ctx.findings if f.code == "HP331") == [(2, True), (4, False), (5, True)]
    assert converted(out) == out  # nothing left to drop


def test_a_pointer_ordered_against_zero_becomes_a_null_test():
    """OpenCV 4.6 stereobm.cu:285 `if (col_ssd_extra > 0)` on a pointer: nvcc accepts it,
    clang rejects it ('ordered comparison between pointer and zero')."""
    src = ("__global__ void k(volatile unsigned int *extra, int n, float *q) {\n"
           "  if (extra > 0) extra[0] = 1;\n  if (0 < q) q[0] = 2.f;\n  if (extra <= 0) return;\n"
           "  if (q < 0) return;\n  if (n > 0) q[1] = 0.f;\n  float *r = q; if (0 >= r) return;\n}\n")
    out = converted(src)
    for fixed in ("if (extra != 0)", "if (0 != q)", "if (extra == 0)", "if (0 == r)"):
        assert fixed in out
    assert "if (q < 0)" in out and "if (n > 0)" in out  # never true: reported only; not a pointer
    got = sorted((f.line, f.fixed) for f in analyze(src.encode(), "t.cu", Options(apply_fixes=True)).findings
                 if f.code == "HP340")
    assert got == [(2, True), (3, True), (4, True), (5, False), (7, True)]
    c_file = analyze(src.replace("__global__ ", "").encode(), "t.c", Options(apply_fixes=True))
    assert not [f for f in c_file.findings if f.code == "HP340"]  # C allows it (a warning)


def test_hp340s_first_test_keeps_every_comparison_with_a_0_operand():
    """HP340 returns at once unless its binary expression starts or ends with the byte
    ``0``: every binary expression of the fixtures and examples with an operand spelled
    ``0`` (the ones the rule reads further) passes that test."""
    from pathlib import Path

    from hipport.parse import parse, walk

    root = Path(__file__).resolve().parent.parent
    seen = 0
    for path in sorted(p for d in ("fixtures", "examples") for p in (root / d).rglob("*")
                       if p.suffix in (".cu", ".cuh", ".h", ".cpp")):
        src = path.read_bytes()
        for node in walk(parse(src).root_node):
            if node.type != "binary_expression":
                continue
            operands = [node.child_by_field_name(f) for f in ("left", "right")]
            if any(o is not None and o.type == "number_literal" and o.text == b"0" for o in operands):
                seen += 1
                assert src[node.end_byte - 1] == 0x30 or src[node.start_byte] == 0x30, (path, node.text)
    assert seen > 50
    src = "__global__ void k(int *p) {\n  if (p > /* c */ 0) p[0] = 1;\n  if (0 <\\\n p) p[0] = 1;\n}\n"
    assert [f.code for f in analyze(src.encode(), "t.cu", Options()).findings].count("HP340") == 2


def test_a_null_test_keeps_the_grouping_of_the_comparison_it_replaces():
    """``!=`` binds looser than ``>``: ``b == p > 0`` written ``b == p != 0`` would compare
    ``b`` with the pointer; ``p > 0 < x`` would become ``p != (0 < x)``."""
    src = ("__global__ void k(int *p, bool b, int x, int *a) {\n  if (b == p > 0) a[0] = 1;\n"
           "  if (p > 0 < x) a[1] = 1;\n  if (p > 0 && b) a[2] = 1;\n}\n")
    out = converted(src)
    assert "if (b == (p != 0))" in out and "if ((p != 0) < x)" in out and "if (p != 0 && b)" in out


def test_the_collapsed_overload_is_kept_for_cuda_only():
    src = ("#include <cuda.h>\ntemplate <int N>\nconst char* e(cudaError_t x) { return 0; }\n"
           "template <int N>\nconst char* e(CUresult x) {\n  return 0;\n}  // tail\n")
    assert converted(src).endswith(
        "template <int N>\nconst char* e(hipError_t x) { return 0; }\n#ifndef __HIP_PLATFORM_AMD__\n"
        "template <int N>\nconst char* e(hipError_t x) {\n  return 0;\n}\n#endif  // tail\n")


def test_a_collapsed_overload_sharing_its_line_is_only_reported():
    src = "int e(cudaError_t x) { return 0; }\nint e(CUresult x) { return 1; } int z;\n"
    assert converted(src).endswith("int e(hipError_t x) { return 1; } int z;\n")
    assert [code for _, code, _ in findings(src)] == ["HP120"]


INTRINSICS = ("__global__ void k(unsigned* a, float* f, double* d, long long* l) {\n"
              "  a[0] = umin(a[0], 100u) + umax(a[1], 3u) + ullmin(1ull, 2ull);\n"
              "  l[0] = llmin(l[0], 2ll) + llmax(l[1], 2ll);\n"
              "  f[0] = __fadd_rd(f[0], 1.0f) + __fmul_ru(f[0], 2.0f) + __fmaf_rz(f[0], 1.f, 2.f);\n"
              "  d[0] = __dadd_rz(d[0], 1.0) + __dsub_rd(d[0], 1.0) + __fma_ru(d[0], 1.0, 2.0);\n"
              "}\n")


def test_integer_min_max_and_directed_rounding_get_their_hip_spellings():
    out = converted(INTRINSICS)
    assert ("a[0] = ::min<unsigned int>(a[0], 100u) + ::max<unsigned int>(a[1], 3u) + "
            "::min<unsigned long long>(1ull, 2ull);") in out
    assert "l[0] = ::min<long long>(l[0], 2ll) + ::max<long long>(l[1], 2ll);" in out
    assert ("f[0] = __ocml_add_rtn_f32(f[0], 1.0f) + __ocml_mul_rtp_f32(f[0], 2.0f) + "
            "__ocml_fma_rtz_f32(f[0], 1.f, 2.f);") in out
    assert ("d[0] = __ocml_add_rtz_f64(d[0], 1.0) + __ocml_sub_rtn_f64(d[0], 1.0) + "
            "__ocml_fma_rtp_f64(d[0], 1.0, 2.0);") in out
    ctx = analyze(INTRINSICS.encode(), "t.cu", Options(apply_fixes=True))
    assert {f.code for f in ctx.findings if f.line > 1} == {"HP332"}  # HP101 superseded
    assert all(f.fixed for f in ctx.findings if f.code == "HP332")


def test_min_max_stay_where_the_code_may_run_on_the_host():
    src = "__host__ __device__ unsigned f(unsigned a) { return umin(a, 2u); }\nunsigned g(unsigned a) { return umax(a, 1u); }\n"
    assert converted(src).endswith(src)
    assert [(line, code) for line, code, _ in findings(src)] == [(1, "HP332"), (2, "HP332")]


def test_a_project_defining_umin_keeps_its_own():
    src = ("__device__ unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }\n"
           "__global__ void k(unsigned* a) { a[0] = umin(a[0], 1u); }\n")
    assert converted(src).endswith(src)


def test_rounded_division_has_a_route_not_a_fix():
    src = "__global__ void k(float* f) { f[0] = __fdiv_rd(f[0], 3.f) + __fsqrt_ru(f[1]); }\n"
    assert converted(src).endswith(src)
    found = findings(src)
    assert [code for _, code, _ in found] == ["HP332", "HP332"]
    assert all("not in HIP" in message for _, _, message in found)


def test_image_functions_are_reported_only_for_targets_without_image_support():
    src = "__global__ void k(cudaTextureObject_t t, float* o) { o[0] = tex1Dfetch<float>(t, 0); }\n"

    def hp330(*archs: str) -> list[str]:
        ctx = analyze(src.encode(), "t.cu", Options(offload_arch=archs))
        return [f.message for f in ctx.findings if f.code == "HP330"]

    assert hp330() == ["`tex1Dfetch` is unavailable on gfx942: HIP has no image support there"]
    assert hp330("gfx90a") == hp330("gfx1100") == []
    assert hp330("gfx90a", "gfx950") == ["`tex1Dfetch` is unavailable on gfx950: HIP has no image support there"]


def test_a_macro_pasting_a_cuda_prefix_is_reported_at_its_definition():
    src = ("#define RT(name) cuda##name\n#define CAT(a, b) a##b\n#define CU(x) x##cuda\n"
           "void f(void** p) { RT(Malloc)(p, 4); }\n")
    ctx = analyze(src.encode(), "t.cu", Options())
    assert [(f.line, f.code) for f in ctx.findings if f.code == "HP190"] == [(1, "HP190")]


def test_a_template_mask_is_reported_where_the_file_instantiates_it_narrow():
    src = ("template <typename T, typename Mask>\n__device__ T vote(Mask m, T p) { return __ballot_sync(m, p); }\n"
           "template <typename Mask>\nstruct W { Mask mask; __device__ int s(int v) { return __shfl_sync(mask, v, 0); } };\n"
           "__global__ void k(int* o) { o[0] = vote<int, unsigned long long>(~0ull, 1); W<uint32_t> w{0}; o[1] = w.s(1); }\n")
    found = [(line, message) for line, code, message in findings(src) if code == "HP217"]
    assert [line for line, _ in found] == [4]
    assert "`W<uint32_t>` (line 5)" in found[0][1]
    narrow = src.replace("vote<int, unsigned long long>", "vote<int, unsigned>")
    assert [line for line, code, _ in findings(narrow) if code == "HP217"] == [2, 4]


def test_the_string_header_is_added_for_7x_and_the_callback_macro_removed():
    src = ("#include <stdio.h>\n#include <cuda_runtime.h>\n"
           "void CUDART_CB cb(cudaStream_t s, cudaError_t e, void* p) { memset(p, 0, 4); strlen((char*)p); }\n")
    assert converted(src) == ("#include <stdio.h>\n#include <cstring>\n#include <hip/hip_runtime.h>\n"
                              "void cb(hipStream_t s, hipError_t e, void* p) { memset(p, 0, 4); strlen((char*)p); }\n")
    assert "<cstring>" not in converted(src, "6.3")
    assert "<cstring>" not in converted(src.replace("<stdio.h>", "<string.h>"))


def test_assert_gets_its_header_for_7x_and_a_c_file_the_c_headers():
    # cuda-samples simpleAssert_nvrtc's kernel: no include, assert from NVRTC or the runtime header
    kernel = 'extern "C" __global__ void testKernel(int N) {\n  assert(threadIdx.x < N);\n}\n'
    assert converted(kernel) == "#include <hip/hip_runtime.h>\n#include <cassert>\n" + kernel
    assert converted(kernel, "6.3") == "#include <hip/hip_runtime.h>\n" + kernel
    assert "<cassert>" not in converted("#include <assert.h>\n" + kernel)
    both = "#include <cuda_runtime.h>\nvoid f(char* b) { memset(b, 0, 4); assert(b); }\n"
    out, findings, _ = transform(both.encode(), "t.c", Options(apply_fixes=True))
    assert out.decode() == ("#include <hip/hip_runtime.h>\n#include <string.h>\n#include <assert.h>\n"
                            "void f(char* b) { memset(b, 0, 4); assert(b); }\n")
    again, findings_again, _ = transform(out, "t.c", Options(apply_fixes=True))
    assert again == out and not [f for f in findings_again if f.code == "HP334"]
    assert sorted(f.code for f in findings if f.code == "HP334") == ["HP334", "HP334"]
    assert any("hipRTC" in f.message for f in findings if "assert" in f.message)


def test_an_include_that_may_bring_the_header_along_makes_the_runtime_header_unsure():
    """Only standard and CUDA headers beside the runtime header make it the sure source:
    vLLM's kernels get assert through torch's headers, cuda-samples' through
    helper_functions.h (both compile on ROCm 7 without an include of their own)."""
    body = "__global__ void k(int n) { assert(n > 0); }\nvoid f(char* b) { memset(b, 0, 4); }\n"
    sure = "#include <cuda_runtime.h>\n#include <vector>\n#include <cuda_fp16.h>\n" + body
    assert "<cassert>" in converted(sure) and "<cstring>" in converted(sure)
    for other in ("#include <torch/all.h>\n", "#include <helper_functions.h>\n", '#include "kernel.cuh"\n'):
        unsure = sure.replace("#include <vector>\n", other)
        ctx = analyze(unsure.encode(), "t.cu", Options(rocm=parse_version("7.2.1")))
        assert "HP334" not in {f.code for f in ctx.findings}, other
        assert "<cassert>" not in converted(unsure) and "<cstring>" not in converted(unsure), other


def test_a_file_with_no_include_gets_the_string_header_on_the_first_run():
    """It went after the first include only, and the file had none until this run added
    hip_runtime.h: the next run added <cstring> after that (found by tools/fuzz.py)."""
    src = "__global__ void k() {}\nvoid f(char* b) { memset(b, 0, 4); }\n"
    once = converted(src)
    assert once == "#include <hip/hip_runtime.h>\n#include <cstring>\n" + src
    assert converted(once) == once
    plain = "void f(char* b) { memset(b, 0, 4); }\r\n"  # no HIP include to add: <cstring> alone
    assert converted(plain) == "#include <cstring>\r\n" + plain


def test_a_component_wise_vector_operator_is_kept_for_cuda_only():
    src = ("inline __host__ __device__ void operator*=(float2 &a, float2 b)\n{\n"
           "    a.x *= b.x;  // x\n    a.y *= b.y;\n}\n")
    head = "#include <hip/hip_runtime.h>\n"
    assert converted(src) == head + "#ifndef __HIP_PLATFORM_AMD__\n" + src[:-1] + "\n#endif\n"
    # the second conversion finds it in a branch a HIP build never compiles
    assert converted(converted(src)) == converted(src)


def test_a_vector_operator_that_computes_something_else_is_reported_not_changed():
    src = ("inline __device__ float3 operator*(float3 a, float3 b)\n"
           "{ return make_float3(a.y * b.z, a.z * b.x, a.x * b.y); }\n")
    assert converted(src) == "#include <hip/hip_runtime.h>\n" + src
    ctx = analyze(src.encode(), "t.cu", Options(rocm=parse_version("7.2.1")))
    assert [(f.code, f.fixed) for f in ctx.findings] == [("HP337", False)]


def test_struct_is_dropped_before_a_differently_tagged_hip_typedef():
    src = "struct cudaGraphicsResource *r;\nstruct cudaDeviceProp p;\n"
    assert converted(src) == ("#include <hip/hip_runtime.h>\n"
                              "hipGraphicsResource *r;\nstruct hipDeviceProp_t p;\n")


def _declared_type_by_walk(ctx, at, name, pointer):
    """The route ``declared_type`` replaced (a walk of the whole function per question),
    kept as its oracle: the last declaration the walk met, right to left."""
    from hipport.parse import enclosing_function
    from hipport.rules.released_headers.common import _type_of

    func = enclosing_function(at)
    found, stack = None, [func] if func is not None else []
    while stack:
        node = stack.pop()
        if node.start_byte >= at.start_byte and node.type != "function_definition":
            continue
        if node.type in ("declaration", "parameter_declaration"):
            found = _type_of(ctx, node, name, pointer) or found
        stack.extend(node.named_children)
    return found


_SHADOWING = """
__global__ void k(cudaTextureObject_t t, int n) {
  unsigned long long t2 = t;
  { float t; int n = 2; }
  void (*cb)(float* q, cudaTextureObject_t t) = 0;
  int* p, **pp, m;
  auto f = [](unsigned a) { return a; };
  x(t, n, t2, q, p, pp, m, a);
  unsigned n2; int t3;
}
"""


def test_declared_type_agrees_with_the_walk_it_replaced():
    """For every identifier in a function of the fixtures and examples: the same type (and
    the same None) as the old walk, with and without ``pointer``. (The walk was blind to
    scopes: where a block shadows a name they differ, pinned by the test below.)"""
    from pathlib import Path

    from hipport.parse import walk
    from hipport.rules.released_headers.common import declared_type

    root = Path(__file__).resolve().parent.parent
    sources = [p.read_bytes() for d in ("fixtures", "examples")
                                       for p in sorted((root / d).rglob("*.cu"))]
    asked = typed = 0
    for src in sources:
        ctx = analyze(src, "t.cu", Options())
        for node in walk(ctx.tree.root_node):
            if node.type != "identifier":
                continue
            name = ctx.text(node)
            for pointer in (False, True):
                expected = _declared_type_by_walk(ctx, node, name, pointer)
                assert declared_type(ctx, node, name, pointer) == expected, (name, node.start_point)
                asked += 1
                typed += expected is not None
    assert asked > 10_000 and typed > 1_000  # the corpus asks enough to mean something


def test_declared_type_sees_only_the_declarations_in_scope():
    """The innermost declaration whose scope holds the question wins; a block's, a
    function pointer's parameter and a lambda's are out of sight outside them."""
    from hipport.parse import walk
    from hipport.rules.released_headers.common import declared_type

    src = _SHADOWING + "__global__ void g(int *p) {\n  { int p = 1; y(p); }\n  z(p);\n}\n"
    ctx = analyze(src.encode(), "t.cu", Options())
    uses = [n for n in walk(ctx.tree.root_node) if n.type == "identifier"
            and n.parent is not None and n.parent.type == "argument_list"]
    got = [(ctx.text(n), declared_type(ctx, n, ctx.text(n), pointer=True)) for n in uses]
    assert got == [("t", "cudaTextureObject_t"), ("n", "int"), ("t2", "unsigned long long"),
                   ("q", None), ("p", "int*"), ("pp", "int**"), ("m", "int"), ("a", None),
                   ("p", "int"), ("p", "int*")]


def test_a_shadowed_name_is_not_rewritten_on_the_outer_declaration():
    """HP340 (``p > 0`` -> ``p != 0``) and HP126 (requestedHandleTypes for 6.x) rewrite on
    the declared type: an ``int p`` or another struct in an inner block is not the pointer
    or the CUmemAllocationProp of the function."""
    src = ("__global__ void k(int *a, int n) {\n  int *p = a;\n  if (p > 0) a[0] = 1;\n"
           "  { int p = n; if (p > 0) a[1] = 1; }\n}\n")
    out = converted(src)
    assert "if (p != 0) a[0] = 1;" in out and "{ int p = n; if (p > 0) a[1] = 1; }" in out
    src = ("#include <cuda.h>\nstruct Mine { int requestedHandleTypes; };\nvoid f() {\n"
           "  CUmemAllocationProp prop = {};\n  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;\n"
           "  { Mine prop; prop.requestedHandleTypes = 3; }\n}\n")
    out, _, _ = transform(src.encode(), "t.cpp", Options(rocm=parse_version("6.3"), apply_fixes=True))
    assert "  prop.requestedHandleType = " in out.decode()
    assert "{ Mine prop; prop.requestedHandleTypes = 3; }" in out.decode()


def test_a_member_of_an_object_of_another_declared_type_is_reported_not_left():
    """HP126 for 6.x: ``auto r = *pp`` or a typedef of the struct may be CUmemAllocationProp
    (reported, not fixed); a struct the file defines is the project's own (nothing)."""
    src = ("#include <cuda.h>\ntypedef CUmemAllocationProp Prop;\nstruct Mine { int requestedHandleTypes; };\n"
           "void f(CUmemAllocationProp *pp) {\n  Prop q = {};\n  q.requestedHandleTypes = 0;\n"
           "  auto r = *pp;\n  r.requestedHandleTypes = 0;\n  Mine m;\n  m.requestedHandleTypes = 3;\n}\n")
    ctx = analyze(src.encode(), "t.cpp", Options(rocm=parse_version("6.3"), apply_fixes=True))
    assert [(f.line, f.fixed) for f in ctx.findings if f.code == "HP126"] == [(6, False), (8, False)]


def test_register_is_kept_on_a_gnu_register_variable():
    """clang accepts ``register int x asm("r12")`` in C++17; without ``register`` it
    ignores the label ('ignored asm label on automatic variable')."""
    src = 'void f() {\n  register int x asm("r12") = 0;\n  register int y = 1;\n  (void)x; (void)y;\n}\n'
    out = converted(src)
    assert '  register int x asm("r12") = 0;\n  int y = 1;\n' in out


def test_register_outside_a_declaration_is_left():
    """A stray ``register`` ending a file (test_properties found it: junk after a comment)
    parses as an ERROR, not a declaration: no storage class to drop, the bytes stay."""
    src = b'// keep: cudaMalloc "x"\nregister'
    out, findings, _ = transform(src, "a.cpp", Options(apply_fixes=True))
    assert out == src and not [f for f in findings if f.code == "HP339"]


def test_register_is_dropped_in_cpp_and_kept_in_c():
    src = "void lu(float* a) {\n  register int i, j;\n  for (i = 0; i < 2; i++) a[i] = 0;\n  (void)j;\n}\n"
    assert "  int i, j;\n" in converted(src)
    out, findings, _ = transform(src.encode(), "t.c", Options(apply_fixes=True))
    assert out.decode() == src and not [f for f in findings if f.code == "HP339"]


def test_register_is_removed_from_a_cuda_free_header_a_cuda_unit_includes(tmp_path) -> None:
    """cuda-samples smokeParticles: ParticleSystem.h has no CUDA, so convert passed it over,
    yet particleSystem.cu includes it and the HIP build compiles it as C++17 ("ISO C++17 does
    not allow 'register'", unpredicted); so is a `throw(int)` there (HP341). A header only a branch the HIP build never compiles
    includes, or that no CUDA file includes, is left as it is, with no finding; so is a GNU
    register variable. ``scan`` reports what ``convert`` fixes."""
    from hipport.convert import convert, plan
    from hipport.pipeline import scan_paths

    src = tmp_path / "src"
    (src / "util").mkdir(parents=True)
    (src / "ParticleSystem.h").write_text(
        '#pragma once\n#include "util/inner.h"\n'
        "inline float clampf(float v) {\n  register float r = v < 0 ? 0 : v;\n  return r;\n}\n")
    (src / "util" / "inner.h").write_text("inline int twice(int v) { register int r = 2 * v; return r; }\n"
                                          'inline void pin() { register int sp asm("sp"); (void)sp; }\n')
    (src / "cuda_only.h").write_text("inline int once(int v) { register int r = v; return r; }\n")
    (src / "alone.h").write_text("inline int alone(int v) { register int r = v; return r; }\n")
    (src / "Buffer.h").write_text("struct Buffer { Buffer(int n) throw(int) {} int f() const throw() { return 0; } };\n")
    (src / "particles.cu").write_text(
        '#include "ParticleSystem.h"\n#include "Buffer.h"\n#ifndef __HIP_PLATFORM_AMD__\n#include "cuda_only.h"\n#endif\n'
        "__global__ void k(float *p) { p[threadIdx.x] = clampf(p[threadIdx.x]); }\n")
    out = tmp_path / "out"
    the_plan = plan([src], str(out), in_place=False, diff=False)
    results = {Path(r.path).name: r for r in convert(the_plan, Options(apply_fixes=True), emit=lambda _: None)}
    assert "register" not in (out / "ParticleSystem.h").read_text()
    assert (out / "util" / "inner.h").read_text() == (
        "inline int twice(int v) { int r = 2 * v; return r; }\n"
        'inline void pin() { register int sp asm("sp"); (void)sp; }\n')
    assert (out / "Buffer.h").read_text() == "struct Buffer { Buffer(int n) {} int f() const throw() { return 0; } };\n"
    for name in ("cuda_only.h", "alone.h"):
        assert (out / name).read_bytes() == (src / name).read_bytes()
        assert results[name].findings == []
    assert [(f.line, f.code, f.fixed) for f in results["ParticleSystem.h"].findings] == [(4, "HP339", True)]
    scanned = {Path(r.path).name: [(f.line, f.code) for f in r.findings] for r in scan_paths([src], Options())}
    assert scanned["inner.h"] == [(1, "HP339")] and scanned["alone.h"] == [] and scanned["cuda_only.h"] == []


def test_a_cuda_free_header_found_through_an_include_dir_is_reached(tmp_path) -> None:
    """A CUDA unit's ``#include "inner.h"`` that the build finds through its ``-I`` (DeepSpeed's
    csrc/includes layout): the header is compiled as C++17 by the HIP build, so HP339 runs on
    it. A header of the same name beside the includer is the one the compiler takes: the
    -I one is then not reached."""
    from hipport.pipeline import scan_paths

    (tmp_path / "inc").mkdir()
    (tmp_path / "csrc").mkdir()
    (tmp_path / "inc" / "inner.h").write_text("inline int twice(int v) { register int r = 2 * v; return r; }\n")
    (tmp_path / "csrc" / "k.cu").write_text('#include "inner.h"\n__global__ void k(int *p) { p[0] = twice(1); }\n')

    def found(options: Options) -> list:
        return [(Path(r.path).name, f.line, f.code) for r in scan_paths([tmp_path], options) for f in r.findings
                if f.code == "HP339"]

    assert found(Options(include_dirs=(tmp_path / "inc",))) == [("inner.h", 1, "HP339")]
    assert found(Options()) == []  # not found beside k.cu: the compiler's search, unknown
    (tmp_path / "csrc" / "inner.h").write_text("inline int twice(int v) { return 2 * v; }\n")
    assert found(Options(include_dirs=(tmp_path / "inc",))) == []


def test_an_included_header_whose_rules_fail_is_an_error_as_a_source_is(tmp_path, monkeypatch) -> None:
    """The held header's pass and ``process`` share one transform step (pipeline._transformed):
    a rewriter conflict or an exceeded parse budget there is that header's error, in the words
    a source's would have, and the other files are still converted."""
    from hipport import pipeline
    from hipport.edits import EditConflict
    from hipport.parse import ParseBudgetExceeded

    (tmp_path / "inner.h").write_text("inline int twice(int v) { register int r = 2 * v; return r; }\n")
    (tmp_path / "k.cu").write_text('#include "inner.h"\n__global__ void k(int *p) { p[0] = twice(1); }\n')
    real = pipeline._transform
    for raised, error in ((EditConflict("two edits"), "internal: two edits"),
                          (ParseBudgetExceeded("over the budget"), "over the budget")):
        def failing(data, path, options, raised=raised):
            if path.endswith(".h"):
                raise raised
            return real(data, path, options)

        monkeypatch.setattr(pipeline, "_transform", failing)
        results = {Path(r.path).name: r for r in pipeline.scan_paths([tmp_path], Options())}
        assert (results["inner.h"].status, results["inner.h"].error) == ("error", error)
        assert results["k.cu"].error is None and results["k.cu"].parsed


def test_cache_hint_loads_become_ldg():
    src = "__global__ void k(const float* p, float* o) { o[0] = __ldcs(p) + __ldcg(p + 1) + __ldca(&p[2]); }\n"
    assert "o[0] = __ldg(p) + __ldg(p + 1) + __ldg(&p[2]);" in converted(src)
    assert [code for _, code, _ in findings(src)] == ["HP332"] * 3


def test_float_sincos_is_respelled_only_on_float_outputs():
    src = ("#define REAL float\n__global__ void k(float* o, double* d) {\n"
           "  float s, c; double ds, dc; REAL rs, rc;\n"
           "  sincos(o[0], &s, &c);\n  sincos(d[0], &ds, &dc);\n  sincos(o[1], &rs, &rc);\n"
           "  sincospi(d[1], o, o);\n  sincos(o[2], o + 1, o + 2);\n}\n"
           "void host(float a) { float s, c; sincos(a, &s, &c); sincospi(a, &s, &c); }\n")
    out = converted(src)
    assert "  sincosf(o[0], &s, &c);\n  sincos(d[0], &ds, &dc);\n  sincos(o[1], &rs, &rc);\n" in out
    assert "  sincospif(d[1], o, o);\n  sincos(o[2], o + 1, o + 2);\n" in out
    # glibc has sincosf on the host, and no sincospif
    assert "void host(float a) { float s, c; sincosf(a, &s, &c); sincospi(a, &s, &c); }" in out
    found = findings(src)
    assert [(line, code) for line, code, _ in found] == [(4, "HP332"), (6, "HP332"), (7, "HP332"),
                                                          (10, "HP332"), (10, "HP332")]
    assert "where `REAL` is float" in found[1][2]
    assert "device-only" in found[4][2]


def stand_ins(src: str, path: str = "stubs.h") -> list[int]:
    ctx = analyze(src.encode(), path, Options())
    return [f.line for f in ctx.findings if f.code == "HP342"]


def test_a_stand_in_is_reported_at_each_definition_of_a_cuda_type():
    src = ("#pragma once\ntypedef float cudaStream_t;\ntypedef int dim3;\n"
           "typedef struct { float x, y; } float2;\nstruct uchar4 { unsigned char x, y, z, w; };\n"
           "extern \"C\" { typedef struct { int x, y; } int2; }\n")
    assert stand_ins(src) == [3, 4, 5, 6]


def test_a_stand_in_the_project_keeps_apart_from_hip_or_scopes_is_not_reported():
    src = ("#pragma once\ntypedef float cudaStream_t;\n#ifndef __HIP_PLATFORM_AMD__\ntypedef int dim3;\n#endif\n"
           "namespace cpu { struct float2 { float x, y; }; }\n"
           "void f() { struct int2 { int a, b; } v; (void)v; }\ntypedef float2 vec2;\n")
    assert stand_ins(src) == []


def test_sincos_in_the_double_branch_of_a_precision_switch_is_not_reported():
    # relion 3.1's cuda_device_utils.cuh:122: XFLOAT is double where sincos is called
    src = ("__global__ void k(float* o) {\n  XFLOAT s, c;\n#ifdef ACC_DOUBLE_PRECISION\n"
           "  sincos(o[0], &s, &c);\n#else\n  sincosf(o[0], &s, &c);\n#endif\n"
           "#if A\n  sincos(o[1], &s, &c);\n#endif\n}\n")
    assert [(line, code) for line, code, _ in findings(src)] == [(9, "HP332")]


def test_a_stand_in_under_a_test_of_another_macro_that_starts_like_a_hip_one_is_reported():
    """``_apart_from_hip`` matches the HIP macros as whole words: ``#ifndef USE_ROCM_SMI`` (a
    project's own option) does not keep a ``dim3`` apart from HIP's headers, which the HIP
    build compiles it beside; ``#ifndef USE_ROCM`` does."""
    body = "#pragma once\n#ifndef {}\ntypedef int dim3;\n#endif\n"
    assert stand_ins(body.format("USE_ROCM_SMI")) == [3]
    assert stand_ins(body.format("MY__HIPCC__X")) == [3]
    assert stand_ins(body.format("USE_ROCM")) == []


def test_grid_constant_is_dropped_from_kernel_parameters():
    """cuda-samples LargeKernelParameter: `__grid_constant__ const param_t p` was 'unknown
    type name' against the 6.2 and 7.1 headers, unpredicted (HP343 now, fixed)."""
    src = ("struct P { int a[4]; };\n"
           "__global__ void k(__grid_constant__ const P p, int* out) { *out = p.a[0]; }\n"
           "__global__ void k2(const __grid_constant__ P p) {}\n")
    for rocm in ("6.3", "7.2.1"):
        out, findings, _ = transform(src.encode(), "t.cu", Options(rocm=parse_version(rocm), apply_fixes=True))
        assert out.decode().splitlines()[-2:] == [
            "__global__ void k(const P p, int* out) { *out = p.a[0]; }", "__global__ void k2(const P p) {}"]
        assert [(f.code, f.line) for f in findings if f.code == "HP343"] == [("HP343", 2), ("HP343", 3)]


def test_a_headers_assert_is_its_includers_when_they_bring_assert_first(tmp_path: Path):
    """DeepSpeed 0.19.8's cuda_linear/include/ptx_cp.async.cuh (inference_core_ops, built for
    ROCm) includes only CUDA headers and calls assert; scanned alone that is HP334. Its one
    includer utils_gmem.cuh includes <assert.h> just before it, so the build declares
    assert: no finding. An includer with nothing before it keeps the finding, unless that
    includer is a header whose own includers bring it first (a .cu including
    <torch/extension.h> before it)."""
    from hipport.pipeline import collect, scan_paths

    (tmp_path / "cp.cuh").write_text("#pragma once\n#include <cuda_runtime.h>\n"
                                     "__device__ void wait() {\n  assert(false);\n}\n")

    def asserts() -> list[tuple[str, int]]:
        opts = Options(jobs=1)
        return sorted((Path(f.path).name, f.line) for f in collect(scan_paths([tmp_path], opts), opts, "scan").findings
                      if f.code == "HP334")

    assert asserts() == [("cp.cuh", 4)]  # no includer: judged alone
    (tmp_path / "gmem.cuh").write_text('#pragma once\n#include <assert.h>\n#include "cp.cuh"\n')
    assert asserts() == []
    (tmp_path / "gmem.cuh").write_text('#pragma once\n#include "cp.cuh"\n#include <assert.h>\n')
    assert asserts() == [("cp.cuh", 4)]  # <assert.h> after it: too late
    (tmp_path / "kernel.cu").write_text('#include <torch/extension.h>\n#include "gmem.cuh"\n')
    assert asserts() == []
    (tmp_path / "other.cu").write_text('#include <cuda_fp16.h>\n#include "gmem.cuh"\n')
    assert asserts() == [("cp.cuh", 4)]  # a CUDA header brings no assert


def test_an_include_the_hip_build_never_compiles_brings_no_assert_along(tmp_path: Path):
    """``host.brought_by_includers`` read an includer's includes with a regex over its bytes,
    so a ``// #include <assert.h>`` and an ``#include <assert.h>`` under ``#ifndef
    USE_ROCM`` (a ported project's CUDA-only branch) counted as bringing assert first, and
    the header's true HP334 (its HIP build declares no assert) was dropped."""
    from hipport.pipeline import collect, scan_paths

    (tmp_path / "cp.cuh").write_text("#pragma once\n#include <cuda_runtime.h>\n"
                                     "__device__ void wait() {\n  assert(false);\n}\n")

    def asserts(includer: str) -> list[tuple[str, int]]:
        (tmp_path / "gmem.cuh").write_text(includer)
        opts = Options(jobs=1)
        return sorted((Path(f.path).name, f.line) for f in collect(scan_paths([tmp_path], opts), opts, "scan").findings
                      if f.code == "HP334")

    assert asserts('#pragma once\n#ifndef USE_ROCM\n#include <assert.h>\n#endif\n#include "cp.cuh"\n') == [("cp.cuh", 4)]
    assert asserts('#pragma once\n// #include <assert.h>\n#include "cp.cuh"\n') == [("cp.cuh", 4)]
    assert asserts('#pragma once\n#ifdef USE_ROCM\n#include <assert.h>\n#endif\n#include "cp.cuh"\n') == []
    assert asserts('#pragma once\n#ifdef MAYBE\n#include <assert.h>\n#endif\n#include "cp.cuh"\n') == []
