"""A session item's content is stored as `json`, not `jsonb` (harness.fields.TextJSONField; issue 14, bench H2).

Why: the agent's hottest read, the newest items of its session (sessions_app.selectors.session_items_latest_json),
sends each item's content as PostgreSQL writes it. A jsonb value is written out again from its binary form
(jsonb_out escapes each string a character at a time); a json value is its text, copied. For the newest 50 of
10,000 ~1 KB items, the statement alone (prepared, 5 x 300 runs, interleaved, on a copy of the table): 0.79 ms ->
0.60 ms of client wall time (-24%); with no content at all it is 0.29 ms, so the content's output was more than
half of the read. Every item read gains (the timeline, a run's context, the list), and an item now reads back
with its keys in the order the agent wrote them (jsonb sorted them by length, then bytes), as the Agents SDK's
own store gives them back.

What still needs jsonb compares through a cast, with the same meaning as before: the erasure door (the tombstone's
hash is still the SHA-256 of the old content's jsonb text, so tombstones written before and after this migration
say the same thing; the trigger compares the new content with the tombstone as jsonb), person erasure's "already a
tombstone" test (memory_app.erasure), and the handoff's "is this a copy of an origin item" checks
(runs_app.services.handoffs: jsonb equality, so key order and spacing never hide a copy).

A check keeps what jsonb guaranteed whatever the door: every content reads as jsonb (json's own syntax check lets
`\u0000` through, which jsonb refuses), so the casts above never fail on a stored row. A write still pays the jsonb
parse it always paid; the reads are what gain.

Cost: ALTER COLUMN ... TYPE rewrites the table and rebuilds its indexes under an ACCESS EXCLUSIVE lock (no read or
append of items until the migration commits); measured here on 1,000,000 ~1 KB items: see runs_app migration
0024 for the checkpoints' figures (about 17 s a million rows, plus the disk for a second copy of the table). The
rows already stored keep jsonb's text. A statement prepared before the migration that returns the column fails on
that connection ("cached plan must not change result type") until the connection is replaced: start the
processes after migrating, as bin/serve does. Reversible: back to jsonb, with migration 0004's functions.
"""

from django.db import migrations

import harness.fields
from harness.sql_files import install, load

CHECK = "session_item_content_reads_as_jsonb"
# Migration 0004's three functions over a json column: the same rules, with jsonb where they compare (v2).
FUNCTIONS = ("harness_item_tombstone", "harness_item_rewrite_check", "harness_session_items_erase")

# The check keeps what jsonb guaranteed, on every door's write: a content PostgreSQL can read as jsonb (no
# \u0000, which json's syntax check lets through), so the casts in the functions never fail on a stored row. It
# costs the write the jsonb parse it always paid; the reads are what gain.
TO_JSON = ("ALTER TABLE sessions_app_sessionitem ALTER COLUMN content TYPE json USING content::json, "
           f"ADD CONSTRAINT {CHECK} CHECK ((content::jsonb) IS NOT NULL)")
TO_JSONB = (f"ALTER TABLE sessions_app_sessionitem DROP CONSTRAINT {CHECK}, "
            "ALTER COLUMN content TYPE jsonb USING content::jsonb")


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0004_item_erasure")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[install(
                TO_JSON,
                "DROP FUNCTION IF EXISTS harness_item_tombstone(jsonb, text, timestamptz);",
                *(load("sessions_app", f"{name}.v2.sql") for name in FUNCTIONS),
                reverse=[TO_JSONB,
                         "DROP FUNCTION IF EXISTS harness_item_tombstone(json, text, timestamptz)",
                         *(load("sessions_app", f"{name}.v1.sql") for name in FUNCTIONS)],
            )],
            state_operations=[migrations.AlterField(model_name="sessionitem", name="content",
                                                    field=harness.fields.TextJSONField())],
        ),
    ]
