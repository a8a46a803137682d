"""The create_console_user command makes a user who can log in with one role and their projects."""

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from harness.tenancy import Role, projects_for_user, user_has_role

pytestmark = pytest.mark.django_db


def test_creates_a_reviewer_of_one_project_who_can_log_in(project, other_project) -> None:  # type: ignore[no-untyped-def]
    call_command(
        "create_console_user", "rita", "--role", "reviewer", "--password", "a-long-password", "--project", "acme"
    )
    user = User.objects.get(username="rita")
    assert user_has_role(user, Role.REVIEWER) and not user_has_role(user, Role.OPERATOR)
    assert list(projects_for_user(user)) == [project]
    client = Client()
    response = client.post(reverse("login"), {"username": "rita", "password": "a-long-password"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get(reverse("runs:approval_inbox")).status_code == 200


def test_rerunning_changes_the_role_and_password(project) -> None:  # type: ignore[no-untyped-def]
    call_command("create_console_user", "otto", "--role", "reviewer", "--password", "first-password")
    call_command(
        "create_console_user", "otto", "--role", "operator", "--password", "second-password", "--project", "acme"
    )
    user = User.objects.get(username="otto")
    assert list(user.groups.values_list("name", flat=True)) == ["operator"]
    assert user.check_password("second-password")


def test_refuses_unknown_projects_and_short_passwords(project) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CommandError, match="No such project: nope"):
        call_command("create_console_user", "x", "--role", "admin", "--password", "long-enough-pw", "--project", "nope")
    with pytest.raises(CommandError):
        call_command("create_console_user", "x", "--role", "admin", "--password", "short")
    assert not User.objects.filter(username="x").exists()
