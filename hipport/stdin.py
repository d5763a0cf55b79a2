"""``-`` as a path: one source read from standard input, as formatters and linters allow.

Editors and pre-commit-style pipelines pipe a buffer through a tool (``cat x.cu | hipport
convert - -o -``). The input has no name, so ``--stdin-filename NAME`` gives it one: its
extension decides whether it is a source (``--extensions``), and findings name it. Without it the input is read as
``stdin.cu``, which is what piping CUDA into a CUDA porting tool almost always means.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

from hipport.options import Options
from hipport.pipeline import FileResult

STDIN = "-"
DEFAULT_NAME = "stdin.cu"


class StdinError(ValueError):
    """``-`` used in a way that cannot work (mixed with paths); exit status 2."""


def wants_stdin(paths: list[Path]) -> bool:
    """True when the only input is ``-``; ``-`` beside other paths is a usage error."""
    if not any(str(p) == STDIN for p in paths):
        return False
    if len(paths) != 1:
        raise StdinError("- (standard input) cannot be combined with other paths")
    return True


def process_stdin(options: Options, name: str | None,
                  stream: BinaryIO | None = None) -> tuple[FileResult, bytes]:
    """Standard input through the same stages as a file named ``name``: (result, the bytes read)."""
    from hipport.edits import EditConflict
    from hipport.files import is_binary, looks_like_cuda
    from hipport.pipeline import transform

    display = name or DEFAULT_NAME
    data = (stream or sys.stdin.buffer).read()
    result = FileResult(path=display, rel=Path(display).name, status="other")
    if Path(display).suffix.lower() not in options.extensions:
        result.note = "not a source by its extension; passed through"
    elif is_binary(data):
        result.status, result.note = "skipped", "binary input (NUL bytes); left as it is"
    elif not looks_like_cuda(data):
        result.status = "unchanged"
    else:
        try:
            new, result.findings, result.rewrites = transform(data, display, options)
        except EditConflict as e:
            result.status, result.error = "error", f"internal: {e}"
        else:
            result.status = "converted" if new != data else "unchanged"
            result.output = new if new != data else None
    return result, data
