//! Contract references and vendors in a request. References are written like a contract's document name
//! (`TYPE-YEAR-NUMBER`, e.g. `MSA-2026-014`) and resolved through [`OrgRecords`], which answers for the session's
//! organization only. Known vendors are found by their name or another name as whole words, compared in the form
//! duplicates are found by (`rules::vendors::normalized_name`); a vendor the organization does not know yet is read
//! from a company name with its legal form (`Brightline Logistics GmbH`) or a name introduced as such ("called …",
//! "freelancer, …").

use super::KnownVendor;
use pactwise_rules::vendors::normalized_name;
use regex::Regex;
use std::sync::LazyLock;

static REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b([A-Za-z]{2,4})-((?:19|20)\d{2})-(\d{3})\b").expect("reference pattern"));

/// Contract references as written, in canonical form (`MSA-2026-014`), each once.
pub(crate) fn references(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in REFERENCE.captures_iter(text) {
        let r = format!("{}-{}-{}", c[1].to_ascii_uppercase(), &c[2], &c[3]);
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

static POSSESSIVE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(\w)['’]s\b").expect("possessive pattern"));

/// The organization's vendors by the words of their names, built once per organization's snapshot: finding the
/// vendors a request names costs one look-up per word of the request, however many vendors there are.
#[derive(Debug, Clone, Default)]
pub struct VendorIndex {
    vendors: Vec<KnownVendor>,
    /// First word of a normalized name → (the name's words, the vendor's position).
    by_first_word: std::collections::HashMap<String, Vec<(Vec<String>, usize)>>,
    /// Every normalized name and other name.
    names: std::collections::HashSet<String>,
}

impl VendorIndex {
    pub fn new(vendors: Vec<KnownVendor>) -> VendorIndex {
        let mut index = VendorIndex::default();
        for (i, v) in vendors.iter().enumerate() {
            for n in std::iter::once(&v.name).chain(v.other_names.iter()) {
                let norm = normalized_name(n);
                if norm.chars().count() < 3 {
                    continue;
                }
                let words: Vec<String> = norm.split(' ').map(str::to_string).collect();
                index.by_first_word.entry(words[0].clone()).or_default().push((words, i));
                index.names.insert(norm);
            }
        }
        index.vendors = vendors;
        index
    }

    pub fn vendors(&self) -> &[KnownVendor] {
        &self.vendors
    }

    /// Whether a normalized name is one of the organization's vendors' names.
    fn knows(&self, normalized: &str) -> bool {
        self.names.contains(normalized)
    }
}

/// The organization's vendors the text names, each once, in the order first named.
pub(crate) fn known_vendors<'v>(text: &str, index: &'v VendorIndex) -> Vec<&'v KnownVendor> {
    let norm = normalized_name(&POSSESSIVE.replace_all(text, "$1"));
    let words: Vec<&str> = norm.split(' ').filter(|w| !w.is_empty()).collect();
    let mut found: Vec<usize> = Vec::new();
    for (at, w) in words.iter().enumerate() {
        for (name, vendor) in index.by_first_word.get(*w).into_iter().flatten() {
            let fits = name.len() <= words.len() - at && name.iter().zip(&words[at..]).all(|(a, b)| a == b);
            if fits && !found.contains(vendor) {
                found.push(*vendor);
            }
        }
    }
    found.into_iter().map(|i| &index.vendors[i]).collect()
}

static COMPANY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b((?:[A-Z][A-Za-z0-9&'’-]*\s+){1,5}(?:Pty\.?\s+Ltd|Inc|Ltd|LLC|LLP|GmbH|AG|SAS|SA|BV|B\.V|AB|Oy|plc|PLC|Corp))\b")
        .expect("company pattern")
});
static INTRODUCED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:called|named|(?:freelancer|freelance\s+\w+|contractor|consultant)\s*,)\s+([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,3})",
    )
    .expect("introduced-name pattern")
});

/// Words that start a sentence or an ask, not a company's name.
const NOT_A_NAME: &[&str] = &[
    "onboard",
    "onboarding",
    "add",
    "new",
    "vendor",
    "supplier",
    "set",
    "setup",
    "register",
    "start",
    "please",
    "pls",
    "bring",
    "kick",
    "the",
    "for",
    "called",
    "named",
    "a",
    "an",
    "we",
    "i",
    "need",
    "can",
    "and",
    "with",
    "from",
    "invoice",
    "check",
    "review",
    "urgent",
    "asap",
    "process",
    "approve",
    "pay",
    "renew",
    "our",
    "is",
    "are",
    "do",
];

/// Vendors the organization does not know yet, as written, each once.
pub(crate) fn new_vendors(text: &str, known: &VendorIndex) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        let words: Vec<&str> = name.split_whitespace().collect();
        let skip = words
            .iter()
            .take_while(|w| {
                NOT_A_NAME.contains(&w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase().as_str())
            })
            .count();
        let name = words[skip..].join(" ");
        let norm = normalized_name(&name);
        // A legal form alone ("Ltd") or a known vendor is not a new vendor.
        if name.split_whitespace().count() < 2 || norm.is_empty() || known.knows(&norm) {
            return;
        }
        if !out.iter().any(|o| normalized_name(o) == norm) {
            out.push(name);
        }
    };
    for c in COMPANY.captures_iter(text) {
        push(c[1].trim());
    }
    for c in INTRODUCED.captures_iter(text) {
        push(c[1].trim());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vendors() -> VendorIndex {
        VendorIndex::new(vec![
            KnownVendor { id: "v1".into(), name: "Stark Industries".into(), other_names: vec!["Stark".into()] },
            KnownVendor { id: "v2".into(), name: "Globex Ltd".into(), other_names: vec![] },
            KnownVendor {
                id: "v3".into(),
                name: "Umbrella Health Services".into(),
                other_names: vec!["Umbrella Health".into()],
            },
        ])
    }

    #[test]
    fn references_in_canonical_form_and_not_other_codes() {
        assert_eq!(references("see msa-2026-014 and MSA-2026-014, INV-44721, ISO 27001, W-8BEN"), ["MSA-2026-014"]);
    }

    #[test]
    fn known_vendors_by_whole_words_with_possessives_and_legal_forms() {
        let v = vendors();
        let names = |t: &str| known_vendors(t, &v).iter().map(|v| v.id.as_str()).collect::<Vec<_>>();
        assert_eq!(names("Stark's MSA and the Globex renewal"), ["v1", "v2"]);
        assert_eq!(names("an umbrella agreement; start now"), Vec::<&str>::new());
        assert_eq!(names("Umbrella Health Services invoice"), ["v3"]);
    }

    #[test]
    fn new_vendors_by_legal_form_or_introduction() {
        let v = vendors();
        assert_eq!(new_vendors("Onboard Brightline Logistics GmbH as a carrier", &v), ["Brightline Logistics GmbH"]);
        assert_eq!(new_vendors("Register a new vendor called Foxglove Events, first job", &v), ["Foxglove Events"]);
        assert_eq!(new_vendors("onboard a freelance designer, Ana Ribeiro, rate 400 EUR", &v), ["Ana Ribeiro"]);
        assert!(new_vendors("Review the Globex Ltd contract", &v).is_empty());
    }
}
