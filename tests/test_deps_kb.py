"""The knowledge base: generated from the reference, indexed the way the readers need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hipport.deps import kb

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT.parent / "shared" / "reference" / "python-deps-rocm.json"


@pytest.mark.skipif(not REFERENCE.exists(), reason="reference data not beside the repository")
def test_generated_json_is_up_to_date_and_covers_the_reference():
    done = subprocess.run([sys.executable, "tools/gen_deps_kb.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    titles = {e.title for e in kb.load().entries.values()}
    assert {r["package"] for r in json.loads(REFERENCE.read_text())} <= titles


@pytest.mark.parametrize("name, key", [
    ("Flash_Attn", "flash-attn"), ("nvidia-cusparse-cu12", "nvidia-cuda-wheels"),
    ("nvidia-nccl-cu12", "nvidia-nccl"), ("cupy-cuda11x", "cupy"), ("spconv-cu120", "spconv"),
    ("pytorch", "torch"), ("requests", None),
])
def test_pep503_names_and_patterns(name, key):
    entry = kb.load().by_name(name)
    assert (entry.key if entry else None) == key


@pytest.mark.parametrize("dotted, key", [
    ("flash_attn", "flash-attn"), ("flash_attn.cute.interface", "flash-attn-4"),
    ("flash_attn_interface", "flash-attn-3"), ("numba.cuda.random", "numba-cuda"),
    ("numba", "numba"), ("xformers.ops", "xformers"), ("cuda.bindings.driver", "cuda-python"),
])
def test_import_names_use_the_longest_prefix(dotted, key):
    assert kb.load().by_import(dotted)[0].key == key


def test_every_status_and_band_is_scorable():
    factors = kb.scoring()["factor"]
    for entry in kb.load().entries.values():
        for band in entry.versions + entry.rocm:
            assert band.get("status", entry.status) in {
                "native official support", "official ROCm wheels from a separate index",
                "AMD-maintained fork", "community build", "not supported"}
    assert set(factors) >= {"native", "native_source_build", "separate_index", "amd_fork", "community",
                            "not_supported", "not_supported_with_replacement", "unknown_gpu", "remove"}
