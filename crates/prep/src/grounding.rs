//! Grounding for drafting: topics from the checklist library (the intake's contract type) and passages of the
//! public precedent corpus. A retrieval that fails becomes a warning the buyer sees, never silence; competitors'
//! released bid text is excluded when the hits are read (`Passages::precedents_by_id`, public only).

use crate::artifact::Intake;
use pactwise_model::PromptDocument;
use pactwise_retrieval::{Mode, Retriever};
use pactwise_store::Store;

/// What a drafting run is grounded in, fenced as untrusted documents, plus what could not be retrieved.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grounding {
    pub checklist: Option<PromptDocument>,
    pub precedents: Option<PromptDocument>,
    pub warnings: Vec<String>,
}

impl Grounding {
    pub fn documents(&self) -> Vec<PromptDocument> {
        self.checklist.iter().chain(self.precedents.iter()).cloned().collect()
    }
}

/// Checklist topics for the intake's contract type (the highest-risk items first, at most `limit`).
pub fn checklist_topics(
    catalog: Result<&pactwise_checklists::Catalog, String>,
    intake: &Intake,
    limit: usize,
) -> Result<Option<PromptDocument>, String> {
    let Some(type_id) = intake.checklist_type.as_deref() else { return Ok(None) };
    let catalog = catalog.map_err(|e| format!("the checklist library could not be loaded ({e})"))?;
    let Some(contract_type) = catalog.contract_type(type_id) else {
        return Err(format!(
            "the checklist library has no contract type {type_id:?}; requirements are drafted without it"
        ));
    };
    let mut items: Vec<_> = contract_type.items.iter().collect();
    items.sort_by_key(|i| (i.risk, i.id.clone()));
    let lines: Vec<String> =
        items.iter().take(limit).map(|i| format!("- [{}] {} ({:?} risk)", i.id, i.question, i.risk)).collect();
    Ok(Some(PromptDocument::new(format!("Checklist library topics: {}", contract_type.name), lines.join("\n"))))
}

/// Gathers grounding for an intake from the checklist library and the precedent corpus in `store`, searched by
/// `retriever` (words and meaning fused; public texts only).
pub fn gather(
    store: &Store,
    retriever: &Retriever,
    catalog: Result<&pactwise_checklists::Catalog, String>,
    intake: &Intake,
) -> Grounding {
    let mut grounding = Grounding::default();
    match checklist_topics(catalog, intake, 25) {
        Ok(doc) => grounding.checklist = doc,
        Err(warning) => grounding.warnings.push(warning),
    }
    let needs: Vec<&str> = intake.needs.iter().map(|n| n.text.as_str()).collect();
    let query = format!("{} {}", intake.title, needs.join(" "));
    match retriever.search_precedents(store, &query, Mode::Hybrid, 6, true).map(|s| s.hits) {
        Ok(hits) if hits.is_empty() => {}
        Ok(hits) => {
            let text = hits
                .iter()
                .map(|h| format!("[{}] {}: {}", h.precedent, h.title, h.text))
                .collect::<Vec<_>>()
                .join("\n\n");
            grounding.precedents = Some(PromptDocument::new("Precedent corpus passages (market examples)", text));
        }
        Err(e) => grounding.warnings.push(format!(
            "the precedent corpus could not be searched ({e}); this draft is not grounded in precedents"
        )),
    }
    grounding
}
