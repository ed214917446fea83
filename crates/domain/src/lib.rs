//! Plain types shared by every Pactwise crate: typed ids, roles, documents and their media types, the checklist
//! library's types (contract types, sections, items, CUAD categories), the contract review report, the stable error
//! codes the UI branches on, and the `Clock` through which time comes in. No I/O lives here.
//!
//! The tenant scope (`OrgScope`) is deliberately *not* here: Rust privacy is per crate, and the scope must be
//! constructible only from an authenticated session, so it lives in `pactwise-store` next to the sessions table.

pub mod checklist;
pub mod clock;
pub mod document;
pub mod error;
pub mod ids;
pub mod page;
pub mod report;
pub mod review;
pub mod role;
pub mod usage;
pub mod workflow;

pub use checklist::{
    CatalogVersion, ChecklistItem, ContractType, CuadCategory, CuadType, Guidance, ItemSignals, RegulatoryRef,
    RiskLevel, Section, Signals,
};
pub use clock::{Clock, FixedClock, SystemClock};
pub use document::{Document, ImportOutcome, MediaType};
pub use error::ErrorCode;
pub use ids::{ApprovalId, DocumentId, OrgId, RunId, SessionId, TaskId, UserId};
pub use page::{CharBox, Confidence, ConfidenceKind, ExtractedDocument, Page, PageSource, Progress, ProgressPhase};
pub use report::{
    ContractReport, EdgeDrop, ReportBounds, ReportClause, ReportClauseType, ReportCompleteness, ReportEdge, ReportPart,
    ReportRejection, ReportWindow, UnprocessedPart, UnprocessedReason,
};
pub use review::{
    Classification, DurationUnit, Extracted, Extractions, GateDecision, GateReason, ItemFinding, ItemStatus, Method,
    Quote, RejectedExtraction, Route, Value,
};
pub use role::Role;
pub use workflow::{ApprovalStatus, Decision, RunStatus, TaskStatus, VendorStatus};
