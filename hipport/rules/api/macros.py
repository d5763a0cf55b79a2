"""HP106: a CUDA version or toolkit macro whose meaning does not carry over to HIP."""

from __future__ import annotations

from functools import lru_cache

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.names import NAME_NODES
from hipport.parse import Node
from hipport.rules import REGISTRY, AboutAName


@REGISTRY.rule
class CudaMacroTest(AboutAName):
    """A CUDA macro whose meaning does not carry over to HIP

    ## Why
    Code tests CUDA version or toolkit macros (`CUDART_VERSION`, `CUDA_VERSION`,
    `__CUDA_ARCH__`, header include guards…), or a CUDA name with no HIP counterpart
    (`#ifdef CUB_USE_COOPERATIVE_GROUPS`: reported here, not as HP101, since nothing fails to
    compile at the test). Under hipcc they are undefined or mean something else, so the
    branch taken changes silently.

    ## Example

    ```cuda
    #if CUDART_VERSION >= 11020
      cudaMallocAsync(&p, n, s);
    #endif
    ```

    ```cuda
    #if CUDART_VERSION >= 11020 || defined(__HIP_PLATFORM_AMD__)
      hipMallocAsync(&p, n, s);
    #endif
    ```

    ## Fix

    Decide what the test is for and add the HIP condition (`HIP_VERSION`,
    `__HIP_PLATFORM_AMD__`, `__HIP_DEVICE_COMPILE__`) explicitly.
    """

    code = "HP106"
    slug = "cuda-macro-test"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@lru_cache(maxsize=1)
def _reported_macros() -> frozenset[str]:
    """The macros the tables say to report (``macros.toml`` action ``report``), whatever
    the target: the name filter of the visitor."""
    from hipport.mapping import load_table

    return frozenset(name for name, m in load_table().macros.items() if m.action == "report")


@REGISTRY.visits(*NAME_NODES, names=lambda name: name in _reported_macros(), codes=(CudaMacroTest,))
def cuda_macro_test(node: Node, ctx: Context) -> None:
    name = ctx.text(node)
    macro = ctx.view.macro(name)
    if macro is not None and macro.action == "report":
        ctx.report(CudaMacroTest, node, f"{name}: {macro.note}",
                   "Add the HIP condition explicitly (HIP_VERSION, __HIP_PLATFORM_AMD__).")
