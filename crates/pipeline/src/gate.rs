//! The review gate: one pure function over the evidence and the organization's thresholds. It works through
//! [`GateReason::ORDER`] and records the first reason that applies; otherwise the document may go on without a
//! person (`auto`). Low-confidence suggestions are never dropped here: routing a document does not change its
//! pre-filled answers.

use pactwise_domain::{
    Classification, Confidence, ContractType, GateDecision, GateReason, ItemFinding, ItemStatus, Method, Page,
    PageSource, RiskLevel, Route,
};
use serde::{Deserialize, Serialize};

/// The gate's thresholds, kept per organization in the store's settings (key [`THRESHOLDS_KEY`]) and changeable
/// from the CLI and Settings without a rebuild.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// An OCR page whose measured confidence is below this sends the document to a person.
    pub ocr_min_confidence: f32,
    /// A model classification below this is unresolved.
    pub classification_min_confidence: f32,
    /// A critical item answered below this needs a person.
    pub critical_min_confidence: f32,
    /// More than this share of items not evaluated needs a person.
    pub max_not_evaluated_share: f32,
}

/// The settings key of the thresholds.
pub const THRESHOLDS_KEY: &str = "review.thresholds";

impl Default for Thresholds {
    fn default() -> Self {
        // The defaults live beside their bounds, in the one table the settings check uses.
        let default = |name: &str| pactwise_rules::settings::threshold_default(name).unwrap_or(f64::NAN) as f32;
        Thresholds {
            ocr_min_confidence: default("ocr_min_confidence"),
            classification_min_confidence: default("classification_min_confidence"),
            critical_min_confidence: default("critical_min_confidence"),
            max_not_evaluated_share: default("max_not_evaluated_share"),
        }
    }
}

impl Thresholds {
    pub const NAMES: [&'static str; 4] =
        ["ocr_min_confidence", "classification_min_confidence", "critical_min_confidence", "max_not_evaluated_share"];

    /// Each threshold must lie within its bounds (`pactwise_rules::settings::THRESHOLD_BOUNDS`: no value may let
    /// documents past review that the gate exists to stop); the same check runs on values that arrive by sync.
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in Self::NAMES.iter().zip(self.values()) {
            // Through f32's shortest text, so 0.7 is checked as 0.7 and not as 0.699999988.
            let value: f64 = value.to_string().parse().unwrap_or(f64::NAN);
            pactwise_rules::settings::check_threshold(name, value)?;
        }
        Ok(())
    }

    fn values(&self) -> [f32; 4] {
        [
            self.ocr_min_confidence,
            self.classification_min_confidence,
            self.critical_min_confidence,
            self.max_not_evaluated_share,
        ]
    }

    /// Sets one threshold by name; a clear error names the known ones.
    pub fn set(&mut self, name: &str, value: f32) -> Result<(), String> {
        let slot = match name {
            "ocr_min_confidence" => &mut self.ocr_min_confidence,
            "classification_min_confidence" => &mut self.classification_min_confidence,
            "critical_min_confidence" => &mut self.critical_min_confidence,
            "max_not_evaluated_share" => &mut self.max_not_evaluated_share,
            other => return Err(format!("unknown threshold {other:?}; known: {}", Self::NAMES.join(", "))),
        };
        *slot = value;
        self.validate()
    }
}

/// Everything the gate looks at.
pub struct Evidence<'a> {
    pub pages: &'a [Page],
    /// Extraction could not read a page that needed OCR (the engine was missing or failed).
    pub ocr_failed: bool,
    pub classification: &'a Classification,
    /// The type is the keyword classifier's stand-in for the model's answer (a dry run with a model available):
    /// whether the type is certain is the model's to say in the real run, so it is not decided here.
    pub classification_stand_in: bool,
    pub contract_type: &'a ContractType,
    /// The findings with people's corrections already applied.
    pub findings: &'a [ItemFinding],
}

/// The first reason that applies, in [`GateReason::ORDER`], or `auto`.
pub fn decide(evidence: &Evidence<'_>, thresholds: &Thresholds) -> GateDecision {
    for reason in GateReason::ORDER {
        if let Some(detail) = applies(reason, evidence, thresholds) {
            return GateDecision { route: Route::Person, reason: Some(reason), detail };
        }
    }
    GateDecision { route: Route::Auto, reason: None, detail: "no reason to route this document to a person".into() }
}

fn applies(reason: GateReason, e: &Evidence<'_>, t: &Thresholds) -> Option<String> {
    let ocr_pages = || e.pages.iter().filter(|p| p.source == PageSource::Ocr);
    match reason {
        GateReason::OcrFailed => {
            let empty = ocr_pages().filter(|p| p.text.trim().is_empty()).count();
            (e.ocr_failed || e.pages.is_empty() || empty > 0).then(|| match (e.pages.is_empty(), empty) {
                (true, _) => "no page could be read".to_owned(),
                (false, 0) => "text recognition failed on this document".to_owned(),
                (false, n) => format!("text recognition found no text on {n} page(s)"),
            })
        }
        GateReason::OcrConfidenceLow => {
            let low: Vec<(u32, f32)> = ocr_pages()
                .filter_map(|p| match p.confidence {
                    Confidence::Measured(c) if c < t.ocr_min_confidence => Some((p.number, c)),
                    _ => None,
                })
                .collect();
            low.first().map(|(page, c)| {
                format!(
                    "OCR confidence {:.0}% on page {page} is below {:.0}% ({} page(s) low)",
                    c * 100.0,
                    t.ocr_min_confidence * 100.0,
                    low.len()
                )
            })
        }
        GateReason::OcrConfidenceEstimated => {
            let n = e.pages.iter().filter(|p| matches!(p.confidence, Confidence::Estimated(_))).count();
            (n > 0).then(|| format!("the text confidence of {n} page(s) is only estimated, never enough to approve"))
        }
        GateReason::ClassificationUnresolved => {
            let c = e.classification;
            if e.classification_stand_in {
                None
            } else if c.method == Method::Rules {
                Some(format!("the type was chosen by the keyword classifier ({})", c.reason))
            } else if c.confidence < t.classification_min_confidence {
                Some(format!(
                    "classification confidence {:.0}% is below {:.0}%",
                    c.confidence * 100.0,
                    t.classification_min_confidence * 100.0
                ))
            } else {
                None
            }
        }
        GateReason::RedFlag => e.findings.iter().find(|f| !f.red_flags.is_empty()).map(|f| {
            let n = e.findings.iter().filter(|f| !f.red_flags.is_empty()).count();
            format!("red flag on {}: {} ({n} item(s) with red flags)", f.item_id, f.red_flags[0])
        }),
        GateReason::CriticalLowConfidence => {
            let critical = |id: &str| e.contract_type.items.iter().any(|i| i.id == id && i.risk == RiskLevel::Critical);
            e.findings
                .iter()
                .find(|f| {
                    f.status != ItemStatus::NotEvaluated
                        && critical(&f.item_id)
                        && f.confidence < t.critical_min_confidence
                })
                .map(|f| {
                    format!(
                        "critical item {} answered with confidence {:.0}% (below {:.0}%)",
                        f.item_id,
                        f.confidence * 100.0,
                        t.critical_min_confidence * 100.0
                    )
                })
        }
        GateReason::TooManyNotEvaluated => {
            let total = e.findings.len().max(1);
            let n = e.findings.iter().filter(|f| f.status == ItemStatus::NotEvaluated).count();
            let share = n as f32 / total as f32;
            (share > t.max_not_evaluated_share).then(|| {
                format!(
                    "{n} of {total} items not evaluated ({:.0}%, more than {:.0}%)",
                    share * 100.0,
                    t.max_not_evaluated_share * 100.0
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pactwise_domain::Quote;

    fn contract_type() -> ContractType {
        let catalog = pactwise_checklists::Catalog::load().unwrap();
        catalog.contract_type("service").unwrap().clone()
    }

    fn critical_item(t: &ContractType) -> String {
        t.items.iter().find(|i| i.risk == RiskLevel::Critical).unwrap().id.clone()
    }

    /// Evidence where nothing applies; each case below breaks exactly what its reason looks at, plus everything
    /// that comes after it in the order, to show that the first applicable reason wins.
    struct Case {
        pages: Vec<Page>,
        ocr_failed: bool,
        classification: Classification,
        stand_in: bool,
        findings: Vec<ItemFinding>,
    }

    fn clean(t: &ContractType) -> Case {
        let mut page = Page::plain(1, "The Supplier shall provide the services.");
        page.source = PageSource::Ocr;
        page.confidence = Confidence::Measured(0.97);
        Case {
            pages: vec![page],
            ocr_failed: false,
            stand_in: false,
            classification: Classification {
                type_id: t.id.clone(),
                confidence: 0.95,
                method: Method::Model,
                reason: "model".into(),
            },
            findings: t
                .items
                .iter()
                .map(|i| ItemFinding {
                    item_id: i.id.clone(),
                    value: None,
                    status: ItemStatus::Present,
                    confidence: 0.95,
                    quote: Some(Quote { text: "The Supplier".into(), page: 1 }),
                    method: Method::Model,
                    reason: None,
                    red_flags: Vec::new(),
                })
                .collect(),
        }
    }

    fn break_reason(case: &mut Case, reason: GateReason, t: &ContractType) {
        match reason {
            GateReason::OcrFailed => case.ocr_failed = true,
            GateReason::OcrConfidenceLow => case.pages[0].confidence = Confidence::Measured(0.40),
            GateReason::OcrConfidenceEstimated => {
                let mut p = Page::plain(2, "More text.");
                p.source = PageSource::Ocr;
                p.confidence = Confidence::Estimated(0.99);
                case.pages.push(p);
            }
            GateReason::ClassificationUnresolved => case.classification.confidence = 0.30,
            GateReason::RedFlag => case.findings[0].red_flags = vec!["Uncapped liability".into()],
            GateReason::CriticalLowConfidence => {
                let id = critical_item(t);
                let f = case.findings.iter_mut().find(|f| f.item_id == id).unwrap();
                f.confidence = 0.2;
            }
            GateReason::TooManyNotEvaluated => {
                let critical = critical_item(t);
                for f in case.findings.iter_mut().filter(|f| f.item_id != critical) {
                    f.status = ItemStatus::NotEvaluated;
                }
            }
        }
    }

    fn decide_case(case: &Case, t: &ContractType) -> GateDecision {
        let evidence = Evidence {
            pages: &case.pages,
            ocr_failed: case.ocr_failed,
            classification: &case.classification,
            classification_stand_in: case.stand_in,
            contract_type: t,
            findings: &case.findings,
        };
        decide(&evidence, &Thresholds::default())
    }

    #[test]
    fn clean_evidence_goes_on_without_a_person() {
        let t = contract_type();
        let decision = decide_case(&clean(&t), &t);
        assert_eq!((decision.route, decision.reason), (Route::Auto, None));
    }

    #[test]
    fn every_reason_is_recorded_in_its_place_in_the_order() {
        let t = contract_type();
        for (position, reason) in GateReason::ORDER.iter().enumerate() {
            // Only this reason.
            let mut alone = clean(&t);
            break_reason(&mut alone, *reason, &t);
            let decision = decide_case(&alone, &t);
            assert_eq!((decision.route, decision.reason), (Route::Person, Some(*reason)), "{reason:?} alone");
            assert!(!decision.detail.is_empty());
            // This reason and every later one: this one is recorded.
            let mut with_later = clean(&t);
            for later in &GateReason::ORDER[position..] {
                break_reason(&mut with_later, *later, &t);
            }
            assert_eq!(decide_case(&with_later, &t).reason, Some(*reason), "{reason:?} with later reasons");
        }
    }

    #[test]
    fn the_keyword_classifier_is_always_unresolved_whatever_its_confidence() {
        let t = contract_type();
        let mut case = clean(&t);
        case.classification.method = Method::Rules;
        case.classification.confidence = 1.0;
        assert_eq!(decide_case(&case, &t).reason, Some(GateReason::ClassificationUnresolved));
    }

    #[test]
    fn a_stand_in_type_of_a_dry_run_is_left_to_the_model_and_every_other_reason_still_applies() {
        let t = contract_type();
        let mut case = clean(&t);
        case.classification.method = Method::Rules;
        case.classification.confidence = 0.1;
        case.stand_in = true;
        assert_eq!(decide_case(&case, &t).route, Route::Auto);
        for reason in GateReason::ORDER.into_iter().filter(|r| *r != GateReason::ClassificationUnresolved) {
            let mut broken = clean(&t);
            broken.stand_in = true;
            break_reason(&mut broken, reason, &t);
            assert_eq!(decide_case(&broken, &t).reason, Some(reason), "{reason:?} in a dry run");
        }
    }

    #[test]
    fn thresholds_are_validated_and_set_by_name() {
        let mut t = Thresholds::default();
        t.set("critical_min_confidence", 0.9).unwrap();
        assert_eq!(t.critical_min_confidence, 0.9);
        assert!(t.set("critical_min_confidence", 1.5).unwrap_err().contains("from 0.5 to 1"));
        // No threshold may let documents past review that the gate exists to stop.
        assert!(Thresholds::default().set("critical_min_confidence", 0.2).is_err());
        assert!(Thresholds::default().set("max_not_evaluated_share", 1.0).is_err());
        assert!(Thresholds::default().set("max_not_evaluated_share", 0.5).is_ok());
        assert!(t.set("nonsense", 0.5).unwrap_err().contains("known: ocr_min_confidence"));
    }

    #[test]
    fn every_default_threshold_comes_from_the_settings_table_and_is_within_its_bounds() {
        let t = Thresholds::default();
        assert_eq!(t.validate(), Ok(()));
        assert_eq!(t.critical_min_confidence.to_string(), "0.7", "read from the table, not rounded on the way");
    }
}
