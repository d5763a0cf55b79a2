"""Findings learnt by compiling conversions against the released HIP 6.2 and 7.1 headers.

Each rule here answers a compile error that ``hipport verify`` saw on real programs and no
other rule predicted; the facts (which functions, which architectures, which argument
counts) are data in ``mappings/released_headers.toml``, each checked against both header
sets. Codes follow the families: HP12x API calls, HP217 warp masks, HP33x device code.
One module per hazard, its rules' pages beside their checks; ``common`` holds the data and
the declaration lookup they share. The modules are imported in this order because the
header rule reads what the others found on a line (its file visitor runs after theirs).
"""

from __future__ import annotations

from hipport.rules.released_headers import (  # noqa: F401  (registration order)
    masks, images, void_pointers, device_functions, pasting, headers, overloads, vector_operators,
    struct_tags, register_flags, device_pointer, object_handles, unknown_names,
    tile_shuffles, members, dialect, qualifiers, stand_ins,
    host,
)
