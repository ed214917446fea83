//! A published tender's machine: what may happen when, decided by the service's clock. Pure: `step(tender, event)`
//! returns the next tender and what the driver must do, or why the event is refused.
//!
//! Phases: `Open` (questions until their deadline, submissions until theirs) → after the submission deadline the
//! buyer opens the technical envelopes (`TechnicalOpened`) → evaluators score and the buyer locks the technical
//! evaluation (`TechnicalLocked`) → price envelopes open (`PriceOpened`) → a person awards (`Awarded`), with a reason.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use pactwise_rules::prep::{Milestone, MilestoneKind, deadline_at};

/// The two deadlines the service enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Deadlines {
    /// Questions are accepted before this instant.
    pub questions_close: DateTime<Utc>,
    /// Submissions (and replacements) are accepted before this instant.
    pub submissions_close: DateTime<Utc>,
}

/// Why deadlines could not be computed from the package.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeadlineError {
    #[error("the package has no {0} milestone; add it in Prep Studio before publishing")]
    Missing(&'static str),
    #[error("the deadline for questions ({questions}) must fall before the submission deadline ({submissions})")]
    QuestionsAfterSubmissions { questions: NaiveDate, submissions: NaiveDate },
    #[error("the submission deadline ({0}) has already passed; move it in Prep Studio and publish again")]
    InThePast(NaiveDate),
}

impl Deadlines {
    /// The deadlines from the package's milestones (dates computed in code on the business-day calendar), each
    /// closing at the time the exported RFP states (`pactwise_rules::prep::deadline_at`, one rule for the document
    /// and the service), checked against `now`.
    pub fn from_milestones(milestones: &[Milestone], now: DateTime<Utc>) -> Result<Self, DeadlineError> {
        let day = |kind: MilestoneKind| {
            milestones.iter().find(|m| m.kind == kind).map(|m| m.date).ok_or(DeadlineError::Missing(kind.title()))
        };
        let questions = day(MilestoneKind::QuestionsDeadline)?;
        let submissions = day(MilestoneKind::SubmissionDeadline)?;
        if questions >= submissions {
            return Err(DeadlineError::QuestionsAfterSubmissions { questions, submissions });
        }
        let deadlines =
            Deadlines { questions_close: deadline_at(questions), submissions_close: deadline_at(submissions) };
        if deadlines.submissions_close <= now {
            return Err(DeadlineError::InThePast(submissions));
        }
        Ok(deadlines)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Open,
    TechnicalOpened,
    TechnicalLocked,
    PriceOpened,
    Awarded,
}

/// A published tender as the machine sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tender {
    pub phase: Phase,
    pub deadlines: Deadlines,
    /// Each invited vendor, and how many submissions it has made (the last one counts).
    pub vendors: BTreeMap<String, u32>,
    /// How many times the deadlines were extended.
    pub extensions: u32,
    pub awarded_to: Option<String>,
    /// Each extension as announced, oldest first (the tender's public record lists them).
    #[serde(default)]
    pub extension_log: Vec<ExtensionRecord>,
    /// The award as a person made it.
    #[serde(default)]
    pub award: Option<AwardRecord>,
    /// The desktop that keeps the buyer's opening key (its name as the publishing member gave it): a member on
    /// another desktop is told where the envelopes can be opened. Never changed by a step.
    #[serde(default)]
    pub opening_key_holder: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExtensionRecord {
    pub at: DateTime<Utc>,
    /// The deadlines it replaced.
    pub from: Deadlines,
    pub to: Deadlines,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AwardRecord {
    pub vendor: String,
    pub reason: String,
    pub at: DateTime<Utc>,
    /// The awarded price total and currency, as the buyer's desktop computed it from the price envelope.
    #[serde(default)]
    pub price: Option<(String, String)>,
}

/// What may happen to a tender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Invite {
        vendor: String,
    },
    Ask {
        vendor: String,
        at: DateTime<Utc>,
    },
    Submit {
        vendor: String,
        at: DateTime<Utc>,
    },
    Extend {
        to: Deadlines,
        reason: String,
        at: DateTime<Utc>,
    },
    OpenTechnical {
        at: DateTime<Utc>,
    },
    /// `unscored` lists the vendors some criterion of which has no score with a reason yet.
    LockTechnical {
        unscored: Vec<String>,
    },
    OpenPrice,
    Award {
        vendor: String,
        reason: String,
        at: DateTime<Utc>,
    },
}

/// What the driver does after a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Keep the submission under this number (earlier ones stay, audited; the last counts).
    StoreSubmission {
        vendor: String,
        number: u32,
    },
    AcceptQuestion {
        vendor: String,
    },
    /// Tell every invited vendor the new deadlines.
    AnnounceExtension {
        to: Deadlines,
        reason: String,
    },
    /// Unwrap the deadline key and remove the service's layer from the technical envelopes.
    ReleaseTechnical,
    ReleasePrice,
    RecordAward {
        vendor: String,
        reason: String,
    },
}

/// Why an event is refused; the message is for the person who tried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("this vendor is not invited to the tender")]
    NotInvited,
    #[error("questions closed at {0}")]
    QuestionsClosed(DateTime<Utc>),
    #[error("submissions closed at {0}; a late submission cannot be accepted")]
    SubmissionsClosed(DateTime<Utc>),
    #[error("an extension must move the submission deadline later, not earlier, and keep questions before it")]
    ExtensionNotLater,
    #[error("the submission deadline has passed; it can no longer be extended")]
    ExtensionTooLate,
    #[error("say why the deadline is extended; every invited vendor sees the reason")]
    NoReason,
    #[error("the envelopes open only after the submission deadline ({0})")]
    NotYetClosed(DateTime<Utc>),
    #[error("that is not possible at this stage of the tender ({0:?})")]
    WrongPhase(Phase),
    #[error("score every criterion of every vendor, each with a reason, before locking ({0} not done)")]
    NotEveryoneScored(String),
    #[error("the award needs a reason, in words")]
    AwardWithoutReason,
    #[error("the award must go to a vendor that submitted")]
    AwardToNonBidder,
}

impl Tender {
    pub fn new(deadlines: Deadlines) -> Self {
        Tender {
            phase: Phase::Open,
            deadlines,
            vendors: BTreeMap::new(),
            extensions: 0,
            awarded_to: None,
            extension_log: Vec::new(),
            award: None,
            opening_key_holder: String::new(),
        }
    }

    /// The service may unwrap the tender's deadline key only from the submission deadline on.
    pub fn may_release_deadline_key(&self, now: DateTime<Utc>) -> bool {
        now >= self.deadlines.submissions_close
    }

    /// How many vendors have submitted: visible before opening; the content is not.
    pub fn submission_count(&self) -> usize {
        self.vendors.values().filter(|count| **count > 0).count()
    }
}

/// The machine: the next tender and the commands, or why not.
pub fn step(tender: &Tender, event: Event) -> Result<(Tender, Vec<Command>), Refused> {
    let mut next = tender.clone();
    let in_phase = |phase: Phase| if tender.phase == phase { Ok(()) } else { Err(Refused::WrongPhase(tender.phase)) };
    let commands = match event {
        Event::Invite { vendor } => {
            in_phase(Phase::Open)?;
            next.vendors.entry(vendor).or_insert(0);
            Vec::new()
        }
        Event::Ask { vendor, at } => {
            in_phase(Phase::Open)?;
            invited(tender, &vendor)?;
            if at >= tender.deadlines.questions_close {
                return Err(Refused::QuestionsClosed(tender.deadlines.questions_close));
            }
            vec![Command::AcceptQuestion { vendor }]
        }
        Event::Submit { vendor, at } => {
            invited(tender, &vendor)?;
            if at >= tender.deadlines.submissions_close || tender.phase != Phase::Open {
                return Err(Refused::SubmissionsClosed(tender.deadlines.submissions_close));
            }
            let number = next.vendors.get(&vendor).copied().unwrap_or(0) + 1;
            next.vendors.insert(vendor.clone(), number);
            vec![Command::StoreSubmission { vendor, number }]
        }
        Event::Extend { to, reason, at } => {
            in_phase(Phase::Open)?;
            if at >= tender.deadlines.submissions_close {
                return Err(Refused::ExtensionTooLate);
            }
            if reason.trim().is_empty() {
                return Err(Refused::NoReason);
            }
            if to.submissions_close <= tender.deadlines.submissions_close
                || to.questions_close < tender.deadlines.questions_close
                || to.questions_close >= to.submissions_close
            {
                return Err(Refused::ExtensionNotLater);
            }
            next.deadlines = to;
            next.extensions += 1;
            next.extension_log.push(ExtensionRecord { at, from: tender.deadlines, to, reason: reason.clone() });
            vec![Command::AnnounceExtension { to, reason }]
        }
        Event::OpenTechnical { at } => {
            in_phase(Phase::Open)?;
            if !tender.may_release_deadline_key(at) {
                return Err(Refused::NotYetClosed(tender.deadlines.submissions_close));
            }
            next.phase = Phase::TechnicalOpened;
            vec![Command::ReleaseTechnical]
        }
        Event::LockTechnical { unscored } => {
            in_phase(Phase::TechnicalOpened)?;
            if !unscored.is_empty() {
                return Err(Refused::NotEveryoneScored(unscored.join(", ")));
            }
            next.phase = Phase::TechnicalLocked;
            Vec::new()
        }
        Event::OpenPrice => {
            in_phase(Phase::TechnicalLocked)?;
            next.phase = Phase::PriceOpened;
            vec![Command::ReleasePrice]
        }
        Event::Award { vendor, reason, at } => {
            in_phase(Phase::PriceOpened)?;
            if reason.trim().is_empty() {
                return Err(Refused::AwardWithoutReason);
            }
            if tender.vendors.get(&vendor).copied().unwrap_or(0) == 0 {
                return Err(Refused::AwardToNonBidder);
            }
            next.phase = Phase::Awarded;
            next.awarded_to = Some(vendor.clone());
            next.award = Some(AwardRecord { vendor: vendor.clone(), reason: reason.clone(), at, price: None });
            vec![Command::RecordAward { vendor, reason }]
        }
    };
    Ok((next, commands))
}

fn invited(tender: &Tender, vendor: &str) -> Result<(), Refused> {
    if tender.vendors.contains_key(vendor) { Ok(()) } else { Err(Refused::NotInvited) }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;

    fn at(hour: u32, minute: u32, second: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2027, 3, 10, hour, minute, second).unwrap()
    }

    fn tender() -> Tender {
        let deadlines = Deadlines { questions_close: at(9, 0, 0), submissions_close: at(17, 0, 0) };
        let mut tender = Tender::new(deadlines);
        for vendor in ["acme", "globex"] {
            tender = step(&tender, Event::Invite { vendor: vendor.into() }).unwrap().0;
        }
        tender
    }

    #[test]
    fn a_submission_one_second_late_is_refused_and_the_last_before_counts() {
        let tender = tender();
        let (tender, commands) = step(&tender, Event::Submit { vendor: "acme".into(), at: at(16, 59, 59) }).unwrap();
        assert_eq!(commands, vec![Command::StoreSubmission { vendor: "acme".into(), number: 1 }]);
        let (tender, commands) = step(&tender, Event::Submit { vendor: "acme".into(), at: at(16, 59, 59) }).unwrap();
        assert_eq!(commands, vec![Command::StoreSubmission { vendor: "acme".into(), number: 2 }]);
        let late = step(&tender, Event::Submit { vendor: "globex".into(), at: at(17, 0, 1) }).unwrap_err();
        assert_eq!(late, Refused::SubmissionsClosed(at(17, 0, 0)));
        assert_eq!(step(&tender, Event::Submit { vendor: "globex".into(), at: at(17, 0, 0) }).unwrap_err(), late);
        assert_eq!(tender.submission_count(), 1);
        let stranger = step(&tender, Event::Submit { vendor: "initech".into(), at: at(10, 0, 0) }).unwrap_err();
        assert_eq!(stranger, Refused::NotInvited);
    }

    #[test]
    fn envelopes_open_in_order_and_only_after_the_deadline() {
        let tender = tender();
        let (tender, _) = step(&tender, Event::Submit { vendor: "acme".into(), at: at(12, 0, 0) }).unwrap();
        assert!(!tender.may_release_deadline_key(at(16, 59, 59)));
        assert_eq!(
            step(&tender, Event::OpenTechnical { at: at(16, 0, 0) }).unwrap_err(),
            Refused::NotYetClosed(at(17, 0, 0))
        );
        assert_eq!(step(&tender, Event::OpenPrice).unwrap_err(), Refused::WrongPhase(Phase::Open));
        let (tender, commands) = step(&tender, Event::OpenTechnical { at: at(17, 0, 0) }).unwrap();
        assert_eq!(commands, vec![Command::ReleaseTechnical]);
        assert_eq!(step(&tender, Event::OpenPrice).unwrap_err(), Refused::WrongPhase(Phase::TechnicalOpened));
        let unscored = step(&tender, Event::LockTechnical { unscored: vec!["acme".into()] }).unwrap_err();
        assert!(unscored.to_string().contains("acme"));
        let (tender, _) = step(&tender, Event::LockTechnical { unscored: vec![] }).unwrap();
        let (tender, commands) = step(&tender, Event::OpenPrice).unwrap();
        assert_eq!(commands, vec![Command::ReleasePrice]);
        assert_eq!(
            step(&tender, Event::Award { vendor: "acme".into(), reason: " ".into(), at: at(18, 0, 0) }).unwrap_err(),
            Refused::AwardWithoutReason
        );
        assert_eq!(
            step(&tender, Event::Award { vendor: "globex".into(), reason: "cheapest".into(), at: at(18, 0, 0) })
                .unwrap_err(),
            Refused::AwardToNonBidder
        );
        let (tender, _) = step(
            &tender,
            Event::Award { vendor: "acme".into(), reason: "Best technical score".into(), at: at(18, 0, 0) },
        )
        .unwrap();
        assert_eq!(tender.awarded_to.as_deref(), Some("acme"));
    }

    #[test]
    fn an_extension_moves_later_with_a_reason_and_only_before_the_deadline() {
        let tender = tender();
        let later = Deadlines { questions_close: at(9, 0, 0), submissions_close: at(17, 0, 0) + Duration::days(2) };
        let no_reason = Event::Extend { to: later, reason: "".into(), at: at(10, 0, 0) };
        assert_eq!(step(&tender, no_reason).unwrap_err(), Refused::NoReason);
        let earlier = Deadlines { submissions_close: at(16, 0, 0), ..later };
        let event = Event::Extend { to: earlier, reason: "x".into(), at: at(10, 0, 0) };
        assert_eq!(step(&tender, event).unwrap_err(), Refused::ExtensionNotLater);
        let too_late = Event::Extend { to: later, reason: "x".into(), at: at(17, 0, 0) };
        assert_eq!(step(&tender, too_late).unwrap_err(), Refused::ExtensionTooLate);
        let event = Event::Extend { to: later, reason: "Site visit moved".into(), at: at(10, 0, 0) };
        let (tender, commands) = step(&tender, event).unwrap();
        assert_eq!(commands, vec![Command::AnnounceExtension { to: later, reason: "Site visit moved".into() }]);
        assert!(step(&tender, Event::Submit { vendor: "acme".into(), at: at(18, 0, 0) }).is_ok());
        assert_eq!(tender.extensions, 1);
    }

    #[test]
    fn deadlines_come_from_the_milestones_at_the_time_the_rfp_states() {
        let milestone = |kind, day| Milestone {
            kind,
            date: NaiveDate::from_ymd_opt(2027, 3, day).unwrap(),
            rationale: String::new(),
        };
        let milestones =
            [milestone(MilestoneKind::QuestionsDeadline, 3), milestone(MilestoneKind::SubmissionDeadline, 10)];
        let deadlines = Deadlines::from_milestones(&milestones, at(0, 0, 0) - Duration::days(30)).unwrap();
        assert_eq!(deadlines.submissions_close, deadline_at(NaiveDate::from_ymd_opt(2027, 3, 10).unwrap()));
        let late = Deadlines::from_milestones(&milestones, deadlines.submissions_close).unwrap_err();
        assert!(matches!(late, DeadlineError::InThePast(_)));
        let missing = Deadlines::from_milestones(&milestones[..1], at(0, 0, 0)).unwrap_err();
        assert_eq!(missing, DeadlineError::Missing("Submission deadline"));
    }
}
