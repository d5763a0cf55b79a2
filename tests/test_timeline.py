"""The release timeline of HIP spellings: the generator's rules (on small synthetic rows) and
the known cases of the real tables, 6.3 and 7.2.1 side by side."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main
from hipport.mapping import Status, load_table
from hipport.versions import parse_version

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("gen_mappings", REPO / "tools" / "gen_mappings.py")
gen = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("gen_mappings", gen)
_spec.loader.exec_module(gen)


def _row(hip: str | None, **cells: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(gen.COLUMNS)
    row.update(cuda="x", hip=hip, **cells)
    return row


def _attach(new: dict, old: dict | None, overrides: list[dict] | None = None) -> list | None:
    rows = {"fam": {"cuX": new}}
    old_rows = {"fam": {"cuX": old}} if old is not None else {}
    gen.attach_spans(rows, old_rows, {"older": {"synced_to": "6.3.0"}, "overrides": overrides or []})
    return rows["fam"]["cuX"]["spans"]


def _pick(spans: list | None, column: str) -> list:
    i = gen.SPAN_COLUMNS.index(column)
    return [s[i] for s in spans or ()]


def test_same_name_in_both_editions_has_no_timeline() -> None:
    assert _attach(_row("hipX", hip_added="5.0.0"), _row("hipX", hip_added="6.0.0")) is None
    assert _attach(_row("hipX"), _row(None)) is None  # only the newer edition knows it
    assert _attach(_row("hipX"), None) is None


def test_switch_at_the_newer_rows_first_change_after_the_sync() -> None:
    spans = _attach(_row("hipblasF", hip_added="3.0.0", hip_changed=["5.0.0", "7.0.0"]),
                    _row("hipblasF_v2", hip_added="6.0.0"))
    assert _pick(spans, "hip") == ["hipblasF_v2", "hipblasF"]
    assert _pick(spans, "from") == [None, "7.0.0"] and _pick(spans, "until") == ["7.0.0", None]
    assert _pick(spans, "hip_added") == ["6.0.0", "3.0.0"]


def test_switch_at_the_newer_rows_added_when_no_change_is_given() -> None:
    spans = _attach(_row("hipNew", hip_added="7.1.0"), _row("hipOld", hip_added="6.2.0"))
    assert _pick(spans, "until") == ["7.1.0", None]


def test_unknown_switch_stops_the_generator() -> None:
    with pytest.raises(gen.TableError, match="no switch release"):
        _attach(_row("hipNew", hip_added="4.3.0"), _row("hipOld", hip_added="4.3.0"))


def test_override_switch_and_its_reason() -> None:
    ov = [{"names": ["cuX"], "action": "switch", "at": "7.0.0", "reason": "R", "source": "S"}]
    spans = _attach(_row("hipNew", hip_added="4.3.0"), _row("hipOld", hip_added="6.1.0"), ov)
    assert _pick(spans, "until") == ["7.0.0", None]
    assert _pick(spans, "note")[1] == "R [S]"


def test_override_newer_sets_cells_on_the_row_and_its_one_span() -> None:
    ov = [{"names": ["cuX"], "action": "newer", "set": {"hip_added": "6.2.0"}, "reason": "R", "source": "S"}]
    new = _row("hipJitOptionX", hip_added="6.4.0")
    spans = _attach(new, _row("HIPRTC_JIT_X", hip_added="1.6.0"), ov)
    assert new["hip_added"] == "6.2.0"
    assert _pick(spans, "hip") == ["hipJitOptionX"] and _pick(spans, "from") == [None]


def test_overrides_that_do_nothing_are_errors() -> None:
    ov = [{"names": ["cuX"], "action": "switch", "at": "7.0.0", "reason": "R", "source": "S"}]
    with pytest.raises(gen.TableError, match="agree"):
        _attach(_row("hipX"), _row("hipX"), ov)
    ov = [{"names": ["cuGone"], "action": "newer", "reason": "R", "source": "S"}]
    with pytest.raises(gen.TableError, match="cuGone"):
        _attach(_row("hipX"), None, ov)


def test_the_older_editions_mark_of_its_own_release_is_not_carried() -> None:
    spans = _attach(_row("hipF_64", hip_added="6.3.0", hip_changed=["7.0.0"]),
                    _row("hipF_v2_64", hip_added="6.3.0", hip_experimental="6.3.0"))
    assert _pick(spans, "hip_experimental") == [None, None]


# -- the real tables ---------------------------------------------------------------------------

V63, V721 = parse_version("6.3"), parse_version("7.2.1")

#: CUDA name → (HIP name on 6.3, HIP name on 7.2.1), both applied. Each is checked in
#: mappings/timeline.toml or the editions' README against rocm-versions.md and HIP headers.
SIDE_BY_SIDE = {
    "cublasScnrm2_v2": ("hipblasScnrm2_v2", "hipblasScnrm2"),
    "cublasCgemmBatched_64": ("hipblasCgemmBatched_v2_64", "hipblasCgemmBatched_64"),
    "cublasGemmEx": ("hipblasGemmEx_v2", "hipblasGemmEx"),
    "CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID": ("hipDeviceAttributePciDomainID", "hipDeviceAttributePciDomainId"),
    "cudaDevAttrPciDomainId": ("hipDeviceAttributePciDomainID", "hipDeviceAttributePciDomainId"),
    "CUDA_MEMSET_NODE_PARAMS": ("HIP_MEMSET_NODE_PARAMS", "hipMemsetParams"),
    "cudaGetDriverEntryPoint": ("hipGetProcAddress", "hipGetDriverEntryPoint"),
    "cudaDriverEntryPointSuccess": ("HIP_GET_PROC_ADDRESS_SUCCESS", "hipDriverEntryPointSuccess"),
    "CU_JIT_INPUT_PTX": ("HIPRTC_JIT_INPUT_PTX", "hipJitInputPtx"),
    "CU_JIT_MAX_REGISTERS": ("hipJitOptionMaxRegisters", "hipJitOptionMaxRegisters"),
    "__nv_bfloat16": ("__hip_bfloat16", "__hip_bfloat16"),
    "cublasSgemm_64": ("hipblasSgemm_64", "hipblasSgemm_64"),
}


@pytest.mark.parametrize("cuda", sorted(SIDE_BY_SIDE))
def test_known_cases_side_by_side(cuda: str) -> None:
    table = load_table()
    got = []
    for rocm in (V63, V721):
        res = table.view(rocm).resolve(cuda)
        assert res is not None and res.apply, (cuda, rocm, res)
        got.append(res.target)
    assert tuple(got) == SIDE_BY_SIDE[cuda]


def test_batch_mem_op_graph_nodes_are_reported_on_63() -> None:
    # The 6.3 edition maps them undated; HIP 6.2's header lacks them and HIP's changelog adds
    # them in 6.4, so timeline.toml keeps the newer edition's date (a finding, not a guess).
    table = load_table()
    res = table.view(V63).resolve("cuGraphAddBatchMemOpNode")
    assert res is not None and (res.status, res.apply) == (Status.NEWER, False)
    assert table.view(V721).resolve("cuGraphAddBatchMemOpNode").apply


def test_spans_follow_a_release_between_the_two() -> None:
    view = load_table().view(parse_version("7.0"))
    assert view.resolve("cublasScnrm2_v2").target == "hipblasScnrm2"
    assert view.resolve("cudaGetDriverEntryPoint").target == "hipGetProcAddress"


def test_369_cublas_names_differ_on_63() -> None:
    table = load_table()
    v63, v721 = table.view(V63), table.view(V721)
    differ = [e.cuda for e in table.family_entries("blas")
              if v63._resolve(e).target != v721._resolve(e).target]
    assert len(differ) == 369


def test_old_spellings_are_found_by_reverse_lookup() -> None:
    assert [e.cuda for e in load_table().find_by_target("hipblasScnrm2_v2")] == ["cublasScnrm2", "cublasScnrm2_v2"]


def test_cli_map_shows_every_spelling_with_its_range() -> None:
    out = CliRunner().invoke(main, ["map", "cublasScnrm2_v2"])
    assert out.exit_code == 0, out.output
    assert "HIP spelling hipblasScnrm2_v2: until 7.0 — HIPIFY's ROCm 6.3.0 edition" in out.output
    assert "HIP spelling hipblasScnrm2: from 7.0" in out.output
    assert "6.3:   mapped → hipblasScnrm2_v2" in out.output
    js = CliRunner().invoke(main, ["map", "CU_JIT_CACHE_MODE", "--json"])
    entry = json.loads(js.output)["entries"][0]
    assert entry["spans"][0]["range"] == "every release" and "hipJitOption" in entry["spans"][0]["note"]
