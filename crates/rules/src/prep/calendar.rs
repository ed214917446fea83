//! Milestone dates, computed in code from the intake's timeline on a business-day calendar: weekends, the public
//! holidays of the buyer's country (from the `bdays` crate, computed by rule for any year) and the organization's
//! own holiday list. The model never writes a date; it writes only the rationale beside each one. Deadlines close at
//! [`DEADLINE_TIME_UTC`] on their day ([`deadline_at`]), the one rule the RFP text and the service's clock share.

use super::artifact::{Intake, Milestone, MilestoneKind};
use bdays::HolidayCalendar;
use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveTime, Utc, Weekday};
use std::collections::BTreeSet;

/// Countries whose public holidays the calendar knows (ISO 3166-1 alpha-2), from `bdays` 0.1.4: Brazil (national
/// banking holidays), Germany (the holidays of every state), the United States (federal holidays).
pub const PUBLIC_HOLIDAY_COUNTRIES: [&str; 3] = ["BR", "DE", "US"];

/// The time of day (UTC) a deadline closes on its date.
pub const DEADLINE_TIME_UTC: NaiveTime = match NaiveTime::from_hms_opt(17, 0, 0) {
    Some(t) => t,
    None => NaiveTime::MIN,
};

/// The instant a deadline falling on `day` closes.
pub fn deadline_at(day: NaiveDate) -> DateTime<Utc> {
    day.and_time(DEADLINE_TIME_UTC).and_utc()
}

/// A country whose public holidays are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicHolidays {
    Brazil,
    Germany,
    UnitedStates,
}

/// A country code the calendar has no public holidays for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no public holidays are known for the country code {0:?}; use one of {known} or leave the country out and list \
     the holidays yourself",
    known = PUBLIC_HOLIDAY_COUNTRIES.join(", ")
)]
pub struct UnknownCountry(pub String);

impl PublicHolidays {
    /// The country of an ISO 3166-1 alpha-2 code (any case, surrounding spaces ignored).
    pub fn of(code: &str) -> Result<PublicHolidays, UnknownCountry> {
        match code.trim().to_ascii_uppercase().as_str() {
            "BR" => Ok(PublicHolidays::Brazil),
            "DE" => Ok(PublicHolidays::Germany),
            "US" => Ok(PublicHolidays::UnitedStates),
            _ => Err(UnknownCountry(code.to_string())),
        }
    }

    /// Is `day` a public holiday of the whole country?
    pub fn is_holiday(self, day: NaiveDate) -> bool {
        use bdays::calendars::de::GermanState::*;
        match self {
            PublicHolidays::Brazil => bdays::calendars::brazil::BRSettlement.is_holiday(day),
            PublicHolidays::UnitedStates => bdays::calendars::us::USSettlement.is_holiday(day),
            // A German public holiday is one every state keeps.
            PublicHolidays::Germany => [BW, BY, BE, BB, HB, HH, HE, MV, NI, NW, RP, SL, SN, ST, SH, TH]
                .iter()
                .all(|state| state.is_holiday(day)),
        }
    }
}

/// Is this day a business day: not a Saturday, Sunday or listed holiday? (Without a country's public holidays: see
/// [`BusinessCalendar`].)
pub fn is_business_day(day: NaiveDate, holidays: &BTreeSet<NaiveDate>) -> bool {
    !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) && !holidays.contains(&day)
}

/// Weekends, the country's public holidays and the listed holidays are not business days.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BusinessCalendar {
    holidays: BTreeSet<NaiveDate>,
    country: Option<PublicHolidays>,
}

impl BusinessCalendar {
    pub fn new(holidays: impl IntoIterator<Item = NaiveDate>) -> Self {
        BusinessCalendar { holidays: holidays.into_iter().collect(), country: None }
    }

    /// The same calendar that also keeps the country's public holidays.
    pub fn with_country(self, country: PublicHolidays) -> Self {
        BusinessCalendar { country: Some(country), ..self }
    }

    /// The intake's calendar: its holiday list and, when it names a known country, that country's public holidays.
    /// An unknown country code adds no holidays here; the intake's validator reports it.
    pub fn of_intake(intake: &Intake) -> Self {
        let calendar = BusinessCalendar::new(intake.holidays.iter().copied());
        match intake.country.as_deref().map(PublicHolidays::of) {
            Some(Ok(country)) => calendar.with_country(country),
            _ => calendar,
        }
    }

    pub fn is_business_day(&self, day: NaiveDate) -> bool {
        is_business_day(day, &self.holidays) && !self.country.is_some_and(|c| c.is_holiday(day))
    }

    /// The day itself when it is a business day, else the next one.
    pub fn on_or_after(&self, mut day: NaiveDate) -> NaiveDate {
        while !self.is_business_day(day) {
            day = day + Days::new(1);
        }
        day
    }

    /// The business day `n` business days after `day` (`n` = 0: `day` moved onto a business day).
    pub fn add_business_days(&self, day: NaiveDate, n: u32) -> NaiveDate {
        let mut current = self.on_or_after(day);
        for _ in 0..n {
            current = self.on_or_after(current + Days::new(1));
        }
        current
    }
}

/// The six milestone dates of an intake, in order. Every gap is at least one business day, so the dates strictly
/// increase even when the buyer enters a zero.
pub fn milestone_dates(intake: &Intake) -> Vec<(MilestoneKind, NaiveDate)> {
    let calendar = BusinessCalendar::of_intake(intake);
    let t = &intake.timeline;
    let publication = calendar.on_or_after(t.publication);
    let gaps = [t.question_days, t.submission_days, t.evaluation_days, t.award_days, t.contract_start_days];
    let mut out = vec![(MilestoneKind::Publication, publication)];
    let mut day = publication;
    for (kind, gap) in MilestoneKind::ALL[1..].iter().zip(gaps) {
        day = calendar.add_business_days(day, gap.max(1));
        out.push((*kind, day));
    }
    out
}

/// Milestones from the computed dates and the rationales the model (or the buyer) wrote.
pub fn milestones_with_rationales(
    intake: &Intake,
    rationale: impl Fn(MilestoneKind) -> Option<String>,
) -> Vec<Milestone> {
    milestone_dates(intake)
        .into_iter()
        .map(|(kind, date)| Milestone {
            kind,
            date,
            rationale: rationale(kind).filter(|r| !r.trim().is_empty()).unwrap_or_else(|| "(no rationale yet)".into()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prep::artifact::Timeline;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn business_days_skip_weekends_and_holidays() {
        // 2026-12-24 is a Thursday; 25th a listed holiday, 26-27 the weekend.
        let calendar = BusinessCalendar::new([d(2026, 12, 25)]);
        assert_eq!(calendar.add_business_days(d(2026, 12, 24), 1), d(2026, 12, 28));
        assert_eq!(calendar.add_business_days(d(2026, 12, 24), 0), d(2026, 12, 24));
        assert_eq!(calendar.on_or_after(d(2026, 12, 26)), d(2026, 12, 28));
        assert_eq!(calendar.add_business_days(d(2026, 12, 21), 5), d(2026, 12, 29));
    }

    #[test]
    fn a_question_window_over_christmas_moves_past_the_countrys_public_holidays() {
        // Publication on Monday 21 December 2026, four business days for questions. Without the country the
        // deadline falls on Friday 25 December, Christmas Day; in Germany the 25th and 26th are public holidays, so
        // it moves to Monday the 28th; the organization's own 24 December moves it once more.
        let mut intake = crate::prep::tests_support::intake_with(Timeline {
            publication: d(2026, 12, 21),
            question_days: 4,
            submission_days: 10,
            evaluation_days: 5,
            award_days: 5,
            contract_start_days: 5,
        });
        assert_eq!(milestone_dates(&intake)[1].1, d(2026, 12, 25), "weekends only: the window runs through Christmas");
        intake.country = Some("de".into());
        let germany = BusinessCalendar::of_intake(&intake);
        for day in [d(2026, 12, 25), d(2026, 12, 26), d(2027, 1, 1)] {
            assert!(!germany.is_business_day(day), "{day} is a public holiday in Germany");
        }
        assert!(germany.is_business_day(d(2026, 12, 24)), "Christmas Eve is a working day in Germany");
        assert_eq!(milestone_dates(&intake)[1].1, d(2026, 12, 28), "past the 25th and 26th");
        intake.holidays = vec![d(2026, 12, 24)];
        assert_eq!(milestone_dates(&intake)[1].1, d(2026, 12, 29), "and past the organization's own day");
        let dates = milestone_dates(&intake);
        let calendar = BusinessCalendar::of_intake(&intake);
        assert!(dates.iter().all(|(_, day)| calendar.is_business_day(*day)), "{dates:?}");
    }

    #[test]
    fn each_known_country_keeps_its_own_holidays_and_an_unknown_code_is_refused_in_words() {
        let christmas = d(2026, 12, 25);
        for code in PUBLIC_HOLIDAY_COUNTRIES {
            assert!(PublicHolidays::of(code).unwrap().is_holiday(christmas), "{code}");
        }
        assert!(
            PublicHolidays::of("US").unwrap().is_holiday(d(2026, 7, 3)),
            "4 July 2026 is a Saturday: observed Friday"
        );
        assert!(!PublicHolidays::of("DE").unwrap().is_holiday(d(2026, 7, 3)));
        assert!(PublicHolidays::of("DE").unwrap().is_holiday(d(2026, 10, 3)), "German Unity Day");
        assert!(!PublicHolidays::of("DE").unwrap().is_holiday(d(2026, 1, 6)), "Epiphany is kept by three states only");
        let err = PublicHolidays::of("XX").unwrap_err();
        assert!(err.to_string().contains("\"XX\"") && err.to_string().contains("BR, DE, US"), "{err}");
        // An intake with an unknown code keeps its own list and weekends.
        let mut intake = crate::prep::tests_support::intake_with(Timeline {
            publication: d(2026, 12, 23),
            question_days: 1,
            submission_days: 1,
            evaluation_days: 1,
            award_days: 1,
            contract_start_days: 1,
        });
        intake.country = Some("XX".into());
        assert_eq!(milestone_dates(&intake)[1].1, d(2026, 12, 24));
        assert_eq!(deadline_at(d(2027, 1, 4)).to_rfc3339(), "2027-01-04T17:00:00+00:00");
    }

    #[test]
    fn milestones_follow_the_timeline_in_order_on_business_days() {
        let intake = crate::prep::tests_support::intake_with(Timeline {
            publication: d(2027, 1, 2), // a Saturday: moves to Monday the 4th
            question_days: 5,
            submission_days: 10,
            evaluation_days: 0,
            award_days: 3,
            contract_start_days: 10,
        });
        let dates = milestone_dates(&intake);
        let calendar = BusinessCalendar::new(intake.holidays.clone());
        assert_eq!(dates[0], (MilestoneKind::Publication, d(2027, 1, 4)));
        assert_eq!(dates[1].1, d(2027, 1, 11));
        assert!(dates.windows(2).all(|w| w[0].1 < w[1].1), "{dates:?}");
        assert!(dates.iter().all(|(_, day)| calendar.is_business_day(*day)));
        assert_eq!(dates.iter().map(|(k, _)| *k).collect::<Vec<_>>(), MilestoneKind::ALL.to_vec());
    }
}
