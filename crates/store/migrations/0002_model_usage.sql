-- Model usage ledger and budgets (see pactwise-model: every request is priced and recorded; budgets are checked
-- before a request is sent). Money is integer micro-dollars. Times are RFC 3339 UTC with milliseconds.

CREATE TABLE usage_ledger (
    id                     INTEGER PRIMARY KEY,
    org_id                 TEXT    NOT NULL REFERENCES organizations (id),
    user_id                TEXT    REFERENCES users (id),
    purpose                TEXT    NOT NULL,
    model                  TEXT    NOT NULL,
    input_tokens           INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens          INTEGER NOT NULL CHECK (output_tokens >= 0),
    cache_write_5m_tokens  INTEGER NOT NULL CHECK (cache_write_5m_tokens >= 0),
    cache_write_1h_tokens  INTEGER NOT NULL CHECK (cache_write_1h_tokens >= 0),
    cache_read_tokens      INTEGER NOT NULL CHECK (cache_read_tokens >= 0),
    cost_micros            INTEGER NOT NULL CHECK (cost_micros >= 0),
    latency_ms             INTEGER NOT NULL CHECK (latency_ms >= 0),
    outcome                TEXT    NOT NULL CHECK (outcome IN ('ok', 'refused', 'truncated', 'invalid_output',
                               'rate_limited', 'overloaded', 'server_error', 'rejected', 'transport_error')),
    at                     TEXT    NOT NULL
);
CREATE INDEX usage_ledger_org_at ON usage_ledger (org_id, at);
CREATE INDEX usage_ledger_org_user_at ON usage_ledger (org_id, user_id, at);

CREATE TABLE model_budgets (
    org_id        TEXT    NOT NULL REFERENCES organizations (id),
    subject       TEXT    NOT NULL CHECK (subject IN ('organization', 'each_user', 'user')),
    user_id       TEXT    REFERENCES users (id),
    period        TEXT    NOT NULL CHECK (period IN ('daily', 'monthly')),
    limit_micros  INTEGER NOT NULL CHECK (limit_micros >= 0),
    updated_at    TEXT    NOT NULL,
    CHECK ((subject = 'user') = (user_id IS NOT NULL))
);
CREATE UNIQUE INDEX model_budgets_unique ON model_budgets (org_id, subject, IFNULL(user_id, ''), period);
