//! Milestone dates, computed in code from the intake's timeline on a business-day calendar (weekends plus the
//! intake's holiday list). The model never writes a date; it writes only the rationale beside each one.

use super::artifact::{Intake, Milestone, MilestoneKind};
use chrono::{Datelike, Days, NaiveDate, Weekday};
use std::collections::BTreeSet;

/// Is this day a business day: not a Saturday, Sunday or listed holiday?
pub fn is_business_day(day: NaiveDate, holidays: &BTreeSet<NaiveDate>) -> bool {
    !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) && !holidays.contains(&day)
}

/// Weekends and listed holidays are not business days.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BusinessCalendar {
    holidays: BTreeSet<NaiveDate>,
}

impl BusinessCalendar {
    pub fn new(holidays: impl IntoIterator<Item = NaiveDate>) -> Self {
        BusinessCalendar { holidays: holidays.into_iter().collect() }
    }

    pub fn is_business_day(&self, day: NaiveDate) -> bool {
        is_business_day(day, &self.holidays)
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
    let calendar = BusinessCalendar::new(intake.holidays.iter().copied());
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
