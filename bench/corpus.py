"""A deterministic CUDA corpus for the benchmark: realistic, varied, and large.

Each file is assembled from blocks that look like real CUDA projects (host API calls,
cuBLAS/cuRAND/cuFFT, kernels with warp reductions and shuffles, templates, launches,
macros, comments, ``#if`` branches, plain C++ helpers) plus the repository's own
fixtures with their function names made unique, so the rules meet the code they were
written for. About one file in ten is plain C++ that the byte pre-filter must skip.
Same seed, same bytes: runs are comparable across commits.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

FIXTURE_DIRS = ("fixtures/convert", "fixtures/rules/warp", "fixtures/rules/device",
                "fixtures/rules/libraries")

HEADER = """\
// {p}: part of a generated benchmark project. Licensed under the Apache License 2.0.
// Comments mention cudaMalloc and <<<grid, block>>> but must stay as written.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
{extra_includes}
"""

EXTRA_INCLUDES = ("#include <cublas_v2.h>", "#include <curand.h>", "#include <cufft.h>",
                  "#include <cooperative_groups.h>", "#include <cub/cub.cuh>",
                  "#include <cuda_fp16.h>", "#include <curand_kernel.h>")

CHECK_MACRO = """\
#define CHECK_{P}(call)                                                   \\
  do {{                                                                   \\
    cudaError_t err_ = (call);                                            \\
    if (err_ != cudaSuccess) {{                                           \\
      fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__,                 \\
              cudaGetErrorString(err_));                                  \\
      exit(1);                                                            \\
    }}                                                                    \\
  }} while (0)
#define LAUNCH_{P}(k, n, s, ...) k<<<((n) + 255) / 256, 256, 0, s>>>(__VA_ARGS__)
"""

WARP_REDUCE = """\
template <typename T>
__device__ __forceinline__ T warp_sum_{p}(T v) {{
  // Shuffle ladder: assumes 32 lanes.
  for (int offset = 16; offset > 0; offset >>= 1) {{
    v += __shfl_down_sync(0xffffffff, v, offset);
  }}
  return v;
}}

template <typename T, int BLOCK>
__global__ void block_reduce_{p}(const T* __restrict__ in, T* out, int n) {{
  __shared__ T partial[32];
  int lane = threadIdx.x % 32;
  int wid = threadIdx.x / 32;
  T acc = T(0);
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x) {{
    acc += in[i];
  }}
  acc = warp_sum_{p}(acc);
  if (lane == 0) partial[wid] = acc;
  __syncthreads();
  acc = (threadIdx.x < BLOCK / 32) ? partial[lane] : T(0);
  if (wid == 0) acc = warp_sum_{p}(acc);
  if (threadIdx.x == 0) atomicAdd(out, acc);
}}
"""

BALLOT = """\
__global__ void count_positive_{p}(const float* x, int* count, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned mask = __ballot_sync(0xffffffffu, i < n && x[i] > 0.0f);
  unsigned active = __activemask();
  if ((threadIdx.x & 31) == 0) {{
    atomicAdd(count, __popc(mask & active));
  }}
  float y = __shfl_xor_sync(0xffffffff, i < n ? x[i] : 0.0f, 1);
  if (__any_sync(0xffffffff, y < 0.0f)) __syncwarp();
}}
"""

ELEMENTWISE = """\
__global__ void {name}(const float* a, const float* b, float* c, int n, float alpha) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {{
    float x = a[i] * alpha + b[i];
    c[i] = x > 0.0f ? x : {leak}f * x;
  }}
}}
"""

HOST = """\
void run_{name}(const std::vector<float>& ha, std::vector<float>& hc, cudaStream_t stream) {{
  const int n = static_cast<int>(ha.size());
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  CHECK_{P}(cudaMalloc(&da, n * sizeof(float)));
  CHECK_{P}(cudaMalloc(&db, n * sizeof(float)));
  CHECK_{P}(cudaMalloc(&dc, n * sizeof(float)));
  CHECK_{P}(cudaMemcpyAsync(da, ha.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  CHECK_{P}(cudaMemsetAsync(db, 0, n * sizeof(float), stream));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  dim3 block({block}), grid((n + {block} - 1) / {block});
  {name}<<<grid, block, 0, stream>>>(da, db, dc, n, {alpha}f);
  LAUNCH_{P}({name}, n, stream, da, db, dc, n, 1.0f);
  CHECK_{P}(cudaGetLastError());
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, start, stop);
  CHECK_{P}(cudaMemcpyAsync(hc.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CHECK_{P}(cudaStreamSynchronize(stream));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}}
"""

BLAS = """\
void gemm_{p}(int m, int n, int k, const float* A, const float* B, float* C) {{
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return;
  const float alpha = 1.0f, beta = 0.0f;
  cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, A, m, B, n, &beta, C, m);
  cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_32F, m, B,
               CUDA_R_32F, k, &beta, C, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  cublasDestroy(handle);
}}
"""

RAND = """\
void fill_random_{p}(float* d, size_t n, unsigned long long seed) {{
  curandGenerator_t gen;
  curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT);
  curandSetPseudoRandomGeneratorSeed(gen, seed);
  curandGenerateUniform(gen, d, n);
  curandGenerateNormal(gen, d, n, 0.0f, 1.0f);
  curandDestroyGenerator(gen);
}}
"""

FFT = """\
int spectrum_{p}(cufftComplex* data, int nx, int batch) {{
  cufftHandle plan;
  if (cufftPlan1d(&plan, nx, CUFFT_C2C, batch) != CUFFT_SUCCESS) return -1;
  cufftExecC2C(plan, data, data, CUFFT_FORWARD);
  cufftExecC2C(plan, data, data, CUFFT_INVERSE);
  cudaDeviceSynchronize();
  cufftDestroy(plan);
  return 0;
}}
"""

BRANCHES = """\
#if defined(__HIP_PLATFORM_AMD__) || defined(USE_ROCM)
#define WARP_{P} 64
#else
#define WARP_{P} 32
#endif

#ifdef __CUDA_ARCH__
#  if __CUDA_ARCH__ >= 800
#    define HAS_BF16_{P} 1
#  else
#    define HAS_BF16_{P} 0
#  endif
#endif

__device__ float shuffle_sum_{p}(float v) {{
#if defined(__HIP_PLATFORM_AMD__)
  for (int o = WARP_{P} / 2; o > 0; o /= 2) v += __shfl_down(v, o);
#else
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
#endif
  return v;
}}
"""

PLAIN_CPP = """\
/* {p}: bookkeeping that never touches the device. */
struct Stats{P}{i} {{
  double sum = 0.0;
  double squares = 0.0;
  long count = 0;

  void add(double x) {{
    sum += x;
    squares += x * x;
    ++count;
  }}

  double mean() const {{ return count ? sum / count : 0.0; }}
  double variance() const {{
    if (count < 2) return 0.0;
    double m = mean();
    return squares / count - m * m;
  }}
}};

static int parse_flag_{p}{i}(int argc, char** argv, const char* name, int fallback) {{
  for (int a = 1; a + 1 < argc; ++a) {{
    const char* s = argv[a];
    const char* t = name;
    while (*s && *t && *s == *t) {{ ++s; ++t; }}
    if (*s == 0 && *t == 0) return atoi(argv[a + 1]);
  }}
  return fallback;
}}
"""


@dataclass(frozen=True)
class CorpusStats:
    files: int
    lines: int
    bytes: int
    plain_files: int  # files with nothing CUDA-like (the pre-filter skips them)


def _fixtures(repo: Path) -> list[str]:
    texts = []
    for d in FIXTURE_DIRS:
        for p in sorted((repo / d).glob("*")):
            if p.suffix in (".cu", ".cuh", ".cpp") and p.is_file():
                texts.append(p.read_text(encoding="utf-8", errors="replace"))
    return texts


_DEFINED = re.compile(r"\b(?:void|int|float|T|bool|double)\s+([A-Za-z_]\w*)\s*\(")


def _renamed(text: str, suffix: str) -> str:
    """A fixture with its function names made unique (two copies must not collide)."""
    names = sorted(set(_DEFINED.findall(text)) - {"main"}, key=len, reverse=True)
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: m.group(1) + suffix, text)


def _cuda_file(rng: random.Random, p: str, fixtures: list[str], target_lines: int) -> str:
    P = p.upper()
    parts = [HEADER.format(p=p, extra_includes="\n".join(rng.sample(EXTRA_INCLUDES, 3))),
             CHECK_MACRO.format(P=P)]
    lines = sum(s.count("\n") for s in parts)
    i = 0
    while lines < target_lines:
        i += 1
        kind = rng.choices(
            ("warp", "ballot", "host", "blas", "rand", "fft", "branches", "fixture", "plain"),
            weights=(2, 1, 4, 1, 1, 1, 1, 3, 3))[0]
        name = f"{p}_k{i}"
        if kind == "warp":
            block = WARP_REDUCE.format(p=f"{p}_{i}")
        elif kind == "ballot":
            block = BALLOT.format(p=f"{p}_{i}")
        elif kind == "host":
            block = ELEMENTWISE.format(name=name, leak=rng.choice(("0.01", "0.1", "0.2"))) + "\n" + \
                HOST.format(name=name, P=P, block=rng.choice((128, 256, 512)),
                            alpha=rng.choice(("0.5", "1.0", "2.0")))
        elif kind == "blas":
            block = BLAS.format(p=f"{p}_{i}")
        elif kind == "rand":
            block = RAND.format(p=f"{p}_{i}")
        elif kind == "fft":
            block = FFT.format(p=f"{p}_{i}")
        elif kind == "branches":
            block = BRANCHES.format(p=f"{p}_{i}", P=f"{P}_{i}")
        elif kind == "fixture":
            block = _renamed(rng.choice(fixtures), f"_{p}_{i}")
        else:
            block = PLAIN_CPP.format(p=p, P=P, i=i)
        parts.append(f"\n// ---- section {i} ----\n" + block)
        lines += block.count("\n") + 2
    return "".join(parts)


def _plain_file(rng: random.Random, p: str, target_lines: int) -> str:
    parts = [f"// {p}: host-only utilities.\n#include <cstdlib>\n#include <vector>\n"]
    lines, i = 3, 0
    while lines < target_lines:
        i += 1
        block = PLAIN_CPP.format(p=p, P=p.upper(), i=i)
        parts.append("\n" + block)
        lines += block.count("\n") + 1
    return "".join(parts)


def generate(root: Path, repo: Path, *, files: int, mean_lines: int, seed: int = 1) -> CorpusStats:
    """Write ``files`` files under ``root`` (about ``mean_lines`` lines each on average)."""
    rng = random.Random(seed)
    fixtures = _fixtures(repo)
    total_lines = total_bytes = plain = 0
    for n in range(files):
        p = f"m{n:05d}"
        # Sizes vary like real trees: many small files, a few large ones.
        target = max(20, int(rng.lognormvariate(0, 0.7) * mean_lines * 0.8))
        sub = root / f"pkg{n % 37:02d}" / f"mod{n % 11}"
        if rng.random() < 0.1:
            text, name = _plain_file(rng, p, target // 3), f"{p}.cpp"
            plain += 1
        else:
            text = _cuda_file(rng, p, fixtures, target)
            name = f"{p}{rng.choice(('.cu', '.cu', '.cu', '.cuh', '.cpp'))}"
        data = text.encode("utf-8")
        sub.mkdir(parents=True, exist_ok=True)
        (sub / name).write_bytes(data)
        total_lines += data.count(b"\n")
        total_bytes += len(data)
    return CorpusStats(files, total_lines, total_bytes, plain)
