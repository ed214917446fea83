//! Which contract and vendor an imported invoice belongs to, by code (no model): the vendor whose identifier (tax id,
//! registration number) appears in the invoice's text, else whose name or another name appears as whole words; then
//! among that vendor's contracts the one whose reference (the contract document's name without its extension, e.g.
//! "MSA-2026-014") appears in the text, or its only contract. Every outcome says why, in words, and a text that
//! matches nothing says so. Pure: the caller passes the organization's records.

use crate::vendors::{normalized_identifier, normalized_name};

/// A vendor as the match reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorKeys {
    pub id: String,
    pub name: String,
    pub names: Vec<String>,
    /// Identifier values (any kind).
    pub identifiers: Vec<String>,
}

/// A finalized contract as the match reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractKeys {
    pub document: String,
    /// The document's name, e.g. "MSA-2026-014 Globex.pdf".
    pub name: String,
    pub vendor: Option<String>,
}

/// What the match found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum InvoiceMatch {
    /// A contract (and its vendor).
    Matched { contract: String, contract_name: String, vendor: String, vendor_name: String, why: Vec<String> },
    /// The vendor, but no single contract of it.
    VendorOnly { vendor: String, vendor_name: String, why: Vec<String> },
    /// Nothing in the text names a vendor or contract of the organization.
    None { why: String },
}

/// Shortest identifier (letters and digits) that counts as found in a text: shorter ones match by chance.
const MIN_IDENTIFIER: usize = 5;

fn words(text: &str) -> String {
    format!(" {} ", normalized_name(text))
}

fn contract_reference(name: &str) -> String {
    let stem = name.rsplit_once('.').map_or(name, |(s, ext)| if ext.len() <= 4 { s } else { name });
    normalized_identifier(stem.split_whitespace().next().unwrap_or(stem))
}

/// Matches an invoice's text to the organization's vendors and finalized contracts.
pub fn match_invoice(text: &str, vendors: &[VendorKeys], contracts: &[ContractKeys]) -> InvoiceMatch {
    let text_words = words(text);
    let text_code = normalized_identifier(text);
    let mut found: Vec<(&VendorKeys, String)> = Vec::new();
    for v in vendors {
        if let Some(id) = v.identifiers.iter().find(|i| {
            let n = normalized_identifier(i);
            n.len() >= MIN_IDENTIFIER && text_code.contains(&n)
        }) {
            found.push((v, format!("its identifier {id} is on the invoice")));
        } else if let Some(n) = std::iter::once(&v.name).chain(&v.names).find(|n| {
            let key = normalized_name(n);
            !key.is_empty() && text_words.contains(&format!(" {key} "))
        }) {
            found.push((v, format!("the name \u{201c}{n}\u{201d} is on the invoice")));
        }
    }
    // An identifier beats a name; two vendors found the same way is no match.
    let by_id: Vec<_> = found.iter().filter(|(_, why)| why.starts_with("its identifier")).collect();
    let pick = if by_id.len() == 1 {
        Some(by_id[0])
    } else if by_id.is_empty() && found.len() == 1 {
        Some(&found[0])
    } else {
        None
    };
    // A contract reference on the invoice names the contract even without a vendor.
    let referenced: Vec<&ContractKeys> = contracts
        .iter()
        .filter(|c| {
            let r = contract_reference(&c.name);
            r.len() >= MIN_IDENTIFIER && r.chars().any(|ch| ch.is_ascii_digit()) && text_code.contains(&r)
        })
        .collect();
    let Some((vendor, why_vendor)) = pick else {
        if let [c] = referenced.as_slice()
            && let Some(v) = c.vendor.as_ref().and_then(|id| vendors.iter().find(|v| &v.id == id))
        {
            return InvoiceMatch::Matched {
                contract: c.document.clone(),
                contract_name: c.name.clone(),
                vendor: v.id.clone(),
                vendor_name: v.name.clone(),
                why: vec![format!("the contract reference of {} is on the invoice", c.name)],
            };
        }
        let why = if found.len() > 1 {
            format!(
                "the invoice names several vendors ({}); link it by hand",
                found.iter().map(|(v, _)| v.name.as_str()).collect::<Vec<_>>().join(", ")
            )
        } else {
            "no vendor name, identifier or contract reference of the organization is on the invoice".to_string()
        };
        return InvoiceMatch::None { why };
    };
    let theirs: Vec<&ContractKeys> =
        contracts.iter().filter(|c| c.vendor.as_deref() == Some(vendor.id.as_str())).collect();
    let by_reference: Vec<&&ContractKeys> = theirs.iter().filter(|c| referenced.contains(c)).collect();
    let chosen = match (by_reference.as_slice(), theirs.as_slice()) {
        ([c], _) => Some((**c, format!("the contract reference of {} is on the invoice", c.name))),
        ([], [only]) => Some((*only, format!("{} is the vendor's only contract", only.name))),
        _ => None,
    };
    match chosen {
        Some((c, why)) => InvoiceMatch::Matched {
            contract: c.document.clone(),
            contract_name: c.name.clone(),
            vendor: vendor.id.clone(),
            vendor_name: vendor.name.clone(),
            why: vec![why_vendor.clone(), why],
        },
        None => InvoiceMatch::VendorOnly {
            vendor: vendor.id.clone(),
            vendor_name: vendor.name.clone(),
            why: vec![
                why_vendor.clone(),
                if theirs.is_empty() {
                    "the vendor has no finalized contract".to_string()
                } else {
                    format!("the vendor has {} contracts and the invoice names none of them", theirs.len())
                },
            ],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vendor(id: &str, name: &str, ids: &[&str]) -> VendorKeys {
        VendorKeys {
            id: id.into(),
            name: name.into(),
            names: vec![],
            identifiers: ids.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn contract(doc: &str, name: &str, vendor: &str) -> ContractKeys {
        ContractKeys { document: doc.into(), name: name.into(), vendor: Some(vendor.into()) }
    }

    fn setup() -> (Vec<VendorKeys>, Vec<ContractKeys>) {
        let vendors = vec![vendor("v1", "Globex Ltd", &["GB-123 456 789"]), vendor("v2", "Initech", &[])];
        let contracts = vec![
            contract("c1", "MSA-2026-014 Globex.pdf", "v1"),
            contract("c2", "SOW-2026-020 Globex.pdf", "v1"),
            contract("c3", "Initech licence.docx", "v2"),
        ];
        (vendors, contracts)
    }

    #[test]
    fn an_identifier_and_a_contract_reference_name_the_contract() {
        let (v, c) = setup();
        let m = match_invoice("INVOICE 77\nGlobex Limited, VAT GB123456789\nRe: SOW-2026-020\nTotal 1,200.00", &v, &c);
        let InvoiceMatch::Matched { contract, vendor, why, .. } = m else { panic!("{m:?}") };
        assert_eq!((contract.as_str(), vendor.as_str()), ("c2", "v1"));
        assert!(why[0].contains("identifier"), "{why:?}");
    }

    #[test]
    fn a_vendor_name_and_its_only_contract_match() {
        let (v, c) = setup();
        let m = match_invoice("Invoice from INITECH, INC. for services", &v, &c);
        let InvoiceMatch::Matched { contract, why, .. } = m else { panic!("{m:?}") };
        assert_eq!(contract, "c3");
        assert!(why[1].contains("only contract"));
    }

    #[test]
    fn a_vendor_with_several_contracts_and_no_reference_is_the_vendor_only() {
        let (v, c) = setup();
        let m = match_invoice("Globex Ltd invoice 88", &v, &c);
        assert!(matches!(m, InvoiceMatch::VendorOnly { ref vendor, .. } if vendor == "v1"), "{m:?}");
    }

    #[test]
    fn an_invoice_that_matches_nothing_says_so() {
        let (v, c) = setup();
        let m = match_invoice("Invoice from Hooli for catering, ref 2026", &v, &c);
        let InvoiceMatch::None { why } = m else { panic!("{m:?}") };
        assert!(why.contains("no vendor name, identifier or contract reference"));
        // A short code found by chance is no match; two vendors named is no match either.
        assert!(matches!(match_invoice("Globex and Initech", &v, &c), InvoiceMatch::None { .. }));
    }

    #[test]
    fn a_contract_reference_alone_names_contract_and_vendor() {
        let (v, c) = setup();
        let m = match_invoice("Payment due under MSA 2026 014", &v, &c);
        assert!(matches!(m, InvoiceMatch::Matched { ref contract, .. } if contract == "c1"), "{m:?}");
    }
}
