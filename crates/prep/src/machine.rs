//! Each artifact's state machine: a plain enum and a pure [`step`]. No I/O, no clock: the package (and the drafting
//! driver) performs the commands and feeds back events.
//!
//! ```text
//! empty ──DraftStarted──▶ drafting ──Drafted──▶ drafted ──Validated──▶ valid ──Approve(hash seen = current)──▶ approved
//!            (from any      │  └──DraftFailed──▶ the state before (content untouched)      └──▶ invalid(errors)
//!             state)        ▼
//! any state with content ──Edited──▶ drafted (approval cleared; downstream marked stale)
//! any state with content ──UpstreamChanged──▶ stale (approval cleared)
//! ```

pub use pactwise_rules::prep::{ArtifactState, Violation};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A model draft starts.
    DraftStarted,
    /// The draft arrived and was stored as the content.
    Drafted,
    /// The model refused, was cut off or answered out of shape: nothing was stored.
    DraftFailed,
    /// A person changed the content.
    Edited,
    /// The validators ran on the current content.
    Validated { violations: Vec<Violation> },
    /// The buyer approves the content whose hash they saw; `current` is the hash of the content now.
    Approve { seen: String, current: String },
    /// An artifact this one depends on changed.
    UpstreamChanged,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Draft this artifact through the gateway.
    CallModel,
    /// Run the validators on the content.
    Validate,
    /// Every artifact downstream becomes stale (and loses its approval).
    MarkDownstreamStale,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    #[error("cannot {event} while the artifact is {state}")]
    NotAllowed { state: &'static str, event: &'static str },
    #[error("the content changed since you saw it (you saw {seen}, it is now {current}); review it again")]
    ApprovalOutdated { seen: String, current: String },
}

fn event_name(event: &Event) -> &'static str {
    match event {
        Event::DraftStarted => "start a draft",
        Event::Drafted => "store a draft",
        Event::DraftFailed => "fail a draft",
        Event::Edited => "edit",
        Event::Validated { .. } => "validate",
        Event::Approve { .. } => "approve",
        Event::UpstreamChanged => "mark stale",
    }
}

/// The next state and the commands to perform. Pure.
pub fn step(state: &ArtifactState, event: &Event) -> Result<(ArtifactState, Vec<Command>), StepError> {
    use ArtifactState as S;
    let refuse = || StepError::NotAllowed { state: state.name(), event: event_name(event) };
    Ok(match (state, event) {
        (S::Drafting { .. }, Event::DraftStarted) => return Err(refuse()),
        (_, Event::DraftStarted) => (S::Drafting { previous: Box::new(state.clone()) }, vec![Command::CallModel]),
        (S::Drafting { .. }, Event::Drafted) => (S::Drafted, vec![Command::Validate, Command::MarkDownstreamStale]),
        (S::Drafting { previous }, Event::DraftFailed) => ((**previous).clone(), vec![]),
        (S::Drafting { .. }, _) if *event != Event::UpstreamChanged => return Err(refuse()),
        (S::Drafting { .. }, Event::UpstreamChanged) => (S::Drafting { previous: Box::new(S::Stale) }, vec![]),
        (_, Event::Drafted | Event::DraftFailed) => return Err(refuse()),
        (_, Event::Edited) => (S::Drafted, vec![Command::Validate, Command::MarkDownstreamStale]),
        (S::Empty, Event::Validated { .. } | Event::Approve { .. }) => return Err(refuse()),
        (S::Empty, Event::UpstreamChanged) => (S::Empty, vec![]),
        (_, Event::UpstreamChanged) => (S::Stale, vec![]),
        (S::Approved { hash }, Event::Validated { violations }) if violations.is_empty() => {
            (S::Approved { hash: hash.clone() }, vec![])
        }
        (_, Event::Validated { violations }) if violations.is_empty() => (S::Valid, vec![]),
        (_, Event::Validated { violations }) => (S::Invalid { errors: violations.clone() }, vec![]),
        (S::Valid, Event::Approve { seen, current }) if seen == current => {
            (S::Approved { hash: current.clone() }, vec![])
        }
        (S::Valid, Event::Approve { seen, current }) => {
            return Err(StepError::ApprovalOutdated { seen: seen.clone(), current: current.clone() });
        }
        (S::Approved { hash }, Event::Approve { seen, current }) if seen == current && hash == current => {
            (state.clone(), vec![])
        }
        (_, Event::Approve { .. }) => return Err(refuse()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArtifactKind;
    use ArtifactState as S;

    fn violation() -> Violation {
        Violation {
            rule: "weights_not_hundred".into(),
            artifact: ArtifactKind::Criteria,
            subject: None,
            message: "weights sum to 9000".into(),
        }
    }

    fn approved(h: &str) -> S {
        S::Approved { hash: h.into() }
    }

    fn approve(seen: &str, current: &str) -> Event {
        Event::Approve { seen: seen.into(), current: current.into() }
    }

    #[test]
    fn the_transition_table() {
        let drafting_from = |s: S| S::Drafting { previous: Box::new(s) };
        let ok = |s: S, c: Vec<Command>| Ok((s, c));
        type Outcome = Result<(S, Vec<Command>), StepError>;
        let cases: Vec<(S, Event, Outcome)> = vec![
            (S::Empty, Event::DraftStarted, ok(drafting_from(S::Empty), vec![Command::CallModel])),
            (approved("h1"), Event::DraftStarted, ok(drafting_from(approved("h1")), vec![Command::CallModel])),
            (
                drafting_from(S::Empty),
                Event::Drafted,
                ok(S::Drafted, vec![Command::Validate, Command::MarkDownstreamStale]),
            ),
            // A failed draft leaves the artifact exactly as it was, approval included.
            (drafting_from(approved("h1")), Event::DraftFailed, ok(approved("h1"), vec![])),
            (drafting_from(S::Empty), Event::DraftFailed, ok(S::Empty, vec![])),
            (S::Drafted, Event::Validated { violations: vec![] }, ok(S::Valid, vec![])),
            (
                S::Drafted,
                Event::Validated { violations: vec![violation()] },
                ok(S::Invalid { errors: vec![violation()] }, vec![]),
            ),
            (S::Stale, Event::Validated { violations: vec![] }, ok(S::Valid, vec![])),
            (S::Valid, approve("h1", "h1"), ok(approved("h1"), vec![])),
            // Approval is bound to the hash the buyer saw.
            (
                S::Valid,
                approve("h0", "h1"),
                Err(StepError::ApprovalOutdated { seen: "h0".into(), current: "h1".into() }),
            ),
            (
                S::Invalid { errors: vec![violation()] },
                approve("h1", "h1"),
                Err(StepError::NotAllowed { state: "invalid", event: "approve" }),
            ),
            (S::Stale, approve("h1", "h1"), Err(StepError::NotAllowed { state: "stale", event: "approve" })),
            (S::Drafted, approve("h1", "h1"), Err(StepError::NotAllowed { state: "drafted", event: "approve" })),
            // A change clears approval and marks everything downstream stale.
            (approved("h1"), Event::Edited, ok(S::Drafted, vec![Command::Validate, Command::MarkDownstreamStale])),
            (S::Empty, Event::Edited, ok(S::Drafted, vec![Command::Validate, Command::MarkDownstreamStale])),
            (approved("h1"), Event::UpstreamChanged, ok(S::Stale, vec![])),
            (S::Valid, Event::UpstreamChanged, ok(S::Stale, vec![])),
            (S::Empty, Event::UpstreamChanged, ok(S::Empty, vec![])),
            (drafting_from(approved("h1")), Event::UpstreamChanged, ok(drafting_from(S::Stale), vec![])),
            // Re-validating approved content that still passes keeps the approval; failing clears it.
            (approved("h1"), Event::Validated { violations: vec![] }, ok(approved("h1"), vec![])),
            (
                approved("h1"),
                Event::Validated { violations: vec![violation()] },
                ok(S::Invalid { errors: vec![violation()] }, vec![]),
            ),
            (
                drafting_from(S::Empty),
                Event::DraftStarted,
                Err(StepError::NotAllowed { state: "drafting", event: "start a draft" }),
            ),
            (drafting_from(S::Empty), Event::Edited, Err(StepError::NotAllowed { state: "drafting", event: "edit" })),
            (S::Valid, Event::Drafted, Err(StepError::NotAllowed { state: "valid", event: "store a draft" })),
            (
                S::Empty,
                Event::Validated { violations: vec![] },
                Err(StepError::NotAllowed { state: "empty", event: "validate" }),
            ),
        ];
        for (i, (state, event, expected)) in cases.into_iter().enumerate() {
            assert_eq!(step(&state, &event), expected, "case {i}: {state:?} + {event:?}");
        }
    }
}
