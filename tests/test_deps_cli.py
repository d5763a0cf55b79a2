"""`hipport deps` on the command line: formats, batch mode, exit codes, escaping."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hipport.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "deps"


def run(*args: str):
    return CliRunner().invoke(main, ["deps", *args])


def test_batch_jsonl_one_line_per_repository():
    repos = sorted(str(p) for p in FIXTURES.iterdir() if p.is_dir())
    result = run(*repos, "--format", "jsonl", "--no-kernels")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == len(repos)
    for line, repo in zip(lines, repos):
        d = json.loads(line)
        assert d["repository"] == repo and d["command"] == "deps"
        assert 0 <= d["score"] <= 100 and d["grade"] in "ABCDF"


def test_json_puts_blockers_first_and_attributes_points():
    result = run(str(FIXTURES / "tensorrt-deploy"), "-f", "json", "--no-kernels")
    d = json.loads(result.stdout)
    flags = [dep["blocker"] for dep in d["dependencies"]]
    assert flags == sorted(flags, reverse=True)
    assert set(d["blockers"]) == {"tensorrt", "pycuda"}
    assert d["verdicts"]["needs-work"][:2] == ["onnxruntime-gpu", "nvidia-cuda-wheels"]
    assert round(sum(x["points"] for x in d["deductions"]), 1) == round(100 - d["score"], 1)
    assert all(f["code"].startswith("HP") and "column" in f for f in d["findings"])


def test_rocm_flag_changes_the_verdict():
    def cupy(rocm: str) -> dict:
        d = json.loads(run(str(FIXTURES / "conda-gnn"), "-f", "json", "--rocm", rocm, "--no-kernels").stdout)
        assert d["target"] == rocm
        return next(x for x in d["dependencies"] if x["key"] == "cupy")

    assert cupy("6.3")["level"] != cupy("7.2.1")["level"]


def test_text_and_markdown_name_the_blocker_and_the_formula():
    text = run(str(FIXTURES / "tensorrt-deploy"), "--no-kernels").stdout
    assert "Blockers: pycuda, tensorrt" in text
    text = run(str(FIXTURES / "llm-finetune-legacy"), "--no-kernels").stdout
    assert "Blockers" not in text and "pin: flash-attn>=2.6.2 (a minor bump)" in text
    md = run(str(FIXTURES / "llm-finetune-legacy"), "-f", "markdown", "--no-kernels").stdout
    assert "| `flash-attn` | needs-work |" in md and "score = 100 - sum(points)" in md


def test_html_is_self_contained_and_escaped(tmp_path):
    repo = tmp_path / "<script>alert(1)<"
    repo.mkdir()
    (repo / "requirements.txt").write_text("tensorrt\n")
    result = run(str(repo), "-f", "html")
    assert result.exit_code == 0
    page = result.stdout
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;" in page
    assert "<link" not in page and " src=" not in page and "@import" not in page


def test_missing_path_is_a_usage_error_naming_it(tmp_path):
    result = run(str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert str(tmp_path / "nope") in result.output


def test_fail_under(tmp_path):
    (tmp_path / "requirements.txt").write_text("pycuda\n")
    assert run(str(tmp_path), "--fail-under", "90").exit_code == 1
    assert run(str(tmp_path), "--fail-under", "10").exit_code == 0


def test_unreadable_manifest_warns_and_still_scores(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\n")
    (tmp_path / "requirements.txt").write_text("torch\n")
    result = run(str(tmp_path), "-f", "json")
    assert result.exit_code == 0
    d = json.loads(result.stdout)
    assert d["errors"][0]["path"] == "pyproject.toml"
    assert "pyproject.toml" in result.stderr
