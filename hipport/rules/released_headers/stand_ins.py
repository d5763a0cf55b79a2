"""HP342: a project file that defines CUDA's own vector types, `dim3` or texture functions
itself (a stand-in for CUDA), which HIP's headers define under the same names."""

from __future__ import annotations

import re
from functools import lru_cache

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import data, raw_data


@REGISTRY.rule
class CudaStandIn(SaysWhatItIs):
    """A project's own definition of a CUDA type or function that HIP defines too

    ## Why
    Some projects build their CUDA code without CUDA's headers, or build a CPU version
    that still names CUDA's types, and define those types themselves: ffmpeg's
    `compat/cuda/cuda_runtime.h` (used with clang's `-nocudainc`) defines `uchar2`,
    `float4`, `dim3` and `tex2D`; relion's CPU build defines `typedef int dim3` and its own
    `float2`. HIP's headers define the same names in the global namespace
    (`amd_hip_vector_types.h`, `hip_runtime_api.h`): a unit that reaches both does not
    compile ("definition of type 'uchar2' conflicts with type alias of the same name",
    "typedef redefinition with different types", "call to 'tex2D' is ambiguous").

    ## Example

    ```cuda
    typedef struct uchar2 { unsigned char x, y; } uchar2;
    ```

    ## Fix
    Keep the stand-in out of the HIP build: leave the file out of the units hipcc compiles
    (ffmpeg's `-include compat/cuda/cuda_runtime.h`), or guard the definition with
    `#if !defined(__HIPCC__)`. HIP's headers define the type, with the same members.
    A definition already under a test of `__HIPCC__`, `__HIP_PLATFORM_AMD__` and the like
    is the project's own HIP arrangement and is not reported.
    """

    code = "HP342"
    slug = "cuda-stand-in"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@lru_cache(maxsize=1)
def _types() -> frozenset[str]:
    """CUDA's type names that HIP's headers define too (``[stand_in]``)."""
    raw = raw_data()["stand_in"]
    return frozenset([*(f"{base}{n}" for base in raw["vector_bases"] for n in raw["lanes"]),
                      *raw["types"]])


@lru_cache(maxsize=1)
def _hip_tests() -> re.Pattern[bytes]:
    """The macros whose test in an enclosing ``#if`` shows the project parts CUDA from HIP,
    as whole words: ``USE_ROCM_SMI`` is no test of ``USE_ROCM``."""
    names = b"|".join(re.escape(t.encode()) for t in raw_data()["stand_in"]["hip_tests"])
    return re.compile(rb"(?<!\w)(?:" + names + rb")(?!\w)")


#: What a definition at file scope may sit in: preprocessor branches and ``extern "C" {}``.
_FILE_SCOPE = frozenset({"translation_unit", "preproc_if", "preproc_ifdef", "preproc_else",
                         "preproc_elif", "preproc_elifdef", "declaration_list",
                         "linkage_specification", "template_declaration",
                         "ERROR"})  # a file whose last line lacks its newline (relion's cuda_stubs.h)
_CONDITIONS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"})


def _at_file_scope(node: Node) -> bool:
    """Outside every function, class and namespace (a namespace's ``float2`` is its own)."""
    parent = node.parent
    while parent is not None and parent.type != "translation_unit":
        if parent.type not in _FILE_SCOPE:
            return False
        if parent.type == "declaration_list" and (
                parent.parent is None or parent.parent.type != "linkage_specification"):
            return False
        parent = parent.parent
    return True


def _apart_from_hip(ctx: Context, node: Node) -> bool:
    """An enclosing ``#if``/``#ifdef`` tests a HIP macro: the project keeps it apart itself."""
    parent = node.parent
    while parent is not None:
        if parent.type in _CONDITIONS:
            cond = parent.child_by_field_name("condition") or parent.child_by_field_name("name")
            if cond is not None and _hip_tests().search(ctx.src, cond.start_byte, cond.end_byte):
                return True
        parent = parent.parent
    return False


def _report(ctx: Context, where: Node | tuple[int, int], name: str, what: str) -> None:
    """Report the definition of ``name`` at ``where``: a node is checked for file scope and a
    HIP test around it here; a byte range (the fallback's) was checked by its caller."""
    if not isinstance(where, tuple) and (not _at_file_scope(where) or _apart_from_hip(ctx, where)):
        return
    ctx.report(CudaStandIn, where, f"`{name}` is CUDA's own {what}, which HIP's headers define "
               "too: this file defines it itself, as a stand-in for CUDA, so a unit that also "
               f"includes HIP's headers does not compile (`{name}` redefined or ambiguous)",
               "keep the stand-in out of the HIP build: leave this file out of HIP units, or guard "
               f"the definition with `#if !defined(__HIPCC__)`; HIP's headers define `{name}`")


#: Every texture and surface function's name starts with one of these: a file that spells
#: none has no stand-in for them. (The type visitors have no source filter: filters run on
#: every macro body the walk reparses too, and a test for 49 type names there cost more
#: than reading the name of each typedef and struct.)
_IMAGE_SOURCE = re.compile(rb"tex(?:[123]D|Cubemap)|surf(?:[123]D|Cubemap)")


def _image_source(src: bytes) -> bool:
    """The file may define a texture or surface function (two byte searches first)."""
    return (b"tex" in src or b"surf" in src) and _IMAGE_SOURCE.search(src) is not None


@REGISTRY.visits("type_definition", codes=(CudaStandIn,))
def _typedef(node: Node, ctx: Context) -> None:
    """``typedef int dim3;``, ``typedef struct {…} float2;``, ``typedef struct uint3 dim3;``."""
    for declarator in node.children_by_field_name("declarator"):
        if declarator.type == "type_identifier" and (name := ctx.text(declarator)) in _types():
            _report(ctx, node, name, "type")
            return


@REGISTRY.visits("struct_specifier", codes=(CudaStandIn,))
def _struct(node: Node, ctx: Context) -> None:
    """``struct uchar2 { … };`` (inside a typedef, the typedef reports it, once)."""
    name = node.child_by_field_name("name")
    if name is None or node.child_by_field_name("body") is None or name.type != "type_identifier":
        return
    if node.parent is not None and node.parent.type == "type_definition":
        if any(ctx.text(d) in _types() for d in node.parent.children_by_field_name("declarator")):
            return
    if (text := ctx.text(name)) in _types():
        _report(ctx, node.parent if node.parent is not None and node.parent.type in (
            "type_definition", "declaration") else node, text, "type")


@REGISTRY.visits("alias_declaration", codes=(CudaStandIn,))
def _alias(node: Node, ctx: Context) -> None:
    """``using float2 = …;``."""
    name = node.child_by_field_name("name")
    if name is not None and (text := ctx.text(name)) in _types():
        _report(ctx, node, text, "type")


@REGISTRY.visits("function_definition", source=_image_source, codes=(CudaStandIn,))
def _function(node: Node, ctx: Context) -> None:
    """A texture or surface function of CUDA's defined by the project (a template's primary
    definition or a specialization: each makes HIP's overloads ambiguous)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return
    name = declarator.child_by_field_name("declarator")
    if name is not None and name.type == "template_function":
        name = name.child_by_field_name("name")
    if name is not None and name.type == "identifier" and (text := ctx.text(name)) in data().image:
        where = node.parent if node.parent is not None and node.parent.type == "template_declaration" else node
        _report(ctx, where, text, "texture function")


@lru_cache(maxsize=1)
def _name_brace() -> re.Pattern[bytes]:
    """A type name before ``{``, where a struct definition the parser could not read may be."""
    names = b"|".join(sorted(n.encode() for n in _types()))
    return re.compile(rb"\b(" + names + rb")\s*\{")


#: ``struct [attribute macros] NAME`` ending where the name is: ffmpeg's ``typedef struct
#: __device_builtin__ __align__(2) uchar2 {`` parses as a function declarator and a
#: compound literal.
_STRUCT_HEAD = re.compile(rb"\bstruct\s+(?:[A-Za-z_]\w*(?:\s*\([^()\n]*\))?\s+)*$")


#: What the parser cannot read there: an attribute macro with arguments after ``struct``
#: (a literal-prefixed search, cheap on files without it: the name scan is not).
_ATTRIBUTE_HEAD = re.compile(rb"struct\s+(?:[A-Za-z_]\w*\s+)*[A-Za-z_]\w*\s*\(")


@REGISTRY.visits_file(codes=(CudaStandIn,))
def _unparsed_structs(ctx: Context) -> None:
    """Struct definitions the parser could not read, found in the bytes: only where the
    tree has an error, outside comments and strings, and on a line no HP342 is on yet."""
    root = ctx.tree.root_node
    if not root.has_error or _ATTRIBUTE_HEAD.search(ctx.src) is None:
        return
    reported = {f.line for f in ctx.findings if f.code == CudaStandIn.code}
    for m in _name_brace().finditer(ctx.src):
        head = _STRUCT_HEAD.search(ctx.src, max(0, m.start() - 160), m.start())
        if head is None:
            continue
        node = root.descendant_for_byte_range(head.start(), head.start())
        if node is not None and node.type in ("comment", "string_literal", "string_content",
                                              "raw_string_literal", "char_literal"):
            continue
        if ctx.src.count(b"\n", 0, head.start()) + 1 in reported:
            continue
        if node is not None and _apart_from_hip(ctx, node):
            continue
        _report(ctx, (head.start(), m.end()), m.group(1).decode(), "type")
