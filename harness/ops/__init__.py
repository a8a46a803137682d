"""Operations of the kernel: health probes, logs, metrics, tracing, the broker and replica wiring, the
local PostgreSQL, and the fault points tests inject into."""
