"""HP116–HP119 — findings of the conversion's own rewrites: calls whose HIP function takes
other arguments than the CUDA one (HP116, HP117; with --roc HP119), and CUDA compiler
macros rewritten to their HIP counterparts (HP118).

The checks live with the rewrites (``hipport.rewrite.arguments``, ``hipport.rewrite.legacy``):
one decision per call says whether the arguments are rewritten or the call is reported, so
a call is never renamed with an argument list its HIP function does not take without a
finding at it.
"""

from __future__ import annotations

from functools import lru_cache

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.names import defined_in_file, kept_in_file
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
    builds with nvcc and hipcc alike, the test may have been meant for nvcc alone. A file
    whose conditions test `__HIPCC__` (or `__HIP__`) itself already tells the compilers
    apart (Eigen: `EIGEN_CUDACC` from `__CUDACC__`, `EIGEN_HIPCC` from `__HIPCC__`): there
    `__CUDACC__` is kept, and said so, since rewriting it would make a HIP build take the
    CUDA branches too.

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


ARGUMENT_REWRITE = REGISTRY.rules["HP116"]
ROC_ARGUMENTS = REGISTRY.rules["HP119"]
LEGACY_CUBLAS = REGISTRY.rules["HP117"]
MACRO_REWRITTEN = REGISTRY.rules["HP118"]


@lru_cache(maxsize=1)
def _informed() -> frozenset[str]:
    from hipport.mapping import load_table

    return frozenset(n for n, m in load_table().macros.items() if m.inform and m.action == "rewrite")


def _is_informed(name: str) -> bool:
    return name in _informed()


@REGISTRY.visits("identifier", names=_is_informed, codes=(CudaMacroRewritten,))
def macro_rewritten(node: Node, ctx: Context) -> None:
    """An info finding where a macro marked ``inform`` in macros.toml is rewritten."""
    rule = ctx.view.macro(ctx.text(node))
    if rule is None or not rule.inform or rule.action != "rewrite" or defined_in_file(ctx, rule.name):
        return
    if kept_in_file(ctx, rule.name):
        ctx.report(MACRO_REWRITTEN, node, f"{rule.name} kept: this file tests "
                   f"{' or '.join(rule.kept_if_tested)} itself, so its {rule.name} means CUDA "
                   "and is left false under HIP")
    else:
        ctx.report(MACRO_REWRITTEN, node, f"{rule.name} → {rule.target}: {rule.note}")
