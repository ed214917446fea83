//! The Contract Assistant's earlier answers, as their asker reads them again: the signed-in user's own questions in
//! the session's organization only (another member's never show, nor another organization's), newest first, paged
//! by keyset, searchable. Citations keep what was retrieved; a cited document that was deleted since is named as
//! gone and cannot be opened.

use crate::time::from_sql;
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::DocumentId;
use rusqlite::params;

pub struct AssistantHistory<'s> {
    store: &'s Store,
}

/// One earlier question with its answer (or the code of why there was none) and its citations in order.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    pub id: String,
    pub session: String,
    pub question: String,
    pub answer: Option<String>,
    /// `answered`, or the error code the question ended with.
    pub outcome: String,
    pub at: DateTime<Utc>,
    pub citations: Vec<HistoryCitation>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HistoryCitation {
    /// `contract` or `precedent`.
    pub kind: String,
    /// The cited document while it is live in the organization; `None` once deleted.
    pub document: Option<DocumentId>,
    /// Its file name (live documents only), or the precedent's title.
    pub title: Option<String>,
    pub precedent: Option<String>,
    pub page: Option<u32>,
    pub start: u32,
    pub end: u32,
    pub excerpt: String,
    /// The supporting sentences' ranges; empty for answers from before they were chosen, or a damaged row.
    pub supporting: Vec<(u32, u32)>,
}

/// The most entries one page may hold.
pub const HISTORY_PAGE_MAX: u32 = 200;

impl<'s> AssistantHistory<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        AssistantHistory { store }
    }

    /// The caller's own entries before `before` (an entry id from the previous page), newest first; with `search`,
    /// only those whose question or answer contains it (case-insensitive for ASCII).
    pub fn page(
        &self,
        scope: &OrgScope,
        search: Option<&str>,
        before: Option<&str>,
        limit: u32,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let conn = self.store.conn();
        let search = search.map(str::trim).filter(|s| !s.is_empty()).map(str::to_lowercase);
        let mut stmt = conn.prepare_cached(
            "SELECT m.id, m.session_id, m.question, m.answer, m.outcome, m.created_at FROM assistant_messages m
             WHERE m.org_id = ?1 AND m.user_id = ?2
               AND (?3 IS NULL OR (m.created_at, m.id) < (SELECT b.created_at, b.id FROM assistant_messages b
                                                         WHERE b.id = ?3 AND b.org_id = ?1 AND b.user_id = ?2))
               AND (?4 IS NULL OR instr(lower(m.question || ' ' || IFNULL(m.answer, '')), ?4) > 0)
             ORDER BY m.created_at DESC, m.id DESC LIMIT ?5",
        )?;
        let rows = stmt.query_map(
            params![
                scope.org().to_string(),
                scope.user().to_string(),
                before,
                search,
                limit.clamp(1, HISTORY_PAGE_MAX)
            ],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (id, session, question, answer, outcome, at) = row?;
            out.push(HistoryEntry {
                id,
                session,
                question,
                answer,
                outcome,
                at: from_sql(&at)?,
                citations: Vec::new(),
            });
        }
        let mut cites = conn.prepare_cached(
            "SELECT c.kind, d.id, CASE WHEN c.kind = 'contract' THEN d.name ELSE p.title END, c.precedent_id, c.page,
                    c.start_char, c.end_char, c.excerpt, c.supporting
             FROM assistant_citations c
             LEFT JOIN documents d ON d.id = c.document_id AND d.org_id = ?2 AND d.deleted_at IS NULL
             LEFT JOIN precedents p ON p.id = c.precedent_id
             WHERE c.message_id = ?1 ORDER BY c.ordinal",
        )?;
        for entry in &mut out {
            let rows = cites.query_map(params![entry.id, scope.org().to_string()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<u32>>(4)?,
                    r.get::<_, u32>(5)?,
                    r.get::<_, u32>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, Option<String>>(8)?,
                ))
            })?;
            for row in rows {
                let (kind, document, title, precedent, page, start, end, excerpt, supporting) = row?;
                // Ranges outside the passage (a damaged row) are dropped: the passage itself is then the support.
                let supporting: Vec<(u32, u32)> = supporting
                    .and_then(|s| serde_json::from_str::<Vec<(u32, u32)>>(&s).ok())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|(s, e)| start <= *s && s < e && *e <= end)
                    .collect();
                entry.citations.push(HistoryCitation {
                    kind,
                    document: document.and_then(|d| d.parse().ok()),
                    title,
                    precedent,
                    page,
                    start,
                    end,
                    excerpt,
                    supporting,
                });
            }
        }
        Ok(out)
    }
}
