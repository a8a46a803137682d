"""One module per resume step, each with `run(r: Resume) -> dict | None`; their order is worker.registry."""
