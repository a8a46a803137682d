"""What runs_app tells the rest of the house, without importing it.

`resume_requested` is sent (after the transaction commits) when a run has something to resume: its
approval was decided or expired. The resume worker (worker.tasks) listens and queues the resume;
runs_app never imports the worker. The recovery pass finds the run anyway if nobody listens or the
message is lost: the database, not the broker, is the source of truth.
"""

from django.dispatch import Signal

resume_requested = Signal()  # sent with run_id=<int>

# Sent after an approval request commits, for notifications (notify_app listens: reviewer emails, the project's
# Slack-compatible URL, agents' webhooks), with plain values, so a listener needs no read to describe it.
approval_requested = Signal()  # project_id, approval_id, run_id, tool, risk, fingerprint, requested_by

# Sent after an approval's escalation commits (runs_app.services.approval_escalation), for the escalated group's
# notices (notify_app: its members' email, its chat webhook).
approval_escalated = Signal()  # project_id, approval_id, run_id, tool, risk, fingerprint, requested_by, group_id

# Sent after a question to a person commits (runs_app.services.questions), for its notices (notify_app: the routed
# group's members, else the project's reviewers; subscribed webhooks).
question_asked = Signal()  # project_id, question_id, run_id, question, asked_by, group_id
