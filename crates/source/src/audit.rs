//! The tender's audit trail: every Source event, append-only, each entry carrying the published version's content
//! hash and the hash of the entry before it, so the buyer can export the trail and anyone can check that no entry
//! was changed, removed or reordered ([`verify`]).

use chrono::{DateTime, SecondsFormat, Utc};
use sha2::{Digest, Sha256};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceAction {
    Published,
    Invited,
    Joined,
    Viewed,
    Question,
    Answer,
    Submission,
    Replacement,
    Extension,
    Opening,
    Score,
    Award,
}

impl SourceAction {
    /// The action in people's words.
    pub fn label(self) -> &'static str {
        match self {
            SourceAction::Published => "Tender published",
            SourceAction::Invited => "Vendor invited",
            SourceAction::Joined => "Vendor accepted the invitation",
            SourceAction::Viewed => "Tender viewed by a vendor",
            SourceAction::Question => "Question asked",
            SourceAction::Answer => "Answer published",
            SourceAction::Submission => "Submission received",
            SourceAction::Replacement => "Submission replaced",
            SourceAction::Extension => "Deadline extended",
            SourceAction::Opening => "Envelopes opened",
            SourceAction::Score => "Score recorded",
            SourceAction::Award => "Tender awarded",
        }
    }
}

/// One entry of the trail.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditEntry {
    /// 1, 2, 3, … without gaps.
    pub seq: u64,
    pub at: DateTime<Utc>,
    /// Who did it, as shown to people (a member's name, or the vendor's).
    pub actor: String,
    pub action: SourceAction,
    /// What happened, in words (never an envelope's content).
    pub details: String,
    /// The published version's content hash.
    pub published_hash: String,
    /// The previous entry's hash (empty for the first).
    pub previous: String,
    /// SHA-256 over the previous hash and this entry's fields.
    pub hash: String,
}

/// The next entry after `last` (none for the first).
pub fn append(
    last: Option<&AuditEntry>,
    at: DateTime<Utc>,
    actor: &str,
    action: SourceAction,
    details: &str,
    published_hash: &str,
) -> AuditEntry {
    let mut entry = AuditEntry {
        seq: last.map_or(1, |l| l.seq + 1),
        at,
        actor: actor.to_owned(),
        action,
        details: details.to_owned(),
        published_hash: published_hash.to_owned(),
        previous: last.map(|l| l.hash.clone()).unwrap_or_default(),
        hash: String::new(),
    };
    entry.hash = hash_of(&entry);
    entry
}

fn hash_of(entry: &AuditEntry) -> String {
    let mut hasher = Sha256::new();
    let at = entry.at.to_rfc3339_opts(SecondsFormat::Micros, true);
    let action = serde_json::to_string(&entry.action).unwrap_or_default();
    for field in
        [&entry.previous, &entry.seq.to_string(), &at, &entry.actor, &action, &entry.details, &entry.published_hash]
    {
        hasher.update((field.len() as u64).to_be_bytes());
        hasher.update(field.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// Where a trail stops being trustworthy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainBreak {
    #[error("entry {seq} was changed after it was written")]
    Changed { seq: u64 },
    #[error("entry {seq} does not follow the one before it (an entry was removed, inserted or reordered)")]
    Unlinked { seq: u64 },
    #[error("the trail does not start at entry 1")]
    BadStart,
}

/// Checks a whole trail, in order.
pub fn verify(entries: &[AuditEntry]) -> Result<(), ChainBreak> {
    let mut previous: Option<&AuditEntry> = None;
    for entry in entries {
        let expected_seq = previous.map_or(1, |p| p.seq + 1);
        let expected_previous = previous.map(|p| p.hash.as_str()).unwrap_or("");
        if previous.is_none() && (entry.seq != 1 || !entry.previous.is_empty()) {
            return Err(ChainBreak::BadStart);
        }
        if entry.seq != expected_seq || entry.previous != expected_previous {
            return Err(ChainBreak::Unlinked { seq: entry.seq });
        }
        if hash_of(entry) != entry.hash {
            return Err(ChainBreak::Changed { seq: entry.seq });
        }
        previous = Some(entry);
    }
    Ok(())
}

/// The trail as CSV for the buyer's export: when, who, what, details, and the hashes that let anyone re-check it.
pub fn csv(entries: &[AuditEntry]) -> String {
    let quote = |field: &str| {
        // A cell a spreadsheet would run as a formula is quoted with a leading apostrophe.
        let safe =
            if field.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{field}") } else { field.to_owned() };
        format!("\"{}\"", safe.replace('"', "\"\""))
    };
    let mut out = String::from("seq,time (UTC),who,what,details,published version,previous hash,hash\n");
    for e in entries {
        let row = [
            e.seq.to_string(),
            e.at.format("%Y-%m-%d %H:%M:%S").to_string(),
            e.actor.clone(),
            e.action.label().to_owned(),
            e.details.clone(),
            e.published_hash.clone(),
            e.previous.clone(),
            e.hash.clone(),
        ];
        out.push_str(&row.iter().map(|f| quote(f)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn trail() -> Vec<AuditEntry> {
        let at = |h| Utc.with_ymd_and_hms(2027, 3, 1, h, 0, 0).unwrap();
        let mut entries = vec![append(None, at(8), "Ann Buyer", SourceAction::Published, "version 1", "h1")];
        for (hour, action, details) in [
            (9, SourceAction::Invited, "Acme Ltd"),
            (10, SourceAction::Submission, "Acme Ltd: 2 files"),
            (11, SourceAction::Replacement, "Acme Ltd: 3 files"),
        ] {
            let next = append(entries.last(), at(hour), "Acme Ltd", action, details, "h1");
            entries.push(next);
        }
        entries
    }

    #[test]
    fn an_untouched_trail_verifies() {
        assert_eq!(verify(&trail()), Ok(()));
    }

    #[test]
    fn a_changed_removed_or_reordered_entry_is_found() {
        let mut changed = trail();
        changed[2].details = "Acme Ltd: 1 file".into();
        assert_eq!(verify(&changed), Err(ChainBreak::Changed { seq: 3 }));
        let mut removed = trail();
        removed.remove(1);
        assert_eq!(verify(&removed), Err(ChainBreak::Unlinked { seq: 3 }));
        let mut reordered = trail();
        reordered.swap(2, 3);
        assert!(verify(&reordered).is_err());
        let mut rehashed = trail();
        rehashed[1].details = "Globex".into();
        rehashed[1].hash = hash_of(&rehashed[1]);
        assert_eq!(verify(&rehashed), Err(ChainBreak::Unlinked { seq: 3 }));
    }

    #[test]
    fn the_csv_has_a_row_per_entry_in_words_and_no_formula() {
        let mut entries = trail();
        let hostile = append(entries.last(), entries[0].at, "=cmd|' /C calc'!A0", SourceAction::Question, "x", "h1");
        entries.push(hostile);
        let text = csv(&entries);
        assert_eq!(text.lines().count(), 6);
        assert!(text.contains("\"Submission replaced\""));
        assert!(text.contains("\"'=cmd|' /C calc'!A0\""));
    }
}
