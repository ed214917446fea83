//! Typed ids. Every id is a UUID (v7 for new rows, so they sort by creation time) wrapped in its own type, so an
//! organization id can never be passed where a document id is expected.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
            schemars::JsonSchema, specta::Type,
        )]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }

            pub fn from_uuid(uuid: Uuid) -> Self {
                Self(uuid)
            }

            pub fn as_uuid(&self) -> Uuid {
                self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s.trim()).map(Self)
            }
        }
    };
}

id_type!(
    /// An organization (tenant).
    OrgId
);
id_type!(
    /// A person who can sign in.
    UserId
);
id_type!(
    /// An imported document (one per organization and content hash).
    DocumentId
);
id_type!(
    /// A local session: who is signed in, in which organization.
    SessionId
);
id_type!(
    /// A workflow run (one execution of a graph).
    RunId
);
id_type!(
    /// A pending or resolved approval step of a run.
    ApprovalId
);
id_type!(
    /// A task in an organization's queue.
    TaskId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_text_and_json() {
        let id = DocumentId::new();
        let parsed: DocumentId = id.to_string().parse().unwrap();
        assert_eq!(parsed, id);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<DocumentId>(&json).unwrap(), id);
    }

    #[test]
    fn new_ids_sort_by_creation() {
        let a = OrgId::new();
        let b = OrgId::new();
        assert!(a < b);
    }
}
