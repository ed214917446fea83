//! Is a quote the right evidence for its item? One home for the question, asked of every quote whoever chose it:
//! the model's (a quote in a running line, the table of contents, a bare heading or a cross-reference is rejected,
//! never shown as the clause), the rules' (the same check, after the evaluator chose from operative text), and a
//! person's at Confirm (each concern is a warning with its reason; the person may keep the quote knowingly).
//! Where the quote sits comes from the document's structure (`pactwise-structure`); what the item is about comes from
//! the catalog (the item's CUAD category and where such clauses live, `checklists/topics.toml`).

use pactwise_checklists::Catalog;
use pactwise_domain::{ChecklistItem, CuadCategory, ItemFinding, ItemStatus, Page, Quote, RejectedExtraction};
use pactwise_structure::{DocumentStructure, Zone, is_bare_cross_reference};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// Items that ask how a term is defined: for these a definition is the clause.
static ABOUT_A_DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(how|whether)\b[^?]{0,80}\bdefined\b|\bdefinition\s+of\b").expect("valid pattern")
});

/// Does this item ask how a term is defined (so a definition is its clause)?
pub fn asks_about_a_definition(item: &ChecklistItem) -> bool {
    ABOUT_A_DEFINITION.is_match(&item.question)
}

/// Does the defined term name the clause itself ("Initial Term" for an expiry item)? Then its definition is the
/// clause, for any item of the category.
pub fn term_names_the_clause(catalog: &Catalog, category: CuadCategory, term: &str) -> bool {
    catalog.topic(category).is_some_and(|t| t.names_clause(term.trim()))
}

/// Categories whose answer sits in the title, the opening paragraph or the signature page rather than in a numbered
/// section: a section heading says nothing about them.
const OUTSIDE_SECTIONS: [CuadCategory; 4] =
    [CuadCategory::DocumentName, CuadCategory::Parties, CuadCategory::AgreementDate, CuadCategory::EffectiveDate];

/// What may be wrong with a quote as an item's evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum QuoteConcern {
    /// A running header or footer, a filing stamp or a page number.
    RunningLine,
    /// The table of contents: a heading pointing at the clause, not the clause.
    TableOfContents,
    /// Only a section's number and heading.
    Heading,
    /// A sentence that only points at another part of the contract.
    CrossReference,
    /// A definition, for an item that is not about one.
    Definition,
    /// A section whose heading does not match the item's topic.
    OtherSection,
}

impl QuoteConcern {
    /// Is a quote with this concern never shown as the clause (a model's quote is rejected)? The others are warnings
    /// a person weighs.
    pub fn disqualifies(self) -> bool {
        matches!(
            self,
            QuoteConcern::RunningLine
                | QuoteConcern::TableOfContents
                | QuoteConcern::Heading
                | QuoteConcern::CrossReference
        )
    }
}

/// One concern about a quote, in people's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct QuoteWarning {
    pub concern: QuoteConcern,
    pub message: String,
}

/// The concerns about `quote` as the evidence of `item`: empty when the quote is operative text in a fitting place.
/// A quote that is not on its page has no place here (verification refuses it first).
pub fn quote_warnings(
    catalog: &Catalog,
    structure: &DocumentStructure,
    pages: &[Page],
    item: &ChecklistItem,
    quote: &Quote,
) -> Vec<QuoteWarning> {
    let Some(page) = pages.iter().find(|p| p.number == quote.page) else { return Vec::new() };
    let Some(range) = crate::verify::locate(&page.text, &quote.text) else { return Vec::new() };
    let place = structure.place(quote.page, range);
    let mut out = Vec::new();
    let warn = |concern, message: String| QuoteWarning { concern, message };
    if !place.zones.is_empty() && place.zones.iter().all(|z| z.is_running()) {
        let zone = place.zones[0];
        out.push(warn(
            QuoteConcern::RunningLine,
            format!("the quote is {}, repeated on the pages, not a clause of the contract", zone.describe()),
        ));
    }
    if place.zones.contains(&Zone::TableOfContents) {
        out.push(warn(
            QuoteConcern::TableOfContents,
            "the quote is in the table of contents, which only names the clause; quote the clause in the body".into(),
        ));
    }
    if place.in_heading {
        out.push(warn(
            QuoteConcern::Heading,
            "the quote is only a section's heading; quote the words of the clause under it".into(),
        ));
    }
    if is_bare_cross_reference(&quote.text) {
        out.push(warn(
            QuoteConcern::CrossReference,
            "the quote only points at another part of the contract; quote the clause it points at".into(),
        ));
    }
    if let Some(term) = place.definition
        && !asks_about_a_definition(item)
        && !item.cuad_category.is_some_and(|c| term_names_the_clause(catalog, c, term))
    {
        out.push(warn(
            QuoteConcern::Definition,
            format!(
                "the quote is the definition of \"{term}\", which says what a word means, not what the parties agree"
            ),
        ));
    }
    if let (Some(category), Some(section)) = (item.cuad_category, place.section)
        && !OUTSIDE_SECTIONS.contains(&category)
        && let Some(topic) = catalog.topic(category)
    {
        let headings = structure.headings_of(section);
        if !headings.is_empty() && !topic.is_home(&headings) {
            let label = section.label.as_deref().map(|l| format!("{l} ")).unwrap_or_default();
            out.push(warn(
                QuoteConcern::OtherSection,
                format!(
                    "the quote is in section {label}\"{headings}\", whose heading does not match {}; check that it is the clause asked about",
                    category.as_str().to_lowercase()
                ),
            ));
        }
    }
    out
}

/// Refuses every quote that is not a clause (a running line, the table of contents, a bare heading, a
/// cross-reference), whoever chose it: the finding loses its quote and is left for a person, and the quote is listed
/// as rejected with the reason. Run after [`crate::verify::verify_findings`], so every quote is on its page.
pub fn refuse_non_clauses(
    catalog: &Catalog,
    structure: &DocumentStructure,
    pages: &[Page],
    findings: &mut [ItemFinding],
) -> Vec<RejectedExtraction> {
    let mut rejected = Vec::new();
    for finding in findings.iter_mut() {
        let (Some(quote), Some(item)) = (finding.quote.as_ref(), catalog.item(&finding.item_id)) else { continue };
        let Some(concern) =
            quote_warnings(catalog, structure, pages, item, quote).into_iter().find(|w| w.concern.disqualifies())
        else {
            continue;
        };
        let quote = finding.quote.take().expect("checked above");
        rejected.push(RejectedExtraction {
            item_id: finding.item_id.clone(),
            quote: quote.text,
            page: quote.page,
            reason: concern.message.clone(),
            method: finding.method,
        });
        finding.status = ItemStatus::NotEvaluated;
        finding.value = None;
        finding.red_flags.clear();
        finding.reason =
            Some(format!("the quote offered was not the clause ({}); a person should find it", concern.message));
    }
    rejected
}

#[cfg(test)]
mod tests {
    use super::*;
    use pactwise_domain::Method;

    fn catalog() -> Catalog {
        Catalog::load().expect("the built-in catalog loads")
    }

    fn item(catalog: &Catalog, category: CuadCategory) -> ChecklistItem {
        catalog
            .types()
            .iter()
            .flat_map(|t| &t.items)
            .find(|i| i.cuad_category == Some(category))
            .cloned()
            .expect("an item of the category")
    }

    /// A short contract with a table of contents, a definition and a limitation of liability article, laid out on
    /// pages the way a filed PDF is (a repeated filing line at the foot of each page).
    fn pages() -> Vec<Page> {
        let foot = "Source: EXAMPLE CORP, 10-Q, 5/9/2019";
        vec![
            Page::plain(
                1,
                format!(
                    "SUPPLY AGREEMENT\nTABLE OF CONTENTS\n1. Definitions 2\n2. Supply 2\n3. Limitation of Liability 3\n4. General 3\n{foot}"
                ),
            ),
            Page::plain(
                2,
                format!(
                    "1. Definitions\n1.1 \"Products\" means the goods listed in Exhibit A and any goods the parties add to it in writing.\n2. Supply\n2.1 The Supplier shall deliver the Products within thirty days after each order is received.\n2.2 See Section 3.1.\n{foot}"
                ),
            ),
            Page::plain(
                3,
                format!(
                    "3. Limitation of Liability\n3.1 In no event shall either party's total liability under this Agreement exceed the fees paid in the twelve months before the claim.\n4. General\n4.1 This Agreement is governed by the laws of the State of New York.\n{foot}"
                ),
            ),
        ]
    }

    fn concerns(item: &ChecklistItem, page: u32, text: &str) -> Vec<QuoteConcern> {
        let pages = pages();
        let structure = DocumentStructure::build(&pages);
        quote_warnings(&catalog(), &structure, &pages, item, &Quote { text: text.into(), page })
            .into_iter()
            .map(|w| w.concern)
            .collect()
    }

    #[test]
    fn the_operative_clause_raises_nothing() {
        let c = catalog();
        let cap = item(&c, CuadCategory::CapOnLiability);
        assert_eq!(
            concerns(&cap, 3, "In no event shall either party's total liability under this Agreement exceed"),
            []
        );
    }

    #[test]
    fn the_table_of_contents_a_heading_and_a_cross_reference_are_not_the_clause() {
        let c = catalog();
        let cap = item(&c, CuadCategory::CapOnLiability);
        assert!(concerns(&cap, 1, "3. Limitation of Liability 3").contains(&QuoteConcern::TableOfContents));
        assert!(concerns(&cap, 3, "Limitation of Liability").contains(&QuoteConcern::Heading));
        assert!(concerns(&cap, 2, "See Section 3.1.").contains(&QuoteConcern::CrossReference));
    }

    #[test]
    fn a_definition_is_a_concern_for_an_item_about_something_else() {
        let c = catalog();
        let cap = item(&c, CuadCategory::CapOnLiability);
        let found = concerns(&cap, 2, "\"Products\" means the goods listed in Exhibit A");
        assert!(found.contains(&QuoteConcern::Definition), "{found:?}");
        assert!(!found.iter().any(|c| c.disqualifies()), "a definition is a warning, not a refusal: {found:?}");
    }

    #[test]
    fn a_clause_in_a_section_about_something_else_is_a_warning() {
        let c = catalog();
        let cap = item(&c, CuadCategory::CapOnLiability);
        let found = concerns(&cap, 2, "The Supplier shall deliver the Products within thirty days");
        assert_eq!(found, [QuoteConcern::OtherSection]);
        let law = item(&c, CuadCategory::GoverningLaw);
        assert_eq!(concerns(&law, 3, "governed by the laws of the State of New York"), []);
    }

    #[test]
    fn a_filing_line_is_refused_and_the_finding_goes_to_a_person() {
        let c = catalog();
        let pages = pages();
        let structure = DocumentStructure::build(&pages);
        let cap = item(&c, CuadCategory::CapOnLiability);
        let law = item(&c, CuadCategory::GoverningLaw);
        let finding = |item: &ChecklistItem, page, text: &str| ItemFinding {
            item_id: item.id.clone(),
            status: ItemStatus::Present,
            confidence: 0.9,
            quote: Some(Quote { text: text.into(), page }),
            method: Method::Model,
            reason: None,
            red_flags: vec!["a flag".into()],
            value: None,
        };
        let mut findings = vec![
            finding(&cap, 1, "3. Limitation of Liability 3"),
            finding(&law, 3, "governed by the laws of the State of New York"),
        ];
        let rejected = refuse_non_clauses(&c, &structure, &pages, &mut findings);
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0].item_id, cap.id);
        assert!(rejected[0].reason.contains("table of contents"), "{}", rejected[0].reason);
        assert_eq!(findings[0].status, ItemStatus::NotEvaluated);
        assert!(findings[0].quote.is_none() && findings[0].red_flags.is_empty());
        assert_eq!(findings[1].status, ItemStatus::Present, "the operative clause stays");
        assert!(findings[1].quote.is_some());
    }
}
