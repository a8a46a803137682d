"""The worker's counters (process memory; under the prefork pool each child writes its own files in
PROMETHEUS_MULTIPROC_DIR and /metrics adds them up: harness.ops.metrics)."""

from prometheus_client import Counter, Histogram

# outcome: worker.state.ResumeOutcome, what resume_run_by_id returned, or `error` for an exception.
RESUMES = Counter("harness_resumes_total", "Resumes run by the worker, by outcome.", ["outcome"])
RESUME_DURATION = Histogram("harness_resume_duration_seconds", "Time one resume took, by outcome.", ["outcome"],
                            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0))
