//! Vendor records' rules, one home each, for the store (which keeps the normalised name as a column), the pipeline's
//! vendor match at finalize, the Vendors area and the CLI: the normalised name ([`normalized_name`]: case, accents,
//! punctuation and legal suffixes folded), an identifier's normalised value ([`normalized_identifier`]), duplicate
//! detection over names, aliases and identifiers ([`duplicate_groups`]), what a merge keeps ([`merge`]) and which
//! status a person may set ([`check_status_change`]). Pure: no store, no clock.

use crate::lww::{self, Hlc};
use pactwise_domain::VendorStatus;
use std::collections::{BTreeMap, BTreeSet};

/// Legal-form words dropped from the end of a name (after punctuation is folded: "S.A." is "sa", "Co., Ltd." is
/// "co ltd"). Only at the end, and never the whole name.
const LEGAL_SUFFIXES: &[&str] = &[
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "llc",
    "ltd",
    "limited",
    "plc",
    "lp",
    "llp",
    "gmbh",
    "ag",
    "kg",
    "sa",
    "sas",
    "sarl",
    "srl",
    "spa",
    "bv",
    "nv",
    "oy",
    "ab",
    "pty",
    "pte",
    "kk",
];

/// A vendor's name in the form duplicates are found by: lower case, common accents folded, "&" read as "and",
/// periods and apostrophes dropped inside words ("S.A." → "sa", "O'Neil" → "oneil"), other punctuation a space, a
/// leading "the" and trailing legal-form words ("Inc.", "GmbH", "Co., Ltd.") dropped, spaces collapsed. A name that is
/// nothing but such words keeps them (so "Limited" stays "limited").
pub fn normalized_name(name: &str) -> String {
    let mut folded = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '.' | '\'' | '’' => {}
            '&' => folded.push_str(" and "),
            c if c.is_alphanumeric() => {
                for l in c.to_lowercase() {
                    fold_accent(l, &mut folded);
                }
            }
            _ => folded.push(' '),
        }
    }
    let mut words: Vec<&str> = folded.split_whitespace().collect();
    if words.len() > 1 && words[0] == "the" {
        words.remove(0);
    }
    while words.len() > 1 && words.last().is_some_and(|w| LEGAL_SUFFIXES.contains(w)) {
        words.pop();
    }
    words.join(" ")
}

fn fold_accent(c: char, out: &mut String) {
    let plain = match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' => 'a',
        'ç' | 'č' | 'ć' => 'c',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ę' | 'ě' => 'e',
        'ì' | 'í' | 'î' | 'ï' | 'ī' => 'i',
        'ñ' | 'ń' | 'ň' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' => 'o',
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' => 'u',
        'ý' | 'ÿ' => 'y',
        'š' | 'ś' => 's',
        'ž' | 'ź' | 'ż' => 'z',
        'ł' => 'l',
        'ř' => 'r',
        'ß' => {
            out.push_str("ss");
            return;
        }
        'æ' => {
            out.push_str("ae");
            return;
        }
        c => c,
    };
    out.push(plain);
}

/// An identifier's value as it is compared: letters and digits only, upper case ("de 123.456-7" → "DE1234567").
pub fn normalized_identifier(value: &str) -> String {
    value.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_uppercase).collect()
}

/// An identifier's kind as it is compared: trimmed, lower case, inner spaces as underscores ("Tax ID" → "tax_id").
pub fn normalized_identifier_kind(kind: &str) -> String {
    kind.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join("_")
}

/// An identifier of a vendor (a tax id, a registration number, a DUNS number).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct Identifier {
    /// What it identifies by, e.g. `tax_id` or `registration_number` (compared normalised).
    pub kind: String,
    pub value: String,
}

/// Checks a person's identifier and returns it normalised for storage (kind and value as compared).
pub fn check_identifier(kind: &str, value: &str) -> Result<Identifier, String> {
    let kind = normalized_identifier_kind(kind);
    if kind.is_empty() || kind.len() > 40 {
        return Err("say what the identifier is (e.g. tax id, registration number), in at most 40 characters".into());
    }
    let value_n = normalized_identifier(value);
    if value_n.is_empty() || value_n.len() > 64 {
        return Err(format!("the {} needs its letters or digits (at most 64)", kind.replace('_', " ")));
    }
    Ok(Identifier { kind, value: value.trim().to_owned() })
}

/// A vendor as duplicate detection and merge read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorFacts {
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub identifiers: Vec<Identifier>,
    pub status: VendorStatus,
}

/// What makes two vendors look like one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum SameBecause {
    /// Their names or aliases normalise to these words.
    Name(String),
    /// They carry the same identifier (kind, normalised value).
    Identifier(String, String),
}

/// Vendors that look like one, for a person to confirm or dismiss: ids sorted, and what they share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateGroup {
    pub ids: Vec<String>,
    pub because: Vec<SameBecause>,
}

fn keys(v: &VendorFacts) -> BTreeSet<SameBecause> {
    let mut out = BTreeSet::new();
    for n in std::iter::once(&v.name).chain(&v.aliases) {
        let k = normalized_name(n);
        if !k.is_empty() {
            out.insert(SameBecause::Name(k));
        }
    }
    for i in &v.identifiers {
        let value = normalized_identifier(&i.value);
        if !value.is_empty() {
            out.insert(SameBecause::Identifier(normalized_identifier_kind(&i.kind), value));
        }
    }
    out
}

/// Groups of vendors that share a normalised name or alias, or an identifier (transitively: A~B and B~C make one
/// group). Merged vendors take no part. Groups are ordered by their first id.
pub fn duplicate_groups(vendors: &[VendorFacts]) -> Vec<DuplicateGroup> {
    let live: Vec<&VendorFacts> = vendors.iter().filter(|v| v.status != VendorStatus::Merged).collect();
    let mut parent: Vec<usize> = (0..live.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut by_key: BTreeMap<SameBecause, Vec<usize>> = BTreeMap::new();
    for (i, v) in live.iter().enumerate() {
        for k in keys(v) {
            by_key.entry(k).or_default().push(i);
        }
    }
    for members in by_key.values() {
        for w in members.windows(2) {
            let (a, b) = (root(&mut parent, w[0]), root(&mut parent, w[1]));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut groups: BTreeMap<usize, DuplicateGroup> = BTreeMap::new();
    for (key, members) in by_key.into_iter().filter(|(_, m)| m.len() > 1) {
        let r = root(&mut parent, members[0]);
        let g = groups.entry(r).or_insert_with(|| DuplicateGroup { ids: Vec::new(), because: Vec::new() });
        for m in members {
            if !g.ids.contains(&live[m].id) {
                g.ids.push(live[m].id.clone());
            }
        }
        g.because.push(key);
    }
    let mut out: Vec<DuplicateGroup> = groups
        .into_values()
        .map(|mut g| {
            g.ids.sort();
            g
        })
        .collect();
    out.sort_by(|a, b| a.ids.cmp(&b.ids));
    out
}

/// The record a merge keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The kept vendor's aliases as they are, then the merged-away vendor's name and aliases whose normalised form
    /// the kept vendor does not already carry.
    pub aliases: Vec<String>,
    /// Both vendors' identifiers, each (kind, value) once.
    pub identifiers: Vec<Identifier>,
    /// Blocked if either was blocked; else the further along of the two (active, onboarding, prospective).
    pub status: VendorStatus,
}

/// What merging `away` into `keep` makes, or why it is refused: a vendor merged into itself, a vendor already merged,
/// or two different values of one kind of identifier (two tax ids say two companies; correct one first).
pub fn merge(keep: &VendorFacts, away: &VendorFacts) -> Result<Merged, String> {
    if keep.id == away.id {
        return Err("a vendor cannot be merged into itself; choose the duplicate to merge".into());
    }
    for v in [keep, away] {
        if v.status == VendorStatus::Merged {
            return Err(format!("{} was already merged into another vendor; merge into that one", v.name));
        }
    }
    for a in &away.identifiers {
        let kind = normalized_identifier_kind(&a.kind);
        for k in keep.identifiers.iter().filter(|k| normalized_identifier_kind(&k.kind) == kind) {
            if normalized_identifier(&k.value) != normalized_identifier(&a.value) {
                return Err(format!(
                    "{} has {} {} and {} has {}: different {}s say these are different companies; correct the \
                     wrong one first",
                    keep.name,
                    kind.replace('_', " "),
                    k.value,
                    away.name,
                    a.value,
                    kind.replace('_', " ")
                ));
            }
        }
    }
    let mut seen: BTreeSet<String> =
        std::iter::once(&keep.name).chain(&keep.aliases).map(|n| normalized_name(n)).collect();
    let mut aliases = keep.aliases.clone();
    for a in std::iter::once(&away.name).chain(&away.aliases) {
        if seen.insert(normalized_name(a)) {
            aliases.push(a.clone());
        }
    }
    let mut ids_seen = BTreeSet::new();
    let mut identifiers = Vec::new();
    for i in keep.identifiers.iter().chain(&away.identifiers) {
        if ids_seen.insert((normalized_identifier_kind(&i.kind), normalized_identifier(&i.value))) {
            identifiers.push(i.clone());
        }
    }
    let rank = |s: VendorStatus| match s {
        VendorStatus::Active => 3,
        VendorStatus::Onboarding => 2,
        VendorStatus::Prospective => 1,
        VendorStatus::Blocked | VendorStatus::Merged => 0,
    };
    let status = if keep.status == VendorStatus::Blocked || away.status == VendorStatus::Blocked {
        VendorStatus::Blocked
    } else if rank(away.status) > rank(keep.status) {
        away.status
    } else {
        keep.status
    };
    Ok(Merged { aliases, identifiers, status })
}

/// Whether a person may move a vendor from `from` to `to` by hand. Merged is set only by a merge, and a merged
/// record stays merged.
pub fn check_status_change(from: VendorStatus, to: VendorStatus) -> Result<(), String> {
    if from == VendorStatus::Merged {
        return Err("this vendor was merged into another; change the vendor it was merged into".into());
    }
    if to == VendorStatus::Merged {
        return Err("a vendor becomes merged only by merging it into another (Merge)".into());
    }
    Ok(())
}

/// Whether an onboarding run may start for a vendor in `status`: not while one is deciding on it, not for an active
/// vendor (already onboarded) and not for a merged record (onboard the vendor it was merged into). A blocked vendor
/// may be onboarded again.
pub fn check_start_onboarding(status: VendorStatus) -> Result<(), String> {
    match status {
        VendorStatus::Prospective | VendorStatus::Blocked => Ok(()),
        VendorStatus::Onboarding => Err("this vendor is already being onboarded; see its run in Runs".into()),
        VendorStatus::Active => Err("this vendor is already active; there is nothing to onboard".into()),
        VendorStatus::Merged => {
            Err("this vendor was merged into another; onboard the vendor it was merged into".into())
        }
    }
}

/// The status an onboarding run's decision gives the vendor: active when approved, blocked when declined.
pub fn status_after_onboarding(approved: bool) -> VendorStatus {
    if approved { VendorStatus::Active } else { VendorStatus::Blocked }
}

/// Does a vendor's status stamped `incoming` (synced from another desktop) replace the current one (None: never
/// set)? A merge is final: a merged status beats any other in either order of arrival, and two statuses of the same
/// kind (both merged, or both not) go to the later stamp. A total order, so every desktop ends on the same status.
pub fn status_wins(incoming: (VendorStatus, &Hlc), current: Option<(VendorStatus, &Hlc)>) -> bool {
    let merged = |s: VendorStatus| s == VendorStatus::Merged;
    match current {
        None => true,
        Some((status, hlc)) if merged(status) == merged(incoming.0) => lww::wins(incoming.1, Some(hlc)),
        Some((status, _)) => merged(incoming.0) && !merged(status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(id: &str, name: &str, aliases: &[&str], ids: &[(&str, &str)], status: VendorStatus) -> VendorFacts {
        VendorFacts {
            id: id.into(),
            name: name.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            identifiers: ids.iter().map(|(k, v)| Identifier { kind: k.to_string(), value: v.to_string() }).collect(),
            status,
        }
    }

    #[test]
    fn names_fold_case_accents_punctuation_and_legal_suffixes() {
        let table = [
            ("Acme, Inc.", "acme"),
            ("ACME INC", "acme"),
            ("Acme Incorporated", "acme"),
            ("The Acme Corporation", "acme"),
            ("Société Générale S.A.", "societe generale"),
            ("Müller & Söhne GmbH", "muller and sohne"),
            ("Nippon Example Co., Ltd.", "nippon example"),
            ("O'Neil  Widgets   LLC", "oneil widgets"),
            ("Globex Holdings Limited", "globex holdings"),
            ("Limited", "limited"),
            ("The", "the"),
            ("Straße Bau AG", "strasse bau"),
            ("  ", ""),
        ];
        for (name, want) in table {
            assert_eq!(normalized_name(name), want, "{name}");
        }
    }

    #[test]
    fn a_legal_word_inside_a_name_is_kept() {
        assert_eq!(normalized_name("Co Packers Inc"), "co packers");
        assert_eq!(normalized_name("Limited Editions Ltd"), "limited editions");
    }

    #[test]
    fn identifiers_compare_by_letters_and_digits() {
        assert_eq!(normalized_identifier("de 123.456-7"), "DE1234567");
        assert_eq!(normalized_identifier_kind(" Tax  ID "), "tax_id");
        assert!(check_identifier("tax id", " - . ").is_err());
        assert!(check_identifier("", "123").is_err());
        assert_eq!(
            check_identifier("Tax ID", " DE 123 ").unwrap(),
            Identifier { kind: "tax_id".into(), value: "DE 123".into() }
        );
    }

    #[test]
    fn duplicates_are_found_by_name_alias_and_identifier_transitively() {
        let vendors = [
            v("1", "Acme, Inc.", &[], &[], VendorStatus::Active),
            v("2", "ACME Incorporated", &[], &[], VendorStatus::Prospective),
            v("3", "Roadrunner Supplies", &["Acme Corp"], &[], VendorStatus::Prospective),
            v("4", "Globex", &[], &[("tax_id", "US-99")], VendorStatus::Active),
            v("5", "Globex International", &[], &[("Tax ID", "us99")], VendorStatus::Prospective),
            v("6", "Initech", &[], &[], VendorStatus::Active),
            v("7", "Acme LLC", &[], &[], VendorStatus::Merged),
        ];
        let groups = duplicate_groups(&vendors);
        assert_eq!(groups.len(), 2, "{groups:?}");
        assert_eq!(groups[0].ids, ["1", "2", "3"]);
        assert_eq!(groups[0].because, [SameBecause::Name("acme".into())]);
        assert_eq!(groups[1].ids, ["4", "5"]);
        assert_eq!(groups[1].because, [SameBecause::Identifier("tax_id".into(), "US99".into())]);
    }

    #[test]
    fn a_merge_keeps_both_names_and_identifiers_and_the_stricter_status() {
        let keep = v("1", "Acme, Inc.", &["ACME"], &[("tax_id", "US-1")], VendorStatus::Prospective);
        let away = v("2", "Acme Incorporated", &["Acme Widgets"], &[("duns", "123")], VendorStatus::Active);
        let m = merge(&keep, &away).unwrap();
        // "Acme Incorporated" normalises like the kept name: not added as an alias.
        assert_eq!(m.aliases, ["ACME", "Acme Widgets"]);
        assert_eq!(m.identifiers.len(), 2);
        assert_eq!(m.status, VendorStatus::Active);
        let blocked = v("3", "Acme Trading", &[], &[], VendorStatus::Blocked);
        assert_eq!(merge(&keep, &blocked).unwrap().status, VendorStatus::Blocked);
        assert_eq!(merge(&keep, &blocked).unwrap().aliases, ["ACME", "Acme Trading"]);
    }

    #[test]
    fn a_merge_is_refused_for_itself_a_merged_record_and_different_tax_ids() {
        let a = v("1", "Acme", &[], &[("tax_id", "US-1")], VendorStatus::Active);
        let b = v("2", "Acme Inc", &[], &[("Tax ID", "US-2")], VendorStatus::Active);
        let same = v("3", "Acme Co", &[], &[("tax_id", "us 1")], VendorStatus::Active);
        let gone = v("4", "Acme Ltd", &[], &[], VendorStatus::Merged);
        assert!(merge(&a, &a).unwrap_err().contains("itself"));
        assert!(merge(&a, &b).unwrap_err().contains("different companies"));
        assert!(merge(&a, &same).is_ok());
        assert!(merge(&a, &gone).unwrap_err().contains("already merged"));
        assert!(merge(&gone, &a).unwrap_err().contains("already merged"));
    }

    #[test]
    fn merged_is_set_only_by_a_merge_and_never_left() {
        use VendorStatus::*;
        assert!(check_status_change(Prospective, Active).is_ok());
        assert!(check_status_change(Blocked, Prospective).is_ok());
        assert!(check_status_change(Active, Merged).is_err());
        assert!(check_status_change(Merged, Active).is_err());
        assert_eq!(status_after_onboarding(true), Active);
        assert!(check_start_onboarding(Prospective).is_ok());
        assert!(check_start_onboarding(Blocked).is_ok());
        for s in [Onboarding, Active, Merged] {
            assert!(check_start_onboarding(s).is_err(), "{s}");
        }
        assert_eq!(status_after_onboarding(false), Blocked);
    }

    #[test]
    fn a_merge_is_final_and_every_order_of_arrival_ends_on_the_same_status() {
        let h = |ms: u64, node: u8| Hlc { wall_ms: ms, counter: 0, node: uuid::Uuid::from_bytes([node; 16]) };
        let changes = [
            (VendorStatus::Merged, h(100, 1)),
            (VendorStatus::Active, h(300, 2)),
            (VendorStatus::Blocked, h(200, 3)),
            (VendorStatus::Merged, h(50, 4)),
        ];
        let mut ends = BTreeSet::new();
        let mut order: Vec<usize> = (0..changes.len()).collect();
        // Every permutation of arrival (Heap's algorithm, 24 orders).
        fn permutations(k: usize, a: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if k == 1 {
                out.push(a.clone());
                return;
            }
            for i in 0..k {
                permutations(k - 1, a, out);
                if k.is_multiple_of(2) { a.swap(i, k - 1) } else { a.swap(0, k - 1) }
            }
        }
        let mut all = Vec::new();
        permutations(order.len(), &mut order, &mut all);
        assert_eq!(all.len(), 24);
        for arrival in all {
            let mut current: Option<(VendorStatus, Hlc)> = None;
            for i in arrival {
                let (s, hlc) = changes[i];
                if status_wins((s, &hlc), current.as_ref().map(|(s, h)| (*s, h))) {
                    current = Some((s, hlc));
                }
            }
            ends.insert(format!("{:?}", current));
        }
        assert_eq!(ends.len(), 1, "{ends:?}");
        assert!(ends.iter().next().unwrap().contains("Merged") && ends.iter().next().unwrap().contains("wall_ms: 100"));
        // A later active never undoes a merge; a later merge replaces an active.
        assert!(!status_wins((VendorStatus::Active, &h(900, 1)), Some((VendorStatus::Merged, &h(1, 1)))));
        assert!(status_wins((VendorStatus::Merged, &h(1, 1)), Some((VendorStatus::Active, &h(900, 1)))));
        assert!(status_wins((VendorStatus::Blocked, &h(2, 1)), Some((VendorStatus::Active, &h(1, 1)))));
        assert!(!status_wins((VendorStatus::Blocked, &h(1, 1)), Some((VendorStatus::Active, &h(2, 1)))));
    }
}
