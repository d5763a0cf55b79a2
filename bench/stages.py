"""An instrumented in-process run: where the time of one ``convert`` goes, stage by stage.

The stages are timed by wrapping the functions the pipeline calls (read, pre-filter,
parse, context set-up, every registered visitor, apply edits) and by writing the
outputs here, so nothing in hipport carries timing code. The walk itself (tree cursor
and dispatch) is what remains of ``analyze`` once parse, set-up and visitors are taken
out. Wrapping costs a little per call, so the instrumented total is slightly above a
plain run; the split, not the total, is the point.

Run as ``python bench/stages.py CORPUS OUT [--json]``; ``bench.py`` does that for you in
a fresh process so the wrappers never leak into the measured runs.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

_clock = time.perf_counter
totals: dict[str, float] = defaultdict(float)
visitor_totals: dict[str, float] = defaultdict(float)
visitor_calls = 0


def _timed(stage: str, fn: Callable) -> Callable:
    def wrapper(*args, **kwargs):
        t = _clock()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[stage] += _clock() - t
    return wrapper


def _timed_visitor(stage: str, fn: Callable) -> Callable:
    name = f"{fn.__module__.removeprefix('hipport.')}.{fn.__name__}"

    def wrapper(*args):
        global visitor_calls
        visitor_calls += 1
        t = _clock()
        try:
            return fn(*args)
        finally:
            dt = _clock() - t
            totals[stage] += dt
            visitor_totals[name] += dt
    wrapper.__dict__.update(fn.__dict__)  # keeps a visitor's name filter (Registry.visits(names=...))
    return wrapper


def _wrapper_cost(n: int = 200_000) -> float:
    """Seconds one visitor wrapper adds to a call, so the walk is not blamed for it."""
    def noop(*args: object) -> None:
        return None

    wrapped = _timed_visitor("calibration", noop)
    start = _clock()
    for _ in range(n):
        noop(None, None)
    bare = _clock() - start
    start = _clock()
    for _ in range(n):
        wrapped(None, None)
    cost = (_clock() - start - bare) / n
    totals.pop("calibration")
    visitor_totals.pop(f"{noop.__module__}.noop", None)
    return max(cost, 0.0)


def instrument() -> None:
    """Wrap the pipeline's stage functions and every registered visitor, in place."""
    from hipport import analyze, context, pipeline, rewrite, rules

    pipeline.read_bytes = _timed("read", pipeline.read_bytes)
    pipeline.looks_like_cuda = _timed("pre-filter", pipeline.looks_like_cuda)
    pipeline.apply_edits = _timed("apply edits", pipeline.apply_edits)
    analyze.parse = _timed("parse", analyze.parse)
    analyze.parse_range = _timed("parse (macro bodies)", analyze.parse_range)
    original_init = context.Context.__post_init__
    context.Context.__post_init__ = _timed("context set-up", original_init)
    analyze.analyze = _timed("analyze", analyze.analyze)
    for stage, reg in (("rewrite", rewrite.load()), ("rules", rules.load())):
        for visitors in reg.visitors.values():
            visitors[:] = [replace(v, fn=_timed_visitor(stage, v.fn)) for v in visitors]
        reg.file_visitors[:] = [replace(v, fn=_timed_visitor(stage, v.fn)) for v in reg.file_visitors]


def run(corpus: Path, out: Path) -> dict:
    """Convert ``corpus`` into ``out`` in-process, one job, and return the split (seconds)."""
    instrument()
    from hipport.files import atomic_write, output_path
    from hipport.options import Options
    from hipport.pipeline import run_paths

    write = _timed("write", atomic_write)
    start = _clock()
    for result in run_paths([corpus], Options(jobs=1, apply_fixes=True), avoid=out):
        if result.output is not None:
            write(output_path(out, Path(result.rel)), result.output)
    wall = _clock() - start
    analyze_total = totals.pop("analyze")
    inside = ("parse", "parse (macro bodies)", "context set-up", "rewrite", "rules")
    split = dict(totals)
    calls = visitor_calls  # read before calibrating, which calls the wrapper too
    overhead = _wrapper_cost() * calls
    split["walk + dispatch"] = analyze_total - sum(totals.get(k, 0.0) for k in inside) - overhead
    split["instrumentation"] = overhead
    split["other (discovery, results)"] = wall - sum(split.values())
    top = sorted(visitor_totals.items(), key=lambda kv: -kv[1])
    return {"wall": wall, "stages": split, "visitors": dict(top)}


if __name__ == "__main__":
    result = run(Path(sys.argv[1]), Path(sys.argv[2]))
    print(json.dumps(result))
