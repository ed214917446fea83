//! Grounding for drafting: topics from the checklist library (the intake's contract type) and passages of the
//! public precedent corpus. A retrieval that fails becomes a warning the buyer sees, never silence; competitors'
//! released bid text is excluded inside the store's query (`Prep::grounding_precedents`).

use crate::artifact::Intake;
use pactwise_model::PromptDocument;
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

/// An FTS5 expression from free text: distinct words of four letters or more, each quoted, joined with OR.
pub fn match_expression(text: &str) -> Option<String> {
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(|w| w.to_lowercase())
        .collect();
    words.sort();
    words.dedup();
    words.truncate(24);
    (!words.is_empty()).then(|| words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" OR "))
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

/// Gathers grounding for an intake from the checklist library and the precedent corpus in `store`.
pub fn gather(store: &Store, catalog: Result<&pactwise_checklists::Catalog, String>, intake: &Intake) -> Grounding {
    let mut grounding = Grounding::default();
    match checklist_topics(catalog, intake, 25) {
        Ok(doc) => grounding.checklist = doc,
        Err(warning) => grounding.warnings.push(warning),
    }
    let needs: Vec<&str> = intake.needs.iter().map(|n| n.text.as_str()).collect();
    let query = format!("{} {}", intake.title, needs.join(" "));
    if let Some(expression) = match_expression(&query) {
        match store.prep().grounding_precedents(&expression, 6) {
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
    }
    grounding
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_match_expression_quotes_every_word_and_drops_short_ones() {
        assert_eq!(match_expression("Fleet GPS telematics; fleet"), Some("\"fleet\" OR \"telematics\"".into()));
        assert_eq!(match_expression("a b c"), None);
        assert!(!match_expression("x\" OR evil").unwrap().contains("\"x\""));
    }
}
