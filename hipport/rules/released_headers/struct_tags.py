"""HP122: `struct cudaX` where HIP's name for X is a typedef of a struct with another tag."""

from __future__ import annotations

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.names import target_for
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY
from hipport.rules.released_headers.common import raw_data


@REGISTRY.rule
class StructTagDiffers:
    """`struct` before a CUDA type whose HIP name is a typedef of a differently tagged struct

    ## Why
    CUDA's `cudaGraphicsResource` is a struct tag and its type name at once, so CUDA code
    (the graphics-interop samples) writes `struct cudaGraphicsResource *res;`. HIP's
    `hipGraphicsResource` is `typedef struct _hipGraphicsResource hipGraphicsResource;`:
    `struct hipGraphicsResource` is "typedef 'hipGraphicsResource' cannot be referenced
    with the 'struct' specifier" (6.2 and 7.1 headers; the list is
    `mappings/released_headers.toml` `[struct_tags]`).

    ## Example

    ```cuda
    struct cudaGraphicsResource *cuda_pbo_resource;
    ```
    becomes
    ```cuda
    hipGraphicsResource *cuda_pbo_resource;
    ```

    ## Fix
    `hipport convert` drops the `struct`: the typedef name means the same type.
    """

    code = "HP122"
    slug = "struct-tag-differs"
    severity = Severity.HIGH
    effort = Effort.NONE


@REGISTRY.visits("struct_specifier", source=any_bytes_of(b"struct"), codes=(StructTagDiffers,))
def _struct(node: Node, ctx: Context) -> None:
    name = node.child_by_field_name("name")
    if name is None or name.type != "type_identifier" or node.child_by_field_name("body") is not None:
        return
    cuda = ctx.text(name)
    hip = target_for(ctx, name, cuda)
    tag = raw_data()["struct_tags"].get(hip or "")
    if tag is None:
        return
    ctx.report(StructTagDiffers, node, f"`struct {cuda}`: HIP's `{hip}` is a typedef of "
               f"`struct {tag}`, so `struct {hip}` does not compile", f"`{hip}` without `struct`",
               fix=[Edit(node.start_byte, name.start_byte, b"")])
