//! CUAD's human-normalised answers ("5/8/14", "successive 1 year", "30 days", "New York", `Acme Inc. ("Acme")`)
//! read as values, and the rules the evaluator's values table compares them by: dates are the same calendar date,
//! periods the same number and unit, a governing law the same jurisdiction, a party found when its name or the name
//! the contract defines for it is among the extracted parties. Answers that name no comparable value (a date with
//! blanks, "[]/[]/2020") are not counted.

use chrono::NaiveDate;
use pactwise_domain::{DurationUnit, Value};
use regex::Regex;
use std::sync::LazyLock;

/// The dates an answer names ("5/8/14", "07/31/2000; 07/[]/2000" gives one): month first, as CUAD writes them,
/// unless the first number cannot be a month ("31/01/2025"). Two-digit years are 1950–2049.
pub fn dates(answer: &str) -> Vec<NaiveDate> {
    answer.split(';').filter_map(|piece| date(piece.trim())).collect()
}

fn date(piece: &str) -> Option<NaiveDate> {
    let parts: Vec<&str> = piece.split('/').map(str::trim).collect();
    let [a, b, y] = parts.as_slice() else { return None };
    let (a, b, y): (u32, u32, i32) = (a.parse().ok()?, b.parse().ok()?, y.parse().ok()?);
    let year = match y {
        0..=49 => 2000 + y,
        50..=99 => 1900 + y,
        _ => y,
    };
    let (month, day) = if a > 12 { (b, a) } else { (a, b) };
    NaiveDate::from_ymd_opt(year, month, day)
}

/// Is the answer "perpetual" (the contract has no end)?
pub fn is_perpetual(answer: &str) -> bool {
    answer.split(';').any(|p| p.trim().to_lowercase().starts_with("perpetual"))
}

static PERIOD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:^|[^\d.])(\d+)\)?\s*(day|week|month|year)s?\b").expect("the answer pattern is valid")
});

/// The periods an answer names, one per `;` piece: "successive 1 year" is 1 year, "2 successive 5 years" is 5
/// years (the length of each renewal), "60) days" is 60 days. "0.5 year" and blanks name none.
pub fn periods(answer: &str) -> Vec<(u32, DurationUnit)> {
    answer
        .split(';')
        .filter_map(|piece| {
            let c = PERIOD.captures_iter(piece).last()?;
            let number: u32 = c[1].parse().ok()?;
            let unit = match c[2].to_lowercase().as_str() {
                "day" => DurationUnit::Day,
                "week" => DurationUnit::Week,
                "month" => DurationUnit::Month,
                _ => DurationUnit::Year,
            };
            Some((number, unit))
        })
        .collect()
}

/// Does a predicted value match the answer of a date field (an expiration may also be perpetual)?
pub fn date_matches(answer: &str, predicted: &Value) -> bool {
    match predicted {
        Value::Date { iso } => NaiveDate::parse_from_str(iso, "%Y-%m-%d").is_ok_and(|d| dates(answer).contains(&d)),
        Value::Perpetual => is_perpetual(answer),
        _ => false,
    }
}

/// Does a date field's answer name a value that can be compared (a whole date, or "perpetual" for an expiration)?
pub fn date_comparable(answer: &str, perpetual_allowed: bool) -> bool {
    !dates(answer).is_empty() || (perpetual_allowed && is_perpetual(answer))
}

/// A period in whole years when it is one: 12 months is 1 year and 24 months 2 years, the same length written two
/// ways (adding either to a date gives the same day). Other periods are left as written.
fn in_years(number: u32, unit: DurationUnit) -> (u32, DurationUnit) {
    if unit == DurationUnit::Month && number > 0 && number.is_multiple_of(12) {
        (number / 12, DurationUnit::Year)
    } else {
        (number, unit)
    }
}

/// Does a predicted period match the answer (the same length: the same number and unit, whole years written in
/// months counting as years; business days count as days)?
pub fn period_matches(answer: &str, predicted: &Value) -> bool {
    match predicted {
        Value::Duration { number, unit } => {
            let unit = if *unit == DurationUnit::BusinessDay { DurationUnit::Day } else { *unit };
            let predicted = in_years(*number, unit);
            periods(answer).into_iter().any(|(n, u)| in_years(n, u) == predicted)
        }
        Value::Perpetual => is_perpetual(answer),
        _ => false,
    }
}

/// Does a period field's answer name a value that can be compared?
pub fn period_comparable(answer: &str) -> bool {
    !periods(answer).is_empty() || is_perpetual(answer)
}

fn words(text: &str) -> Vec<String> {
    let lowered = text.to_lowercase().replace(['\u{2019}', '\''], "");
    let mut out: Vec<String> =
        lowered.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_owned).collect();
    // "the State of New York", "Province of Ontario": the jurisdiction is the name after these words.
    // A country's formal name is the country: "People's Republic of China", "Federal Republic of Germany".
    while out.len() > 1
        && matches!(
            out[0].as_str(),
            "the" | "state" | "province" | "commonwealth" | "of" | "peoples" | "federal" | "republic"
        )
    {
        out.remove(0);
    }
    out
}

/// Does a predicted jurisdiction match the governing-law answer? The answer's pieces (split on `;`) are compared
/// by their first comma part ("Ontario, Canada" is Ontario); a prediction naming two jurisdictions joined by "and"
/// ("England and Wales") matches an answer naming either.
pub fn jurisdiction_matches(answer: &str, predicted: &str) -> bool {
    let predicted_first = predicted.split(',').next().unwrap_or(predicted);
    let predicted_words = words(predicted_first);
    let predicted_parts: Vec<Vec<String>> =
        predicted_first.split(" and ").map(words).filter(|w| !w.is_empty()).collect();
    answer.split(';').any(|piece| {
        let piece_words = words(piece.split(',').next().unwrap_or(piece));
        !piece_words.is_empty()
            && (piece_words == predicted_words
                || words(piece) == predicted_words
                || predicted_parts.contains(&piece_words))
    })
}

/// One party as CUAD's answer names it: its name and the names the contract defines for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerParty {
    pub name: String,
    pub defined: Vec<String>,
}

static QUOTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"["“”]([^"“”]{1,60})["“”]"#).expect("the quoted-name pattern is valid"));

/// Generic defined names that say a role in the contract, not who the party is.
const GENERIC: [&str; 4] = ["party", "parties", "each party", "party a"];

/// The parties an answer names: `Corio Inc. ("CORIO"); Changepoint, Inc. ("CHANGEPOINT")`. Pieces that only
/// define "Party" and "Parties" collectively are not parties.
pub fn parties(answer: &str) -> Vec<AnswerParty> {
    answer
        .split(';')
        .filter_map(|piece| {
            let piece = piece.trim();
            let cut = piece.find(['(', '"', '“', '”']).unwrap_or(piece.len());
            let name = piece[..cut].trim().trim_matches(|c: char| c == ',' || c.is_whitespace()).to_owned();
            let defined: Vec<String> = QUOTED
                .captures_iter(piece)
                .map(|c| c[1].trim().to_owned())
                .filter(|d| !GENERIC.contains(&d.to_lowercase().as_str()))
                .collect();
            let lowered = name.to_lowercase();
            // "Company and Consultant (each a "Party")", "Apollo and Establishment shall hereinafter be ...": the
            // collective terms for parties named in other pieces, not a party.
            let names_party_terms =
                piece.to_lowercase().split(|c: char| !c.is_alphanumeric()).any(|w| w == "party" || w == "parties");
            if names_party_terms && [" and ", " shall ", "hereinafter"].iter().any(|w| lowered.contains(w)) {
                return None;
            }
            let name_is_words = name.chars().filter(|c| c.is_alphabetic()).count() >= 2
                && name.len() <= 80
                && !lowered.contains("party")
                && !lowered.contains("parties");
            match (name_is_words, defined.is_empty()) {
                (true, _) => Some(AnswerParty { name, defined }),
                (false, false) if !piece.starts_with('(') => Some(AnswerParty { name: defined[0].clone(), defined }),
                _ => None,
            }
        })
        .collect()
}

/// Is the party among the extracted ones (its name or one of its defined names inside an extracted value,
/// compared in the scorer's normalisation)?
pub fn party_found(party: &AnswerParty, extracted: &[String]) -> bool {
    let norm = crate::eval::scorer_norm;
    std::iter::once(&party.name)
        .chain(&party.defined)
        .map(|n| norm(n))
        .filter(|n| n.chars().filter(|c| c.is_alphanumeric()).count() >= 2)
        .any(|n| extracted.iter().any(|e| norm(e).contains(&n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn answer_dates_are_month_first_with_two_digit_years_around_2000() {
        assert_eq!(dates("5/8/14"), [day(2014, 5, 8)]);
        assert_eq!(dates("12/31/99"), [day(1999, 12, 31)]);
        assert_eq!(dates("31/01/2025"), [day(2025, 1, 31)]);
        assert_eq!(dates("07/31/2000; 07/[]/2000"), [day(2000, 7, 31)]);
        assert!(dates("[]/[]/2020").is_empty());
        assert!(!date_comparable("[]/[]/2020", true));
        assert!(date_comparable("Perpetual", true));
        assert!(!date_comparable("perpetual", false));
    }

    #[test]
    fn a_predicted_date_matches_only_the_same_calendar_day() {
        let predicted = Value::Date { iso: "2014-05-08".into() };
        assert!(date_matches("5/8/14", &predicted));
        assert!(!date_matches("5/9/14", &predicted));
        assert!(date_matches("perpetual", &Value::Perpetual));
    }

    #[test]
    fn answer_periods_keep_the_length_of_each_term() {
        assert_eq!(periods("successive 1 year"), [(1, DurationUnit::Year)]);
        assert_eq!(periods("2 successive 5 years"), [(5, DurationUnit::Year)]);
        assert_eq!(periods("60) days"), [(60, DurationUnit::Day)]);
        assert_eq!(periods("5 years; 2 years"), [(5, DurationUnit::Year), (2, DurationUnit::Year)]);
        assert!(periods("0.5 year").is_empty());
        assert!(periods("successive [] years").is_empty());
        assert!(period_matches("90 days", &Value::Duration { number: 90, unit: DurationUnit::BusinessDay }));
        // The same length written two ways: whole years in months are years; other lengths stay apart.
        assert!(period_matches("12 months", &Value::Duration { number: 1, unit: DurationUnit::Year }));
        assert!(period_matches("successive 2 years", &Value::Duration { number: 24, unit: DurationUnit::Month }));
        assert!(!period_matches("18 months", &Value::Duration { number: 1, unit: DurationUnit::Year }));
        assert!(!period_matches("1 year", &Value::Duration { number: 52, unit: DurationUnit::Week }));
        assert!(!period_matches("1 year", &Value::Duration { number: 365, unit: DurationUnit::Day }));
    }

    #[test]
    fn jurisdictions_match_by_name_not_by_the_words_around_it() {
        assert!(jurisdiction_matches("New York", "New York"));
        assert!(jurisdiction_matches("Province of Ontario, Canada", "Ontario, Canada"));
        assert!(jurisdiction_matches("England; Wales", "England and Wales"));
        assert!(jurisdiction_matches("British Columbia,Canada", "British Columbia, Canada"));
        assert!(!jurisdiction_matches("Virginia", "West Virginia"));
        assert!(!jurisdiction_matches("Delaware", "New York"));
        assert!(jurisdiction_matches("People's Republic of China", "China"));
        assert!(jurisdiction_matches("Federal Republic of Germany", "Germany"));
        assert!(!jurisdiction_matches("Republic of Korea", "China"));
    }

    #[test]
    fn answer_parties_keep_names_and_defined_names_but_not_the_collective_terms() {
        let got = parties(
            r#"Alder Widgets Inc. ("Alder"); Birch Labs, LLC (the "Supplier"); (each a "Party"); Alder and Birch shall be called a "Party""#,
        );
        assert_eq!(
            got,
            [
                AnswerParty { name: "Alder Widgets Inc.".into(), defined: vec!["Alder".into()] },
                AnswerParty { name: "Birch Labs, LLC".into(), defined: vec!["Supplier".into()] },
            ]
        );
        let extracted = vec![r#"BIRCH LABS, LLC ("Supplier")"#.to_owned(), "Alder".to_owned()];
        assert!(got.iter().all(|p| party_found(p, &extracted)));
        assert!(!party_found(&got[0], &["Cedar Corp.".to_owned()]));
    }
}
