"""HTTP plumbing of the kernel: authentication, permissions, limits, idempotency, parsing, rendering,
errors, the handler and middleware chains, and the helpers every console page uses."""
