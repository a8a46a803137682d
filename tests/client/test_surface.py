"""The client covers the API's schema, both clients have the same methods, and configuration."""

import inspect

import httpx
import pytest
from django.test import Client
from harness_client import AsyncHarnessClient, HarnessClient
from harness_client.protocol import ROUTES

from tests.client.test_retry import SESSION, scripted


@pytest.mark.django_db
def test_every_operation_of_the_schema_has_its_method() -> None:
    schema = Client().get("/api/schema/?format=json").json()
    operations = {
        op["operationId"]: (method.upper(), path)
        for path, methods in schema["paths"].items() if path.startswith("/api/v1/")
        for method, op in methods.items()
    }
    declared = {name: (route.method, "/api/v1/" + route.template) for name, route in ROUTES.items()}
    assert declared == operations


def test_the_sync_and_async_clients_have_the_same_methods() -> None:
    """One declaration per operation makes both: same names, signatures and docs; async where it waits."""
    sync = HarnessClient("http://harness.test", "hc_x")
    asynchronous = AsyncHarnessClient("http://harness.test", "hc_x")
    sync_methods = {k: v for k, v in public_bound(sync).items() if k not in ("close", "for_user")}
    async_methods = {k: v for k, v in public_bound(asynchronous).items() if k not in ("aclose", "for_user")}
    assert sync_methods == async_methods
    # for_user makes a client of its own kind: the same parameters, each returning its own class.
    assert (inspect.signature(sync.for_user).parameters.keys()
            == inspect.signature(asynchronous.for_user).parameters.keys())
    assert len(sync_methods) >= len(ROUTES)
    for name in sync_methods:
        method = getattr(sync, name)
        assert method.__doc__ and method.__name__ == name
        assert inspect.iscoroutinefunction(getattr(asynchronous, name)) != name.startswith("list_")


def public_bound(client: object) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(getattr(client, name)) for name in dir(client)
            if not name.startswith("_") and callable(getattr(client, name))}


def test_configuration_from_arguments_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_URL", "http://harness.test:8000/")
    monkeypatch.setenv("HARNESS_TOKEN", "hc_from_env")
    transport, seen = scripted(httpx.Response(200, json=SESSION))
    with HarnessClient(transport=transport) as hc:
        hc.get_session(7)
    assert str(seen[0].url) == "http://harness.test:8000/api/v1/sessions/7/"
    assert seen[0].headers["Authorization"] == "Bearer hc_from_env"
    assert "hc_from_env" not in repr(hc)

    with HarnessClient("https://h.example/api/v1", "hc_arg", transport=transport) as hc:
        hc.get_session(7)
    assert str(seen[1].url) == "https://h.example/api/v1/sessions/7/"
    assert seen[1].headers["Authorization"] == "Bearer hc_arg"

    monkeypatch.delenv("HARNESS_TOKEN")
    with pytest.raises(ValueError, match="HARNESS_TOKEN"):
        HarnessClient()
    monkeypatch.delenv("HARNESS_URL")
    with pytest.raises(ValueError, match="HARNESS_URL"):
        AsyncHarnessClient(token="hc_x")
    with pytest.raises(TypeError, match="positive int"):
        HarnessClient("http://h", "t").get_run("1; DROP")  # type: ignore[arg-type]
