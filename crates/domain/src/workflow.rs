//! Statuses of workflow runs, approvals and queued tasks, shared by the store, the engine and the api.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s)
                    .ok_or_else(|| format!("unknown {} {s:?}", stringify!($name)))
            }
        }
    };
}

text_enum!(
    /// Where a workflow run stands.
    RunStatus {
        /// Has work to do now (or as soon as a worker holds its lease).
        Running => "running",
        /// Paused on an approval, a timer or a child run.
        Waiting => "waiting",
        /// A step failed for good; completed steps are being undone in reverse order.
        Compensating => "compensating",
        Succeeded => "succeeded",
        Failed => "failed",
        Cancelled => "cancelled",
    }
);

impl RunStatus {
    /// Is the run over (nothing will ever change it again)?
    pub fn is_terminal(self) -> bool {
        matches!(self, RunStatus::Succeeded | RunStatus::Failed | RunStatus::Cancelled)
    }
}

text_enum!(
    /// Where an approval step stands.
    ApprovalStatus {
        Pending => "pending",
        Approved => "approved",
        Rejected => "rejected",
        /// Its run was cancelled or stopped before anyone decided.
        Cancelled => "cancelled",
    }
);

text_enum!(
    /// What an approver decided.
    Decision {
        Approve => "approve",
        Reject => "reject",
    }
);

text_enum!(
    /// Where a queued task stands.
    TaskStatus {
        Pending => "pending",
        Processing => "processing",
        Done => "done",
        Failed => "failed",
        Cancelled => "cancelled",
    }
);

text_enum!(
    /// Where a vendor record stands. `Merged` is set only by a merge a person confirmed: the record is kept (its
    /// history and audit stay readable) and points at the vendor it was merged into.
    VendorStatus {
        /// Known, not yet being onboarded.
        Prospective => "prospective",
        /// An onboarding run is deciding on it.
        Onboarding => "onboarding",
        /// Onboarded and approved: contracts and orders may go to it.
        Active => "active",
        /// Declined or stopped: no new business.
        Blocked => "blocked",
        /// Merged into another vendor record (a duplicate).
        Merged => "merged",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_through_their_names() {
        for s in RunStatus::ALL {
            assert_eq!(s.as_str().parse::<RunStatus>().unwrap(), *s);
            assert_eq!(serde_json::to_string(s).unwrap(), format!("\"{}\"", s.as_str()));
        }
        for s in TaskStatus::ALL {
            assert_eq!(s.as_str().parse::<TaskStatus>().unwrap(), *s);
        }
        assert_eq!("approve".parse::<Decision>().unwrap(), Decision::Approve);
        assert!("maybe".parse::<Decision>().is_err());
        assert!(RunStatus::Cancelled.is_terminal() && !RunStatus::Waiting.is_terminal());
    }
}
