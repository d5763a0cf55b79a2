"""tools/gen_mappings.py: parsing HIPIFY's tables, merging, determinism, staleness."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from hipport.mapping import MappingTable, family_summary
from hipport.report.mapping import format_summary
from hipport.versions import parse_version

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("gen_mappings", REPO / "tools" / "gen_mappings.py")
gen = importlib.util.module_from_spec(_spec)
sys.modules["gen_mappings"] = gen
_spec.loader.exec_module(gen)

needs_tables = pytest.mark.skipif(not gen.DEFAULT_TABLES.is_dir(), reason="HIPIFY tables not present")

NEW_HEADER = "|**CUDA**|**A**|**D**|**C**|**R**|**HIP**|**A**|**D**|**C**|**R**|**U**|**E**|"
OLD_HEADER = "|**CUDA**|**A**|**D**|**C**|**R**|**HIP**|**A**|**D**|**C**|**R**|**E**|"
JOINT_HEADER = (
    "|**CUDA**|**A**|**D**|**C**|**R**|**HIP**|**A**|**D**|**C**|**R**|**U**|**E**|"
    "**ROC**|**A**|**D**|**C**|**R**|**E**|"
)


def test_header_columns_new_old_and_joint_formats() -> None:
    assert gen.header_columns(NEW_HEADER)[10:] == ["hip_unsupported", "hip_experimental"]
    assert gen.header_columns(OLD_HEADER)[10] == "hip_experimental"
    joint = gen.header_columns(JOINT_HEADER)
    assert joint[12] == "roc" and joint[-1] == "roc_experimental" and "roc_unsupported" not in joint
    miopen = gen.header_columns(OLD_HEADER.replace("HIP", "MIOPEN"))
    assert miopen[5] == "roc"


def test_header_with_unknown_cell_is_an_error() -> None:
    with pytest.raises(gen.TableError):
        gen.header_columns("|**CUDA**|**A**|**X**|")


def test_cells() -> None:
    assert gen.parse_cell("hip", "`hipMalloc`") == "hipMalloc"
    assert gen.parse_cell("hip", " ") is None
    assert gen.parse_cell("hip_changed", "7.1.0, 7.13.0") == ["7.1.0", "7.13.0"]
    assert gen.parse_cell("hip_unsupported", "11.3 11.4") == ["11.3", "11.4"]
    assert gen.parse_cell("hip_experimental", "7.14.0") == "7.14.0"
    assert gen.parse_cell("hip_experimental", "+") is True
    with pytest.raises(gen.TableError):
        gen.parse_cell("hip_added", "soon")


def _write(path: Path, header: str, rows: list[str], section: str = "1. Foo Data types") -> Path:
    sep = "|" + "|".join([":--"] * (header.count("|") - 1)) + "|"
    path.write_text(f"# T\n\n## **{section}**\n\n{header}\n{sep}\n" + "\n".join(rows) + "\n")
    return path


def test_row_cell_count_must_match_header(tmp_path: Path) -> None:
    bad = _write(tmp_path / "bad.md", NEW_HEADER, ["|`cuX`| | | | |`hipX`|1.0.0| | | | |"])
    with pytest.raises(gen.TableError, match="cells"):
        gen.parse_table(bad)


def test_merge_prefers_separate_tables_and_fills_from_joint(tmp_path: Path) -> None:
    hip = gen.parse_table(_write(tmp_path / "h.md", NEW_HEADER, [
        "|`cuA`|1.0| | | |`hipA`|7.10.0| | | | | |",
    ]))
    roc = gen.parse_table(_write(tmp_path / "r.md", NEW_HEADER.replace("HIP", "ROC"), [
        "|`cuA`|1.0|2.0| | |`roc_a`|7.10.0| | | | | |",
    ]))
    joint = gen.parse_table(_write(tmp_path / "j.md", JOINT_HEADER, [
        "|`cuA`|1.0| | | | | | | | | | |`roc_a`|1.0.0| | | | |",
        "|`cuB`| | | | |`hipB`|2.0.0| | | | | |`roc_b`|2.0.0| | | | |",
    ]))
    stats = gen.MergeStats()
    rows = gen.merge_family(hip, roc, joint, stats)
    assert rows["cuA"]["hip"] == "hipA" and rows["cuA"]["hip_added"] == "7.10.0"
    assert rows["cuA"]["roc_added"] == "7.10.0"  # the lagging joint cell is not used
    assert rows["cuA"]["cuda_deprecated"] == "2.0"  # CUDA side from the (newer) ROC table
    assert rows["cuB"]["hip"] == "hipB" and rows["cuB"]["roc"] == "roc_b"
    assert stats.from_joint == {"hip": 1, "roc": 1}
    assert stats.disagreements["hip"] == 2 and stats.disagreements["roc"] == 1


@pytest.mark.parametrize(("name", "kind"), [
    ("cudaStream_t", "type"),
    ("CUstream_st", "type"),
    ("CUdevice", "type"),
    ("CUDA_ARRAY_DESCRIPTOR", "type"),  # CUDA_ARRAY_DESCRIPTOR_st is a sibling
    ("CUDA_ARRAY_DESCRIPTOR_v2", "type"),
    ("CUDA_SUCCESS", "constant"),
    ("CUBLASLT_CLUSTER_SHAPE_2x1x1", "constant"),
    ("cudaError", "type"),
    ("cudaErrorInvalidValue", "enumerator"),
    ("cudaMemcpyHostToDevice", "data"),
])
def test_classify_data_name(name: str, kind: str) -> None:
    siblings = {"CUDA_ARRAY_DESCRIPTOR_st", "cudaError", "cudaErrorInvalidValue",
                "cudaErrorMemoryAllocation", "cudaMemcpyHostToDevice", name}
    assert gen.classify_data_name(name, siblings, gen._enum_stems(siblings)) == kind


def test_function_sections_hold_functions() -> None:
    rows = {"cudaMalloc": {"section": "Memory Management"}, "cudaStream_t": {"section": "Data types used by CUDA Runtime"}}
    gen.assign_kinds(rows)
    assert rows["cudaMalloc"]["kind"] == "function" and rows["cudaStream_t"]["kind"] == "type"


@needs_tables
def test_generator_is_deterministic_and_committed_tables_are_current(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    gen.generate(gen.DEFAULT_TABLES, a)
    gen.generate(gen.DEFAULT_TABLES, b)
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert len(names) == len(gen.load_families())
    for name in names:
        data = (a / name).read_bytes()
        assert data == (b / name).read_bytes(), name
        assert data.endswith(b"}\n")
        committed = REPO / "mappings" / "api" / name
        assert committed.is_file() and committed.read_bytes() == data, (
            f"mappings/api/{name} is stale: run python tools/gen_mappings.py")


@needs_tables
def test_documents_carry_provenance_and_sorted_rows() -> None:
    for path in sorted((REPO / "mappings" / "api").glob("*.json")):
        doc = json.loads(path.read_text())
        assert doc["generated_by"] == "python tools/gen_mappings.py"
        assert doc["sources"] and all((gen.DEFAULT_TABLES / s).is_file() for s in doc["sources"])
        names = [r[0] for r in doc["rows"]]
        assert names == sorted(names) and len(names) == len(set(names))
        assert doc["columns"] == list(gen.COLUMNS)


@needs_tables
def test_blaslt_is_split_out_of_blas_by_section() -> None:
    blas = json.loads((REPO / "mappings/api/blas.json").read_text())
    lt = json.loads((REPO / "mappings/api/blaslt.json").read_text())
    assert set(lt["sections"]) == {"CUBLASLt Data types", "BLASLt Function Reference"}
    assert not set(lt["sections"]) & set(blas["sections"])
    # The README counts 2013 CUBLAS rows in all; the split must lose none.
    assert len(blas["rows"]) + len(lt["rows"]) == 2013


def test_summary_counts_match_the_readme_and_grow_with_the_target() -> None:
    from hipport.mapping import load_table

    by_family = {s.family: s for s in family_summary(load_table())}
    # The reference README's "Summary": rows and rows with a target name, per table, less
    # the names timeline.toml says no header has (hip = "": 8 runtime, 2 driver), plus its
    # [[additions]] (2 driver: cuuint32_t, cuuint64_t; 1 runtime: cudaLaunchKernelEx) and the
    # one name it gives a HIP name no table row has
    # (CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED), and the four *_v2
    # prefetch/advice names it maps from HIP 7.1 (2 runtime, 2 driver).
    assert (by_family["runtime"].rows, by_family["runtime"].with_hip) == (1704 + 1, 1049 - 8 + 2 + 1)
    assert (by_family["driver"].rows, by_family["driver"].with_hip) == (2303 + 2, 1314 - 2 + 2 + 1 + 2)
    # (+1: timeline.toml maps CUBLAS_GEMM_DEFAULT_TENSOR_OP, which no edition does)
    assert by_family["blas"].with_hip + by_family["blaslt"].with_hip == 947 + 1
    assert by_family["dnn"].rows == 1227  # the MIOPEN table has 40 rows the others lack
    old, new = parse_version("6.3"), parse_version("7.2.1")
    assert by_family["file"].applied[old] < by_family["file"].applied[new] == 161
    assert by_family["dnn"].applied[new] == 0  # policy: no hipDNN
    for s in by_family.values():
        assert s.applied[old] <= s.with_hip and s.applied[new] <= s.with_hip
    text = format_summary(load_table())
    assert text.splitlines()[0].split()[-4:] == ["maps", "6.3", "maps", "7.2.1"]
    assert text.splitlines()[-1].startswith("total")


def test_summary_works_on_a_table_loaded_from_a_directory() -> None:
    table = MappingTable.from_dir(REPO / "mappings" / "api", REPO / "mappings")
    assert [s.family for s in family_summary(table, (parse_version("7.2.1"),))][0] == "runtime"
