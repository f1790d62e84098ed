"""The spans the server keeps for the console (``treadle.tracing.recent``): a run's tree, bounded."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider

from treadle.tracing.recent import RecentSpans
from treadle.tracing.spans import agent_span, step_span


def test_a_runs_spans_are_its_tree_and_old_traces_are_forgotten_within_the_bounds() -> None:
    recent = RecentSpans(max_traces=3, max_spans=5, max_total=8)
    provider = TracerProvider()
    provider.add_span_processor(recent)
    tracer = provider.get_tracer("t")
    for run in range(4):
        with agent_span(tracer, agent_id="a", agent_name="a", run_id=f"run-{run}"):
            for step in range(run + 2):  # run-3 has 5 steps: 6 spans, 5 kept
                with step_span(tracer, step):
                    pass
    names = [s.name for s in recent.run_spans("run-3")]
    # At most max_spans of one trace: the first five to end (the run's own span ends last).
    assert names == ["step 0", "step 1", "step 2", "step 3", "step 4"]
    assert recent.run_spans("run-0") == []  # forgotten: 4 traces > max_traces
    assert recent.run_spans("nope") == []
    # run-2 (4 spans) and run-3 (5 kept) make 9 > max_total: run-1 and run-2 went too.
    assert recent.run_spans("run-1") == [] and recent.run_spans("run-2") == []
    with agent_span(tracer, agent_id="a", agent_name="a", run_id="run-4"):
        with step_span(tracer, 1):
            pass
    tree = recent.run_spans("run-4")
    assert [s.name for s in tree] == ["invoke_agent a", "step 1"]  # in start order, root first
    assert tree[1].parent is not None and tree[1].parent.span_id == tree[0].context.span_id
