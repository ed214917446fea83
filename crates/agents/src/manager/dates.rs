//! Dates a request asks for, relative ones resolved against the clock (the rules are in
//! `fixtures/agents/README.md`): `today`, `tomorrow`, `by Friday` (its next occurrence), `next Friday` (next week's),
//! `next week` (its Monday), `end of the week` (this Friday), `in 3 weeks`, `end of month`, `end of next month`,
//! `end of year`, `end of the quarter`, `end of Q2`, `31 March`, `March 31st`, `2027-03-31`, `31/03/2027`. A year,
//! a quarter or a month alone and durations are not dates.

use chrono::{Datelike, Days, Months, NaiveDate, Weekday};
use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// A date the request names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DateMention {
    pub date: NaiveDate,
    /// The words it was read from.
    pub text: String,
}

const MONTHS: &str = r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
const WEEKDAYS: &str = "monday|tuesday|wednesday|thursday|friday|saturday|sunday";
const COUNT: &str = r"\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve";

type Rule = fn(&Captures<'_>, NaiveDate) -> Option<NaiveDate>;

static RULES: LazyLock<Vec<(Regex, Rule)>> = LazyLock::new(|| {
    let rules: Vec<(String, Rule)> = vec![
        (r"\b(20\d{2})-(\d{1,2})-(\d{1,2})\b".into(), |c, _| ymd(num(c, 1)?, num(c, 2)?, num(c, 3)?)),
        (r"\b(\d{1,2})/(\d{1,2})/(20\d{2})\b".into(), |c, _| ymd(num(c, 3)?, num(c, 2)?, num(c, 1)?)),
        (format!(r"\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+({MONTHS})\b\.?(?:,?\s+(20\d{{2}}))?"), |c, today| {
            day_month(today, num(c, 1)?, month(&c[2])?, c.get(3).and_then(|y| y.as_str().parse().ok()))
        }),
        (format!(r"\b({MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(20\d{{2}}))?"), |c, today| {
            day_month(today, num(c, 2)?, month(&c[1])?, c.get(3).and_then(|y| y.as_str().parse().ok()))
        }),
        (r"\b(?:today|tonight)\b".into(), |_, today| Some(today)),
        (r"\btomorrow\b".into(), |_, today| today.checked_add_days(Days::new(1))),
        (r"\bend\s+of\s+(?:the\s+|this\s+)?week\b|\beow\b".into(), |_, today| {
            let wd = today.weekday().num_days_from_monday();
            let to_friday = (4 + 7 - wd) % 7;
            today.checked_add_days(Days::new(u64::from(to_friday)))
        }),
        (r"\bnext\s+week\b".into(), |_, today| next_week(today, Weekday::Mon)),
        (format!(r"\b(next\s+|this\s+)?({WEEKDAYS})\b"), |c, today| {
            let day = weekday(&c[2])?;
            if c.get(1).is_some_and(|n| n.as_str().trim() == "next") {
                next_week(today, day)
            } else {
                let ahead = (day.num_days_from_monday() + 7 - today.weekday().num_days_from_monday()) % 7;
                today.checked_add_days(Days::new(u64::from(if ahead == 0 { 7 } else { ahead })))
            }
        }),
        (format!(r"\b(?:in|within)\s+({COUNT})\s+(day|week|month|year)s?\b"), |c, today| {
            let n = count(&c[1])?;
            match &c[2] {
                "day" => today.checked_add_days(Days::new(n)),
                "week" => today.checked_add_days(Days::new(n.checked_mul(7)?)),
                "month" => today.checked_add_months(Months::new(u32::try_from(n).ok()?)),
                _ => today.checked_add_months(Months::new(u32::try_from(n.checked_mul(12)?).ok()?)),
            }
        }),
        (r"\bend\s+of\s+next\s+month\b".into(), |_, today| month_end(today.checked_add_months(Months::new(1))?)),
        (r"\bend\s+of\s+(?:the\s+|this\s+)?month\b|\beom\b".into(), |_, today| month_end(today)),
        (r"\bend\s+of\s+(?:the\s+|this\s+)?year\b|\beoy\b".into(), |_, today| ymd(today.year(), 12, 31)),
        (r"\bend\s+of\s+(?:the\s+|this\s+)?quarter\b|\beoq\b".into(), |_, today| {
            quarter_end(today.year(), today.month0() / 3 + 1)
        }),
        (r"\bend\s+of\s+q([1-4])(?:\s+(20\d{2}))?\b".into(), |c, today| {
            let q: u32 = c[1].parse().ok()?;
            if let Some(y) = c.get(2) {
                return quarter_end(y.as_str().parse().ok()?, q);
            }
            let this_year = quarter_end(today.year(), q)?;
            if this_year >= today { Some(this_year) } else { quarter_end(today.year() + 1, q) }
        }),
    ];
    rules.into_iter().map(|(p, f)| (Regex::new(&format!("(?i){p}")).expect("date pattern"), f)).collect()
});

fn num<T: std::str::FromStr>(c: &Captures<'_>, i: usize) -> Option<T> {
    c.get(i)?.as_str().parse().ok()
}

fn ymd(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y, m, d)
}

fn month(name: &str) -> Option<u32> {
    let n = name.to_ascii_lowercase();
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        .iter()
        .position(|m| n.starts_with(m))
        .map(|i| i as u32 + 1)
}

fn weekday(name: &str) -> Option<Weekday> {
    name.to_ascii_lowercase().parse().ok()
}

fn count(word: &str) -> Option<u64> {
    let w = word.to_ascii_lowercase();
    if w == "a" || w == "an" {
        return Some(1);
    }
    match super::text::number_word(&w) {
        Some(0) => None,
        Some(n) => Some(u64::from(n)),
        None => w.parse().ok(),
    }
}

/// A day and month without a year is its next occurrence from today (today included).
fn day_month(today: NaiveDate, d: u32, m: u32, year: Option<i32>) -> Option<NaiveDate> {
    if let Some(y) = year {
        return ymd(y, m, d);
    }
    match ymd(today.year(), m, d) {
        Some(date) if date >= today => Some(date),
        _ => ymd(today.year() + 1, m, d),
    }
}

fn next_week(today: NaiveDate, day: Weekday) -> Option<NaiveDate> {
    let to_monday = 7 - today.weekday().num_days_from_monday();
    today.checked_add_days(Days::new(u64::from(to_monday + day.num_days_from_monday())))
}

fn month_end(d: NaiveDate) -> Option<NaiveDate> {
    let first_next = NaiveDate::from_ymd_opt(d.year(), d.month(), 1)?.checked_add_months(Months::new(1))?;
    first_next.pred_opt()
}

fn quarter_end(year: i32, q: u32) -> Option<NaiveDate> {
    month_end(NaiveDate::from_ymd_opt(year, q * 3, 1)?)
}

/// The dates in a text, each once, in the order written. Overlapping readings keep the first, longest one.
pub(crate) fn dates(text: &str, today: NaiveDate) -> Vec<DateMention> {
    let mut hits: Vec<(usize, usize, NaiveDate, String)> = Vec::new();
    for (re, rule) in RULES.iter() {
        for c in re.captures_iter(text) {
            let whole = c.get(0).map(|m| (m.start(), m.end())).unwrap_or_default();
            if hits.iter().any(|(s, e, _, _)| whole.0 < *e && *s < whole.1) {
                continue;
            }
            if let Some(date) = rule(&c, today) {
                hits.push((whole.0, whole.1, date, c[0].trim().to_string()));
            }
        }
    }
    hits.sort_by_key(|h| h.0);
    let mut out: Vec<DateMention> = Vec::new();
    for (_, _, date, text) in hits {
        if !out.iter().any(|d| d.date == date) {
            out.push(DateMention { date, text });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<String> {
        // Thursday 3 December 2026, the routing set's clock.
        let today = NaiveDate::from_ymd_opt(2026, 12, 3).unwrap();
        dates(text, today).iter().map(|d| d.date.to_string()).collect()
    }

    #[test]
    fn relative_dates_against_the_clock() {
        assert_eq!(read("by Friday"), ["2026-12-04"]);
        assert_eq!(read("next friday"), ["2026-12-11"]);
        assert_eq!(read("next Monday"), ["2026-12-07"]);
        assert_eq!(read("next week"), ["2026-12-07"]);
        assert_eq!(read("by Thursday"), ["2026-12-10"]);
        assert_eq!(read("in 3 weeks"), ["2026-12-24"]);
        assert_eq!(read("in 2 months"), ["2027-02-03"]);
        assert_eq!(read("in 30 days"), ["2027-01-02"]);
        assert_eq!(read("end of Q2"), ["2027-06-30"]);
        assert_eq!(read("end of q4"), ["2026-12-31"]);
        assert_eq!(read("end of month"), ["2026-12-31"]);
        assert_eq!(read("end of next month"), ["2027-01-31"]);
        assert_eq!(read("by end of the week"), ["2026-12-04"]);
        assert_eq!(read("today, tomorrow"), ["2026-12-03", "2026-12-04"]);
    }

    #[test]
    fn absolute_dates_and_what_is_not_a_date() {
        assert_eq!(read("before 31 March"), ["2027-03-31"]);
        assert_eq!(read("March 31st"), ["2027-03-31"]);
        assert_eq!(read("Dec 18"), ["2026-12-18"]);
        assert_eq!(read("1 December"), ["2027-12-01"]);
        assert_eq!(read("2027-01-15 or 31/03/2027"), ["2027-01-15", "2027-03-31"]);
        assert!(read("the 2026 budget, Q3, next month, for 6 months, 31 February, MSA-2026-014, 12 months").is_empty());
    }
}
