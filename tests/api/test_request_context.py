"""One request context and one may-call rule for both API doors (issue 31, part 2).

The plain path (harness.http.plain) and DRF's view read and write the same RequestContext (harness.http.context) and
ask the same agent_call_refusal (harness.http.permissions); the roles a known token's statement checks are that
rule's. tests/api/test_plain_path.py holds the two doors to the same answers end to end; these hold the pieces.
"""

import itertools

import pytest
from django.test import RequestFactory
from django.utils import timezone
from rest_framework.request import Request

from harness.http import plain
from harness.http.context import context_of
from harness.http.permissions import TokenRole, agent_call_refusal, roles_that_may_call
from harness.models import ApiToken, Project


def test_a_drf_request_and_the_django_request_under_it_share_one_context() -> None:
    django_request = RequestFactory().post("/api/v1/checkpoints/")
    context = context_of(django_request)
    assert context_of(Request(django_request)) is context
    assert context_of(django_request) is context  # made once
    assert context_of(RequestFactory().get("/")) is not context  # and each request has its own


def _token(role: str, *, narrowed: bool, frozen: bool) -> ApiToken:
    project = Project(pk=7, slug="p", name="P", frozen_at=timezone.now() if frozen else None)
    return ApiToken(pk=3, kind=ApiToken.Kind.AGENT, role=role, project=project, parent_id=9 if narrowed else None)


class _View:
    def __init__(self, receiver: bool, narrowed: bool) -> None:
        self.receiver_token_allowed, self.narrowed_token_allowed = receiver, narrowed


ROLES = [TokenRole.AGENT, TokenRole.READER, TokenRole.HANDOFF_RECEIVER]


@pytest.mark.parametrize("write", [False, True])
def test_the_roles_a_known_token_s_statement_checks_are_the_rule_s(write: bool) -> None:
    admitted = [r for r in ROLES if agent_call_refusal(_token(r, narrowed=False, frozen=False), write=write) is None]
    assert roles_that_may_call(write=write) == tuple(admitted)
    assert admitted == ([TokenRole.AGENT] if write else [TokenRole.AGENT, TokenRole.READER])


def test_the_plain_path_takes_exactly_the_calls_the_rule_admits_on_a_view_that_admits_no_narrowing() -> None:
    for role, narrowed, frozen, write in itertools.product(ROLES, [False, True], [False, True], [False, True]):
        token = _token(role, narrowed=narrowed, frozen=frozen)
        refusal = agent_call_refusal(token, write=write, view=_View(receiver=False, narrowed=False))
        assert plain._may_call(token, write) == (refusal is None), (role, narrowed, frozen, write)


def test_the_rule_refuses_in_the_order_callers_have_always_been_told() -> None:
    def code(role: str, *, narrowed: bool = False, frozen: bool = False, write: bool = True,
             view: _View | None = None) -> str | None:
        refusal = agent_call_refusal(_token(role, narrowed=narrowed, frozen=frozen), write=write, view=view)
        return None if refusal is None else refusal.code

    assert code(TokenRole.READER, narrowed=True, frozen=True) == "project_frozen"  # the freeze first
    assert code(TokenRole.HANDOFF_RECEIVER, frozen=False) == "receiver_token_scope"
    assert code(TokenRole.HANDOFF_RECEIVER, view=_View(receiver=True, narrowed=False)) is None  # it writes there
    assert code(TokenRole.READER, narrowed=True) == "narrowed_token_scope"
    assert code(TokenRole.READER, narrowed=True, view=_View(receiver=False, narrowed=True)) == "token_read_only"
    assert code(TokenRole.READER, write=False, frozen=True) is None  # a frozen project stays readable
