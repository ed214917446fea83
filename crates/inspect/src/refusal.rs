//! Why a file was refused, in words the vendor who uploaded it can act on, with a stable code.

use crate::Kind;

/// Why a file was refused. [`Refusal::code`] is stable (the service and the vendor page branch on it); the
/// message says what was wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("The file is empty. Choose it again; if it is empty on your computer too, save or export it again.")]
    Empty,
    #[error(
        "The file is {} and the largest accepted is {}. Reduce it (for example compress its images) or split it into \
         several files.",
        megabytes(*bytes),
        megabytes(*limit)
    )]
    TooLarge { bytes: u64, limit: u64 },
    #[error(
        "Files {what} are not accepted. Upload a PDF, a Word document (.docx), an Excel workbook (.xlsx), a PNG or \
         JPEG image, or a text or CSV file."
    )]
    TypeNotAllowed { what: String },
    #[error(
        "The file is named as {} but its content is {found}. Save it in the format its name says, or rename it to \
         match its content if that format is accepted.",
        named.label()
    )]
    TypeMismatch { named: Kind, found: String },
    #[error(
        "The file is {} that also contains {other}, so other programs could open it as something else. Save it \
         again as a plain {} and upload that.",
        kind.label(),
        kind.label()
    )]
    Polyglot { kind: Kind, other: String },
    #[error(
        "The {} could not be read completely ({reason}). Save or export it again from the program that made it and \
         upload the new file.",
        kind.label()
    )]
    Unreadable { kind: Kind, reason: String },
    #[error("The {} {what}, which is not accepted. {remedy}", kind.label())]
    ActiveContent { kind: Kind, finding: &'static str, what: String, remedy: &'static str },
    #[error(
        "The {} is protected by a password or encrypted. Upload a copy without the protection (the submission itself \
         is sealed until the deadline).",
        kind.label()
    )]
    Encrypted { kind: Kind },
    #[error("The {} {what}, more than is accepted ({limit}). Reduce it or split it into several files.", kind.label())]
    OverLimit { kind: Kind, what: String, limit: String },
}

impl Refusal {
    /// A stable code per kind of refusal.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Empty => "empty",
            Refusal::TooLarge { .. } => "too_large",
            Refusal::TypeNotAllowed { .. } => "type_not_allowed",
            Refusal::TypeMismatch { .. } => "type_mismatch",
            Refusal::Polyglot { .. } => "polyglot",
            Refusal::Unreadable { .. } => "unreadable",
            Refusal::ActiveContent { .. } => "active_content",
            Refusal::Encrypted { .. } => "encrypted",
            Refusal::OverLimit { .. } => "over_limit",
        }
    }

    /// The finer reason of an active-content refusal (`pdf_javascript`, `ooxml_macros`, …), else the code.
    pub fn finding(&self) -> &'static str {
        match self {
            Refusal::ActiveContent { finding, .. } => finding,
            other => other.code(),
        }
    }

    pub(crate) fn unreadable(kind: Kind, reason: impl Into<String>) -> Self {
        Refusal::Unreadable { kind, reason: reason.into() }
    }

    pub(crate) fn over(kind: Kind, what: impl Into<String>, limit: impl Into<String>) -> Self {
        Refusal::OverLimit { kind, what: what.into(), limit: limit.into() }
    }
}

fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / (1024.0 * 1024.0);
    if mb >= 10.0 { format!("{mb:.0} MB") } else { format!("{mb:.1} MB") }
}
