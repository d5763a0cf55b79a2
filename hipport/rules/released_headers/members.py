"""HP126: a member of a CUDA struct that the target's HIP struct spells otherwise."""

from __future__ import annotations

import re

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY
from hipport.rules.released_headers.common import declared_type, raw_data


@REGISTRY.rule
class StructMemberDiffers:
    """A member of a CUDA struct that the target's HIP struct names otherwise

    ## Why
    HIPIFY maps CUDA's structs, not their members. `CUmemAllocationProp` has
    `requestedHandleTypes`; HIP 6.2's `hipMemAllocationProp` only `requestedHandleType`
    ("no member named 'requestedHandleTypes' in 'hipMemAllocationProp'"); HIP 7.1's has
    both, in a union (`mappings/released_headers.toml` `[struct_members]`).

    ## Example

    ```cuda
    CUmemAllocationProp prop = {};
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    ```
    becomes, for a 6.x target,
    ```cuda
    hipMemAllocationProp prop = {};
    prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
    ```

    ## Fix
    `hipport convert` writes the member HIP declares in both header sets, where the object
    is declared of the struct in the same function; elsewhere it reports the line.
    """

    code = "HP126"
    slug = "struct-member-differs"
    severity = Severity.HIGH
    effort = Effort.NONE


_MEMBERS = raw_data()["struct_members"]


@REGISTRY.visits("field_expression", source=any_bytes_of(*(m.encode() for m in _MEMBERS)),
                 codes=(StructMemberDiffers,))
def _member(node: Node, ctx: Context) -> None:
    field = node.child_by_field_name("field")
    if field is None or (facts := _MEMBERS.get(ctx.text(field))) is None or ctx.rocm[0] not in facts["majors"]:
        return
    obj, op = node.child_by_field_name("argument"), node.child_by_field_name("operator")
    cuda, hip = ctx.text(field), facts["hip"]
    declared = None
    if obj is not None and obj.type == "identifier" and op is not None:
        declared = declared_type(ctx, node, ctx.text(obj), pointer=ctx.text(op) == "->")
    struct = (declared or "").rstrip("*").removeprefix("struct ").strip()
    if struct in facts["types"] and (declared or "").count("*") == (ctx.text(op) == "->"):
        ctx.report(StructMemberDiffers, field, f"`{cuda}` of {struct}: HIP {ctx.rocm[0]}'s "
                   f"struct has `{hip}`", f"`{hip}`", fix=[Edit(field.start_byte, field.end_byte, hip.encode())])
    elif declared is None or not _defined_in_file(ctx, struct):
        ctx.report(StructMemberDiffers, field, f"`{cuda}`: if this is a {facts['types'][0]}, HIP "
                   f"{ctx.rocm[0]}'s struct has `{hip}`", f"`{hip}` where the object is that struct")


def _defined_in_file(ctx: Context, name: str) -> bool:
    """Whether the file defines a struct or class ``name`` (with a body): an object of it is
    the project's own, its member no CUDA struct's. Any other declared type (``auto``, a
    typedef of CUmemAllocationProp) may be the CUDA struct: reported, not left silent."""
    return bool(name) and re.search(rb"\b(?:struct|class)[ \t\n]+%s\b[^;{()]*\{" % re.escape(name.encode()),
                                    ctx.src) is not None
