//! Which vendor link a contract keeps: the one rule the store applies to a local pipeline run and to a link synced
//! from another desktop. A link a person set is never replaced by an automatic one (the pipeline's match by name),
//! whatever the order in which they arrive; between two links of the same kind the later stamp wins
//! ([`crate::lww::wins`]). Links are ordered by (kind, stamp), so the merge is commutative, associative and
//! idempotent like every last-writer-wins field: desktops that saw the same links in any order keep the same one.

use crate::lww::{self, Hlc};

/// Who set a contract's vendor link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkKind {
    /// The pipeline matched the counterparty to a vendor by name (or found none).
    Auto,
    /// A person chose the vendor.
    Person,
}

impl LinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Auto => "auto",
            LinkKind::Person => "person",
        }
    }

    pub fn parse(text: &str) -> Option<LinkKind> {
        match text {
            "auto" => Some(LinkKind::Auto),
            "person" => Some(LinkKind::Person),
            _ => None,
        }
    }
}

/// Does a link of kind `incoming` stamped `incoming_hlc` replace the contract's current link (None: never set)?
/// A person's link beats an automatic one in either order; the same kind goes to the later stamp.
pub fn wins(incoming: (LinkKind, &Hlc), current: Option<(LinkKind, &Hlc)>) -> bool {
    match current {
        None => true,
        Some((kind, hlc)) if kind == incoming.0 => lww::wins(incoming.1, Some(hlc)),
        Some((kind, _)) => incoming.0 > kind,
    }
}

/// May a local pipeline run (an automatic link, made now) replace the contract's current link? Never a person's.
/// The same rule as [`wins`] for a write stamped after every other.
pub fn automatic_may_replace(current: Option<LinkKind>) -> bool {
    current != Some(LinkKind::Person)
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn hlc(ms: u64, node: u8) -> Hlc {
        Hlc { wall_ms: ms, counter: 0, node: Uuid::from_bytes([node; 16]) }
    }

    /// Every order of arrival of the same links ends on the same link.
    #[test]
    fn a_persons_link_is_never_replaced_by_an_automatic_one_in_either_order() {
        let person = (LinkKind::Person, hlc(100, 1));
        let later_auto = (LinkKind::Auto, hlc(900, 2));
        let later_person = (LinkKind::Person, hlc(500, 3));
        let links = [person, later_auto, later_person];
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        for order in orders {
            let mut kept: Option<(LinkKind, Hlc)> = None;
            for i in order {
                let (kind, stamp) = links[i];
                if wins((kind, &stamp), kept.as_ref().map(|(k, h)| (*k, h))) {
                    kept = Some((kind, stamp));
                }
            }
            assert_eq!(kept, Some(later_person), "order {order:?}");
        }
        // Two orders of a person's link and a later automatic one.
        let p = (LinkKind::Person, &person.1);
        let a = (LinkKind::Auto, &later_auto.1);
        assert!(!wins(a, Some(p)), "an automatic link arriving after a person's is not taken");
        assert!(wins(p, Some(a)), "a person's link arriving after an automatic one replaces it");
        assert!(!wins(p, Some(p)), "the same link again changes nothing");
        assert!(wins((LinkKind::Auto, &hlc(901, 2)), Some(a)), "between automatic links the later stamp wins");
    }

    #[test]
    fn a_local_pipeline_run_keeps_a_persons_link() {
        assert!(!automatic_may_replace(Some(LinkKind::Person)));
        assert!(automatic_may_replace(Some(LinkKind::Auto)));
        assert!(automatic_may_replace(None));
        assert_eq!(LinkKind::parse(LinkKind::Person.as_str()), Some(LinkKind::Person));
        assert_eq!(LinkKind::parse("robot"), None);
    }
}
