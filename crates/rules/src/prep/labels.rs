//! The words a person reads for each enum of the RFP package: one function per enum, used by the exported RFP and
//! available to the desktop, the service and the vendor page, so "PerUnit" or `questions_deadline` never reaches a
//! person. Stable identifiers (`as_str`, serde names) stay for machines; [`Label::label`] is for people.

use super::artifact::{ArtifactKind, ArtifactState, MilestoneKind, PriceBasis, RequirementKind, Verification};

/// The words for a value, as a person reads them (sentence case, no identifiers).
pub trait Label {
    fn label(&self) -> &'static str;
}

impl Label for RequirementKind {
    fn label(&self) -> &'static str {
        match self {
            RequirementKind::Mandatory => "Mandatory (pass or fail)",
            RequirementKind::Scored => "Scored",
        }
    }
}

impl Label for Verification {
    fn label(&self) -> &'static str {
        match self {
            Verification::Test => "a test",
            Verification::Demonstration => "a demonstration",
            Verification::Document => "documents",
            Verification::Reference => "customer references",
            Verification::Inspection => "an inspection",
        }
    }
}

impl Label for PriceBasis {
    fn label(&self) -> &'static str {
        match self {
            PriceBasis::FixedPrice => "fixed price",
            PriceBasis::PerUnit => "price per unit",
            PriceBasis::TimeAndMaterials => "time and materials",
            PriceBasis::Subscription => "subscription",
        }
    }
}

impl Label for MilestoneKind {
    fn label(&self) -> &'static str {
        self.title()
    }
}

impl Label for ArtifactKind {
    fn label(&self) -> &'static str {
        match self {
            ArtifactKind::Intake => "Intake",
            ArtifactKind::Scope => "Scope of work",
            ArtifactKind::Requirements => "Requirements",
            ArtifactKind::Criteria => "Evaluation criteria",
            ArtifactKind::Pricing => "Pricing schedule",
            ArtifactKind::Milestones => "Timeline",
        }
    }
}

impl Label for ArtifactState {
    fn label(&self) -> &'static str {
        match self {
            ArtifactState::Empty => "Not started",
            ArtifactState::Drafting { .. } => "Being drafted",
            ArtifactState::Drafted => "Drafted",
            ArtifactState::Invalid { .. } => "Needs changes",
            ArtifactState::Valid => "Ready for approval",
            ArtifactState::Approved { .. } => "Approved",
            ArtifactState::Stale => "Out of date",
        }
    }
}

/// The words for the intake's procurement category (`goods`, `services`, `works`); anything else as written.
pub fn category_label(category: &str) -> &str {
    match category.trim() {
        "goods" => "Goods",
        "services" => "Services",
        "works" => "Works",
        other => other,
    }
}

/// Every variant of every labelled enum, for tests that render them all.
pub mod every {
    use super::*;

    pub const REQUIREMENT_KINDS: [RequirementKind; 2] = [RequirementKind::Mandatory, RequirementKind::Scored];
    pub const VERIFICATIONS: [Verification; 5] = [
        Verification::Test,
        Verification::Demonstration,
        Verification::Document,
        Verification::Reference,
        Verification::Inspection,
    ];
    pub const PRICE_BASES: [PriceBasis; 4] =
        [PriceBasis::FixedPrice, PriceBasis::PerUnit, PriceBasis::TimeAndMaterials, PriceBasis::Subscription];
}

/// Does `text` hold a word shaped like a Rust enum name (an upper-case letter, lower-case letters, then another
/// upper-case letter: "PerUnit", "QuestionsDeadline") or a snake_case identifier ("per_unit")? Used by tests of
/// documents people read.
pub fn identifier_in(text: &str) -> Option<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).find(|word| {
        let chars: Vec<char> = word.chars().collect();
        let camel = chars.first().is_some_and(|c| c.is_ascii_uppercase())
            && chars.windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
        let snake = word.contains('_') && word.chars().any(|c| c.is_ascii_lowercase());
        camel || snake
    })
}

#[cfg(test)]
mod tests {
    use super::every::*;
    use super::*;

    #[test]
    fn every_label_is_words_a_person_reads() {
        let mut labels: Vec<&str> = Vec::new();
        labels.extend(REQUIREMENT_KINDS.iter().map(Label::label));
        labels.extend(VERIFICATIONS.iter().map(Label::label));
        labels.extend(PRICE_BASES.iter().map(Label::label));
        labels.extend(MilestoneKind::ALL.iter().map(Label::label));
        labels.extend(ArtifactKind::ALL.iter().map(Label::label));
        labels.extend(
            [
                ArtifactState::Empty,
                ArtifactState::Drafting { previous: Box::new(ArtifactState::Empty) },
                ArtifactState::Drafted,
                ArtifactState::Invalid { errors: vec![] },
                ArtifactState::Valid,
                ArtifactState::Approved { hash: String::new() },
                ArtifactState::Stale,
            ]
            .iter()
            .map(Label::label),
        );
        assert_eq!(labels.len(), 2 + 5 + 4 + 6 + 6 + 7);
        for label in &labels {
            assert_eq!(identifier_in(label), None, "{label:?}");
            assert!(!label.trim().is_empty());
        }
        assert_eq!(PriceBasis::PerUnit.label(), "price per unit");
        assert_eq!(category_label("works"), "Works");
    }

    #[test]
    fn identifiers_are_found_and_words_are_not() {
        assert_eq!(identifier_in("3 × vehicle-month, PerUnit"), Some("PerUnit"));
        assert_eq!(identifier_in("due on questions_deadline"), Some("questions_deadline"));
        assert_eq!(identifier_in("TimeAndMaterials"), Some("TimeAndMaterials"));
        assert_eq!(identifier_in("Request for proposals: EU hosting, GPS and SaaS (R-02), ISO 27001"), Some("SaaS"));
        assert_eq!(identifier_in("Request for proposals: EU hosting, GPS (R-02), ISO 27001, e-mail"), None);
    }
}
