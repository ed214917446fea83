//! The checklist library as the shells see it: the whole catalog and its statistics.

use crate::ApiError;
use pactwise_checklists::{CatalogExport, CatalogStats};
use pactwise_domain::ErrorCode;

fn catalog_error(e: pactwise_checklists::CatalogError) -> ApiError {
    tracing::error!(error = %e, "the embedded checklist library does not load");
    ApiError::new(ErrorCode::Internal, format!("the checklist library shipped with this build is invalid: {e}"))
}

/// The whole catalog: 34 types and their items with every field, plus the catalog version and content hash.
pub fn checklist_export() -> Result<CatalogExport, ApiError> {
    pactwise_checklists::export().map_err(catalog_error)
}

/// Counts per type, section, risk level and CUAD category, and how many items carry each optional field.
pub fn checklist_stats() -> Result<CatalogStats, ApiError> {
    pactwise_checklists::stats().map_err(catalog_error)
}
