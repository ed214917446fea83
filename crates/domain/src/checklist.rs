//! The checklist library's types: contract types with their sections and classifier signals, and the checklist items
//! a reviewer answers for each type. The data lives in `checklists/types/<type_id>.toml` (one file per type, parsed
//! straight into [`ContractType`]); the `pactwise-checklists` crate loads, validates and indexes it.
//!
//! Field names and serde spellings here *are* the data format: the JSON Schema in `checklists/schema.json` is
//! generated from these types, so change them together.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One contract type of the catalog, exactly as one data file describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct ContractType {
    /// Stable snake_case id (`nda`, `msa`, `joint_venture`); never changes, never reused. Equals the file name.
    pub id: String,
    /// The name shown to people ("Non-Disclosure Agreement").
    pub name: String,
    /// Other names the type goes by; used by the classifier and by search.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// What contracts of this type do, in a sentence or two.
    pub description: String,
    /// The CUAD contract type this corresponds to, for the 25 types that have one.
    #[serde(default)]
    pub cuad_type: Option<CuadType>,
    /// What the offline keyword classifier looks for.
    pub signals: Signals,
    /// The sections of the checklist, in review order.
    pub sections: Vec<Section>,
    /// The checklist items, in review order.
    pub items: Vec<ChecklistItem>,
}

/// A section of a type's checklist ("Term and termination").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct Section {
    /// snake_case, unique within the type; the middle part of its items' ids.
    pub id: String,
    pub name: String,
}

/// Signals for the offline keyword classifier. All entries are regular expressions (Rust `regex` syntax, matched
/// case-insensitively); a plain phrase is a valid pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct Signals {
    /// Patterns matched against the document's title or first heading.
    pub title_patterns: Vec<String>,
    /// Terms typical of this type anywhere in the text.
    pub distinctive_terms: Vec<String>,
    /// Terms that suggest another type.
    #[serde(default)]
    pub negative_cues: Vec<String>,
}

/// One question of a type's checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct ChecklistItem {
    /// Stable id `<type_id>.<section_id>.<slug>`, unique across the library; never changes, never reused.
    pub id: String,
    /// The contract type the item belongs to. Data files may leave it out (the loader fills it from the file);
    /// when given it must equal the file's type id.
    #[serde(rename = "type", default)]
    pub type_id: String,
    /// The id of one of the type's sections.
    pub section: String,
    /// The question the reviewer answers, naming the clause and the test.
    pub question: String,
    pub risk: RiskLevel,
    /// What counts as present, partial and absent.
    pub guidance: Guidance,
    /// The CUAD category the item tests, where it tests one.
    #[serde(default)]
    pub cuad_category: Option<CuadCategory>,
    /// What the market usually agrees to.
    #[serde(default)]
    pub benchmark: Option<String>,
    /// Conditions that should alert the reviewer. Required for critical items.
    #[serde(default)]
    pub red_flags: Vec<String>,
    /// Our preferred position.
    #[serde(default)]
    pub preferred_position: Option<String>,
    /// A position we can accept if the preferred one is refused.
    #[serde(default)]
    pub fallback_position: Option<String>,
    /// Statutes or regulations that apply, only where a real provision applies.
    #[serde(default)]
    pub regulatory: Vec<RegulatoryRef>,
    /// Patterns for the offline evaluator.
    pub signals: ItemSignals,
}

/// What the reviewer should count as present, partial and absent for one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct Guidance {
    pub present: String,
    pub partial: String,
    pub absent: String,
}

/// How much is at stake if the item is answered wrongly or the clause is missing.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    Critical,
    High,
    Medium,
    Low,
}

impl RiskLevel {
    pub const ALL: [RiskLevel; 4] = [RiskLevel::Critical, RiskLevel::High, RiskLevel::Medium, RiskLevel::Low];

    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Critical => "critical",
            RiskLevel::High => "high",
            RiskLevel::Medium => "medium",
            RiskLevel::Low => "low",
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A statute or regulation that bears on an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct RegulatoryRef {
    /// The provision as lawyers cite it ("GDPR Art. 28(3)", "17 U.S.C. 204(a)").
    pub citation: String,
    /// Why it matters for this item.
    pub note: String,
}

/// Patterns for the offline evaluator (Rust `regex` syntax, matched case-insensitively; no look-around, no
/// back-references).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct ItemSignals {
    /// Wording that shows the clause is there. At least one pattern.
    pub present: Vec<String>,
    /// Wording that suggests the clause is there only in part.
    #[serde(default)]
    pub partial: Vec<String>,
    /// Wording that expressly excludes the clause.
    #[serde(default)]
    pub absent: Vec<String>,
}

/// The version and content hash of the checklist library, recorded with every evaluation so a result can always be
/// traced to the exact questions it answered.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct CatalogVersion {
    /// The release of the library (`2026.11.1`), from `checklists/catalog.toml`.
    pub version: String,
    /// SHA-256 (lowercase hex) of the canonical serialization of every type and item.
    pub hash: String,
}

/// Generates a closed enum whose serde names are given strings, with `ALL`, `as_str`, `Display` and `FromStr`.
macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
            schemars::JsonSchema, specta::Type,
        )]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $text)] $variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The name exactly as the CUAD dataset spells it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
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
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| format!("{s:?} is not a {}", stringify!($name)))
            }
        }
    };
}

named_enum!(
    /// The 41 clause categories of the CUAD dataset, spelled as the dataset spells them.
    CuadCategory {
        DocumentName = "Document Name",
        Parties = "Parties",
        AgreementDate = "Agreement Date",
        EffectiveDate = "Effective Date",
        ExpirationDate = "Expiration Date",
        RenewalTerm = "Renewal Term",
        NoticePeriodToTerminateRenewal = "Notice Period To Terminate Renewal",
        GoverningLaw = "Governing Law",
        MostFavoredNation = "Most Favored Nation",
        CompetitiveRestrictionException = "Competitive Restriction Exception",
        NonCompete = "Non-Compete",
        Exclusivity = "Exclusivity",
        NoSolicitOfCustomers = "No-Solicit Of Customers",
        NoSolicitOfEmployees = "No-Solicit Of Employees",
        NonDisparagement = "Non-Disparagement",
        TerminationForConvenience = "Termination For Convenience",
        RofrRofoRofn = "Rofr/Rofo/Rofn",
        ChangeOfControl = "Change Of Control",
        AntiAssignment = "Anti-Assignment",
        RevenueProfitSharing = "Revenue/Profit Sharing",
        PriceRestrictions = "Price Restrictions",
        MinimumCommitment = "Minimum Commitment",
        VolumeRestriction = "Volume Restriction",
        IpOwnershipAssignment = "Ip Ownership Assignment",
        JointIpOwnership = "Joint Ip Ownership",
        LicenseGrant = "License Grant",
        NonTransferableLicense = "Non-Transferable License",
        AffiliateLicenseLicensor = "Affiliate License-Licensor",
        AffiliateLicenseLicensee = "Affiliate License-Licensee",
        UnlimitedAllYouCanEatLicense = "Unlimited/All-You-Can-Eat-License",
        IrrevocableOrPerpetualLicense = "Irrevocable Or Perpetual License",
        SourceCodeEscrow = "Source Code Escrow",
        PostTerminationServices = "Post-Termination Services",
        AuditRights = "Audit Rights",
        UncappedLiability = "Uncapped Liability",
        CapOnLiability = "Cap On Liability",
        LiquidatedDamages = "Liquidated Damages",
        WarrantyDuration = "Warranty Duration",
        Insurance = "Insurance",
        CovenantNotToSue = "Covenant Not To Sue",
        ThirdPartyBeneficiary = "Third Party Beneficiary",
    }
);

named_enum!(
    /// The 25 contract types of the CUAD dataset, spelled as the dataset spells them.
    CuadType {
        Affiliate = "Affiliate",
        Agency = "Agency",
        CoBranding = "Co-Branding",
        Collaboration = "Collaboration",
        Consulting = "Consulting",
        Development = "Development",
        Distributor = "Distributor",
        Endorsement = "Endorsement",
        Franchise = "Franchise",
        Hosting = "Hosting",
        Ip = "IP",
        JointVenture = "Joint Venture",
        License = "License",
        Maintenance = "Maintenance",
        Manufacturing = "Manufacturing",
        Marketing = "Marketing",
        NonCompeteNonSolicit = "Non-Compete/Non-Solicit",
        Outsourcing = "Outsourcing",
        Promotion = "Promotion",
        Reseller = "Reseller",
        Service = "Service",
        Sponsorship = "Sponsorship",
        StrategicAlliance = "Strategic Alliance",
        Supply = "Supply",
        Transportation = "Transportation",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_41_cuad_categories_and_25_cuad_types_with_distinct_names() {
        assert_eq!(CuadCategory::ALL.len(), 41);
        assert_eq!(CuadType::ALL.len(), 25);
        let mut names: Vec<&str> = CuadCategory::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 41);
    }

    #[test]
    fn cuad_names_serialize_exactly_as_the_dataset_spells_them() {
        for category in CuadCategory::ALL {
            let json = serde_json::to_string(category).unwrap();
            assert_eq!(json, format!("\"{}\"", category.as_str()));
            assert_eq!(category.as_str().parse::<CuadCategory>().unwrap(), *category);
        }
        assert_eq!(serde_json::to_string(&CuadType::NonCompeteNonSolicit).unwrap(), "\"Non-Compete/Non-Solicit\"");
        assert!("Governing law".parse::<CuadCategory>().is_err());
    }

    #[test]
    fn risk_levels_serialize_in_lower_case() {
        for risk in RiskLevel::ALL {
            assert_eq!(serde_json::to_string(&risk).unwrap(), format!("\"{}\"", risk.as_str()));
        }
    }
}
