"""hipport: port CUDA sources to ROCm/HIP and report, honestly, what needs a person.

Kept import-free on purpose: ``hipport --version`` must not pay for tree-sitter or the
mapping tables (see ``cli.py``, which imports the heavy modules lazily).
"""

__version__ = "0.1.0"
