-- What people asked for and could not find (issue 20 part D): the audit log filtered by person or action and the
-- assistant's answers per user, newest first, paged by keyset. Indexes only: no row changes.
CREATE INDEX audit_log_by_org_actor ON audit_log (org_id, actor_id, seq);
CREATE INDEX audit_log_by_org_action ON audit_log (org_id, action, seq);
CREATE INDEX assistant_messages_by_user ON assistant_messages (org_id, user_id, created_at, id);
