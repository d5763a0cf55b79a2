"""HP116–HP119, HP127 — findings of the conversion's own rewrites: calls whose HIP function
takes other arguments than the CUDA one (HP116, HP117; with --roc HP119), and CUDA compiler
macros rewritten to their HIP counterparts or kept (HP118; HP127 where it cannot tell).

The checks live with the rewrites (``hipport.rewrite.arguments``, ``hipport.rewrite.legacy``):
one decision per call says whether the arguments are rewritten or the call is reported, so
a call is never renamed with an argument list its HIP function does not take without a
finding at it.
"""

from __future__ import annotations

from functools import lru_cache

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.names import compiler_test, defined_in_file
from hipport.preprocessor.apart import Verdict
from hipport.parse import Node
from hipport.rules import REGISTRY


@REGISTRY.rule
class ArgumentRewrite:
    """HIP function takes other arguments, and hipport could not rewrite them exactly

    ## Why
    The HIP (or, with `--roc`, ROC) function this call is renamed to differs from the
    CUDA one in its arguments. hipport rewrites the arguments where the change is certain
    (`mappings/arguments.toml`, after hipify-clang); this call needs a person, because the
    change would lose a value, would let a library write 8 bytes into a 4-byte `int`, or
    touches names that are rewritten themselves.

    ## Example

    ```cuda
    cuOccupancyMaxPotentialBlockSize(&grid, &block, f, smemForBlockSize, 0, 0);
    ```

    `hipModuleOccupancyMaxPotentialBlockSize` has no per-block-size shared-memory
    callback; a null one is dropped, this one is reported.

    ## Fix

    Rewrite the call to the HIP signature by hand (`hipport map NAME` names the HIP
    function); for a `size_t*` output, declare the variable `size_t`.
    """

    code = "HP116"
    slug = "argument-rewrite"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class LegacyCublas:
    """Legacy cuBLAS (v1, no handle) call

    ## Why
    `cublas.h` declares the legacy cuBLAS API, whose functions take no handle
    (`cublasSgemm('N', 'N', m, n, k, alpha, ...)`). hipBLAS has only the handle API, so
    renaming the call would pass the arguments in the wrong places; hipport leaves it.

    ## Example

    ```cuda
    #include <cublas.h>
    cublasSaxpy(n, 2.0f, x, 1, y, 1);
    ```

    ```cuda
    #include <hipblas/hipblas.h>
    hipblasSaxpy(handle, n, &alpha, x, 1, y, 1);
    ```

    ## Fix

    Port the code to the cuBLAS v2 API (`cublas_v2.h`, a `cublasHandle_t`) first, or
    write the hipBLAS calls by hand.
    """

    code = "HP117"
    slug = "cublas-legacy"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class CudaMacroRewritten:
    """CUDA compiler macro rewritten to its HIP counterpart

    ## Why
    hip-clang does not define `__CUDACC__`; it defines `__HIPCC__`. hipport rewrites the
    test so the branch nvcc took is the one HIP takes, and says so: in a codebase that
    builds with nvcc and hipcc alike, the test may have been meant for nvcc alone. Where
    the file's own tests of `__HIPCC__` (or `__HIP__`) already give the HIP build a branch
    for the same purpose — the same condition or `#if` chain, an enclosing one, or a macro
    defined under both (Eigen: `EIGEN_CUDACC` from `__CUDACC__`, `EIGEN_HIPCC` from
    `__HIPCC__`) — `__CUDACC__` is kept, and said so, since rewriting it would make a HIP
    build take the CUDA branches too. Where hipport cannot tell, it is kept and HP127 says so.

    ## Example

    ```cuda
    #ifndef __CUDACC__
    inline int max(int a, int b) { return a > b ? a : b; }   // collides with HIP's max
    #endif
    ```

    ```cuda
    #ifndef __HIPCC__
    inline int max(int a, int b) { return a > b ? a : b; }
    #endif
    ```

    ## Fix

    Nothing, when the branch is for "compiled as GPU code". If it is for nvcc only, test
    `__NVCC__` instead.
    """

    code = "HP118"
    slug = "cuda-macro-rewritten"
    severity = Severity.INFO
    effort = Effort.NONE


@REGISTRY.rule
class RocArguments:
    """With `--roc`, a call keeps argument types or a list the ROC library does not take

    ## Why
    `--roc` renames cuBLAS, cuSPARSE and cuDNN calls to rocBLAS, rocSPARSE and MIOpen.
    Where hipport knows the argument lists differ it rewrites them (HP116 when it cannot);
    for the calls here it knows the arguments are not the ROC library's and has no exact
    rewrite: complex and half element types (`rocblas_float_complex`, `rocblas_half`) in a
    file whose `cuComplex`/`__half` hipport could not write the ROC way (it does where the
    file only declares, casts and passes them; not where it uses HIP's helpers such as
    `make_cuComplex`, reads `.x`/`.y`, holds half values, or calls both rocBLAS and
    rocSPARSE: that is reported once at the type), rocBLAS's `*_ex` functions, rocSPARSE
    functions it has no argument data for, and CUDA data-type constants in rocSPARSE calls
    (rocSPARSE takes `rocsparse_datatype`).

    ## Example

    ```cuda
    cublasCaxpy(h, n, &alpha, x, 1, y, 1);   // cuComplex* x, y
    ```

    ```cuda
    rocblas_caxpy(h, n, reinterpret_cast<rocblas_float_complex*>(&alpha),
                  reinterpret_cast<rocblas_float_complex*>(x), 1,
                  reinterpret_cast<rocblas_float_complex*>(y), 1);
    ```

    ## Fix

    Compare the call with the ROC library's declaration and adjust it, or convert without
    `--roc` (the hip* marshalling libraries take the CUDA argument lists).
    """

    code = "HP119"
    slug = "roc-arguments"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class CudaMacroUnsure:
    """`__CUDACC__` kept in a file that tests `__HIPCC__` too: the HIP build may need the branch

    ## Why
    hip-clang defines `__HIPCC__`, not `__CUDACC__`. This file tests `__HIPCC__` (or
    `__HIP__`) itself, so it may tell the two compilers apart, and then its `__CUDACC__`
    means nvcc and must stay; but its tests of the HIP compiler give the HIP build no branch
    of its own for what this test decides (not the same condition or `#if` chain, no
    enclosing test, no macro defined under both), and they do more than pick headers.
    hipport keeps `__CUDACC__`, as it cannot tell; the HIP build then skips the branch. If
    the branch holds what HIP code needs as well, the HIP build fails to compile, or quietly
    compiles the fallback. (A branch defining `__host__ __device__` is rewritten: HIP needs
    those qualifiers where CUDA does.)

    ## Example

    ```cuda
    #if defined(__HIPCC__)
    #define WAVE 64
    #endif
    #if defined(__CUDACC__)
    #define HAS_GPU 1          // for nvcc alone, or for every GPU build?
    #endif
    ```

    ```cuda
    #if defined(__CUDACC__) || defined(__HIPCC__)
    #define HAS_GPU 1
    #endif
    ```

    ## Fix

    If the HIP build needs the branch too, test `defined(__CUDACC__) || defined(__HIPCC__)`
    (or give it an `#elif defined(__HIPCC__)` of its own). If it is for nvcc alone, nothing
    needs to change; `__NVCC__` says so explicitly.
    """

    code = "HP127"
    slug = "cuda-macro-unsure"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


ARGUMENT_REWRITE = REGISTRY.rules["HP116"]
ROC_ARGUMENTS = REGISTRY.rules["HP119"]
LEGACY_CUBLAS = REGISTRY.rules["HP117"]
MACRO_REWRITTEN = REGISTRY.rules["HP118"]
MACRO_UNSURE = REGISTRY.rules["HP127"]


@lru_cache(maxsize=1)
def _informed() -> frozenset[str]:
    from hipport.mapping import load_table

    return frozenset(n for n, m in load_table().macros.items() if m.inform and m.action == "rewrite")


def _is_informed(name: str) -> bool:
    return name in _informed()


@REGISTRY.visits("identifier", names=_is_informed, codes=(CudaMacroRewritten, CudaMacroUnsure))
def macro_rewritten(node: Node, ctx: Context) -> None:
    """An info finding where a macro marked ``inform`` in macros.toml is rewritten or surely
    kept (HP118), a medium one where it is kept because hipport cannot tell (HP127)."""
    rule = ctx.view.macro(ctx.text(node))
    if rule is None or not rule.inform or rule.action != "rewrite" or defined_in_file(ctx, rule.name):
        return
    found = compiler_test(ctx, rule.name, node.start_byte)
    if found is None or found.verdict is Verdict.REWRITE:
        why = f" ({found.reason})" if found is not None and found.reason else ""
        ctx.report(MACRO_REWRITTEN, node, f"{rule.name} → {rule.target}{why}: {rule.note}")
    elif found.verdict is Verdict.KEPT:
        ctx.report(MACRO_REWRITTEN, node, f"{rule.name} kept: {found.reason}, so this {rule.name} "
                   "means CUDA and is left false under HIP")
    else:
        ctx.report(MACRO_UNSURE, node, f"{rule.name} kept: {found.reason}, so a HIP build "
                   f"skips its {rule.name} branch; if "
                   f"HIP needs it too, test defined({rule.name}) || defined({rule.target}), and if "
                   "it is for nvcc alone, __NVCC__")
