//! Documents as the organization sees them: one per content hash, with who brought it in and whether it is deleted.

use crate::ids::{DocumentId, UserId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The kinds of file Pactwise takes in. Detected from the file's bytes (magic numbers), not trusted from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum MediaType {
    Pdf,
    Docx,
    Txt,
    Png,
    Jpeg,
    Tiff,
}

impl MediaType {
    pub const ALL: [MediaType; 6] =
        [MediaType::Pdf, MediaType::Docx, MediaType::Txt, MediaType::Png, MediaType::Jpeg, MediaType::Tiff];

    /// The IANA media type.
    pub fn mime(self) -> &'static str {
        match self {
            MediaType::Pdf => "application/pdf",
            MediaType::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            MediaType::Txt => "text/plain",
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
            MediaType::Tiff => "image/tiff",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MediaType::Pdf => "pdf",
            MediaType::Docx => "docx",
            MediaType::Txt => "txt",
            MediaType::Png => "png",
            MediaType::Jpeg => "jpeg",
            MediaType::Tiff => "tiff",
        }
    }

    /// Is this a picture of pages (to be OCR'd) rather than a text format?
    pub fn is_image(self) -> bool {
        matches!(self, MediaType::Png | MediaType::Jpeg | MediaType::Tiff)
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MediaType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MediaType::ALL.into_iter().find(|m| m.as_str() == s).ok_or_else(|| format!("unknown media type {s:?}"))
    }
}

/// A document of one organization. The organization is not a field: whoever holds a `Document` got it through a
/// scoped query, so it is the caller's organization by construction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct Document {
    pub id: DocumentId,
    /// The file name it was imported under (no directories).
    pub name: String,
    pub media_type: MediaType,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the bytes, lowercase hex; also the blob's address in the data directory.
    pub content_hash: String,
    pub created_by: UserId,
    pub created_at: DateTime<Utc>,
    /// Set when soft-deleted; a deleted document is invisible unless asked for explicitly and can be restored.
    pub deleted_at: Option<DateTime<Utc>>,
}

/// What an import found: a new document, the same bytes already there, or the same bytes in the trash (restored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ImportOutcome {
    Created,
    Existing,
    Restored,
}

impl Document {
    pub fn is_deleted(&self) -> bool {
        self.deleted_at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_round_trip_and_know_their_mime() {
        for m in MediaType::ALL {
            assert_eq!(m.as_str().parse::<MediaType>().unwrap(), m);
            assert!(m.mime().contains('/'));
        }
        assert!(MediaType::Tiff.is_image());
        assert!(!MediaType::Pdf.is_image());
    }
}
