//! The evaluation's arithmetic, exact: weighted technical totals from people's scores and the package's criteria
//! weights, and price totals from the pricing schedule and a vendor's unit prices. Code adds up; people score and
//! award. Nothing here orders vendors: totals come back in the order the vendors were given.

use std::collections::BTreeMap;
use std::str::FromStr;

use pactwise_rules::prep::{Criteria, Pricing};
use rust_decimal::Decimal;

/// One evaluator's score of one vendor on one criterion, with the reason in words.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Score {
    pub vendor: String,
    pub criterion_id: String,
    pub evaluator: String,
    pub points: u32,
    pub reason: String,
}

/// Why a score cannot be recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoreError {
    #[error("a score is between 0 and {max} points; {points} is not")]
    OutOfRange { points: u32, max: u32 },
    #[error("say why, in words: a score needs a reason")]
    NoReason,
    #[error("the tender has no criterion {0}")]
    UnknownCriterion(String),
}

/// Checks one score before it is recorded.
pub fn check_score(criteria: &Criteria, score: &Score, max_points: u32) -> Result<(), ScoreError> {
    if !criteria.criteria.iter().any(|c| c.id == score.criterion_id) {
        return Err(ScoreError::UnknownCriterion(score.criterion_id.clone()));
    }
    if score.points > max_points {
        return Err(ScoreError::OutOfRange { points: score.points, max: max_points });
    }
    if score.reason.trim().is_empty() {
        return Err(ScoreError::NoReason);
    }
    Ok(())
}

/// The vendors with a criterion nobody has scored yet (with a reason): the technical evaluation cannot be locked
/// while any remain.
pub fn unscored(criteria: &Criteria, vendors: &[String], scores: &[Score]) -> Vec<String> {
    vendors
        .iter()
        .filter(|vendor| {
            criteria.criteria.iter().any(|criterion| {
                !scores
                    .iter()
                    .any(|s| &s.vendor == *vendor && s.criterion_id == criterion.id && !s.reason.trim().is_empty())
            })
        })
        .cloned()
        .collect()
}

/// A vendor's technical result: per criterion the mean of the evaluators' points and its weighted share, and the
/// total out of 100.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TechnicalTotal {
    pub vendor: String,
    pub criteria: Vec<CriterionResult>,
    /// Out of 100, exact; round only to show it ([`shown`]).
    pub total: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CriterionResult {
    pub criterion_id: String,
    pub mean_points: Decimal,
    /// mean ÷ maximum × the criterion's weight, in points out of 100.
    pub weighted: Decimal,
}

/// Weighted totals: for each criterion the mean of its scores, divided by the maximum and multiplied by the
/// criterion's weight (basis points ÷ 100). Every criterion of every vendor must be scored ([`unscored`]).
pub fn technical_totals(
    criteria: &Criteria,
    vendors: &[String],
    scores: &[Score],
    max_points: u32,
) -> Result<Vec<TechnicalTotal>, String> {
    let missing = unscored(criteria, vendors, scores);
    if !missing.is_empty() {
        return Err(format!("not every criterion is scored yet for: {}", missing.join(", ")));
    }
    let max = Decimal::from(max_points.max(1));
    Ok(vendors
        .iter()
        .map(|vendor| {
            let results: Vec<CriterionResult> = criteria
                .criteria
                .iter()
                .map(|criterion| {
                    let points: Vec<Decimal> = scores
                        .iter()
                        .filter(|s| &s.vendor == vendor && s.criterion_id == criterion.id)
                        .map(|s| Decimal::from(s.points))
                        .collect();
                    let mean = points.iter().sum::<Decimal>() / Decimal::from(points.len());
                    let weight = Decimal::from(criterion.weight_bp) / Decimal::from(100);
                    CriterionResult {
                        criterion_id: criterion.id.clone(),
                        mean_points: mean,
                        weighted: mean / max * weight,
                    }
                })
                .collect();
            let total = results.iter().map(|r| r.weighted).sum();
            TechnicalTotal { vendor: vendor.clone(), criteria: results, total }
        })
        .collect())
}

/// A figure rounded for people (half away from zero) to `places` decimals.
pub fn shown(value: Decimal, places: u32) -> String {
    value.round_dp_with_strategy(places, rust_decimal::RoundingStrategy::MidpointAwayFromZero).to_string()
}

/// A vendor's price envelope: the currency and a unit price per pricing line, as typed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PriceOffer {
    pub currency: String,
    /// Pricing line code → unit price as the vendor typed it.
    pub unit_prices: BTreeMap<String, String>,
}

/// One priced line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PricedLine {
    pub code: String,
    pub quantity: Decimal,
    /// The schedule gives no quantity: the line is priced once.
    pub quantity_assumed: bool,
    pub unit_price: Decimal,
    pub amount: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PriceTotal {
    pub currency: String,
    pub lines: Vec<PricedLine>,
    pub total: Decimal,
}

/// What is wrong with a price envelope, line by line, in the vendor's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    #[error("prices must be in {expected}, the tender's currency, not {given}")]
    WrongCurrency { expected: String, given: String },
    #[error("line {line}: give a unit price")]
    Missing { line: String },
    #[error("line {line}: \"{value}\" is not an amount; write it with a point for decimals, such as 1234.50")]
    NotANumber { line: String, value: String },
    #[error("line {line}: a price cannot be negative")]
    Negative { line: String },
    #[error("line {line}: {currency} amounts have at most {places} decimals")]
    TooManyDecimals { line: String, currency: String, places: u32 },
    #[error("line {line} is not in the pricing schedule")]
    UnknownLine { line: String },
}

/// The price total of an offer against the schedule: every line that can be priced (not `open_amount`) needs a
/// non-negative amount in the tender's currency with no more decimals than the currency has; amount = quantity ×
/// unit price, exact. Every problem is reported at once, so the vendor fixes the form in one go.
pub fn price_total(pricing: &Pricing, offer: &PriceOffer) -> Result<PriceTotal, Vec<PriceError>> {
    let mut errors = Vec::new();
    let currency = pricing.currency.trim().to_ascii_uppercase();
    if offer.currency.trim().to_ascii_uppercase() != currency {
        errors.push(PriceError::WrongCurrency { expected: currency.clone(), given: offer.currency.clone() });
    }
    let places = minor_units(&currency);
    for code in offer.unit_prices.keys() {
        if !pricing.lines.iter().any(|line| &line.code == code) {
            errors.push(PriceError::UnknownLine { line: code.clone() });
        }
    }
    let mut lines = Vec::new();
    for line in pricing.lines.iter().filter(|line| !line.open_amount) {
        let Some(typed) = offer.unit_prices.get(&line.code).filter(|v| !v.trim().is_empty()) else {
            errors.push(PriceError::Missing { line: line.code.clone() });
            continue;
        };
        let unit_price = match parse_amount(typed) {
            Some(value) => value,
            None => {
                errors
                    .push(PriceError::NotANumber { line: line.code.clone(), value: typed.chars().take(40).collect() });
                continue;
            }
        };
        if unit_price.is_sign_negative() && !unit_price.is_zero() {
            errors.push(PriceError::Negative { line: line.code.clone() });
            continue;
        }
        if unit_price.scale() > places {
            errors.push(PriceError::TooManyDecimals { line: line.code.clone(), currency: currency.clone(), places });
            continue;
        }
        let quantity = Decimal::from(line.quantity.unwrap_or(1));
        lines.push(PricedLine {
            code: line.code.clone(),
            quantity,
            quantity_assumed: line.quantity.is_none(),
            unit_price,
            amount: quantity * unit_price,
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let total = lines.iter().map(|line| line.amount).sum();
    Ok(PriceTotal { currency, lines, total })
}

/// An amount as people type it: digits with a point for decimals; spaces, and commas between groups of three digits,
/// are allowed as thousands separators. Anything else (a comma for decimals, letters, exponents) is not an amount.
pub fn parse_amount(typed: &str) -> Option<Decimal> {
    let compact: String = typed.chars().filter(|c| !matches!(c, ' ' | '\u{a0}' | '\u{202f}')).collect();
    let (sign, digits) = match compact.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", compact.as_str()),
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    let groups: Vec<&str> = whole.split(',').collect();
    let grouped_well = groups.len() == 1
        || (!groups[0].is_empty() && groups[0].len() <= 3 && groups[1..].iter().all(|g| g.len() == 3));
    let all_digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if !grouped_well || !groups.iter().all(|g| all_digits(g)) || fraction.is_some_and(|f| !all_digits(f)) {
        return None;
    }
    let plain = format!("{sign}{}{}", groups.concat(), fraction.map(|f| format!(".{f}")).unwrap_or_default());
    Decimal::from_str(&plain).ok()
}

/// The decimals a currency's amounts have (ISO 4217 minor units; two unless listed).
pub fn minor_units(currency: &str) -> u32 {
    match currency {
        "BIF" | "CLP" | "DJF" | "GNF" | "ISK" | "JPY" | "KMF" | "KRW" | "PYG" | "RWF" | "UGX" | "UYI" | "VND"
        | "VUV" | "XAF" | "XOF" | "XPF" => 0,
        "BHD" | "IQD" | "JOD" | "KWD" | "LYD" | "OMR" | "TND" => 3,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use pactwise_rules::prep::{Criterion, PricingLine};

    use super::*;

    fn criteria() -> Criteria {
        let criterion = |id: &str, weight_bp| Criterion {
            id: id.into(),
            name: id.into(),
            description: String::new(),
            weight_bp,
            requirement_codes: vec![],
        };
        Criteria { criteria: vec![criterion("quality", 6_000), criterion("delivery", 4_000)] }
    }

    fn score(vendor: &str, criterion: &str, evaluator: &str, points: u32) -> Score {
        Score {
            vendor: vendor.into(),
            criterion_id: criterion.into(),
            evaluator: evaluator.into(),
            points,
            reason: "seen in the answer".into(),
        }
    }

    #[test]
    fn weighted_totals_are_exact_and_keep_the_vendors_order() {
        let vendors = vec!["zeta".to_owned(), "acme".to_owned()];
        let scores = vec![
            score("zeta", "quality", "ann", 7),
            score("zeta", "quality", "bob", 8),
            score("zeta", "delivery", "ann", 10),
            score("acme", "quality", "ann", 10),
            score("acme", "delivery", "ann", 3),
            score("acme", "delivery", "bob", 4),
            score("acme", "delivery", "cy", 4),
        ];
        let totals = technical_totals(&criteria(), &vendors, &scores, 10).unwrap();
        assert_eq!(totals[0].vendor, "zeta");
        // zeta: 7.5/10 × 60 + 10/10 × 40 = 85
        assert_eq!(totals[0].total, Decimal::from(85));
        // acme: 10/10 × 60 + (11/3)/10 × 40 = 60 + 14.666…
        assert_eq!(shown(totals[1].total, 2), "74.67");
        assert!(totals[1].total > Decimal::from_str("74.666").unwrap());
    }

    #[test]
    fn unscored_criteria_block_the_totals_and_bad_scores_are_refused() {
        let vendors = vec!["acme".to_owned()];
        let scores = vec![score("acme", "quality", "ann", 5)];
        assert_eq!(unscored(&criteria(), &vendors, &scores), vec!["acme".to_owned()]);
        assert!(technical_totals(&criteria(), &vendors, &scores, 10).is_err());
        let mut bad = score("acme", "quality", "ann", 11);
        assert_eq!(check_score(&criteria(), &bad, 10).unwrap_err(), ScoreError::OutOfRange { points: 11, max: 10 });
        bad.points = 5;
        bad.reason = "  ".into();
        assert_eq!(check_score(&criteria(), &bad, 10).unwrap_err(), ScoreError::NoReason);
    }

    fn pricing() -> Pricing {
        let line = |code: &str, quantity, open_amount| PricingLine {
            code: code.into(),
            description: String::new(),
            unit: "month".into(),
            quantity,
            basis: None,
            open_amount,
        };
        Pricing {
            currency: "EUR".into(),
            lines: vec![line("L1", Some(12), false), line("L2", None, false), line("L3", Some(1), true)],
        }
    }

    fn offer(currency: &str, prices: &[(&str, &str)]) -> PriceOffer {
        PriceOffer {
            currency: currency.into(),
            unit_prices: prices.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    #[test]
    fn a_price_total_is_exact_in_the_tenders_currency() {
        let total = price_total(&pricing(), &offer("eur", &[("L1", "1,234.10"), ("L2", "0.20")])).unwrap();
        assert_eq!(total.total, Decimal::from_str("14809.40").unwrap());
        assert!(total.lines[1].quantity_assumed);
    }

    #[test]
    fn every_problem_of_a_price_form_is_reported_at_once() {
        let errors = price_total(&pricing(), &offer("USD", &[("L1", "1.234,10"), ("L9", "3")])).unwrap_err();
        assert!(errors.contains(&PriceError::WrongCurrency { expected: "EUR".into(), given: "USD".into() }));
        assert!(errors.iter().any(|e| matches!(e, PriceError::NotANumber { line, .. } if line == "L1")));
        assert!(errors.contains(&PriceError::Missing { line: "L2".into() }));
        assert!(errors.contains(&PriceError::UnknownLine { line: "L9".into() }));
        let errors = price_total(&pricing(), &offer("EUR", &[("L1", "-5"), ("L2", "1.005")])).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        for typed in ["1e3", "12abc", "", "1,23", "NaN", "1..2", "١٢٣"] {
            assert_eq!(parse_amount(typed), None, "{typed}");
        }
        assert_eq!(parse_amount("1 000 000.5"), Some(Decimal::from_str("1000000.5").unwrap()));
    }
}
