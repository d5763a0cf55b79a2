"""HP330, HP331: texture and surface calls the released HIP headers reject: no image
instructions on the target GPU, or a surface call in a form HIP does not have."""

from __future__ import annotations

from hipport import gpus
from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.edits import Edit
from hipport.rewrite.arguments import supersede
from hipport.rules.released_headers.common import callee, data, raw_data


@REGISTRY.rule
class ImageApiUnavailable(SaysWhatItIs):
    """Texture or surface fetch in device code: no image support on MI300 / MI350

    ## Why
    HIP declares its texture and surface functions unavailable where the GPU has no image
    instructions (`__HIP_NO_IMAGE_SUPPORT`: gfx940–942 in HIP 6.2, gfx942 and gfx950 in 7.1),
    so for those targets every `tex1Dfetch`, `tex2D`, `surf2Dwrite`… is a compile error.
    Texture and surface objects work on gfx90a and RDNA: reported only when an
    `--offload-arch` target (default gfx942) lacks image support (`mappings/gpus.toml`).

    ## Example

    ```cuda
    float v = tex1Dfetch<float>(tex, i);
    ```
    becomes, for gfx942,
    ```cuda
    float v = buffer[i];   // the array the texture object was created on
    ```

    ## Fix
    For gfx942 and gfx950, read the underlying buffer directly (with the texture's
    addressing and filtering done by hand where it mattered), or keep the fetch behind a
    check for targets that have image instructions.
    """

    code = "HP330"
    slug = "image-api-unavailable"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class SurfaceSignature(SaysWhatItIs):
    """Surface call in a form HIP does not have

    ## Why
    HIP's surface functions take no boundary-mode argument (only `surf1Dread` does), and
    reads return through a pointer: CUDA's `surf2Dwrite(v, s, x, y, cudaBoundaryModeZero)`
    and `T v = surf2Dread<T>(s, x, y)` do not compile (HIP 6.2 and 7.1
    `amd_surface_functions.h`).

    ## Example

    ```cuda
    surf2Dwrite(v, surf, x * 4, y, cudaBoundaryModeZero);
    float r = surf2Dread<float>(surf, x * 4, y);
    ```
    becomes
    ```cuda
    surf2Dwrite(v, surf, x * 4, y);
    float r; surf2Dread(&r, surf, x * 4, y);
    ```

    ## Fix

    Drop the boundary mode (out-of-range accesses are then not trapped or clamped: check
    the coordinates if the code relied on it); read with `surf2Dread(&v, s, x, y)`.
    `hipport convert` drops a `cudaBoundaryModeTrap` written out: it is CUDA's default
    (CUDA 12.9 `surface_indirect_functions.h`), so the call means the one without it, which
    hipport already writes as HIP's. `cudaBoundaryModeZero` and `cudaBoundaryModeClamp` stay
    findings: HIP has no way to ask for them.
    """

    code = "HP331"
    slug = "surface-signature"
    severity = Severity.HIGH
    effort = Effort.SMALL


def _lacking_images(options) -> list[str]:
    """The ``--offload-arch`` targets without image instructions."""
    return gpus.without_images(gpus.archs_of(options))


@REGISTRY.visits("call_expression", names=any_word_of(data().image), when=lambda o: bool(_lacking_images(o)),
                 codes=(ImageApiUnavailable,))
def _image_call(node: Node, ctx: Context) -> None:
    found = callee(ctx, node, data().image)
    if found is not None and (lacking := _lacking_images(ctx.options)):
        ctx.report(ImageApiUnavailable, node,
                   f"`{found.name}` is unavailable on {', '.join(lacking)}: HIP has no image support there",
                   "read the buffer the texture or surface was made on with plain loads "
                   "(interpolate in code), or build for gfx90a / RDNA only")


@REGISTRY.visits("call_expression", names=any_word_of(data().surface), codes=(SurfaceSignature,))
def _surface_call(node: Node, ctx: Context) -> None:
    found = callee(ctx, node, data().surface)
    if found is not None:
        _check_surface(ctx, node, found.name, call_arguments(node), found.templated, data().surface[found.name])


def _check_surface(ctx: Context, call: Node, name: str, args: list[Node], templated: bool,
                   hip_count: int) -> None:
    if name.endswith("read") and templated and args and not ctx.text(args[0]).startswith("&"):
        ctx.report(SurfaceSignature, call, f"`{name}<T>(surface, ...)` returns the value in CUDA; "
                   f"HIP's {name} only writes through a pointer first argument",
                   f"T v; {name}(&v, surface, ...)")
    elif len(args) == hip_count + 1 and ctx.text(args[-1]) == raw_data()["surface_mode"]["cuda_default"]:
        # CUDA's default, written out: the call means the one without it, which is HIP's form
        fix = Edit(args[-2].end_byte, args[-1].end_byte, b"")
        if ctx.report(SurfaceSignature, call, f"`{name}` takes no boundary-mode argument in HIP; "
                      f"`{ctx.text(args[-1])}` is CUDA's default, so it is dropped",
                      "nothing: the call without it is CUDA's same call", fix=[fix]) \
                and ctx.findings[-1].fixed:
            supersede(ctx, fix)
    elif len(args) == hip_count + 1:
        ctx.report(SurfaceSignature, call, f"`{name}` takes no boundary-mode argument in HIP "
                   f"(`{ctx.text(args[-1])}` here)",
                   "drop it; HIP neither traps nor clamps out-of-range coordinates there")
