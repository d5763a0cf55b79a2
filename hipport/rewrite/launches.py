"""``--launch-syntax hip``: ``k<<<g, b, shm, s>>>(args)`` → ``hipLaunchKernelGGL(...)``.

HIP compiles triple-chevron launches, so the default keeps them. When asked, the launch is
rewritten the way hipify-clang writes it: ``hipLaunchKernelGGL(k, dim3(g), dim3(b), shm,
s, args)``, template kernels wrapped in ``HIP_KERNEL_NAME(...)`` (the macro protects the
commas of a template argument list), missing shared-memory and stream arguments as 0.

Only the punctuation between the parts is replaced; the kernel name, configuration and
arguments keep their bytes, so identifier rewrites inside them still apply. Launches in
macro bodies arrive here too (``analyze`` reparses them during the walk).
"""

from __future__ import annotations

from hipport.context import Context
from hipport.parse import Node
from hipport.rewrite import REGISTRY


def _is_template(fn: Node) -> bool:
    return fn.type == "template_function" or (
        fn.type == "qualified_identifier" and fn.text is not None and b"<" in fn.text
    )


@REGISTRY.visits("call_expression", when=lambda options: options.launch_syntax == "hip")
def rewrite_launch(node: Node, ctx: Context) -> None:
    if ctx.options.launch_syntax != "hip":
        return
    fn = node.child_by_field_name("function")
    config = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
    args = node.child_by_field_name("arguments")
    if fn is None or config is None or args is None or args.child_count < 2:
        return
    parts = [c for c in config.named_children if c.type != "comment"]
    if not 2 <= len(parts) <= 4 or config.has_error or args.has_error:
        return  # malformed launch: leave it for a person (and the compiler) to see
    template = _is_template(fn)
    ctx.edit(fn.start_byte, fn.start_byte,
             "hipLaunchKernelGGL(" + ("HIP_KERNEL_NAME(" if template else ""))
    ctx.edit(fn.end_byte, parts[0].start_byte, (")" if template else "") + ", dim3(")
    ctx.edit(parts[0].end_byte, parts[1].start_byte, "), dim3(")
    tail = ")"
    if len(parts) >= 3:
        ctx.edit(parts[1].end_byte, parts[2].start_byte, "), ")
        tail = ""
    if len(parts) == 4:
        ctx.edit(parts[2].end_byte, parts[3].start_byte, ", ")
    tail += ", 0" * (4 - len(parts))
    lparen = args.children[0]
    has_args = any(c.type != "comment" for c in args.named_children)
    ctx.edit(parts[-1].end_byte, lparen.end_byte, tail + (", " if has_args else ""))
    if not has_args:
        rparen = args.children[-1]
        ctx.edit(lparen.end_byte, rparen.start_byte, b"")
    ctx.rewrites += 1
