//! What retrieval's in-memory word index of an organization is built from: its passages with the words the full-text
//! index holds for each (FTS5's own tokens, so the word index ranks exactly the words a full-text query would
//! match), the counter that moves when they change, its deleted documents, and the passages' tokenizer for a query's
//! words. Every read here filters by the scope's organization.

use crate::{OrgScope, Passages, StoreError};
use pactwise_domain::DocumentId;
use rusqlite::{Connection, OptionalExtension, params};

/// The tokenizer of the passages' full-text index (migration 0005); [`PassageTokenizer`] uses the same.
const PASSAGE_TOKENIZER: &str = "porter unicode61";

/// An organization's passages as a word index reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct PassageWords {
    /// The organization's passage counter when they were read (see [`Passages::word_version`]).
    pub version: i64,
    /// The passages' ids and documents, by id; a word's passage is its position here.
    pub passages: Vec<(i64, DocumentId)>,
}

/// Where each of the organization's passage ids sits in [`PassageWords::passages`].
enum Positions {
    /// By id minus the smallest id (`u32::MAX`: another organization's).
    Dense {
        first: i64,
        at: Vec<u32>,
    },
    Sparse(std::collections::HashMap<i64, u32>),
}

impl Positions {
    fn new(passages: &[(i64, DocumentId)]) -> Positions {
        match (passages.first(), passages.last()) {
            (Some((first, _)), Some((last, _))) if last - first < 16 * 1024 * 1024 => {
                let mut at = vec![u32::MAX; (last - first + 1) as usize];
                for (position, (id, _)) in passages.iter().enumerate() {
                    at[(id - first) as usize] = position as u32;
                }
                Positions::Dense { first: *first, at }
            }
            _ => Positions::Sparse(passages.iter().enumerate().map(|(p, (id, _))| (*id, p as u32)).collect()),
        }
    }

    fn of(&self, id: i64) -> Option<u32> {
        match self {
            Positions::Dense { first, at } => {
                let offset = usize::try_from(id.checked_sub(*first)?).ok()?;
                at.get(offset).copied().filter(|p| *p != u32::MAX)
            }
            Positions::Sparse(map) => map.get(&id).copied(),
        }
    }
}

impl Passages<'_> {
    /// A counter that moves whenever a passage of the organization is written or removed (0: none ever was).
    pub fn word_version(&self, scope: &OrgScope) -> Result<i64, StoreError> {
        Ok(self
            .conn()
            .prepare_cached("SELECT version FROM passage_versions WHERE org_id = ?1")?
            .query_row([scope.org().to_string()], |r| r.get(0))
            .optional()?
            .unwrap_or(0))
    }

    /// The organization's passages (deleted documents' too: a search leaves those out), and through `visit` each
    /// word of their text as the full-text index holds it (stemmed, lower case), once per occurrence, with the
    /// passage's position in [`PassageWords::passages`]: word by word, and within a word passage by passage. Read in
    /// one snapshot with the counter.
    pub fn passage_words(
        &self,
        scope: &OrgScope,
        visit: &mut dyn FnMut(&str, u32),
    ) -> Result<PassageWords, StoreError> {
        let conn = self.conn();
        // The vocabulary table reads the index's own entries; a table of this connection's, created once.
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.passage_word_instances
             USING fts5vocab(main, passages_fts, instance);",
        )?;
        let snapshot = conn.is_autocommit().then(|| conn.unchecked_transaction()).transpose()?;
        let org = scope.org().to_string();
        let version = self.word_version(scope)?;
        let passages: Vec<(i64, DocumentId)> = {
            let mut stmt = conn.prepare_cached("SELECT id, document_id FROM passages WHERE org_id = ?1 ORDER BY id")?;
            let rows = stmt.query_map([&org], |r| Ok((r.get(0)?, crate::passages::parse_id(r.get(1)?)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        if !passages.is_empty() {
            let positions = Positions::new(&passages);
            let mut stmt =
                conn.prepare_cached("SELECT term, doc FROM temp.passage_word_instances WHERE col = 'text'")?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let Some(position) = positions.of(row.get(1)?) else { continue };
                let term = row.get_ref(0)?;
                let term = term
                    .as_str()
                    .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, term.data_type(), Box::new(e)))?;
                visit(term, position);
            }
        }
        if let Some(snapshot) = snapshot {
            snapshot.commit()?;
        }
        Ok(PassageWords { version, passages })
    }

    /// The organization's deleted documents.
    pub fn deleted_documents(&self, scope: &OrgScope) -> Result<Vec<DocumentId>, StoreError> {
        let mut stmt =
            self.conn().prepare_cached("SELECT id FROM documents WHERE org_id = ?1 AND deleted_at IS NOT NULL")?;
        let rows = stmt.query_map([scope.org().to_string()], |r| crate::passages::parse_id(r.get(0)?))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The passages' tokenizer, for a query's words: the words the full-text index would hold for a text. Runs on a
/// small database of its own in memory, so tokenizing writes nothing to the store.
pub struct PassageTokenizer {
    conn: Connection,
}

impl PassageTokenizer {
    pub fn new() -> Result<PassageTokenizer, StoreError> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE words USING fts5(text, tokenize = '{PASSAGE_TOKENIZER}');
             CREATE VIRTUAL TABLE temp.word_instances USING fts5vocab(main, words, instance);"
        ))?;
        Ok(PassageTokenizer { conn })
    }

    /// The index's words of `text` in their order, each once.
    pub fn tokens(&self, text: &str) -> Result<Vec<String>, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        tx.execute("DELETE FROM words", [])?;
        tx.execute("INSERT INTO words (rowid, text) VALUES (1, ?1)", params![text])?;
        let mut found: Vec<(i64, String)> = {
            let mut stmt = tx.prepare_cached("SELECT offset, term FROM word_instances")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        // Rolled back: the table stays empty.
        drop(tx);
        found.sort();
        let mut tokens: Vec<String> = Vec::new();
        for (_, term) in found {
            if !tokens.contains(&term) {
                tokens.push(term);
            }
        }
        Ok(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewDocument, NewPassage, Store};
    use pactwise_domain::{MediaType, Role, SystemClock};
    use std::sync::Arc;

    fn member(store: &Store, name: &str) -> OrgScope {
        let p = store.platform();
        let org = p.create_organization(name).unwrap();
        let user = p.create_user(&format!("{name} user"), None).unwrap();
        p.set_membership(org, user, Role::Owner).unwrap();
        store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
    }

    fn document(store: &Store, scope: &OrgScope, n: u32, texts: &[&str]) -> DocumentId {
        let new = NewDocument {
            name: format!("contract {n}.pdf"),
            media_type: MediaType::Pdf,
            size: 10,
            content_hash: format!("{n:064x}"),
        };
        let (d, _) = store.documents().record(scope, &new).unwrap();
        let passages: Vec<NewPassage> = texts
            .iter()
            .map(|t| NewPassage { page: 1, start: 0, end: t.chars().count() as u32, text: (*t).to_owned() })
            .collect();
        store.passages().replace(scope, d.id, &passages).unwrap();
        d.id
    }

    #[test]
    fn the_tokenizer_gives_the_words_the_passages_index_holds() {
        let text = "The Licensee shall indemnify, defend and hold harmless the Licensor; TERMINATION for convenience \
                    (Section 12.3) — Café payments are due within thirty (30) days.";
        let tokenizer = PassageTokenizer::new().unwrap();
        let tokens = tokenizer.tokens(text).unwrap();
        let store = Store::open_in_memory(Arc::new(SystemClock)).unwrap();
        let scope = member(&store, "Acme");
        document(&store, &scope, 1, &[text]);
        let mut indexed: Vec<String> = Vec::new();
        store
            .passages()
            .passage_words(&scope, &mut |term, _| {
                if !indexed.iter().any(|t| t == term) {
                    indexed.push(term.to_owned());
                }
            })
            .unwrap();
        let mut sorted = tokens.clone();
        sorted.sort();
        indexed.sort();
        assert_eq!(sorted, indexed, "the same words as the index");
        assert_eq!(&tokens[..4], ["the", "license", "shall", "indemnifi"], "in the text's order, stemmed: {tokens:?}");
        assert!(tokens.contains(&"cafe".to_owned()) && tokens.contains(&"termin".to_owned()), "{tokens:?}");
        assert_eq!(tokenizer.tokens("fees \" OR x:* NEAR(").unwrap(), ["fee", "or", "x", "near"], "syntax is words");
        assert!(tokenizer.tokens("  ;; ").unwrap().is_empty());
    }

    #[test]
    fn an_organization_reads_only_its_own_passages_words_and_its_counter_moves_with_every_change() {
        let store = Store::open_in_memory(Arc::new(SystemClock)).unwrap();
        let acme = member(&store, "Acme");
        let globex = member(&store, "Globex");
        let passages = store.passages();
        assert_eq!(passages.word_version(&acme).unwrap(), 0, "nothing written yet");
        let a = document(&store, &acme, 1, &["escrow fees", "audit rights"]);
        document(&store, &globex, 2, &["secret globex escrow", "globex audit"]);
        let after_first = passages.word_version(&acme).unwrap();
        assert!(after_first > 0);
        let mut seen: Vec<(String, u32)> = Vec::new();
        let words = passages.passage_words(&acme, &mut |term, at| seen.push((term.to_owned(), at))).unwrap();
        assert_eq!(words.passages.len(), 2);
        assert!(words.passages.iter().all(|(_, d)| *d == a), "only Acme's passages");
        assert_eq!(words.version, after_first);
        let mut terms: Vec<&str> = seen.iter().map(|(t, _)| t.as_str()).collect();
        terms.dedup();
        assert_eq!(terms, ["audit", "escrow", "fee", "right"], "word by word, none of Globex's");
        assert!(seen.contains(&("escrow".to_owned(), 0)) && seen.contains(&("audit".to_owned(), 1)));
        // The same number of passages again, likely under the same ids: the counter still moves.
        passages
            .replace(
                &acme,
                a,
                &[
                    NewPassage { page: 1, start: 0, end: 5, text: "lease".into() },
                    NewPassage { page: 1, start: 6, end: 9, text: "rent".into() },
                ],
            )
            .unwrap();
        assert!(passages.word_version(&acme).unwrap() > after_first);
        let globex_version = passages.word_version(&globex).unwrap();
        document(&store, &acme, 3, &["more"]);
        assert_eq!(passages.word_version(&globex).unwrap(), globex_version, "another organization's writes");
        assert!(passages.deleted_documents(&acme).unwrap().is_empty());
        store.documents().soft_delete(&acme, a).unwrap();
        assert_eq!(passages.deleted_documents(&acme).unwrap(), [a]);
        assert!(passages.deleted_documents(&globex).unwrap().is_empty());
    }
}
