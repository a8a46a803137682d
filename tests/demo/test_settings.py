"""The demo is off by default: production settings configure no demo app, tool or node handler.

Settings are read once per process, so each case starts a fresh one with the environment it names.
"""

import json

from tests.subprocesses import child_env, run_python

DEMO_ENVIRONMENT = ("HARNESS_DEMO", "HARNESS_TOOL_ADAPTERS", "HARNESS_NODE_HANDLERS")

SHOW_SETTINGS = """
import json

import django

django.setup()
from django.apps import apps
from django.conf import settings
from django.core.management import get_commands
from django.utils.module_loading import import_string

paths = dict(settings.HARNESS_NODE_HANDLERS)
paths.update({name: config["callable"] for name, config in settings.HARNESS_TOOL_ADAPTERS.items()
              if config.get("kind") == "python"})
print(json.dumps({
    "apps": [config.name for config in apps.get_app_configs()],
    "adapters": settings.HARNESS_TOOL_ADAPTERS,
    "handlers": settings.HARNESS_NODE_HANDLERS,
    "load_demo": "load_demo" in get_commands(),
    "resolved": {name: f"{f.__module__}.{f.__qualname__}" for name, f in
                 ((name, import_string(path)) for name, path in paths.items())},
}))
"""


def settings_of_a_process_with(**env: str) -> dict:
    environ = child_env(**env)
    for name in DEMO_ENVIRONMENT:
        if name not in env:
            environ.pop(name, None)  # bin/test turns the demo on; these cases start from nothing
    return json.loads(run_python(SHOW_SETTINGS, env=environ))


def test_production_defaults_configure_no_demo_app_tool_or_node_handler() -> None:
    shown = settings_of_a_process_with()
    assert shown["adapters"] == {} and shown["handlers"] == {}
    assert not any(name == "demo" or name.startswith("demo.") for name in shown["apps"])
    assert shown["load_demo"] is False


def test_harness_demo_installs_the_demo_and_its_tool_and_node_handlers() -> None:
    shown = settings_of_a_process_with(HARNESS_DEMO="1")
    assert "demo" in shown["apps"] and shown["load_demo"] is True
    assert shown["adapters"] == {
        "publish_chapter": {"kind": "python", "callable": "demo.tools.publish_chapter",
                            "required_arguments": ["chapter", "title"], "honours_idempotency_key": True},
        "pay_royalties": {"kind": "python", "callable": "demo.tools.pay_royalties",
                          "required_arguments": ["payee", "amount_eur"], "honours_idempotency_key": True},
    }
    assert shown["resolved"] == {
        "publish_chapter": "demo.tools.publish_chapter",
        "pay_royalties": "demo.tools.pay_royalties",
        "outline": "demo.nodes.outline",
        "draft": "demo.nodes.draft",
        "summarize": "demo.nodes.summarize",
    }


def test_the_users_json_is_merged_over_the_demo_and_null_removes_an_entry() -> None:
    invoice = {"kind": "http", "url": "https://billing.example/api", "timeout": 10}
    shown = settings_of_a_process_with(
        HARNESS_DEMO="1",
        HARNESS_TOOL_ADAPTERS=json.dumps({"publish_chapter": None, "pay_royalties": None, "send_invoice": invoice}),
        HARNESS_NODE_HANDLERS=json.dumps({"draft": None, "review": "demo.nodes.draft"}),
    )
    assert shown["adapters"] == {"send_invoice": invoice}
    assert shown["handlers"] == {"outline": "demo.nodes.outline", "summarize": "demo.nodes.summarize",
                                 "review": "demo.nodes.draft"}
