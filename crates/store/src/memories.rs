//! The agents' memory of one person in one organization: short-term memories that expire after a day and
//! long-term ones that stay until the person deletes them. Every read and write is scoped to the session's
//! organization **and** user (both from the [`OrgScope`]), so nobody recalls another person's memories, and no
//! organization another's. Ranking the memories for a request is `pactwise_agents::memory`'s; this keeps them.

use crate::sql::write_tx;
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Duration, Utc};
use rusqlite::{Row, params};

/// How long a short-term memory lives.
pub const SHORT_TERM: Duration = Duration::hours(24);
/// The most memories one person keeps per tier; remembering more forgets the least important, oldest first.
pub const MAX_PER_TIER: u32 = 500;
/// The longest memory text kept (characters); longer text is cut at a word.
pub const MAX_TEXT: usize = 500;

pub struct Memories<'s> {
    store: &'s Store,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryTier {
    Short,
    Long,
}

impl MemoryTier {
    fn as_str(self) -> &'static str {
        match self {
            MemoryTier::Short => "short",
            MemoryTier::Long => "long",
        }
    }
}

/// A memory as kept.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecord {
    pub id: String,
    pub tier: MemoryTier,
    pub text: String,
    /// Where it came from, in words ("You asked on 3 December: …").
    pub why: String,
    /// 0 to 1.
    pub importance: f64,
    pub run: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// A memory to keep.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    pub tier: MemoryTier,
    pub text: String,
    pub why: String,
    pub importance: f64,
    pub run: Option<String>,
}

fn memory_from_row(r: &Row<'_>) -> rusqlite::Result<MemoryRecord> {
    Ok(MemoryRecord {
        id: r.get(0)?,
        tier: if r.get::<_, String>(1)? == "long" { MemoryTier::Long } else { MemoryTier::Short },
        text: r.get(2)?,
        why: r.get(3)?,
        importance: r.get(4)?,
        run: r.get(5)?,
        created_at: from_sql(&r.get::<_, String>(6)?)?,
        expires_at: from_sql_opt(r.get(7)?)?,
    })
}

fn cut(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_TEXT {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX_TEXT).collect();
    let at = head.rfind(char::is_whitespace).filter(|i| *i > MAX_TEXT / 2).unwrap_or(head.len());
    format!("{}…", head[..at].trim_end())
}

impl<'s> Memories<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Memories { store }
    }

    /// Keeps memories for the session's person, in one transaction. The same text in the same tier is kept once
    /// (its importance raised to the larger one and, for a short-term memory, its day started again). Refused:
    /// empty text, an importance outside 0 to 1.
    pub fn remember(&self, scope: &OrgScope, memories: &[NewMemory]) -> Result<(), StoreError> {
        for m in memories {
            if m.text.trim().is_empty() || m.why.trim().is_empty() {
                return Err(StoreError::Invalid("a memory needs its text and where it came from".into()));
            }
            if !(0.0..=1.0).contains(&m.importance) {
                return Err(StoreError::Invalid(format!("a memory's importance is 0 to 1, not {}", m.importance)));
            }
        }
        let now = self.store.clock().now();
        let tx = write_tx(self.store)?;
        for m in memories {
            let expires = (m.tier == MemoryTier::Short).then(|| to_sql(now + SHORT_TERM));
            tx.prepare_cached(
                "INSERT INTO agent_memories (id, org_id, user_id, tier, text, why, importance, run_id, created_at,
                     expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (org_id, user_id, tier, text) DO UPDATE SET
                     importance = max(importance, excluded.importance), why = excluded.why,
                     created_at = excluded.created_at, expires_at = excluded.expires_at, run_id = excluded.run_id",
            )?
            .execute(params![
                uuid::Uuid::now_v7().to_string(),
                scope.org().to_string(),
                scope.user().to_string(),
                m.tier.as_str(),
                cut(&m.text),
                cut(&m.why),
                m.importance,
                m.run,
                to_sql(now),
                expires,
            ])?;
            // The most per tier: the least important, then oldest, go.
            tx.prepare_cached(
                "DELETE FROM agent_memories WHERE id IN (
                     SELECT id FROM agent_memories WHERE org_id = ?1 AND user_id = ?2 AND tier = ?3
                     ORDER BY importance DESC, created_at DESC LIMIT -1 OFFSET ?4)",
            )?
            .execute(params![
                scope.org().to_string(),
                scope.user().to_string(),
                m.tier.as_str(),
                MAX_PER_TIER
            ])?;
        }
        // Short-term memories past their day are gone for good.
        tx.prepare_cached(
            "DELETE FROM agent_memories WHERE org_id = ?1 AND user_id = ?2 AND expires_at IS NOT NULL
                 AND expires_at <= ?3",
        )?
        .execute(params![scope.org().to_string(), scope.user().to_string(), to_sql(now)])?;
        tx.commit()?;
        Ok(())
    }

    /// The session's person's memories that have not expired, newest first.
    pub fn list(&self, scope: &OrgScope) -> Result<Vec<MemoryRecord>, StoreError> {
        let now = to_sql(self.store.clock().now());
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT id, tier, text, why, importance, run_id, created_at, expires_at FROM agent_memories
             WHERE org_id = ?1 AND user_id = ?2 AND (expires_at IS NULL OR expires_at > ?3)
             ORDER BY created_at DESC, id DESC",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), scope.user().to_string(), now], memory_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Deletes one of the session's person's memories. `NotFound` for another person's or organization's id.
    pub fn forget(&self, scope: &OrgScope, id: &str) -> Result<(), StoreError> {
        let changed = self.store.conn().execute(
            "DELETE FROM agent_memories WHERE id = ?1 AND org_id = ?2 AND user_id = ?3",
            params![id, scope.org().to_string(), scope.user().to_string()],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Deletes every memory of the session's person; returns how many.
    pub fn forget_all(&self, scope: &OrgScope) -> Result<usize, StoreError> {
        Ok(self.store.conn().execute(
            "DELETE FROM agent_memories WHERE org_id = ?1 AND user_id = ?2",
            params![scope.org().to_string(), scope.user().to_string()],
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn long_text_is_cut_at_a_word() {
        let long = "word ".repeat(200);
        let c = cut(&long);
        assert!(c.ends_with('…') && c.chars().count() <= super::MAX_TEXT + 1, "{c}");
        assert_eq!(cut("  short  "), "short");
    }
}
