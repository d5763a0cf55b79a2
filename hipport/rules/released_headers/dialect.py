"""HP339: the `register` storage class, which C++17 removed and the HIP targets compile as."""

from __future__ import annotations

from pathlib import Path

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY, SaysWhatItIs


@REGISTRY.rule
class RegisterStorageClass(SaysWhatItIs):
    """The `register` storage class in C++, an error in C++17

    ## Why
    nvcc 11 compiles C++14 by default, where `register` is only deprecated; the 6.3 and
    7.2.1 targets compile C++17 (hipcc's clang default, and the dialect `hipport verify`
    checks with), which removed it: "ISO C++17 does not allow 'register' storage class
    specifier", an error by default (cuda-samples' `nvMatrix.h`, `register int i, j, p, jj;`).

    ## Example
    ```cuda
    register int i, j;
    ```
    becomes
    ```cuda
    int i, j;
    ```

    ## Fix
    `hipport convert` removes the keyword in C++ files: compilers have long ignored it, so
    nothing else changes. C keeps it (taking such a variable's address is an error there).
    """

    code = "HP339"
    slug = "register-storage-class"
    severity = Severity.HIGH
    effort = Effort.NONE


@REGISTRY.visits("storage_class_specifier", source=any_bytes_of(b"register"), codes=(RegisterStorageClass,))
def _register(node: Node, ctx: Context) -> None:
    if ctx.text(node) != "register" or Path(ctx.path).suffix.lower() == ".c":
        return
    end = node.end_byte
    while ctx.src[end:end + 1] in (b" ", b"\t"):
        end += 1
    ctx.report(RegisterStorageClass, node, "`register` is not C++17, which the HIP build compiles as "
               "(nvcc 11's default C++14 only deprecated it)", "drop `register`",
               fix=[] if ctx.in_macro_body else [Edit(node.start_byte, end, b"")])
