"""The compile tier for the fixes learnt from the released headers: each rewrite that makes
a CUDA construct compile (mask macros and variables widened, integer min/max and
directed-rounding intrinsics respelled) is converted for each target and checked against
that target's HIP headers, where it must compile with no error at all.

The CUDA side of each case did not compile before its fix (the errors it gave are in the
comments); the rule tests (test_rules_warp.py, test_rules_released_headers.py) show when
each fix is, and is not, applied.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from test_rules_warp import SCAN_MASKS

from hipport import verify as V
from hipport import verify_units as U
from hipport.convert import convert, plan
from hipport.options import Options
from hipport.report.verify import render
from hipport.versions import Version, parse_version

pytestmark = pytest.mark.compile

CASES = {
    # "The mask must be a 64-bit integer" at both calls, through the macro.
    "mask_macro.cu": """#include <cuda_runtime.h>
#define FULL_MASK 0xffffffff
__device__ float warp_sum(float v) {
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(FULL_MASK, v, o);
  return v;
}
__global__ void k(float* out, const float* in) {
  unsigned mask = __ballot_sync(FULL_MASK, in[threadIdx.x] > 0.f);
  float v = __shfl_sync(mask, in[threadIdx.x], 0);
  out[threadIdx.x] = warp_sum(v);
}
""",
    # The same static_assert, through an `unsigned` holding __activemask().
    "mask_variable.cu": """#include <cuda_runtime.h>
__device__ int scan(int v) {
  unsigned active = __activemask();
  for (int d = 1; d < warpSize; d <<= 1) {
    int t = __shfl_up_sync(active, v, d);
    if ((threadIdx.x % warpSize) >= d) v += t;
  }
  active = __ballot_sync(active, v > 0);
  return __shfl_sync(active, v, 0);
}
__global__ void k(int* data) { data[threadIdx.x] = scan(data[threadIdx.x]); }
""",
    # HIP 7: "no matching function for call to 'memset'"; both: CUDART_CB does not parse.
    "host_runtime.cu": """#include <stdio.h>
#include <cuda_runtime.h>
void CUDART_CB done(cudaStream_t s, cudaError_t status, void *data) { printf("%d\\n", (int)status); }
int main() {
  char buf[16];
  memset(buf, 0, sizeof buf);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaStreamAddCallback(s, done, buf, 0);
  return (int)strlen(buf);
}
""",
    # "use of undeclared identifier" for each name.
    "intrinsics.cu": """#include <cuda_runtime.h>
__global__ void k(unsigned* a, float* f, double* d, long long* l, unsigned long long* u, int* s) {
  int i = threadIdx.x;
  a[i] = umin(a[i], 100u) + umax(a[i], s[i]);
  l[i] = llmin(l[i], 2) + llmax(l[i], s[i]);
  u[i] = ullmin(u[i], 2u) + ullmax(u[i], a[i]);
  f[i] = __fadd_rd(f[i], 1.0f) + __fsub_ru(f[i], 2.0f) + __fmul_rz(f[i], 3.0f) + __fmaf_rd(f[i], 1.f, 2.f);
  d[i] = __dadd_ru(d[i], 1.0) + __dsub_rz(d[i], 1.0) + __dmul_rd(d[i], 2.0) + __fma_rz(d[i], 1.0, 2.0);
}
""",
    # The CUDA samples' helper_cuda_drvapi.h defines its checker only after cuda.h (its
    # include guard): "use of undeclared identifier 'checkCudaErrors'" at every call.
    "driver_guard.cpp": """#include <stdio.h>
#include <cuda.h>
#ifdef __cuda_cuda_h__
#define checkCudaErrors(err) check_((err), __LINE__)
inline void check_(CUresult err, int line) {
  if (err != CUDA_SUCCESS) printf("error %d at line %d\\n", (int)err, line);
}
#endif
int main() {
  checkCudaErrors(cuInit(0));
  CUdevice dev;
  checkCudaErrors(cuDeviceGet(&dev, 0));
  return 0;
}
""",
    # The CUDA samples' helper_cuda.h defines its curandStatus_t overload only after
    # curand.h (its include guard): "use of undeclared identifier 'status_name'".
    "rand_guard.cpp": """#include <stdio.h>
#include <curand.h>
#ifdef CURAND_H_
static const char *status_name(curandStatus_t s) { return s == CURAND_STATUS_SUCCESS ? "ok" : "error"; }
#endif
int main() {
  curandGenerator_t gen;
  printf("%s\\n", status_name(curandCreateGeneratorHost(&gen, CURAND_RNG_PSEUDO_DEFAULT)));
  return 0;
}
""",
    # "use of overloaded operator '+=' is ambiguous" (helper_math.h's operators against
    # HIP_vector_type's); "typedef 'hipGraphicsResource' cannot be referenced with the
    # 'struct' specifier"; "use of undeclared identifier 'cudaGraphicsMapFlagsWriteDiscard'".
    "vector_struct.cu": """#include <cuda_runtime.h>
#include <cuda_gl_interop.h>
inline __host__ __device__ void operator+=(float4 &a, float4 b)
{
    a.x += b.x;
    a.y += b.y;
    a.z += b.z;
    a.w += b.w;
}
inline __host__ __device__ float2 operator/(float2 a, float2 b)
{
    return make_float2(a.x / b.x, a.y / b.y);
}
__global__ void k(float4 *p, float2 *q) { p[0] += p[1]; q[0] = q[0] / q[1]; }
struct cudaGraphicsResource *pbo;
void map(struct cudaGraphicsResource **r) { cudaGraphicsMapResources(1, r, 0); }
void reg(unsigned buffer) { cudaGraphicsGLRegisterBuffer(&pbo, buffer, cudaGraphicsMapFlagsWriteDiscard); }
""",
    # "arithmetic on a pointer to void" (CUdeviceptr is an integer, hipDeviceptr_t a void*).
    "device_pointer.cpp": """#include <cuda.h>
CUresult map(CUdeviceptr *dptr, CUdeviceptr d_ptr, size_t chunk, int i, CUmemGenericAllocationHandle h) {
  cuMemMap(*dptr + (chunk * i), chunk, 0, h, 0);
  CUdeviceptr next = d_ptr + chunk;
  return cuMemMap(next - chunk, chunk, 0, h, 0);
}
""",
    # cuda-samples shfl_scan.cu:77/100: two locals named `mask` (one a computed subset);
    # "The mask must be a 64-bit integer" at both calls.
    "mask_blocks.cu": "#include <cuda_runtime.h>\n" + SCAN_MASKS,
    # OpenCV 4.6 stereobm.cu:285: "ordered comparison between pointer and zero".
    "pointer_zero.cu": """#include <cuda_runtime.h>
__global__ void k(volatile unsigned int *extra, float *q, bool b) {
  if (extra > 0) extra[0] = 1;
  if (0 < q) q[0] = 2.f;
  if (b == q > 0) q[1] = 3.f;  // written 'b == q != 0': 'comparison between pointer and integer'
}
""",
    # A file that tells the compilers apart (Eigen 3.4's Macros.h): with __CUDACC__
    # rewritten to __HIPCC__, "redefinition of 'fast_exp'" (both branches compiled).
    "compiler_apart.cu": """#include <cuda_runtime.h>
#if defined(__CUDACC__)
#define MY_CUDACC __CUDACC__
#endif
#if defined(__HIPCC__)
#define MY_HIPCC __HIPCC__
#endif
#if defined(MY_CUDACC)
__device__ inline float fast_exp(float x) { return __expf(x); }
#endif
#if defined(MY_HIPCC)
__device__ inline float fast_exp(float x) { return __expf(x); }
#endif
__global__ void k(float* p) { p[threadIdx.x] = fast_exp(p[threadIdx.x]); }
""",
    # A file that tests __HIPCC__ only to pick its runtime header, and __CUDACC__ for what
    # the HIP build needs too: with __CUDACC__ kept, "reference to __host__ function 'sq' in
    # __global__ function" (HD empty under HIP).
    "header_picker.cu": """#ifdef __HIPCC__
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif
#ifdef __CUDACC__
#define HD __host__ __device__
#else
#define HD
#endif
HD inline float sq(float x) { return x * x; }
__global__ void k(float *p) { p[threadIdx.x] = sq(p[threadIdx.x]); }
""",
    # The HIP build's own branches (an #elif chain, a macro defined under both): kept, and
    # the HIP arm is the one compiled (rewritten, LANES would be 32 and the assert fail).
    "compilers_chain.cu": """#include <cuda_runtime.h>
#if defined(__CUDACC__)
#define LANES 32
#elif defined(__HIPCC__)
#define LANES 64
#endif
#ifdef __HIPCC__
#define GPU_INLINE __device__ __forceinline__
#endif
#ifdef __CUDACC__
#define GPU_INLINE __device__ __forceinline__ __attribute__((unused))
#endif
static_assert(LANES == 64, "the HIP arm");
GPU_INLINE int lanes() { return LANES; }
__global__ void k(int *p) { p[threadIdx.x] = lanes(); }
""",
    # HIP 6.2: "no member named 'requestedHandleTypes' in 'hipMemAllocationProp'".
    "alloc_prop.cpp": """#include <cuda.h>
size_t granularity(int dev) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t g = 0;
  cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  return g;
}
""",
    # HIP 7: "use of undeclared identifier 'assert'" (cuda-samples simpleAssert_nvrtc's
    # kernel, which relied on NVRTC or the runtime header for it).
    "assert_kernel.cu": """extern "C" __global__ void testKernel(int N) {
  int gtid = blockIdx.x * blockDim.x + threadIdx.x;
  assert(gtid < N);
}
""",
    # Both: "ISO C++17 does not allow 'register' storage class specifier".
    "register.cpp": """#include <cuda_runtime.h>
void scale(float *a, int n) {
  register int i;
  for (i = 0; i < n; i++) a[i] *= 2.0f;
}
""",
    # Both: "no matching function for call to 'isnan'" (HIP declares it for device code).
    "host_math.cu": """#include <cuda_runtime.h>
#include <cmath>
__global__ void k(float *p) { if (isnan(p[threadIdx.x])) p[threadIdx.x] = 0.f; }
bool bad(double err) { return isnan(err) || isinf(err) || !isfinite(err); }
""",
    # Both: "ISO C++17 does not allow dynamic exception specifications".
    "throw_spec.cu": """#include <cuda_runtime.h>
#include <new>
#include <stdexcept>
struct Device {
  explicit Device(int id) throw(std::runtime_error) : id_(id) {}
  float *alloc(size_t n) const throw(std::bad_alloc, std::runtime_error) {
    float *p = nullptr;
    if (cudaMalloc(&p, n) != cudaSuccess) throw std::bad_alloc();
    return p;
  }
  const char *name() const throw() { return "gpu"; }
  int id_;
};
""",
    # "no matching function for call to 'hipMalloc3DArray'" (its flags have no default).
    "array3d.cu": """#include <cuda_runtime.h>
cudaArray_t alloc(cudaExtent e) {
  cudaArray_t a;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<unsigned char>();
  cudaMalloc3DArray(&a, &desc, e);
  return a;
}
""",
    # "no matching function for call to '__ldcs'" (HIP declares the cache-hint loads for
    # __half/__half2 only) and "... to 'sincos'" (clang's HIP math header has the double
    # overload only): relion 3.1's helper.cu:581, XFLOAT being float.
    "loads_sincos.cu": """#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(const float* in, float* out, const float4* v, const __half* h) {
  int t = threadIdx.x;
  float s, c;
  sincos(in[t], &s, &c);
  sincospi(in[t], &s, &c);
  out[t] = __ldcs(in + t) + __ldcg(&in[t]) + __ldca(in) + __ldcs(v).x + __half2float(__ldcs(h)) + s + c;
}
""",
}


#: Cases that need image instructions (surfaces, textures): checked for gfx90a, which has them.
IMAGE_CASES = {
    # cuda-samples simpleSurfaceWrite.cu:83: "no matching function for call to 'surf2Dwrite'".
    "surface_mode.cu": """#include <cuda_runtime.h>
__global__ void k(float *g, int width, cudaSurfaceObject_t s) {
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  surf2Dwrite(g[y * width + x], s, x * 4, y,
              cudaBoundaryModeTrap);
}
""",
}


def _compiler_or_skip(target):
    """The compiler verify picks for TARGET; the test is skipped without one, except in CI,
    where the compile tier must run."""
    try:
        return V.select(target)
    except V.NoCompiler as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {e}: the compile tier must run in CI")
        pytest.skip(str(e))


def _converted_and_verified(src: Path, out: Path, target: Version, arch: str,
                            compiler: V.Compiler) -> tuple[list[U.Unit], V.Verification]:
    """``src`` converted into ``out`` for ``target`` and ``arch`` (fixes applied, as
    ``convert --verify`` does), and verify's result on the converted units."""
    the_plan = plan([src], str(out), in_place=False, diff=False)
    units: list[U.Unit] = []
    options = Options(apply_fixes=True, rocm=target, offload_arch=(arch,))
    for _ in U.units_from_convert(the_plan, convert(the_plan, options, emit=lambda _: None), units):
        pass
    return units, V.verify(units, compiler=compiler, target=target, arch=arch, includes=U.include_roots(the_plan))


@pytest.mark.parametrize("rocm", ["7.2.1", "6.3"])
@pytest.mark.parametrize("arch", ["gfx942", "gfx90a"])
def test_the_fixed_constructs_compile_against_the_targets_headers(rocm, arch, tmp_path):
    cases = CASES if arch == "gfx942" else IMAGE_CASES
    target = parse_version(rocm)
    compiler = _compiler_or_skip(target)
    src = tmp_path / "cuda"
    src.mkdir()
    for name, text in cases.items():
        (src / name).write_text(text)
    units, result = _converted_and_verified(src, tmp_path / "hip", target, arch, compiler)
    assert sorted(u.path.name for u in units) == sorted(cases)
    assert result.verdicts == [] and not result.failed(), render(result)
    assert all(f.fixed for u in units for f in u.findings
               if f.code in ("HP201", "HP202", "HP217", "HP331", "HP332", "HP334", "HP335", "HP122", "HP123", "HP124", "HP126", "HP337", "HP339", "HP340", "HP341")), [f for u in units for f in u.findings]


@pytest.mark.parametrize("rocm", ["7.2.1", "6.3"])
def test_a_cuda_free_header_a_unit_includes_compiles_against_the_targets_headers(rocm, tmp_path):
    """cuda-samples smokeParticles' ParticleSystem.h: plain C++ with `register`, included by a
    .cu, so compiled as C++17 by the HIP build ("ISO C++17 does not allow 'register' storage
    class specifier" in the header, unpredicted before HP339 reached it); Buffer.h's
    `throw(std::bad_alloc)` the same ("dynamic exception specifications", HP341)."""
    target = parse_version(rocm)
    compiler = _compiler_or_skip(target)
    src = tmp_path / "cuda"
    src.mkdir()
    (src / "ParticleSystem.h").write_text(
        "#pragma once\ninline float clampf(float v, float lo, float hi) {\n"
        "  register float r = v < lo ? lo : v;\n  return r > hi ? hi : r;\n}\n")
    (src / "particles.cu").write_text(
        '#include <cuda_runtime.h>\n#include "ParticleSystem.h"\n'
        "__global__ void k(float *p) { p[threadIdx.x] *= 2.0f; }\n"
        "int main() { return (int)clampf(2.0f, 0.0f, 1.0f); }\n")
    (src / "particles.cu").write_text('#include "Buffer.h"\n' + (src / "particles.cu").read_text())
    (src / "Buffer.h").write_text("#pragma once\n#include <new>\n#include <vector>\nstruct Buffer {\n"
                                  "  explicit Buffer(size_t n) throw(std::bad_alloc) : v(n) {}\n"
                                  "  std::vector<float> v;\n};\n")
    _, result = _converted_and_verified(src, tmp_path / "hip", target, "gfx942", compiler)
    assert result.verdicts == [] and not result.failed(), render(result)


@pytest.mark.parametrize("rocm", ["7.2.1", "6.3"])
def test_a_projects_stand_in_for_cuda_types_is_predicted(rocm, tmp_path):
    """ffmpeg 5.1's compat/cuda/cuda_runtime.h and relion 3.1's CPU stubs define CUDA's own
    vector types and dim3; a unit that also includes HIP's headers fails at each definition
    ("definition of type 'uchar2' conflicts with type alias of the same name", "typedef
    redefinition with different types"), and each error is HP342's, at the defining line
    (19 unpredicted in ffmpeg before it)."""
    target = parse_version(rocm)
    compiler = _compiler_or_skip(target)
    src = tmp_path / "cuda"
    src.mkdir()
    (src / "stubs.h").write_text("#pragma once\ntypedef int dim3;\n"
                                 "typedef struct { float x, y; } float2;\n"
                                 "typedef struct uchar2 { unsigned char x, y; } uchar2;\n"
                                 "typedef float cudaStream_t;\n")
    (src / "k.cu").write_text('#include "stubs.h"\n__global__ void k(float2* p) { p[threadIdx.x].x = 1.f; }\n'
                              "int main() { float2* p; cudaMalloc(&p, 4); return 0; }\n")
    _, result = _converted_and_verified(src, tmp_path / "hip", target, "gfx942", compiler)
    at = {(v.path.name, v.line) for v in result.verdicts}
    assert {("stubs.h", 2), ("stubs.h", 3), ("stubs.h", 4)} <= at, render(result)
    assert all(v.kind == V.PREDICTED for v in result.verdicts), render(result)
    assert {f.code for v in result.verdicts for f in v.findings} == {"HP342"}, render(result)
