"""Telling a project's reviewers that an approval waits: who they are, and the email."""

from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse

from harness.models import Project
from harness.tenancy import Role, role_holders
from notify_app.models import ProjectNotification


def project_reviewer_emails(project_id: int) -> list[str]:
    """The addresses of the project's members who hold the reviewer role in it (or admin), active, with an
    email."""
    return sorted(set(role_holders(project_id, Role.REVIEWER).exclude(email="").values_list("email", flat=True)))


def approval_link(approval_id: int) -> str:
    return f"{settings.HARNESS_CONSOLE_URL}{reverse('runs:approval_detail', args=[approval_id])}"


def approval_summary(facts: dict[str, Any], project_slug: str) -> str:
    return (f"Approval {facts['approval_id']} waits in {project_slug}: {facts['tool']} "
            f"(risk {facts['risk']}), asked by {facts['requested_by']}. {approval_link(facts['approval_id'])}")


def email_reviewers(*, facts: dict[str, Any]) -> int:
    """Email the reviewers of the approval's project (unless the project turned it off); the number sent."""
    setting = ProjectNotification.objects.filter(project_id=facts["project_id"]).first()
    if setting is not None and not setting.email_reviewers:
        return 0
    recipients = project_reviewer_emails(facts["project_id"])
    if not recipients:
        return 0
    slug = Project.objects.filter(pk=facts["project_id"]).values_list("slug", flat=True).first() or "?"
    body = "\n".join([
        approval_summary(facts, slug),
        "",
        f"Run {facts['run_id']}, action fingerprint {facts['fingerprint']}.",
        "Decide it in the console; nobody decides their own request.",
    ])
    # One message per reviewer: no reviewer learns the others' addresses.
    for address in recipients:
        send_mail(f"[Harness] {slug}: approval requested for {facts['tool']}", body,
                  settings.DEFAULT_FROM_EMAIL, [address])
    return len(recipients)
