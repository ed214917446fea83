//! The review workspace: what the desktop's review view needs beyond the pipeline's record — a page's layout for
//! the selectable text layer, its image (rendered by pdfium, cached), the people who confirmed each item, finalize
//! (only when every critical item is confirmed or corrected), the memo export, the organization's own names and
//! the vendor link a person sets; and where each verified quote stands on its page ([`quote_span`]), so the
//! contract pane highlights exactly what verification found.

use crate::memo::{self, MemoFormat};
use crate::review::{DocumentReview, OWN_NAMES_KEY, catalog};
use crate::{Api, ApiError};
use pactwise_domain::{Confidence, ContractType, DocumentId, ErrorCode, Page, PageSource, RiskLevel};
use pactwise_store::{FinalVendor, Finalization, OrgScope, Vendor};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A run of characters on one line (usually a word), placed on the page: what the text layer draws.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TextRun {
    /// Character (Unicode scalar) offsets into the page's text, end exclusive.
    pub start: u32,
    pub end: u32,
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
}

/// Where a verified quote stands on its page: character (Unicode scalar) offsets into the page's text, end
/// exclusive, counted as [`TextRun`] counts them. The contract pane draws the highlight from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct TextSpan {
    pub start: u32,
    pub end: u32,
}

/// Where `quote` stands on page `page`, found with quote verification's own search
/// (`pactwise_pipeline::verify::locate`: the same normalisation that let the quote through); `None` when the page
/// does not exist or no longer holds the quote. Computed when a review or report is loaded, so findings stored
/// before ranges were sent get theirs too, and the range always fits the page text the pane shows.
pub fn quote_span(pages: &[Page], page: u32, quote: &str) -> Option<TextSpan> {
    let text = &pages.iter().find(|p| p.number == page)?.text;
    let range = pactwise_pipeline::verify::locate(text, quote)?;
    let start = text.get(..range.start)?.chars().count();
    let len = text.get(range)?.chars().count();
    Some(TextSpan { start: u32::try_from(start).ok()?, end: u32::try_from(start + len).ok()? })
}

/// The pages of a document that quotes cite, read one by one (a long contract is not decoded whole to place a few
/// quotes); pages the document does not have are left out.
pub(crate) fn cited_pages(
    store: &pactwise_store::Store,
    scope: &OrgScope,
    id: DocumentId,
    numbers: impl IntoIterator<Item = u32>,
) -> Result<Vec<Page>, pactwise_store::StoreError> {
    let numbers: std::collections::BTreeSet<u32> = numbers.into_iter().collect();
    let mut pages = Vec::with_capacity(numbers.len());
    for number in numbers {
        if let Some(document) = store.pages().load_page(scope, id, number)? {
            pages.extend(document.pages);
        }
    }
    Ok(pages)
}

/// A page as the contract pane shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PageLayout {
    pub number: u32,
    pub text: String,
    pub source: PageSource,
    pub confidence: Confidence,
    /// The page boundary was made by us (TXT, DOCX): shown as text, marked as synthetic.
    pub synthetic: bool,
    /// Points; zero for formats without a layout.
    pub width: f32,
    pub height: f32,
    /// Whether an image of the page can be rendered (PDF and images).
    pub renderable: bool,
    pub runs: Vec<TextRun>,
    /// How many pages the document has (so a viewer needs no probing for the last one).
    pub page_count: u32,
}

/// Groups character boxes into runs: a run ends at whitespace, at a jump to another line, or at a gap.
pub fn text_runs(text: &str, boxes: &[pactwise_domain::CharBox]) -> Vec<TextRun> {
    let chars: Vec<char> = text.chars().collect();
    let mut by_index: Vec<Option<&pactwise_domain::CharBox>> = vec![None; chars.len()];
    for b in boxes {
        if let Some(slot) = by_index.get_mut(b.index as usize) {
            *slot = Some(b);
        }
    }
    let mut runs: Vec<TextRun> = Vec::new();
    let mut current: Option<TextRun> = None;
    for (i, c) in chars.iter().enumerate() {
        let b = match by_index[i] {
            Some(b) if !c.is_whitespace() && b.width > 0.0 && b.height > 0.0 => b,
            _ => {
                runs.extend(current.take());
                continue;
            }
        };
        match current.as_mut() {
            Some(run)
                if (b.y - run.y).abs() < run.height * 0.5
                    && b.x >= run.x + run.width - run.height * 0.3
                    && b.x - (run.x + run.width) < run.height * 0.8 =>
            {
                let right = (b.x + b.width).max(run.x + run.width);
                let top = run.y.min(b.y);
                let bottom = (run.y + run.height).max(b.y + b.height);
                run.width = right - run.x;
                run.y = top;
                run.height = bottom - top;
                run.end = i as u32 + 1;
            }
            _ => {
                runs.extend(current.take());
                current = Some(TextRun {
                    start: i as u32,
                    end: i as u32 + 1,
                    x: b.x,
                    y: b.y,
                    width: b.width,
                    height: b.height,
                });
            }
        }
    }
    runs.extend(current);
    runs
}

/// What a person confirms at finalize: the vendor link (an existing vendor, a new one by name, or none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct FinalizeInput {
    pub vendor_id: Option<String>,
    pub new_vendor_name: Option<String>,
}

/// Where an export was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ExportedReview {
    pub path: String,
    pub bytes: u64,
    pub format: MemoFormat,
}

impl Api {
    /// A page's text, layout and text runs.
    pub async fn page_layout(&self, scope: &OrgScope, id: DocumentId, number: u32) -> Result<PageLayout, ApiError> {
        let s = scope.clone();
        let (doc, page_count) = self
            .db
            .call(move |store| {
                let doc = store.pages().load_page(&s, id, number)?;
                Ok::<_, pactwise_store::StoreError>((doc, store.pages().page_count(&s, id)?.unwrap_or(0)))
            })
            .await?;
        let doc = doc.ok_or_else(|| ApiError::new(ErrorCode::NotFound, "this document has no readable pages yet"))?;
        let renderable =
            matches!(doc.media_type, pactwise_domain::MediaType::Pdf) || doc.media_type.as_str().starts_with("image/");
        let page = doc
            .pages
            .into_iter()
            .find(|p| p.number == number)
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("the document has no page {number}")))?;
        let runs = text_runs(&page.text, &page.char_boxes);
        Ok(PageLayout {
            number: page.number,
            source: page.source,
            confidence: page.confidence,
            synthetic: page.synthetic,
            width: page.width,
            height: page.height,
            renderable,
            runs,
            text: page.text,
            page_count,
        })
    }

    /// A PNG of the page at `scale` (1.0 = 72 dpi), rendered by pdfium and cached under the data directory.
    pub async fn page_image(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        number: u32,
        scale: f32,
    ) -> Result<Vec<u8>, ApiError> {
        if !(0.25..=6.0).contains(&scale) {
            return Err(ApiError::new(ErrorCode::InvalidInput, format!("zoom {scale} is out of range (0.25 to 6)")));
        }
        let doc = self.get_document(scope, id).await?;
        let extractor = self.extractor.clone();
        let cache = self.data_dir.cache().join("renders");
        // A page rendered before is read from the cache by the document's hash, without reading the document.
        let (e, c, hash) = (extractor.clone(), cache.clone(), doc.content_hash.clone());
        let interrupted = |e| ApiError::new(ErrorCode::Internal, format!("rendering was interrupted ({e})"));
        if let Some(png) =
            tokio::task::spawn_blocking(move || e.cached_render(&c, &hash, number, scale)).await.map_err(interrupted)?
        {
            return Ok(png);
        }
        let bytes = self.read_org_blob(scope, &doc.content_hash).await?;
        tokio::task::spawn_blocking(move || {
            extractor
                .render_page(&bytes, number, scale, None, Some(&cache))
                .map_err(|e| ApiError::new(e.code(), e.to_string()))
        })
        .await
        .map_err(interrupted)?
    }

    /// A contract type with all its items (guidance, benchmark, positions, regulatory references).
    pub fn checklist_type(&self, type_id: &str) -> Result<ContractType, ApiError> {
        catalog()?
            .contract_type(type_id)
            .cloned()
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no contract type {type_id:?} in the catalog")))
    }

    /// Finalizes a review: every critical item must be confirmed or corrected by a person. Links the vendor the
    /// person chose (or creates it), then stamps who and when.
    pub async fn finalize_review(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        input: FinalizeInput,
    ) -> Result<DocumentReview, ApiError> {
        let review = self.document_review(scope, id).await?;
        let Some(t) = review.contract_type.as_ref().and_then(|t| catalog().ok()?.contract_type(&t.id).cloned()) else {
            return Err(ApiError::new(
                ErrorCode::ReviewIncomplete,
                "the document has not been classified yet; run its pipeline first",
            ));
        };
        let open: Vec<&str> = t
            .items
            .iter()
            .filter(|i| i.risk == RiskLevel::Critical)
            .filter(|i| !review.items.iter().any(|r| r.id == i.id && r.method == "person"))
            .map(|i| i.id.as_str())
            .collect();
        if !open.is_empty() {
            return Err(ApiError::new(
                ErrorCode::ReviewIncomplete,
                format!(
                    "{} critical item(s) still need a person to confirm or correct them: {}",
                    open.len(),
                    open.join(", ")
                ),
            ));
        }
        if review.vendor_match.is_none() {
            return Err(ApiError::new(
                ErrorCode::ReviewIncomplete,
                "the pipeline has not finished; run it again first",
            ));
        }
        if review.finalized_at.is_some() {
            return Err(ApiError::new(ErrorCode::Conflict, "this review is already finalized; reopen it to change it"));
        }
        let s = scope.clone();
        let fields = serde_json::to_value(&review.extractions).map_err(|e| {
            ApiError::new(ErrorCode::Internal, format!("the contract's fields could not be written ({e})"))
        })?;
        let counterparty = review.counterparty.clone();
        let outcome = crate::contracts::outcome_of(&review);
        let new_name = input.new_vendor_name.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty());
        self.db
            .call(move |store| {
                let vendor = match (&input.vendor_id, &new_name) {
                    (Some(v), _) => FinalVendor::Existing(v),
                    (None, Some(name)) => FinalVendor::New(name),
                    (None, None) => FinalVendor::Keep,
                };
                let finalization =
                    Finalization { vendor, counterparty: counterparty.as_deref(), extractions: &fields, outcome };
                store.reviews().finalize(&s, id, &finalization)
            })
            .await?;
        self.document_review(scope, id).await
    }

    /// Reopens a finalized review so its items can be changed again; the reason goes to the audit log with who and
    /// when.
    pub async fn reopen_review(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        reason: String,
    ) -> Result<DocumentReview, ApiError> {
        let s = scope.clone();
        self.db.call(move |store| store.reviews().reopen(&s, id, &reason)).await?;
        self.document_review(scope, id).await
    }

    /// Writes the finalized review as a DOCX memo or a PDF to `path` (an existing file only when `existing` says
    /// to replace it).
    pub async fn export_review(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        format: MemoFormat,
        path: PathBuf,
        existing: crate::Existing,
    ) -> Result<ExportedReview, ApiError> {
        crate::export_file::check_target(&path, existing)?;
        let review = self.document_review(scope, id).await?;
        if review.finalized_at.is_none() {
            return Err(ApiError::new(ErrorCode::ReviewIncomplete, "finalize the review before exporting it"));
        }
        let document = self.get_document(scope, id).await?;
        let organization = self.session_info(scope).await?.org_name;
        let catalog = catalog()?;
        let contract_type = review.contract_type.as_ref().and_then(|t| catalog.contract_type(&t.id));
        let memo = memo::Memo::new(&document.name, &organization, &review, contract_type);
        let bytes = tokio::task::spawn_blocking(move || match format {
            MemoFormat::Docx => memo.docx(),
            MemoFormat::Pdf => memo.pdf(),
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the export was interrupted ({e})")))??;
        crate::export_file::write_export(&path, &bytes, existing)?;
        Ok(ExportedReview { path: path.display().to_string(), bytes: bytes.len() as u64, format })
    }

    /// The organization's own names and aliases (never taken as the counterparty).
    pub async fn own_names(&self, scope: &OrgScope) -> Result<Vec<String>, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.settings().get::<Vec<String>>(&s, OWN_NAMES_KEY)).await?.unwrap_or_default())
    }

    /// Replaces the organization's own names and aliases (owners and admins).
    pub async fn set_own_names(&self, scope: &OrgScope, names: Vec<String>) -> Result<Vec<String>, ApiError> {
        pactwise_rules::roles::check(scope.role(), pactwise_rules::roles::SharedChange::Setting(OWN_NAMES_KEY))
            .map_err(|refusal| ApiError::new(ErrorCode::Forbidden, refusal.message))?;
        let names = clean_own_names(names)?;
        let s = scope.clone();
        let saved = names.clone();
        self.db.call(move |store| store.settings().set(&s, OWN_NAMES_KEY, &saved)).await?;
        Ok(names)
    }

    /// The organization's vendors.
    pub async fn vendors(&self, scope: &OrgScope) -> Result<Vec<Vendor>, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.reviews().vendors(&s)).await?)
    }
}

/// An organization's own names as a person typed them: trimmed, blanks dropped, each once (ignoring case), none
/// longer than 200 characters. Used by Settings and the first-run screen alike.
pub(crate) fn clean_own_names(names: Vec<String>) -> Result<Vec<String>, ApiError> {
    let mut cleaned: Vec<String> = Vec::new();
    for name in names.into_iter().map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()) {
        if name.chars().count() > 200 {
            return Err(ApiError::new(ErrorCode::InvalidInput, "a name is longer than 200 characters; shorten it"));
        }
        if !cleaned.iter().any(|c| c.to_lowercase() == name.to_lowercase()) {
            cleaned.push(name);
        }
    }
    Ok(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pactwise_domain::CharBox;

    #[test]
    fn characters_group_into_words_on_a_line_and_break_at_spaces_and_lines() {
        let text = "ab cd\nef";
        let b = |index, x, y| CharBox { index, x, y, width: 5.0, height: 10.0 };
        let boxes =
            vec![b(0, 0.0, 0.0), b(1, 5.0, 0.0), b(3, 15.0, 0.0), b(4, 20.0, 0.0), b(6, 0.0, 14.0), b(7, 5.0, 14.0)];
        let runs = text_runs(text, &boxes);
        let spans: Vec<(u32, u32)> = runs.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(spans, vec![(0, 2), (3, 5), (6, 8)]);
        assert_eq!(runs[1].x, 15.0);
        assert_eq!(runs[1].width, 10.0);
    }
}
