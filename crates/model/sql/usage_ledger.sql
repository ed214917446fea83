-- Model usage ledger and budgets, for the store's migrations (pactwise-model defines the record types in
-- pactwise_domain::usage and the traits UsageLedger / BudgetSource the store implements over these tables).
--
-- Times are RFC 3339 UTC text written with a fixed shape, `2026-11-30T09:00:00.000Z`
-- (chrono: `at.to_rfc3339_opts(SecondsFormat::Millis, true)`), so text order is time order and `at >= ?` works.
-- Money is integer micro-dollars. Add REFERENCES to the organizations / users tables if the store has them.

CREATE TABLE IF NOT EXISTS usage_ledger (
    id                    INTEGER PRIMARY KEY,
    org_id                TEXT    NOT NULL,
    user_id               TEXT,                    -- NULL: background work with no person behind it
    purpose               TEXT    NOT NULL,        -- classify, checklist_section, assistant, ...
    model                 TEXT    NOT NULL,        -- always claude-haiku-5-5 (the model policy)
    input_tokens          INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens         INTEGER NOT NULL CHECK (output_tokens >= 0),
    cache_write_5m_tokens INTEGER NOT NULL CHECK (cache_write_5m_tokens >= 0),
    cache_write_1h_tokens INTEGER NOT NULL CHECK (cache_write_1h_tokens >= 0),
    cache_read_tokens     INTEGER NOT NULL CHECK (cache_read_tokens >= 0),
    cost_micros           INTEGER NOT NULL CHECK (cost_micros >= 0),
    latency_ms            INTEGER NOT NULL CHECK (latency_ms >= 0),
    outcome               TEXT    NOT NULL CHECK (outcome IN ('ok', 'refused', 'truncated', 'invalid_output',
                              'rate_limited', 'overloaded', 'server_error', 'rejected', 'transport_error')),
    at                    TEXT    NOT NULL         -- when the request was sent
);

-- Budget checks sum an organization's (or one user's) cost since the start of the period.
CREATE INDEX IF NOT EXISTS usage_ledger_org_at ON usage_ledger (org_id, at);
CREATE INDEX IF NOT EXISTS usage_ledger_org_user_at ON usage_ledger (org_id, user_id, at);

CREATE TABLE IF NOT EXISTS model_budgets (
    org_id       TEXT    NOT NULL,
    subject      TEXT    NOT NULL CHECK (subject IN ('organization', 'each_user', 'user')),
    user_id      TEXT,                             -- set exactly when subject = 'user'
    period       TEXT    NOT NULL CHECK (period IN ('daily', 'monthly')),
    limit_micros INTEGER NOT NULL CHECK (limit_micros >= 0),
    updated_at   TEXT    NOT NULL,
    CHECK ((subject = 'user') = (user_id IS NOT NULL))
);

-- One budget per organization, subject (and user) and period.
CREATE UNIQUE INDEX IF NOT EXISTS model_budgets_unique
    ON model_budgets (org_id, subject, IFNULL(user_id, ''), period);

-- Statements the store's functions use (kept here as comments so this file stays a plain migration):
--
-- insert_usage_batch (one transaction per batch, one prepared statement):
--   INSERT INTO usage_ledger (org_id, user_id, purpose, model, input_tokens, output_tokens, cache_write_5m_tokens,
--       cache_write_1h_tokens, cache_read_tokens, cost_micros, latency_ms, outcome, at)
--   VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13);
--
-- spent_micros (user NULL = the whole organization):
--   SELECT IFNULL(SUM(cost_micros), 0) FROM usage_ledger
--   WHERE org_id = ?1 AND at >= ?2 AND (?3 IS NULL OR user_id = ?3);
--
-- budgets_of_org:
--   SELECT subject, user_id, period, limit_micros FROM model_budgets WHERE org_id = ?1;
--
-- set_budget (replace the one with the same key):
--   DELETE FROM model_budgets WHERE org_id = ?1 AND subject = ?2 AND IFNULL(user_id, '') = IFNULL(?3, '')
--       AND period = ?4;
--   INSERT INTO model_budgets (org_id, subject, user_id, period, limit_micros, updated_at)
--   VALUES (?1, ?2, ?3, ?4, ?5, ?6);
--
-- clear_budget: the DELETE above alone.
