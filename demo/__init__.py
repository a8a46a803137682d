"""The demo: the seeds' scenario (`load_demo`) and a tool and node handlers with no model behind them,
so the local start shows the whole loop (approve R-101 in the console -> the worker publishes ->
summarizes -> succeeded).

Off in production: settings installs this app and registers its tool (demo.tools) and node handlers
(demo.nodes) only when HARNESS_DEMO is set, as bin/start and bin/test do.
"""
