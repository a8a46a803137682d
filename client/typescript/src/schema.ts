// The Harness Console API's types, generated from its OpenAPI schema by openapi-typescript: do not edit.
// Regenerate with `npm --prefix client/typescript run schema` (tests/client/test_typescript.py checks it).
export interface paths {
    "/api/v1/approval-policies/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Every version of the caller's projects' approval policies, each tool's newest first (the tool empty: the project default). */
        get: operations["approval_policies_list"];
        put?: never;
        /** @description Publish the next version of a tool's (or the project default's) policy. A person's token with the operator role in the project; an agent's is 403 not_an_operator. */
        post: operations["approval_policies_publish"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/approvals/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["approvals_list"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/approvals/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["approvals_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/approvals/{id}/decision/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description For console users with the reviewer role (session or personal token); agent tokens get 403. */
        post: operations["approvals_decide"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/approvals/{id}/outcome/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Report once that the approved action ran (`ran`) or was not run (`not_run`, with the reason); fenced on the run's lease. The same report again answers the same row; another is 409 outcome_reported. */
        post: operations["approvals_report_outcome"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/bundles/export/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["bundle_export"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/bundles/import/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["bundle_import"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/checkpoints/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["checkpoints_list"];
        put?: never;
        post: operations["checkpoints_create"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/checkpoints/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["checkpoints_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/checkpoints/{id}/fork/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Fork a new run from this checkpoint, optionally with edited state, in the same session, another one or a new one. The new checkpoint's parent is this one. Same key, same action: the stored result is bound; changed arguments need a new key and a new approval. */
        post: operations["checkpoints_fork"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/checkpoints/{id}/lineage/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The checkpoint and its ancestors, newest first. */
        get: operations["checkpoints_lineage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/effects/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["effects_list"];
        put?: never;
        /** @description Record the intent; the same key and action again answers 200 with the first record. A run that may not act (anything but running: blocked, waiting, not started, finished) may not declare an action: 409 run_not_acting with its `run_status`. */
        post: operations["effects_intend"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/effects/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["effects_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/effects/deliver/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Deliver a result once. The same hash again answers already_consumed with the original receipt; a different hash is a hard stop: 409 effect_conflict, and the run is blocked. An effect whose outcome could not be proven (`unknown`) is a person's decision on its page, not a delivery: 403 not_a_person, and nothing changes. */
        post: operations["effects_deliver"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/handoffs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["handoffs_list"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/handoffs/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["handoffs_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/handoffs/{id}/accept/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description The receiver takes the job with its own run; the independence checks are recorded. */
        post: operations["handoffs_accept"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/handoffs/{id}/cancel/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Cancel an open handoff (issued or accepted); the origin run goes back to running with the cancellation bound. */
        post: operations["handoffs_cancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/handoffs/{id}/return/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description The one result, bound to the packet's fingerprint. Refused (409) for another or an altered packet (`packet_mismatch`, `packet_altered`), a second time (`result_already_returned`), past the deadline (`handoff_expired`); 400 `result_schema_mismatch` when the packet's output schema refuses it. */
        post: operations["handoffs_return"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/conflicts/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["memory_conflicts_list"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/context/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Build and record the context for a run under its session's memory policy and role (none: the run's own items; bounded: the newest items within the item limit; session: the session's items; external: the run's own items and memory retrieved for `query`; checkpoint_only: the latest checkpoint's state), plus the packet of a handoff the run received, within the budget (default: the session's). The snapshot is exactly what the model is given; its `manifest` names the rule that admitted each part and what was left out. */
        post: operations["memory_context_create"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/context/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["memory_context_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/erasures/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["memory_person_erase"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/held/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["memory_held_list"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description GET lists a project's records in every status (filters); POST proposes a write. */
        get: operations["memory_records_list"];
        put?: never;
        /** @description 201 accepted or held, 200 merged into an existing record, 422 rejected by the policy. */
        post: operations["memory_records_write"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["memory_records_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/{id}/chain/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["memory_records_chain"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/{id}/delete/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["memory_records_delete"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/{id}/erase/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["memory_records_erase"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/{id}/expire/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["memory_records_expire"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/{id}/review/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["memory_records_review"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/{id}/supersede/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Give `content` for a new version, or `replacement_id` to let another live record stand (resolving a conflict). Agents supersede only what they wrote. Returns the standing record. */
        post: operations["memory_records_supersede"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/bulk-delete/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["memory_records_bulk_delete"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/records/bulk-expire/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["memory_records_bulk_expire"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/retrieve/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Active, fresh records of one scope; `q` is a full-text query (websearch syntax); top `k`. */
        get: operations["memory_retrieve"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/store/items/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The active, fresh item under (namespace, key); 404 when there is none. */
        get: operations["memory_store_get"];
        put?: never;
        /** @description Put a value under (namespace, key) through the scope's write policy: 201 accepted (a new value supersedes the key's old one, which stays in its chain) or held for review (the old value stands until an operator approves), 200 the same value confirmed, 422 rejected. */
        post: operations["memory_store_put"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/store/items/delete/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Tombstone the key's live records (erasure scrubs them later); none for an absent key. */
        post: operations["memory_store_delete"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/store/namespaces/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The namespaces holding items the caller can read, in order, one page. */
        get: operations["memory_store_namespaces"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/memory/store/search/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Active, fresh items under a namespace prefix, filtered on value fields; `query` is full text (no embeddings), best first; else newest first. One page. */
        get: operations["memory_store_search"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/retention/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The project's retention policy (every setting null: retention is off). */
        get: operations["retention_read"];
        /** @description Replace the policy: a setting left out or null has no limit. What a resume or an audit still needs is kept whatever the policy says. An operator of the project only (a personal token; an agent token gets 403 not_an_operator). Audited. */
        put: operations["retention_set"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/retention/dry-run/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description What a retention pass would remove now, per kind, and why each row the policy lets go is kept (the keep rule). The pass reads the same SQL, so it removes exactly `would_go` if nothing changes in between. */
        get: operations["retention_dry_run"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/questions/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["questions_list"];
        put?: never;
        /** @description Ask a person. The same idempotency_key and question again answers the question asked already (maybe answered by now); another question under it is 409. */
        post: operations["questions_ask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/questions/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["questions_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/questions/{id}/answer/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Answer once: a second answer is 409 already_answered, naming who answered. */
        post: operations["questions_answer"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/questions/{id}/cancel/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Withdraw a pending question (the agent that asked it). 409 question_not_pending. */
        post: operations["questions_cancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/reviewer-groups/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The caller's projects' reviewer groups and their members. */
        get: operations["reviewer_groups_list"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["runs_list"];
        put?: never;
        post: operations["runs_create"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Admits a narrowed token and, on `runs/<pk>/...`, finds the run among its user's first (404 otherwise). */
        get: operations["runs_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/{id}/approvals/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Post a pending action; the run moves to waiting_approval and its lease is released, in the same transaction. */
        post: operations["approvals_request"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/{id}/claim/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["runs_claim"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/{id}/events/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["run_events_list"];
        put?: never;
        post: operations["run_events_append"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/{id}/handoffs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Hand a bounded, blind job to another session: the packet is built, fingerprinted and frozen, and the run moves to waiting_external (its lease released) in the same transaction. The worker resumes it when the result returns. */
        post: operations["handoffs_issue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/{id}/heartbeat/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["runs_heartbeat"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/{id}/transition/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["runs_transition"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/runs/{id}/usage/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Report one model call's tokens and cost: the run's totals advance atomically. A run that reaches its token or cost budget, or is past its deadline, is blocked at `budget` or `deadline` by this report (the answer shows it): make no further model or tool call. */
        post: operations["runs_usage_report"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Admits a narrowed token and, on `sessions/<pk>/...`, finds the session among its user's first. */
        get: operations["sessions_list"];
        put?: never;
        /** @description Admits a narrowed token and, on `sessions/<pk>/...`, finds the session among its user's first. */
        post: operations["sessions_create"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Admits a narrowed token and, on `sessions/<pk>/...`, finds the session among its user's first. */
        get: operations["sessions_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/{id}/items/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Admits a narrowed token and, on `sessions/<pk>/...`, finds the session among its user's first. */
        get: operations["session_items_list"];
        put?: never;
        /** @description Admits a narrowed token and, on `sessions/<pk>/...`, finds the session among its user's first. */
        post: operations["session_items_append"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/{id}/items/clear/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Remove every item of the session and say how many went. The seqs are never reused: `last_seq` stays. 409 `session_terminated` on a terminated session. */
        post: operations["session_items_clear"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/{id}/items/compact/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Replace the items with seq in [first_seq, last_seq] by the given summary item, which takes the seq of the newest item it replaced; one audited event records the range and the hash of what went. 409 `empty_range`, `item_shown_by_pending_approval`, `session_terminated`. */
        post: operations["session_items_compact"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/{id}/items/latest/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The session's newest `limit` items in seq order (oldest first) and its `last_seq`, in one read: what an agent hands its model before each call. */
        get: operations["session_items_latest"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/{id}/items/pop/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Remove and return the newest item (`item` null when there is none). Its seq is never reused: `last_seq` stays. 409 `session_terminated` on a terminated session. */
        post: operations["session_items_pop"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/{id}/items/trim/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Keep the newest `keep_last` items and remove the rest, as one audited event that records the removed seq range and the hash of what went. `last_seq` stays. 409 `item_shown_by_pending_approval` when a pending approval shows an item that would go. */
        post: operations["session_items_trim"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sessions/{id}/transition/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Admits a narrowed token and, on `sessions/<pk>/...`, finds the session among its user's first. */
        post: operations["sessions_transition"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/standing-approvals/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The caller's projects' standing approvals, newest first. */
        get: operations["standing_approvals_list"];
        put?: never;
        /** @description Create a rule that approves the tool's matching requests until a time, at most max_uses times. A person's token with the reviewer role; never for an always-ask tool (409 always_ask) or a quorum policy (409 quorum_policy). */
        post: operations["standing_approvals_create"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/standing-approvals/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["standing_approvals_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/standing-approvals/{id}/revoke/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Revoke the rule at once: it approves nothing more, and an approval it made whose run has not resumed yet is asked of a person again. 409 already_revoked. */
        post: operations["standing_approvals_revoke"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tasks/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["tasks_list"];
        put?: never;
        post: operations["tasks_create"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tasks/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["tasks_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** @description Save the task's durable state: a compare-and-set on expected_version. */
        patch: operations["tasks_save"];
        trace?: never;
    };
    "/api/v1/tasks/{id}/transition/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: operations["tasks_transition"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description The thread's run (and its session), created if the thread is new (its session tagged with `end_user`, or with a narrowed token's end user). */
        post: operations["threads_ensure"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/checkpoint/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description One checkpoint of a thread with its pending writes; 404 checkpoint_not_found. */
        get: operations["threads_checkpoint_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/checkpoints/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description A thread's checkpoints with their pending writes, newest first by checkpoint id. */
        get: operations["threads_checkpoints_list"];
        put?: never;
        /** @description Store a LangGraph checkpoint (the thread is created on its first one); the same id and content again answers 200, other content 409 checkpoint_exists. */
        post: operations["threads_checkpoints_put"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/copy/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Copy a thread to a new thread id (LangGraph's copy_thread): a fork with every checkpoint and pending write; 404 thread_not_found, 409 thread_exists. */
        post: operations["threads_copy"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/delete/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Delete a thread's checkpoints and pending writes (audited); its run stays. 409 thread_kept (with the `rule`) while a pending approval or an unconsumed effect needs the thread. */
        post: operations["threads_delete"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/delete-for-runs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description LangGraph's delete_for_runs: the checkpoints (and writes) whose metadata names one of these run ids. A thread a retention keep rule needs is skipped (`kept`). */
        post: operations["threads_delete_for_runs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/prune/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description LangGraph's prune: keep each namespace's newest checkpoint (keep_latest) or none (delete). A thread a retention keep rule needs is skipped, listed in `kept`. */
        post: operations["threads_prune"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/ttl/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description A thread's time to live: its own, its project's default, and when it expires. */
        get: operations["threads_ttl_read"];
        put?: never;
        /** @description Set a thread's own TTL in days (null: its project's retention default). */
        post: operations["threads_ttl_set"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/threads/writes/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Store a task's pending writes for a checkpoint (which may not be stored yet). */
        post: operations["threads_writes_put"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tokens/narrow/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Mint a token narrowed to one end user (and optionally one session and one agent identity). With it, memory is confined to `user:<end_user>`, the sessions' scopes of that user's sessions, the project scope and its own `agent` scope (the last two read-only unless the scope's write policy lets end-user tokens write), and sessions to those tagged with that user; every other operation answers 403 `narrowed_token_scope`. It expires (default 15 minutes, at most an hour), cannot mint (403 `narrowed_token_cannot_mint`) and is refused once the token that minted it is revoked or expired. The minting is audited. An Idempotency-Key is not recorded (the reply holds the secret): a retry mints another token. */
        post: operations["tokens_narrow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tools/schemas/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Every version of the project's tools' schemas, newest first; `tool` narrows to one. */
        get: operations["tool_schemas_list"];
        put?: never;
        /** @description Declare a tool's argument schema: 201 with the next version, or 200 with the current version when the schema is the one it has already (nothing written). */
        post: operations["tool_schemas_register"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tools/schemas/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["tool_schemas_read"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: operations["webhooks_list"];
        put?: never;
        /** @description Register a webhook for `approval.requested`, `approval.decided`, `run.status_changed`. The answer holds its `secret`, once: each delivery carries `X-Harness-Timestamp` and `X-Harness-Signature: sha256=HMAC-SHA256(secret, "<timestamp>." + body)`. */
        post: operations["webhooks_register"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}/deactivate/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No more deliveries to it (audited). */
        post: operations["webhooks_deactivate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        ApprovalCreateInRequest: {
            tool: string;
            arguments?: {
                [key: string]: unknown;
            };
            /** @default high */
            risk?: components["schemas"]["RiskEnum"];
            idempotency_key: string;
            /** @default  */
            reason?: string;
            /** @description The run's version you read: a stale one is refused 409 version_conflict, nothing written. Optional: the request is fenced on the run's lease (lease_owner), which orders a lease holder's writes, and a checkpoint write moves the run's version without answering it. */
            expected_version?: number | null;
            /** @description Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none. */
            lease_owner?: string | null;
            /** Format: date-time */
            expires_at?: string | null;
            /**
             * @description Who runs the approved tool: the resume worker (through its tool adapter) or the agent itself (the resume binds the decision to the run, releases it, and the agent claims it and goes on).
             *
             *     * `worker` - Worker
             *     * `agent` - Agent
             * @default worker
             */
            executor?: components["schemas"]["ExecutorEnum"];
        };
        ApprovalDecisionInRequest: {
            decision: components["schemas"]["DecisionEnum"];
            /** @default  */
            reason?: string;
            edited_arguments?: {
                [key: string]: unknown;
            } | null;
            /**
             * @description With a rejection: one of the request's policy's reject options (its `name`); the agent reads the option and its text for the agent. Anything else is 400 reject_option_invalid.
             * @default
             */
            reject_option?: string;
            /** @description The approval's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
        };
        ApprovalOut: {
            readonly id: number;
            readonly project: string;
            readonly run: number;
            readonly tool: string;
            readonly arguments: unknown;
            readonly action_fingerprint: string;
            readonly risk: components["schemas"]["RiskEnum"];
            readonly idempotency_key: string;
            /** @description Why the agent asks. */
            readonly reason: string;
            readonly requested_by: string;
            /** @default pending */
            readonly status: components["schemas"]["ApprovalStatusEnum"];
            readonly version: number;
            /** @description Required. 150 characters or fewer. Letters, digits and @/./+/-/_ only. */
            readonly decided_by: string | null;
            /** Format: date-time */
            readonly decided_at: string | null;
            readonly decision_reason: string;
            readonly approved_arguments: unknown;
            readonly approved_fingerprint: string;
            /** Format: date-time */
            readonly expires_at: string | null;
            readonly executor: components["schemas"]["ExecutorEnum"];
            readonly arguments_changes: unknown;
            readonly outcome: components["schemas"]["ApprovalOutOutcomeEnum"] | components["schemas"]["BlankEnum"];
            readonly outcome_reason: string;
            /** Format: date-time */
            readonly outcome_at: string | null;
            readonly tool_schema: number | null;
            readonly tool_schema_version: number | null;
            readonly policy: number | null;
            readonly policy_version: number | null;
            readonly approvals_required: number;
            /** @description Under a quorum policy (approvals_required > 1): each reviewer's approval so far, per action (fingerprint); the request is approved when approvals_required of them name the same action. */
            readonly votes: components["schemas"]["VoteOut"][];
            readonly reject_option: string;
            /** @description For a rejection with a reject option: the policy's text for the agent, what to do instead. */
            readonly reject_agent_text: string;
            readonly standing_approval: number | null;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
        };
        /**
         * @description * `` - not reported
         *     * `ran` - Ran
         *     * `not_run` - not run
         * @enum {string}
         */
        ApprovalOutOutcomeEnum: "ran" | "not_run";
        /**
         * @description * `ran` - ran
         *     * `not_run` - not_run
         * @enum {string}
         */
        ApprovalOutcomeInOutcomeEnum: "ran" | "not_run";
        ApprovalOutcomeInRequest: {
            outcome: components["schemas"]["ApprovalOutcomeInOutcomeEnum"];
            /**
             * @description Why the approved action was not run (required with not_run).
             * @default
             */
            reason?: string;
            /** @description Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none. */
            lease_owner?: string | null;
        };
        ApprovalPolicyOut: {
            readonly id: number;
            readonly project: string;
            /**
             * @description Empty: the project's default.
             * @default
             */
            readonly tool: string;
            readonly version: number;
            readonly required_approvals: number;
            readonly eligible_groups: number[];
            /** @description The default wait, e.g. 4:00:00. */
            readonly expires_after: string | null;
            readonly on_expiry: components["schemas"]["ApprovalPolicyOutOnExpiryEnum"];
            readonly escalate_to: number | null;
            /** @description How long the escalated request waits. */
            readonly escalation_expires_after: string | null;
            readonly always_ask: boolean;
            readonly reject_options: unknown;
            readonly created_by: string;
            /** Format: date-time */
            readonly created_at: string;
        };
        /**
         * @description * `reject` - reject (the request expires and the run is told)
         *     * `escalate` - escalate to another group and notify it
         *     * `wait` - keep waiting
         * @enum {string}
         */
        ApprovalPolicyOutOnExpiryEnum: "reject" | "escalate" | "wait";
        /**
         * @description * `reject` - reject
         *     * `escalate` - escalate
         *     * `wait` - wait
         * @enum {string}
         */
        ApprovalPolicyPublishInOnExpiryEnum: "reject" | "escalate" | "wait";
        ApprovalPolicyPublishInRequest: {
            /** @description The project's slug: the caller must be an operator there. */
            project: string;
            /**
             * @description Empty: the project's default policy.
             * @default
             */
            tool?: string;
            /** @default 1 */
            required_approvals?: number;
            /** @description Reviewer group ids of the project; empty: any reviewer. */
            eligible_groups?: number[];
            expires_after?: string | null;
            /** @default reject */
            on_expiry?: components["schemas"]["ApprovalPolicyPublishInOnExpiryEnum"];
            escalate_to?: number | null;
            escalation_expires_after?: string | null;
            /** @default false */
            always_ask?: boolean;
            reject_options?: components["schemas"]["RejectOptionRequest"][];
        };
        /**
         * @description * `pending` - Pending
         *     * `approved` - Approved
         *     * `rejected` - Rejected
         *     * `expired` - Expired
         *     * `cancelled` - Cancelled
         * @enum {string}
         */
        ApprovalStatusEnum: "pending" | "approved" | "rejected" | "expired" | "cancelled";
        /** @enum {unknown} */
        BlankEnum: "";
        BulkDeleteInRequest: {
            project: string;
            ids: number[];
            /** @description Why: required for a person, recorded in the audit entry. */
            reason?: string;
        };
        BulkInRequest: {
            project: string;
            ids: number[];
        };
        BulkOut: {
            done: number[];
            failed: {
                [key: string]: string;
            };
        };
        BundleOut: {
            format: string;
            version: number;
            manifest: {
                [key: string]: unknown;
            };
            records: {
                [key: string]: unknown;
            };
            digest: string;
        };
        ChainOut: {
            record: number;
            /** @description Older versions, oldest first. */
            before: number[];
            /** @description Newer versions, newest last. */
            after: number[];
            versions: components["schemas"]["MemoryRecordOut"][];
        };
        CheckpointInRequest: {
            /** Format: int64 */
            run?: number | null;
            /** Format: int64 */
            task?: number | null;
            /** Format: int64 */
            parent?: number | null;
            /** @default  */
            label?: string;
            cursor?: {
                [key: string]: unknown;
            };
            state?: {
                [key: string]: unknown;
            };
            artifact_fingerprints?: {
                [key: string]: unknown;
            };
            /** @default  */
            authority_ref?: string;
            pending_gate?: unknown;
            /** Format: int64 */
            approval?: number | null;
            /** @default revalidate */
            resume_policy?: components["schemas"]["ResumePolicyEnum"];
            /** @default 1 */
            schema_version?: number;
            /** @description Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none. */
            lease_owner?: string | null;
        };
        CheckpointOut: {
            readonly id: number;
            readonly run: number | null;
            readonly task: number | null;
            readonly parent: number | null;
            readonly depth: number;
            readonly label: string;
            readonly cursor: unknown;
            readonly state: unknown;
            readonly artifact_fingerprints: unknown;
            readonly authority_ref: string;
            readonly pending_gate: unknown;
            readonly approval: number | null;
            readonly resume_policy: components["schemas"]["ResumePolicyEnum"];
            readonly schema_version: number;
            readonly content_hash: string;
            /** Format: date-time */
            readonly created_at: string;
        };
        ConflictOut: {
            scope: string;
            scope_key: string;
            subject: string;
            records: components["schemas"]["MemoryRecordOut"][];
        };
        ContextInRequest: {
            /** Format: int64 */
            run_id: number;
            budget_chars?: number | null;
            /** @default  */
            query?: string;
        };
        ContextOut: {
            readonly id: number;
            readonly run: number;
            readonly item_seqs: unknown;
            readonly memory_ids: unknown;
            readonly query: string;
            readonly budget_chars: number;
            readonly used_chars: number;
            /** @description The rendered snapshot as given to the model. */
            readonly content: unknown;
            readonly manifest: unknown;
            /** Format: date-time */
            readonly created_at: string;
        };
        /**
         * @description * `approve` - approve
         *     * `reject` - reject
         * @enum {string}
         */
        DecisionEnum: "approve" | "reject";
        DeleteInRequest: {
            /** @description The record's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
            /** @description Why: required for a person, recorded in the audit entry. */
            reason?: string;
        };
        EffectDeliverInRequest: {
            idempotency_key: string;
            result: unknown;
            /** @description SHA-256 of the result's canonical JSON; the server computes it when omitted. */
            result_hash?: string | null;
        };
        EffectDeliveryOut: {
            outcome: components["schemas"]["EffectDeliveryOutOutcomeEnum"];
            receipt: string;
            effect: components["schemas"]["EffectOut"];
        };
        /**
         * @description * `consumed` - consumed
         *     * `already_consumed` - already_consumed
         * @enum {string}
         */
        EffectDeliveryOutOutcomeEnum: "consumed" | "already_consumed";
        EffectIntendInRequest: {
            idempotency_key: string;
            tool: string;
            arguments?: unknown;
            /** Format: int64 */
            run?: number | null;
            /** Format: int64 */
            approval?: number | null;
        };
        EffectOut: {
            readonly id: number;
            readonly run: number | null;
            readonly approval: number | null;
            readonly idempotency_key: string;
            readonly tool: string;
            readonly arguments_digest: string;
            readonly status: components["schemas"]["EffectStatusEnum"];
            readonly version: number;
            readonly attempts: number;
            readonly result: unknown;
            readonly result_hash: string;
            readonly conflicting_hash: string;
            readonly receipt: string;
            /** @description Why it failed or blocked: one of transient, invalid_input, permission, semantic, irreversible, or empty. */
            readonly failure_category: string;
            readonly answer: unknown;
            readonly resolution: unknown;
            readonly retry_authorized: boolean;
            /** Format: date-time */
            readonly dispatched_at: string | null;
            /** Format: date-time */
            readonly delivered_at: string | null;
            /** Format: date-time */
            readonly consumed_at: string | null;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
        };
        /**
         * @description * `intended` - Intended
         *     * `dispatched` - Dispatched
         *     * `delivered` - Delivered
         *     * `consumed` - Consumed
         *     * `conflict` - Conflict
         *     * `unknown` - Unknown
         *     * `refused` - Refused
         *     * `abandoned` - Abandoned
         * @enum {string}
         */
        EffectStatusEnum: "intended" | "dispatched" | "delivered" | "consumed" | "conflict" | "unknown" | "refused" | "abandoned";
        EraseInRequest: {
            /**
             * @description Also erase the versions it replaced.
             * @default true
             */
            include_history?: boolean;
        };
        ErasureInRequest: {
            project: string;
            subject: string;
            /** @default  */
            reason?: string;
            /** @default false */
            dry_run?: boolean;
        };
        ErasureOut: {
            subject_sha256: string;
            dry_run: boolean;
            stores: {
                [key: string]: components["schemas"]["ErasureStoreOut"];
            };
        };
        ErasureStoreOut: {
            erased: number;
            kept: number;
            why_kept: string;
        };
        EventInRequest: {
            kind: string;
            data?: {
                [key: string]: unknown;
            };
            /** @description Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none. */
            lease_owner?: string | null;
        };
        EventOut: {
            readonly id: number;
            readonly run: number;
            readonly seq: number;
            readonly kind: string;
            readonly data: unknown;
            /** Format: date-time */
            readonly created_at: string;
        };
        /**
         * @description * `approval.requested` - Approval Requested
         *     * `approval.decided` - Approval Decided
         *     * `approval.escalated` - Approval Escalated
         *     * `question.asked` - Question Asked
         *     * `run.status_changed` - Run Status Changed
         * @enum {string}
         */
        EventsEnum: "approval.requested" | "approval.decided" | "approval.escalated" | "question.asked" | "run.status_changed";
        /**
         * @description * `worker` - Worker
         *     * `agent` - Agent
         * @enum {string}
         */
        ExecutorEnum: "worker" | "agent";
        ExpireInRequest: {
            /** @description The record's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
            /**
             * Format: date-time
             * @description When it expires; now by default.
             */
            at?: string;
        };
        ExportInRequest: {
            kind: components["schemas"]["KindEnum"];
            /** Format: int64 */
            id: number;
        };
        /**
         * @description * `transient` - Transient
         *     * `invalid_input` - Invalid Input
         *     * `permission` - Permission
         *     * `semantic` - Semantic
         *     * `irreversible` - Irreversible
         * @enum {string}
         */
        FailureCategoryEnum: "transient" | "invalid_input" | "permission" | "semantic" | "irreversible";
        ForkInRequest: {
            /** @description Why: recorded with who and the diff. */
            reason: string;
            /** @description The edited state (absent: the source checkpoint's state). */
            state?: {
                [key: string]: unknown;
            } | null;
            /**
             * Format: int64
             * @description A session of the project for the new run (absent: the source run's).
             */
            session?: number | null;
            /**
             * @description Make a new session like the source run's.
             * @default false
             */
            new_session?: boolean;
            /** @default  */
            ref?: string;
        };
        ForkOut: {
            run: components["schemas"]["RunOut"];
            checkpoint: components["schemas"]["CheckpointOut"];
            /** @description {"added": {path: value}, "removed": {...}, "changed": {path: {"from", "to"}}} from the source state to the fork's. */
            diff: {
                [key: string]: unknown;
            };
        };
        HandoffAcceptInRequest: {
            /**
             * Format: int64
             * @description The receiver's own run (its invocation), in the receiver session; omitted, a new run of the receiver session is made for it.
             */
            run?: number | null;
            /** @description The handoff's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
        };
        HandoffCancelInRequest: {
            reason: string;
            /** @description The handoff's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
        };
        HandoffIssueInRequest: {
            /** Format: int64 */
            receiver_session: number;
            objective: string;
            inputs?: components["schemas"]["PacketInputRequest"][];
            allowed_capabilities?: string[];
            /** @description A JSON Schema (2020-12) the result must match. */
            output_schema: {
                [key: string]: unknown;
            };
            /** Format: date-time */
            deadline: string;
            /** @description The origin's cursor to record in the packet (default: the run's). */
            cursor?: {
                [key: string]: unknown;
            } | null;
            /** @description The origin run's version you read: a stale one is refused 409 version_conflict, nothing written. Optional: the issue is fenced on the origin run's lease (lease_owner), which orders a lease holder's writes, and a checkpoint write moves the run's version without answering it. */
            expected_version?: number | null;
            /** @description Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none. */
            lease_owner?: string | null;
        };
        HandoffIssued: {
            readonly id: number;
            readonly project: string;
            readonly origin_run: number;
            readonly receiver_session: number;
            readonly receiver_run: number | null;
            readonly packet: unknown;
            readonly packet_fingerprint: string;
            /** Format: date-time */
            readonly deadline: string;
            /** @default issued */
            readonly status: components["schemas"]["HandoffStatusEnum"];
            readonly version: number;
            readonly issued_by: string;
            readonly accepted_by: string;
            /** Format: date-time */
            readonly accepted_at: string | null;
            readonly result: unknown;
            readonly result_hash: string;
            readonly returned_by: string;
            /** Format: date-time */
            readonly returned_at: string | null;
            readonly receipt: string;
            /** Format: date-time */
            readonly consumed_at: string | null;
            readonly independence: unknown;
            /** @description Why it was cancelled or expired. */
            readonly closed_reason: string;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
            /** @description The receiver's credential, in this answer only: a bearer token that reads this handoff, accepts it and returns its result, and nothing else (not the origin's items, events, checkpoints or memory). Hand it to the receiving agent instead of a project token; it expires at the deadline. */
            readonly receiver_token: string;
        };
        HandoffOut: {
            readonly id: number;
            readonly project: string;
            readonly origin_run: number;
            readonly receiver_session: number;
            readonly receiver_run: number | null;
            readonly packet: unknown;
            readonly packet_fingerprint: string;
            /** Format: date-time */
            readonly deadline: string;
            /** @default issued */
            readonly status: components["schemas"]["HandoffStatusEnum"];
            readonly version: number;
            readonly issued_by: string;
            readonly accepted_by: string;
            /** Format: date-time */
            readonly accepted_at: string | null;
            readonly result: unknown;
            readonly result_hash: string;
            readonly returned_by: string;
            /** Format: date-time */
            readonly returned_at: string | null;
            readonly receipt: string;
            /** Format: date-time */
            readonly consumed_at: string | null;
            readonly independence: unknown;
            /** @description Why it was cancelled or expired. */
            readonly closed_reason: string;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
        };
        HandoffReturnInRequest: {
            /** @description The fingerprint of the packet answered. */
            packet_fingerprint: string;
            result: unknown;
            result_hash?: string | null;
            /** @description The handoff's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
        };
        /**
         * @description * `issued` - Issued
         *     * `accepted` - Accepted
         *     * `returned` - Returned
         *     * `consumed` - Consumed
         *     * `expired` - Expired
         *     * `cancelled` - Cancelled
         * @enum {string}
         */
        HandoffStatusEnum: "issued" | "accepted" | "returned" | "consumed" | "expired" | "cancelled";
        ImportInRequest: {
            project: string;
            bundle: {
                [key: string]: unknown;
            };
        };
        ImportOut: {
            /** @description The ImportedBundle's id. */
            imported: number;
            project: string;
            root: components["schemas"]["ImportedRoot"];
            summary: {
                [key: string]: unknown;
            };
        };
        ImportedRoot: {
            kind: string;
            id: number;
            source_id: number;
        };
        ItemInRequest: {
            role: components["schemas"]["ItemRoleEnum"];
            content: unknown;
            /** Format: int64 */
            run?: number | null;
        };
        ItemOut: {
            readonly id: number;
            readonly session: number;
            readonly seq: number;
            readonly role: components["schemas"]["ItemRoleEnum"];
            readonly content: unknown;
            readonly run: number | null;
            /** Format: date-time */
            readonly created_at: string;
        };
        ItemPopOut: {
            /** @description The removed item; null when the session had none. */
            item: components["schemas"]["ItemOut"] | null;
            last_seq: number;
        };
        /**
         * @description * `user` - User
         *     * `assistant` - Assistant
         *     * `system` - System
         *     * `tool` - Tool
         *     * `event` - Event
         * @enum {string}
         */
        ItemRoleEnum: "user" | "assistant" | "system" | "tool" | "event";
        ItemsAppendInRequest: {
            items: components["schemas"]["ItemInRequest"][];
            /** Format: int64 */
            expected_last_seq?: number | null;
        };
        ItemsAppendOut: {
            items: components["schemas"]["ItemOut"][];
            last_seq: number;
        };
        ItemsClearOut: {
            removed: number;
            last_seq: number;
        };
        ItemsCompactInRequest: {
            /**
             * Format: int64
             * @description Remove only while the session's last_seq is still this (else 409 seq_conflict).
             */
            expected_last_seq?: number | null;
            /** Format: int64 */
            first_seq: number;
            /** Format: int64 */
            last_seq: number;
            /** @description The item that stands in the range's place (the agent writes it). */
            summary: components["schemas"]["SummaryInRequest"];
        };
        ItemsLatestOut: {
            session: number;
            /** @description The highest seq ever assigned (removed items leave gaps). */
            last_seq: number;
            /** @description The newest `limit` items, oldest first. */
            items: components["schemas"]["ItemOut"][];
        };
        ItemsRemoveInRequest: {
            /**
             * Format: int64
             * @description Remove only while the session's last_seq is still this (else 409 seq_conflict).
             */
            expected_last_seq?: number | null;
        };
        ItemsTrimInRequest: {
            /**
             * Format: int64
             * @description Remove only while the session's last_seq is still this (else 409 seq_conflict).
             */
            expected_last_seq?: number | null;
            /**
             * Format: int64
             * @description How many newest items stay.
             */
            keep_last: number;
        };
        ItemsTrimmedOut: {
            removed: number;
            /** @description The removed range (null: nothing went). */
            first_seq: number | null;
            last_seq: number | null;
            /** @description SHA-256 of the removed items' canonical JSON ([{seq, role, content, run}] in seq order). */
            replaced_hash: string;
            /** @description The summary item (compaction only). */
            summary: components["schemas"]["ItemOut"] | null;
            /** @description The session's last_seq: unchanged. */
            session_last_seq: number;
        };
        /**
         * @description * `run` - run
         *     * `session` - session
         *     * `task` - task
         * @enum {string}
         */
        KindEnum: "run" | "session" | "task";
        LeaseInRequest: {
            owner: string;
            /** @default 60 */
            lease_seconds?: number;
        };
        MemoryErased: {
            erased: number[];
        };
        /**
         * @description * `none` - None
         *     * `bounded` - Bounded
         *     * `session` - Session
         *     * `external` - External
         *     * `checkpoint_only` - Checkpoint Only
         * @enum {string}
         */
        MemoryPolicyEnum: "none" | "bounded" | "session" | "external" | "checkpoint_only";
        MemoryPolicyRejection: {
            code: string;
            detail: string;
            outcome: string;
            reason: string;
        };
        MemoryRecordOut: {
            readonly id: number;
            readonly scope: components["schemas"]["ScopeEnum"];
            /** @description Names the user, agent or session; empty for project scope. */
            readonly scope_key: string;
            readonly subject: string;
            readonly content: string;
            readonly status: components["schemas"]["MemoryStatusEnum"];
            readonly version: number;
            provenance: components["schemas"]["Provenance"];
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
            /** Format: date-time */
            readonly valid_until: string | null;
            /** Format: date-time */
            readonly last_confirmed_at: string | null;
            /** Format: date-time */
            readonly expires_at: string | null;
            readonly fresh: boolean;
            readonly superseded_by: number | null;
            readonly supersedes: number[];
            readonly policy_decision: string;
            readonly policy_reason: string;
            readonly deleted_by: string;
            /** Format: date-time */
            readonly deleted_at: string | null;
            /** Format: date-time */
            readonly erased_at: string | null;
        };
        /**
         * @description * `active` - Active
         *     * `held` - Held for review
         *     * `superseded` - Superseded
         *     * `deleted` - Deleted
         *     * `rejected` - Rejected
         * @enum {string}
         */
        MemoryStatusEnum: "active" | "held" | "superseded" | "deleted" | "rejected";
        MemoryStoreDeleted: {
            deleted: number[];
        };
        MemoryStoreNamespaces: {
            namespaces: string[][];
        };
        NarrowInRequest: {
            /** @description The end user the token is confined to. */
            end_user: string;
            /**
             * Format: int64
             * @description Confine it to this one session too (a session of that end user).
             */
            session?: number | null;
            /** @description Its agent identity (the key of its `agent` memory scope): the minting token's, or one under it (`<identity>/<name>`). Default: the minting token's. */
            agent?: string | null;
            /**
             * @description Seconds until it expires (default 900, at most 3600).
             * @default 900
             */
            expires_in?: number;
        };
        NarrowOut: {
            id: number;
            /** @description The secret: shown this once, stored only as its SHA-256. */
            token: string;
            prefix: string;
            end_user: string;
            session: number | null;
            agent: string;
            /** Format: date-time */
            expires_at: string;
        };
        /** @enum {unknown} */
        NullEnum: null;
        PacketInputRequest: {
            name: string;
            /** @description SHA-256 (hex, `sha256:` allowed) of the input. */
            fingerprint: string;
            /** @description The input itself; its digest must be the fingerprint. */
            value?: unknown;
            /** @description A task artifact of the origin run; its fingerprint must match. */
            artifact?: string;
        };
        PaginatedApprovalOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["ApprovalOut"][];
        };
        PaginatedApprovalPolicyOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["ApprovalPolicyOut"][];
        };
        PaginatedCheckpointOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["CheckpointOut"][];
        };
        PaginatedEffectOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["EffectOut"][];
        };
        PaginatedEventOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["EventOut"][];
        };
        PaginatedHandoffOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["HandoffOut"][];
        };
        PaginatedItemOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["ItemOut"][];
        };
        PaginatedMemoryRecordOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["MemoryRecordOut"][];
        };
        PaginatedQuestionOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["QuestionOut"][];
        };
        PaginatedReviewerGroupOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["ReviewerGroupOut"][];
        };
        PaginatedRunOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["RunOut"][];
        };
        PaginatedSessionOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["SessionOut"][];
        };
        PaginatedStandingApprovalOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["StandingApprovalOut"][];
        };
        PaginatedTaskOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["TaskOut"][];
        };
        PaginatedToolSchemaOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["ToolSchemaOut"][];
        };
        PaginatedWebhookOutList: {
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cD00ODY%3D"
             */
            next?: string | null;
            /**
             * Format: uri
             * @example http://api.example.org/accounts/?cursor=cj0xJnA9NDg3
             */
            previous?: string | null;
            results: components["schemas"]["WebhookOut"][];
        };
        PatchedTaskSaveInRequest: {
            objective?: string;
            constraints?: unknown[];
            plan?: string[];
            plan_version?: number;
            completed_nodes?: unknown[];
            pending_nodes?: unknown[];
            artifact_refs?: {
                [key: string]: unknown;
            };
            schema_version?: number;
            expected_version?: number;
        };
        Provenance: {
            kind: string;
            run: number | null;
            session: number | null;
            item_seq: number | null;
            readonly person: string | null;
            by: string;
        };
        /**
         * @description * `observed` - Observed
         *     * `told` - Told
         *     * `inferred` - Inferred
         *     * `edited` - Edited
         * @enum {string}
         */
        ProvenanceKindEnum: "observed" | "told" | "inferred" | "edited";
        QuestionAnswerInRequest: {
            /** @description What the question's answer_schema describes. */
            answer: unknown;
            expected_version?: number | null;
            expected_fingerprint?: string | null;
        };
        QuestionAskInRequest: {
            question: string;
            /** @description A JSON Schema: free text {"type": "string"} (the default), a choice {"type": "string", "enum": [...]}, or a small form {"type": "object", "properties": {...}}. */
            answer_schema?: unknown;
            idempotency_key: string;
            run?: number | null;
            /** Format: date-time */
            expires_at?: string | null;
            /** @description A reviewer group of the project: only its members answer. */
            group?: number | null;
            /** @description What the person should see beside the question (an object). */
            context?: unknown;
        };
        QuestionOut: {
            readonly id: number;
            readonly project: string;
            readonly run: number | null;
            readonly question: string;
            readonly answer_schema: unknown;
            readonly context: unknown;
            readonly fingerprint: string;
            readonly idempotency_key: string;
            readonly asked_by: string;
            readonly status: components["schemas"]["QuestionOutStatusEnum"];
            readonly version: number;
            readonly answer: unknown;
            /** @description The question's fingerprint the answer was given to. */
            readonly answer_fingerprint: string;
            /** @description Required. 150 characters or fewer. Letters, digits and @/./+/-/_ only. */
            readonly answered_by: string | null;
            /** Format: date-time */
            readonly answered_at: string | null;
            /** Format: date-time */
            readonly expires_at: string | null;
            readonly routed_group: number | null;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
        };
        /**
         * @description * `pending` - Pending
         *     * `answered` - Answered
         *     * `expired` - Expired
         *     * `cancelled` - Cancelled
         * @enum {string}
         */
        QuestionOutStatusEnum: "pending" | "answered" | "expired" | "cancelled";
        RejectOptionRequest: {
            name: string;
            /** @default  */
            reviewer_text?: string;
            /** @default  */
            agent_text?: string;
        };
        /**
         * @description * `revalidate` - Re-validate, then continue
         *     * `manual` - A person decides
         *     * `restart_node` - Restart the current node
         * @enum {string}
         */
        ResumePolicyEnum: "revalidate" | "manual" | "restart_node";
        RetentionDryRunOut: {
            project: string;
            /** @description By kind: items, events, checkpoints, effects, snapshots, runs; and threads (LangGraph threads past their TTL) where a TTL is set. */
            kinds: {
                [key: string]: components["schemas"]["RetentionKind"];
            };
        };
        RetentionInRequest: {
            items_max_age_days?: number | null;
            items_keep_last?: number | null;
            events_max_age_days?: number | null;
            events_keep_last?: number | null;
            checkpoints_max_age_days?: number | null;
            checkpoints_keep_last?: number | null;
            effects_max_age_days?: number | null;
            effects_keep_last?: number | null;
            snapshots_max_age_days?: number | null;
            snapshots_keep_last?: number | null;
            runs_max_age_days?: number | null;
            runs_keep_last?: number | null;
            thread_ttl_days?: number | null;
        };
        RetentionKind: {
            /** @description Rows a pass would remove now. */
            would_go: number;
            /** @description Rows the policy lets go that a keep rule keeps, by rule. */
            kept: {
                [key: string]: number;
            };
        };
        RetentionOut: {
            /** @description The project's slug. */
            project: string;
            /** @description False: no setting is given, the project keeps everything. */
            enabled: boolean;
            /** @description Every `<kind>_max_age_days` and `<kind>_keep_last` (null: no limit). */
            settings: {
                [key: string]: number | null;
            };
        };
        ReviewInRequest: {
            /** @description The record's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
            decision: components["schemas"]["DecisionEnum"];
        };
        ReviewerGroupOut: {
            readonly id: number;
            readonly project: string;
            readonly name: string;
            readonly members: string[];
            readonly email_members: boolean;
            /** Format: date-time */
            readonly created_at: string;
        };
        /**
         * @description * `low` - Low
         *     * `medium` - Medium
         *     * `high` - High
         *     * `critical` - Critical
         * @enum {string}
         */
        RiskEnum: "low" | "medium" | "high" | "critical";
        RunCreateInRequest: {
            /** Format: int64 */
            session: number;
            /** Format: int64 */
            task?: number | null;
            /** @default  */
            ref?: string;
            /** @default  */
            task_mode?: string;
            /** @default  */
            active_agent?: string;
            cursor?: {
                [key: string]: unknown;
            };
            /** Format: date-time */
            deadline?: string | null;
            /** Format: int64 */
            token_budget?: number | null;
            /** Format: decimal */
            cost_budget?: string | null;
        };
        RunOut: {
            readonly id: number;
            readonly project: string;
            readonly session: number;
            readonly task: number | null;
            /**
             * @description A human reference, e.g. R-101.
             * @default
             */
            readonly ref: string;
            readonly task_mode: string;
            readonly status: components["schemas"]["RunStatusEnum"];
            readonly active_agent: string;
            readonly current_node: string;
            readonly cursor: unknown;
            /** Format: date-time */
            readonly deadline: string | null;
            readonly token_budget: number | null;
            /** Format: decimal */
            readonly cost_budget: string | null;
            readonly tokens_used: number;
            /** Format: decimal */
            readonly cost_used: string;
            readonly pending_approval: number | null;
            readonly last_checkpoint: number | null;
            /** @description Why the run failed or is blocked. */
            readonly error: unknown;
            readonly blocked_step: string;
            /** @description Why it failed or blocked: one of transient, invalid_input, permission, semantic, irreversible, or empty. */
            readonly failure_category: string;
            /** @description The approved action's result, for the agent. */
            readonly bound_result: unknown;
            readonly metrics: unknown;
            readonly version: number;
            readonly lease_owner: string;
            /** Format: date-time */
            readonly lease_expires_at: string | null;
            readonly last_event_seq: number;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
        };
        /**
         * @description * `created` - Created
         *     * `running` - Running
         *     * `waiting_approval` - Waiting Approval
         *     * `waiting_external` - Waiting External
         *     * `blocked` - Blocked
         *     * `succeeded` - Succeeded
         *     * `failed` - Failed
         *     * `cancelled` - Cancelled
         * @enum {string}
         */
        RunStatusEnum: "created" | "running" | "waiting_approval" | "waiting_external" | "blocked" | "succeeded" | "failed" | "cancelled";
        RunTransitionInRequest: {
            to: components["schemas"]["RunStatusEnum"];
            /** @description The run's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
            /** @description Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none. */
            lease_owner?: string | null;
            error?: {
                [key: string]: unknown;
            } | null;
            /** @default  */
            blocked_step?: string;
            /**
             * @description Why the run fails or blocks (seed 000, section 10); a run that goes on clears it.
             *
             *     * `transient` - Transient
             *     * `invalid_input` - Invalid Input
             *     * `permission` - Permission
             *     * `semantic` - Semantic
             *     * `irreversible` - Irreversible
             */
            failure_category?: (components["schemas"]["FailureCategoryEnum"] | components["schemas"]["NullEnum"]) | null;
        };
        /**
         * @description * `project` - Project
         *     * `user` - User
         *     * `agent` - Agent
         *     * `session` - Session
         * @enum {string}
         */
        ScopeEnum: "project" | "user" | "agent" | "session";
        SessionCreateInRequest: {
            /** @default manager */
            role?: components["schemas"]["SessionRoleEnum"];
            /** @default bounded */
            memory_policy?: components["schemas"]["MemoryPolicyEnum"];
            /** @default 4000 */
            context_budget_chars?: number;
            /** @default 20 */
            context_items?: number;
            metadata?: {
                [key: string]: unknown;
            };
            /** @default  */
            ref?: string;
            /**
             * @description The end user the session serves (never changed afterwards). A token narrowed to an end user tags its sessions with that user itself; naming another is 403 `end_user_scope`.
             * @default
             */
            end_user?: string;
        };
        SessionOut: {
            readonly id: number;
            readonly project: string;
            /**
             * @description A human reference, e.g. S-42.
             * @default
             */
            readonly ref: string;
            readonly role: components["schemas"]["SessionRoleEnum"];
            readonly memory_policy: components["schemas"]["MemoryPolicyEnum"];
            readonly context_budget_chars: number;
            readonly context_items: number;
            readonly status: components["schemas"]["SessionStatusEnum"];
            readonly version: number;
            readonly last_seq: number;
            readonly metadata: unknown;
            readonly end_user: string;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
        };
        /**
         * @description * `manager` - Manager
         *     * `writer` - Writer
         *     * `specialist` - Specialist
         *     * `semantic_reviewer` - Semantic Reviewer
         *     * `human_reviewer` - Human Reviewer
         *     * `other` - Other
         * @enum {string}
         */
        SessionRoleEnum: "manager" | "writer" | "specialist" | "semantic_reviewer" | "human_reviewer" | "other";
        /**
         * @description * `created` - Created
         *     * `running` - Running
         *     * `idle` - Idle
         *     * `awaiting_user` - Awaiting User
         *     * `awaiting_external` - Awaiting External
         *     * `completed` - Completed
         *     * `failed` - Failed
         *     * `terminated` - Terminated
         *     * `stale` - Stale
         * @enum {string}
         */
        SessionStatusEnum: "created" | "running" | "idle" | "awaiting_user" | "awaiting_external" | "completed" | "failed" | "terminated" | "stale";
        SessionTransitionInRequest: {
            to: components["schemas"]["SessionStatusEnum"];
            /** @description The session's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
        };
        StandingApprovalCreateInRequest: {
            /** @description The project's slug: the caller must review there. */
            project: string;
            tool: string;
            /**
             * @description Only this agent's requests (its token's name); empty: any agent.
             * @default
             */
            agent?: string;
            session?: number | null;
            run?: number | null;
            /** @description Argument names and the exact values they must have. */
            match_arguments?: unknown;
            /** @description A JSON Schema the arguments must also match. */
            match_schema?: unknown;
            /** Format: date-time */
            expires_at?: string | null;
            /** @description Instead of expires_at: how long from now (at most 30 days). */
            expires_in?: string | null;
            max_uses: number;
            /** @default  */
            reason?: string;
        };
        StandingApprovalOut: {
            readonly id: number;
            readonly project: string;
            readonly tool: string;
            /** @description Required. 150 characters or fewer. Letters, digits and @/./+/-/_ only. */
            readonly created_by: string;
            /** @description Empty: any agent. */
            readonly agent: string;
            readonly session: number | null;
            readonly run: number | null;
            readonly match_arguments: unknown;
            readonly match_schema: unknown;
            /** Format: date-time */
            readonly expires_at: string;
            readonly max_uses: number;
            readonly uses: number;
            readonly reason: string;
            /** Format: date-time */
            readonly revoked_at: string | null;
            /** @description Required. 150 characters or fewer. Letters, digits and @/./+/-/_ only. */
            readonly revoked_by: string | null;
            /** Format: date-time */
            readonly created_at: string;
        };
        StoreGraphRequest: {
            thread_id?: string;
            checkpoint_ns?: string;
            checkpoint_id?: string;
            node?: string;
        };
        StoreItemOut: {
            readonly id: number;
            readonly namespace: string[];
            readonly key: string;
            readonly value: unknown;
            readonly scope: components["schemas"]["ScopeEnum"];
            /** @description Names the user, agent or session; empty for project scope. */
            readonly scope_key: string;
            readonly status: components["schemas"]["MemoryStatusEnum"];
            readonly version: number;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
            /** Format: date-time */
            readonly expires_at: string | null;
            readonly ttl_seconds: number | null;
            provenance: components["schemas"]["StoreProvenance"];
            readonly policy_decision: string;
            readonly policy_reason: string;
            readonly superseded_by: number | null;
            /** Format: double */
            readonly score: number | null;
        };
        StoreKeyInRequest: {
            project?: string;
            /** @description The LangGraph namespace: its scope first (`project`, `user`, `agent`, `session`), then (but for `project`) the scope key, then labels of your own. */
            namespace: string[];
            key: string;
        };
        StoreProvenance: {
            kind: string;
            run: number | null;
            session: number | null;
            item_seq: number | null;
            readonly person: string | null;
            by: string;
            graph: unknown;
        };
        StorePutInRequest: {
            /** @description Operators name the project; agents need not. */
            project?: string;
            /** @description The LangGraph namespace: its scope first (`project`, `user`, `agent`, `session`), then (but for `project`) the scope key, then labels of your own. */
            namespace: string[];
            key: string;
            /** @description The item's value, a JSON object. */
            value: {
                [key: string]: unknown;
            };
            /** @description Expires this long after the put (a refreshing read renews it). */
            ttl_seconds?: number | null;
            /** @description Where in a LangGraph graph the put was made: the thread's run (if it is this project's) becomes the source run. */
            graph?: components["schemas"]["StoreGraphRequest"];
            /** Format: int64 */
            source_run_id?: number | null;
            /** Format: int64 */
            source_session_id?: number | null;
        };
        StorePutOut: {
            outcome: components["schemas"]["StorePutOutOutcomeEnum"];
            code: string;
            reason: string;
            record: components["schemas"]["StoreItemOut"];
        };
        /**
         * @description * `accepted` - accepted
         *     * `merged` - merged
         *     * `held` - held
         * @enum {string}
         */
        StorePutOutOutcomeEnum: "accepted" | "merged" | "held";
        /**
         * @description * `keep_latest` - keep_latest
         *     * `delete` - delete
         * @enum {string}
         */
        StrategyEnum: "keep_latest" | "delete";
        SummaryInRequest: {
            /** @default system */
            role?: components["schemas"]["ItemRoleEnum"];
            content: unknown;
        };
        SupersedeInRequest: {
            content?: string;
            /**
             * Format: int64
             * @description Resolve a conflict: this live record stands instead.
             */
            replacement_id?: number;
            subject?: string;
            provenance_kind?: components["schemas"]["ProvenanceKindEnum"];
            /** Format: int64 */
            source_run_id?: number | null;
            /** Format: int64 */
            source_session_id?: number | null;
            /** Format: int64 */
            source_item_seq?: number | null;
            /** Format: date-time */
            valid_until?: string | null;
            /** Format: date-time */
            expires_at?: string | null;
            /** @description The record's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
            /** @description Why: required for a person, recorded in the audit entry. Agents editing what they wrote may leave it out. */
            reason?: string;
        };
        TaskCreateInRequest: {
            objective: string;
            constraints?: unknown[];
            plan?: string[];
            plan_version?: number;
            completed_nodes?: unknown[];
            pending_nodes?: unknown[];
            artifact_refs?: {
                [key: string]: unknown;
            };
            schema_version?: number;
            /** @default  */
            ref?: string;
        };
        /**
         * @description A task; its `pending_approvals` and `effect_records` are derived from the real rows of its runs
         *     (selectors.task_durable_state, handed in as the context's `durable`), never written by a client.
         */
        TaskOut: {
            readonly id: number;
            readonly project: string;
            /**
             * @description A human reference, e.g. T-7.
             * @default
             */
            readonly ref: string;
            readonly objective: string;
            readonly constraints: unknown;
            /** @description Ordered node names. */
            readonly plan: unknown;
            readonly plan_version: number;
            readonly completed_nodes: unknown;
            readonly pending_nodes: unknown;
            readonly artifact_refs: unknown;
            /** @description The pending approvals of the task's runs (derived from them; read-only). */
            readonly pending_approvals: {
                [key: string]: unknown;
            }[];
            /** @description The external effects of the task's runs: key, tool, status, receipt (derived; read-only). */
            readonly effect_records: {
                [key: string]: unknown;
            }[];
            readonly latest_checkpoint: number | null;
            readonly schema_version: number;
            readonly status: components["schemas"]["TaskStatusEnum"];
            readonly version: number;
            /** Format: date-time */
            readonly created_at: string;
            /** Format: date-time */
            readonly updated_at: string;
        };
        /**
         * @description * `open` - Open
         *     * `active` - Active
         *     * `waiting` - Waiting
         *     * `completed` - Completed
         *     * `failed` - Failed
         *     * `abandoned` - Abandoned
         * @enum {string}
         */
        TaskStatusEnum: "open" | "active" | "waiting" | "completed" | "failed" | "abandoned";
        TaskTransitionInRequest: {
            to: components["schemas"]["TaskStatusEnum"];
            /** @description The task's version you read: a stale one is refused 409 version_conflict, nothing written. */
            expected_version: number;
        };
        ThreadCheckpointInRequest: {
            thread_id: string;
            /** @default  */
            checkpoint_ns?: string;
            checkpoint_id: string;
            parent_checkpoint_id?: string | null;
            /** @description The LangGraph checkpoint without its channel values. */
            checkpoint: {
                [key: string]: unknown;
            };
            /** @description Each channel's value: JSON, or {"__lg_type__": <serializer type>, "b64": <bytes>}. */
            channel_values: {
                [key: string]: unknown;
            };
            metadata?: {
                [key: string]: unknown;
            };
            lease_owner?: string | null;
        };
        ThreadCheckpointStored: {
            id: number;
            run: number;
            thread_id: string;
            checkpoint_ns: string;
            checkpoint_id: string;
            content_hash: string;
        };
        ThreadCheckpointTuple: {
            id: number;
            run: number;
            thread_id: string;
            checkpoint_ns: string;
            checkpoint_id: string;
            parent_checkpoint_id: string | null;
            checkpoint: {
                [key: string]: unknown;
            };
            channel_values: {
                [key: string]: unknown;
            };
            metadata: {
                [key: string]: unknown;
            };
            content_hash: string;
            /** @description [task_id, channel, value, task_path, idx], in LangGraph's order. */
            pending_writes: unknown[][];
        };
        ThreadCopied: {
            thread_id: string;
            run: number;
            source_run: number;
            checkpoints: number;
            writes: number;
        };
        ThreadCopyInRequest: {
            source_thread_id: string;
            target_thread_id: string;
        };
        ThreadDeleteForRunsInRequest: {
            /** @description LangGraph run ids (metadata.run_id). */
            run_ids: string[];
        };
        ThreadDeleted: {
            checkpoints: number;
            writes: number;
        };
        ThreadEnsureInRequest: {
            thread_id: string;
            /**
             * @description The graph's name: the run's `active_agent` (set once).
             * @default
             */
            agent?: string;
            /**
             * @description The end user a new thread's session serves (an existing thread must be that user's: 409 thread_ref_taken otherwise). A token narrowed to an end user tags its threads with that user itself; naming another is 403 `end_user_scope`.
             * @default
             */
            end_user?: string;
        };
        ThreadInRequest: {
            thread_id: string;
        };
        ThreadPruneInRequest: {
            thread_ids: string[];
            /** @default keep_latest */
            strategy?: components["schemas"]["StrategyEnum"];
        };
        ThreadPruned: {
            checkpoints: number;
            writes: number;
            /** @description [{thread_id, rule}]: skipped. */
            kept: {
                [key: string]: unknown;
            }[];
        };
        ThreadRun: {
            thread_id: string;
            run: number;
            session: number;
        };
        ThreadTtl: {
            thread_id: string;
            run: number;
            ttl_days: number | null;
            project_ttl_days: number | null;
            /** Format: date-time */
            expires_at: string | null;
        };
        ThreadTtlInRequest: {
            thread_id: string;
            /** @description Days since the thread's last change; null: the project's. */
            ttl_days: number | null;
        };
        ThreadWritesInRequest: {
            thread_id: string;
            /** @default  */
            checkpoint_ns?: string;
            checkpoint_id: string;
            task_id: string;
            /** @default  */
            task_path?: string;
            /** @description [idx, channel, value] each. */
            writes: unknown[][];
        };
        ThreadWritesStored: {
            written: number;
        };
        ToolSchemaOut: {
            readonly id: number;
            readonly project: string;
            readonly tool: string;
            readonly version: number;
            /** @description The JSON Schema of the tool's arguments (an object). */
            readonly schema: unknown;
            readonly schema_digest: string;
            readonly registered_by: string;
            /** Format: date-time */
            readonly created_at: string;
        };
        ToolSchemaRegisterInRequest: {
            tool: string;
            /** @description The JSON Schema of the tool's arguments (draft 2020-12 unless `$schema` names another), describing an object. A schema that is not one is refused 400 schema_invalid. */
            schema: {
                [key: string]: unknown;
            };
        };
        UsageInRequest: {
            /**
             * Format: int64
             * @description The model call's tokens (prompt and completion).
             */
            tokens: number;
            /**
             * Format: decimal
             * @default 0.0000
             */
            cost?: string;
            /** @default  */
            model?: string;
            /**
             * @description The model call's own id, kept in the event for the trace.
             * @default
             */
            call_id?: string;
            /** @description Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none. */
            lease_owner?: string | null;
        };
        VoteOut: {
            by: string;
            fingerprint: string;
            /** Format: date-time */
            at: string;
        };
        WebhookCreated: {
            readonly id: number;
            readonly project: string;
            /** Format: uri */
            url: string;
            events: components["schemas"]["EventsEnum"][];
            active?: boolean;
            created_by: string;
            /** Format: date-time */
            readonly created_at: string;
            readonly secret: string;
        };
        WebhookInRequest: {
            /**
             * Format: uri
             * @description http(s); receives a signed POST per event.
             */
            url: string;
            events: components["schemas"]["EventsEnum"][];
        };
        WebhookOut: {
            readonly id: number;
            readonly project: string;
            /** Format: uri */
            url: string;
            events: components["schemas"]["EventsEnum"][];
            active?: boolean;
            created_by: string;
            /** Format: date-time */
            readonly created_at: string;
        };
        WriteInRequest: {
            /** @description Operators name the project; agents need not. */
            project?: string;
            scope: components["schemas"]["ScopeEnum"];
            /** @default  */
            scope_key?: string;
            /** @default  */
            subject?: string;
            content: string;
            /** @default observed */
            provenance_kind?: components["schemas"]["ProvenanceKindEnum"];
            /** Format: int64 */
            source_run_id?: number | null;
            /** Format: int64 */
            source_session_id?: number | null;
            /** Format: int64 */
            source_item_seq?: number | null;
            /** Format: date-time */
            valid_until?: string | null;
            /** Format: date-time */
            expires_at?: string | null;
        };
        WriteOut: {
            outcome: components["schemas"]["WriteOutOutcomeEnum"];
            code: string;
            reason: string;
            record: components["schemas"]["MemoryRecordOut"] | null;
            conflicts: number[];
        };
        /**
         * @description * `accepted` - accepted
         *     * `merged` - merged
         *     * `held` - held
         *     * `rejected` - rejected
         * @enum {string}
         */
        WriteOutOutcomeEnum: "accepted" | "merged" | "held" | "rejected";
        Error: {
            /** @description Stable, machine-readable. */
            code: string;
            detail: string;
            current_status?: string;
            current_version?: number;
            fields?: {
                [key: string]: unknown;
            };
            /** @description With `unknown_field`: each field the body names that the operation does not take, as a path (`parent_checkpoint`, `items[0].colour`). */
            unknown_fields?: string[];
        } & {
            [key: string]: unknown;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    approval_policies_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedApprovalPolicyOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    approval_policies_publish: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApprovalPolicyPublishInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalPolicyOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    approvals_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                run?: number;
                /**
                 * @description * `pending` - Pending
                 *     * `approved` - Approved
                 *     * `rejected` - Rejected
                 *     * `expired` - Expired
                 *     * `cancelled` - Cancelled
                 */
                status?: "pending" | "approved" | "rejected" | "expired" | "cancelled";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedApprovalOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    approvals_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    approvals_decide: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApprovalDecisionInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    approvals_report_outcome: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApprovalOutcomeInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    bundle_export: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ExportInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BundleOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    bundle_import: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ImportInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImportOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    checkpoints_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                run?: number;
                task?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedCheckpointOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    checkpoints_create: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CheckpointInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CheckpointOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    checkpoints_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CheckpointOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    checkpoints_fork: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ForkInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ForkOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    checkpoints_lineage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CheckpointOut"][];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    effects_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                run?: number;
                /**
                 * @description * `intended` - Intended
                 *     * `dispatched` - Dispatched
                 *     * `delivered` - Delivered
                 *     * `consumed` - Consumed
                 *     * `conflict` - Conflict
                 *     * `unknown` - Unknown
                 *     * `refused` - Refused
                 *     * `abandoned` - Abandoned
                 */
                status?: "intended" | "dispatched" | "delivered" | "consumed" | "conflict" | "unknown" | "refused" | "abandoned";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedEffectOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    effects_intend: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EffectIntendInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EffectOut"];
                };
            };
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EffectOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    effects_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EffectOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    effects_deliver: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EffectDeliverInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EffectDeliveryOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    handoffs_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                origin_run?: number;
                receiver_session?: number;
                /**
                 * @description * `issued` - Issued
                 *     * `accepted` - Accepted
                 *     * `returned` - Returned
                 *     * `consumed` - Consumed
                 *     * `expired` - Expired
                 *     * `cancelled` - Cancelled
                 */
                status?: "issued" | "accepted" | "returned" | "consumed" | "expired" | "cancelled";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedHandoffOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    handoffs_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    handoffs_accept: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HandoffAcceptInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    handoffs_cancel: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HandoffCancelInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    handoffs_return: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HandoffReturnInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_conflicts_list: {
        parameters: {
            query?: {
                project?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConflictOut"][];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_context_create: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ContextInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ContextOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_context_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ContextOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_person_erase: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ErasureInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErasureOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_held_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                project?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedMemoryRecordOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                fresh?: boolean | null;
                /** @description Number of results to return per page. */
                limit?: number;
                project?: string;
                /**
                 * @description * `project` - Project
                 *     * `user` - User
                 *     * `agent` - Agent
                 *     * `session` - Session
                 */
                scope?: "project" | "user" | "agent" | "session";
                scope_key?: string;
                /**
                 * @description * `active` - Active
                 *     * `held` - Held for review
                 *     * `superseded` - Superseded
                 *     * `deleted` - Deleted
                 *     * `rejected` - Rejected
                 */
                status?: "active" | "held" | "superseded" | "deleted" | "rejected";
                subject?: string;
                text?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedMemoryRecordOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_write: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WriteInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WriteOut"];
                };
            };
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WriteOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryPolicyRejection"] | components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryRecordOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_chain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChainOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeleteInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryRecordOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_erase: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["EraseInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryErased"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_expire: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ExpireInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryRecordOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_review: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReviewInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryRecordOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_supersede: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SupersedeInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryRecordOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_bulk_delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BulkDeleteInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BulkOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_records_bulk_expire: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BulkInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BulkOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_retrieve: {
        parameters: {
            query: {
                k?: number;
                project?: string;
                q?: string;
                /**
                 * @description * `project` - Project
                 *     * `user` - User
                 *     * `agent` - Agent
                 *     * `session` - Session
                 */
                scope: "project" | "user" | "agent" | "session";
                scope_key?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryRecordOut"][];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_store_get: {
        parameters: {
            query: {
                key: string;
                /** @description The LangGraph namespace: its scope first (`project`, `user`, `agent`, `session`), then (but for `project`) the scope key, then labels of your own. */
                namespace: string[];
                project?: string;
                /** @description Renew the item's TTL (now + its ttl) as it is read. */
                refresh_ttl?: boolean;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoreItemOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_store_put: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StorePutInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StorePutOut"];
                };
            };
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StorePutOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryPolicyRejection"] | components["schemas"]["Error"];
                };
            };
        };
    };
    memory_store_delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StoreKeyInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryStoreDeleted"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_store_namespaces: {
        parameters: {
            query?: {
                limit?: number;
                max_depth?: number | null;
                offset?: number;
                /** @description Namespaces starting with these labels ("*": any one). */
                prefix?: string[];
                project?: string;
                /** @description Namespaces ending with these labels ("*": any one). */
                suffix?: string[];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryStoreNamespaces"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    memory_store_search: {
        parameters: {
            query?: {
                /** @description JSON: {"field": value} or {"field": {"$gt": 3}} on value fields. */
                filter?: unknown;
                limit?: number;
                /** @description Items whose namespace starts with these labels. */
                namespace_prefix?: string[];
                offset?: number;
                project?: string;
                /** @description Full text (websearch syntax) over the value's JSON text. */
                query?: string;
                refresh_ttl?: boolean;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoreItemOut"][];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retention_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RetentionOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retention_set: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["RetentionInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RetentionOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retention_dry_run: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RetentionDryRunOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    questions_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                run?: number;
                status?: "answered" | "cancelled" | "expired" | "pending";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedQuestionOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    questions_ask: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["QuestionAskInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QuestionOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    questions_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QuestionOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    questions_answer: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["QuestionAnswerInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QuestionOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    questions_cancel: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QuestionOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    reviewer_groups_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedReviewerGroupOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runs_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                session?: number;
                /**
                 * @description * `created` - Created
                 *     * `running` - Running
                 *     * `waiting_approval` - Waiting Approval
                 *     * `waiting_external` - Waiting External
                 *     * `blocked` - Blocked
                 *     * `succeeded` - Succeeded
                 *     * `failed` - Failed
                 *     * `cancelled` - Cancelled
                 */
                status?: "created" | "running" | "waiting_approval" | "waiting_external" | "blocked" | "succeeded" | "failed" | "cancelled";
                task?: number;
                updated_since?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedRunOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runs_create: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RunCreateInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runs_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    approvals_request: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApprovalCreateInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runs_claim: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LeaseInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    run_events_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                kind?: string;
                /** @description Number of results to return per page. */
                limit?: number;
            };
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedEventOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    run_events_append: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    handoffs_issue: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HandoffIssueInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HandoffIssued"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runs_heartbeat: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LeaseInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runs_transition: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RunTransitionInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runs_usage_report: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UsageInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    sessions_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                end_user?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                ref?: string;
                /**
                 * @description * `manager` - Manager
                 *     * `writer` - Writer
                 *     * `specialist` - Specialist
                 *     * `semantic_reviewer` - Semantic Reviewer
                 *     * `human_reviewer` - Human Reviewer
                 *     * `other` - Other
                 */
                role?: "manager" | "writer" | "specialist" | "semantic_reviewer" | "human_reviewer" | "other";
                /**
                 * @description * `created` - Created
                 *     * `running` - Running
                 *     * `idle` - Idle
                 *     * `awaiting_user` - Awaiting User
                 *     * `awaiting_external` - Awaiting External
                 *     * `completed` - Completed
                 *     * `failed` - Failed
                 *     * `terminated` - Terminated
                 *     * `stale` - Stale
                 */
                status?: "created" | "running" | "idle" | "awaiting_user" | "awaiting_external" | "completed" | "failed" | "terminated" | "stale";
                updated_since?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedSessionOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    sessions_create: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["SessionCreateInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    sessions_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    session_items_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
            };
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedItemOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    session_items_append: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ItemsAppendInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemsAppendOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    session_items_clear: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ItemsRemoveInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemsClearOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    session_items_compact: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ItemsCompactInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemsTrimmedOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    session_items_latest: {
        parameters: {
            query?: {
                /** @description How many of the newest items (1..500, default 50). */
                limit?: number;
            };
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemsLatestOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    session_items_pop: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ItemsRemoveInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemPopOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    session_items_trim: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ItemsTrimInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemsTrimmedOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    sessions_transition: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SessionTransitionInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    standing_approvals_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                /** @description true: only rules that could approve now; false: only revoked, expired or used up ones. */
                live?: boolean;
                tool?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedStandingApprovalOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    standing_approvals_create: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StandingApprovalCreateInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StandingApprovalOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    standing_approvals_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StandingApprovalOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    standing_approvals_revoke: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StandingApprovalOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tasks_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                /**
                 * @description * `open` - Open
                 *     * `active` - Active
                 *     * `waiting` - Waiting
                 *     * `completed` - Completed
                 *     * `failed` - Failed
                 *     * `abandoned` - Abandoned
                 */
                status?: "open" | "active" | "waiting" | "completed" | "failed" | "abandoned";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedTaskOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tasks_create: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TaskCreateInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tasks_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tasks_save: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PatchedTaskSaveInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tasks_transition: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TaskTransitionInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_ensure: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ThreadEnsureInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadRun"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_checkpoint_read: {
        parameters: {
            query: {
                /** @description The newest when omitted. */
                checkpoint_id?: string;
                /** @description "" (the root graph) when omitted. */
                checkpoint_ns?: string;
                thread_id: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadCheckpointTuple"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_checkpoints_list: {
        parameters: {
            query?: {
                /** @description Only checkpoint ids sorting before this one. */
                before?: string;
                checkpoint_id?: string;
                /** @description Every namespace when omitted. */
                checkpoint_ns?: string;
                /** @description A JSON object the metadata must contain. */
                filter?: string;
                limit?: number;
                /** @description Every thread of the project when omitted. */
                thread_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadCheckpointTuple"][];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_checkpoints_put: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ThreadCheckpointInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadCheckpointStored"];
                };
            };
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadCheckpointStored"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_copy: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ThreadCopyInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadCopied"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ThreadInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadDeleted"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_delete_for_runs: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ThreadDeleteForRunsInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadPruned"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_prune: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ThreadPruneInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadPruned"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_ttl_read: {
        parameters: {
            query: {
                thread_id: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadTtl"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_ttl_set: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ThreadTtlInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadTtl"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    threads_writes_put: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ThreadWritesInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ThreadWritesStored"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tokens_narrow: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NarrowInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NarrowOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tool_schemas_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
                tool?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedToolSchemaOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tool_schemas_register: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ToolSchemaRegisterInRequest"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolSchemaOut"];
                };
            };
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolSchemaOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    tool_schemas_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ToolSchemaOut"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    webhooks_list: {
        parameters: {
            query?: {
                /** @description The pagination cursor value. */
                cursor?: string;
                /** @description Number of results to return per page. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaginatedWebhookOutList"];
                };
            };
            /** @description Invalid input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    webhooks_register: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookInRequest"];
            };
        };
        responses: {
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookCreated"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    webhooks_deactivate: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retries with the same key and body get the first 2xx reply; a different body gets 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookOut"];
                };
            };
            /** @description Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, with `unknown_fields`; a field the server sets, such as id, status or version, included) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid token or session */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The caller's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found in the caller's projects */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: illegal transition, stale version, lost lease, or a duplicate in progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Idempotency-Key reused with a different request */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
