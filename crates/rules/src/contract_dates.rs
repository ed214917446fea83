//! A finalized contract's dates that people plan around, from its fields as the review left them: when it expires,
//! and the last day to give notice so it does not renew (the expiration date less the notice period). One rule for
//! the store (which keeps both as columns, written with the fields), the Contracts area and its calendar, and the
//! renewal reminders.

use chrono::{Datelike, Days, Months, NaiveDate, Weekday};
use pactwise_domain::{DurationUnit, Extracted, Extractions, Value};

/// The dates a contract's fields give; `None` where a field is missing or has no date form (a perpetual term,
/// a notice period without an expiration date).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContractDates {
    pub expires_on: Option<NaiveDate>,
    pub notice_by: Option<NaiveDate>,
}

/// The contract's expiration date and notice deadline.
pub fn contract_dates(fields: &Extractions) -> ContractDates {
    let expires_on = fields.expiration_date.as_ref().and_then(date_of);
    let notice_by = match (expires_on, fields.renewal_notice.as_ref().and_then(|n| n.normalized.as_ref())) {
        (Some(end), Some(Value::Duration { number, unit })) => period_before(end, *number, *unit),
        _ => None,
    };
    ContractDates { expires_on, notice_by }
}

/// The governing law in its normalised form (the jurisdiction's name), else the words as extracted.
pub fn governing_law(fields: &Extractions) -> Option<String> {
    let law = fields.governing_law.as_ref()?;
    let name = match &law.normalized {
        Some(Value::Jurisdiction { name }) => name.clone(),
        _ => law.value.clone(),
    };
    let name = name.trim().to_owned();
    (!name.is_empty()).then_some(name)
}

fn date_of(field: &Extracted) -> Option<NaiveDate> {
    match &field.normalized {
        Some(Value::Date { iso }) => NaiveDate::parse_from_str(iso, "%Y-%m-%d").ok(),
        _ => None,
    }
}

/// The day `number` units before `end`. Business days skip Saturdays and Sundays (public holidays are not known
/// here); a month before 31 March is the last day of February.
pub fn period_before(end: NaiveDate, number: u32, unit: DurationUnit) -> Option<NaiveDate> {
    match unit {
        DurationUnit::Year => end.checked_sub_months(Months::new(number.checked_mul(12)?)),
        DurationUnit::Month => end.checked_sub_months(Months::new(number)),
        DurationUnit::Week => end.checked_sub_days(Days::new(u64::from(number) * 7)),
        DurationUnit::Day => end.checked_sub_days(Days::new(u64::from(number))),
        DurationUnit::BusinessDay => {
            let mut day = end;
            let mut left = number;
            while left > 0 {
                day = day.pred_opt()?;
                if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
                    left -= 1;
                }
            }
            Some(day)
        }
    }
}

/// A renewal reminder falls due this many days before the notice deadline (on the deadline itself when the
/// contract was finalized later than that).
pub const REMIND_DAYS_BEFORE_NOTICE: u64 = 60;

/// The day a contract's renewal reminder falls due: [`REMIND_DAYS_BEFORE_NOTICE`] days before its notice deadline.
pub fn reminder_date(notice_by: NaiveDate) -> NaiveDate {
    notice_by.checked_sub_days(Days::new(REMIND_DAYS_BEFORE_NOTICE)).unwrap_or(notice_by)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reminder_falls_due_sixty_days_before_the_notice_deadline() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        assert_eq!(reminder_date(d("2027-03-31")), d("2027-01-30"));
        assert_eq!(reminder_date(d("2027-01-01")), d("2026-11-02"));
    }

    fn field(value: Value) -> Option<Extracted> {
        Some(Extracted { value: value.display(), normalized: Some(value), quote: None, confidence: 0.9 })
    }

    fn date(iso: &str) -> NaiveDate {
        NaiveDate::parse_from_str(iso, "%Y-%m-%d").unwrap()
    }

    fn with(expiration: Option<Value>, notice: Option<Value>) -> Extractions {
        Extractions {
            expiration_date: expiration.and_then(field),
            renewal_notice: notice.and_then(field),
            ..Extractions::default()
        }
    }

    #[test]
    fn the_notice_deadline_is_the_expiration_date_less_the_notice_period_in_each_unit() {
        let end = || Some(Value::Date { iso: "2026-03-31".into() });
        let cases = [
            (DurationUnit::Day, 30, "2026-03-01"),
            (DurationUnit::Week, 2, "2026-03-17"),
            (DurationUnit::Month, 1, "2026-02-28"),
            (DurationUnit::Month, 3, "2025-12-31"),
            (DurationUnit::Year, 1, "2025-03-31"),
            // Tuesday 31 March 2026; ten business days before is Tuesday 17 March.
            (DurationUnit::BusinessDay, 10, "2026-03-17"),
        ];
        for (unit, number, expected) in cases {
            let dates = contract_dates(&with(end(), Some(Value::Duration { number, unit })));
            assert_eq!(dates.expires_on, Some(date("2026-03-31")));
            assert_eq!(dates.notice_by, Some(date(expected)), "{number} {unit:?}");
        }
    }

    #[test]
    fn no_date_form_gives_no_date() {
        assert_eq!(contract_dates(&Extractions::default()), ContractDates::default());
        let perpetual = contract_dates(&with(
            Some(Value::Perpetual),
            Some(Value::Duration { number: 30, unit: DurationUnit::Day }),
        ));
        assert_eq!(perpetual, ContractDates::default(), "a perpetual term has no notice deadline");
        let not_a_date = contract_dates(&with(Some(Value::Date { iso: "2026-02-30".into() }), None));
        assert_eq!(not_a_date.expires_on, None, "an impossible date is no date");
        let words_only = contract_dates(&with(
            Some(Value::Date { iso: "2027-01-15".into() }),
            Some(Value::Jurisdiction { name: "ninety days".into() }),
        ));
        assert_eq!((words_only.expires_on, words_only.notice_by), (Some(date("2027-01-15")), None));
    }

    #[test]
    fn the_governing_law_is_the_jurisdiction_name_else_the_words() {
        let mut fields = Extractions {
            governing_law: field(Value::Jurisdiction { name: "New York".into() }),
            ..Extractions::default()
        };
        assert_eq!(governing_law(&fields).as_deref(), Some("New York"));
        fields.governing_law =
            Some(Extracted { value: " laws of Ontario ".into(), normalized: None, quote: None, confidence: 0.5 });
        assert_eq!(governing_law(&fields).as_deref(), Some("laws of Ontario"));
        assert_eq!(governing_law(&Extractions::default()), None);
    }
}
