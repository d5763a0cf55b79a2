""""Did you mean": one difflib-based helper for config keys, rule codes, rules and map names."""

from __future__ import annotations

from hipport.suggest import close_matches, closest


def test_case_is_folded_and_the_original_spelling_is_suggested() -> None:
    assert closest("FailOn", ["fail-on", "jobs"]) == "fail-on"
    assert closest("hp2o1", ["HP201", "HP202", "HP3XX"]) == "HP201"
    from hipport.mapping import load_table
    from hipport.report.mapping import close_names

    assert close_names(load_table(), "CUDAMALLOC")[0] == "cudaMalloc"  # difflib alone: no match


def test_ties_go_to_the_candidate_with_more_letters_in_place_then_sorted_order() -> None:
    # HP013 is as like HP101 as HP113 by difflib's ratio; HP113 differs in one place.
    assert close_matches("HP013", ["HP101", "HP113", "HP701"]) == ["HP113", "HP101", "HP701"]
    assert close_matches("HP01", ["HP701", "HP101"]) == ["HP101", "HP701"]  # not the last sorted


def test_nothing_close_enough_is_no_suggestion() -> None:
    assert closest("zzz", ["fail-on", "jobs", "rocm"]) is None
    assert close_matches("x", []) == []
