"""The push (issue 35): waiters learn that an approval or a run changed without polling.

PostgreSQL sends a NOTIFY on `harness_push` when an approval is created or decided and when a run's status changes
(triggers, runs_app/sql/harness_push_notify.v1.sql: delivered on commit only). One connection per ASGI process
LISTENs (`hub.PushHub`) and wakes the waiters of that row in memory; the routes (`routes`) re-read the row through
the REST handler after each wake and on their timeout, so the answer is always the database's, never the payload's.
"""
