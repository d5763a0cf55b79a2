"""HP107: a name mapped to a HIP function that follows an older CUDA signature."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.rule import Rule
from hipport.rules import REGISTRY
from hipport.versions import short_version

if TYPE_CHECKING:
    from hipport.mapping import Resolution


@REGISTRY.rule
class SignatureDiffersForCuda:
    """HIP counterpart follows an older CUDA signature

    ## Why
    HIPIFY's tables mark the mapping unsupported for some CUDA versions (the `U` column):
    CUDA changed the function's signature in those versions and HIP kept the older one.
    The name is rewritten, but a call written against the newer CUDA signature will not
    compile, or will pass its arguments differently.

    ## Example

    ```cuda
    cudaMemPrefetchAsync(ptr, bytes, location, 0, stream);   // CUDA 13: cudaMemLocation
    ```

    ```cuda
    hipMemPrefetchAsync(ptr, bytes, device, stream);           // HIP: a device ordinal
    ```

    ## Fix

    Compare the call with the HIP signature (`hipport map NAME` shows the versions), and
    use the HIP function that matches, such as a `_v2` variant where one exists.
    """

    code = "HP107"
    slug = "api-signature-differs"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


def signature_differs(name: str, res: "Resolution") -> tuple[Rule, str, str] | None:
    """The HP107 finding (rule, message, suggestion) for a mapped name token, or None: the
    tables mark the mapping unsupported for some CUDA versions and the token is the CUDA
    name itself (not a spelling resolved through an overload)."""
    if not (res.entry.hip_unsupported_cuda and res.cuda == name):
        return None
    versions = ", ".join(short_version(v) for v in res.entry.hip_unsupported_cuda)
    return (SignatureDiffersForCuda,
            f"{name} → {res.target}: HIPIFY marks this mapping unsupported for code "
            f"written against CUDA {versions}, whose signature differs",
            f"Compare the call with {res.target}'s HIP signature.")
