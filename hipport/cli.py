"""The command line: click commands that parse flags into Options and call one function.

No logic lives here. Heavy modules (tree-sitter, the mapping tables) are imported inside
the commands so that ``hipport --version`` and ``--help`` start instantly.
"""

from __future__ import annotations

import sys

import click

from hipport import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="hipport")
def main() -> None:
    """Port CUDA to ROCm/HIP with a real parser, and report what needs a person.

    \b
      hipport convert src/ -o hip/      rewrite CUDA sources as HIP (+ hipport-report.md)
      hipport scan src/                 the porting-risk report alone, no files written
      hipport check a.cu b.cuh          the commit gate (pre-commit, CI)
      hipport deps path/to/repo         how portable a research repository is to ROCm
      hipport map cudaMalloc            a name's mapping across ROCm releases
      hipport rules [HP201]             the rule catalogue, or one rule's page

    Targets: --rocm 6.3 or --rocm 7.2.1 (default). Exit status: 0 ok, 1 findings at or
    above --fail-on, 2 usage or I/O errors.
    """


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
