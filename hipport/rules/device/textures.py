"""HP307 — texture references: declared with ``texture<>``, bound with
``cudaBindTexture*``, read with ``tex1Dfetch(ref, …)``. Reported at every site."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments, text
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import plain_callee
from hipport.rules.device.declarations import Declaration, recorder

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class TextureReference(SaysWhatItIs):
    """Texture references (`texture<>`, `cudaBindTexture*`, `tex1Dfetch` on a reference)

    ## Why
    Texture references were removed in CUDA 12 and are deprecated in HIP since 3.8; their
    HIP emulation returns different error codes and is not maintained.

    ## Example
    ```cuda
    // before
    texture<float, 1, cudaReadModeElementType> texRef;
    float v = tex1Dfetch(texRef, i);
    // after
    cudaTextureObject_t tex;   // created with cudaCreateTextureObject on the host
    float v = tex1Dfetch<float>(tex, i);
    ```

    ## Fix
    Create a texture object on the host and pass it to the kernel.
    """

    code = "HP307"
    slug = "texture-reference"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


_TEX_FETCH = frozenset({"tex1Dfetch", "tex1D", "tex2D", "tex3D", "tex1DLayered", "tex2DLayered", "texCubemap",
                        "tex1DLod", "tex2DLod", "tex3DLod", "tex2DGather"})
_TEX_BIND = frozenset({"cudaBindTexture", "cudaBindTexture2D", "cudaBindTextureToArray",
                       "cudaBindTextureToMipmappedArray", "cudaUnbindTexture", "cudaGetTextureReference",
                       "cudaGetTextureAlignmentOffset"})


@recorder(b"texture", codes=(TextureReference,))
def _texture_decl(decl: Declaration) -> None:
    type_node = decl.type_node
    if type_node is None or type_node.type != "template_type":
        return
    tname = type_node.child_by_field_name("name")
    if tname is not None and text(decl.ctx.src, tname) == "texture":
        decl.ctx.report(TextureReference, decl.node, f"texture reference `{decl.type_text}` (deprecated in HIP, "
                        "removed in CUDA 12)", "use a cudaTextureObject_t created on the host")


@REGISTRY.visits("call_expression", names=any_word_of(_TEX_FETCH | _TEX_BIND), codes=(TextureReference,))
def _call(node: Node, ctx: "Context") -> None:
    plain = plain_callee(ctx, node)
    if plain is None:
        return
    fn, name = plain
    if name in _TEX_BIND:
        ctx.report(TextureReference, node, f"`{name}` binds a texture reference",
                   "create a texture object (cudaCreateTextureObject) and pass it to the kernel")
    elif name in _TEX_FETCH and fn.type == "identifier" and node.child_by_field_name("function").type \
            != "template_function":
        args = call_arguments(node)
        ref = text(ctx.src, args[0]) if args else ""
        ctx.report(TextureReference, node, f"`{name}({ref}, ...)` reads through a texture reference",
                   f"use a texture object: {name}<T>(tex_object, ...)")
