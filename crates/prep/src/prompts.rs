//! The seven prompt modules (`prompts/*.md`, embedded at build time): versioned in their first line, reviewed like
//! code, each with a SHA-256 content hash stamped on every trace and every artifact it produced.

use crate::artifact::{ArtifactKind, PromptStamp};
use sha2::{Digest, Sha256};

/// A prompt module: its name, its version (from the first line), its text and the hash of that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptModule {
    pub name: &'static str,
    pub version: u32,
    pub text: &'static str,
    pub hash: String,
}

impl PromptModule {
    fn load(name: &'static str, text: &'static str) -> PromptModule {
        PromptModule { name, version: version_of(text), text, hash: hex::encode(Sha256::digest(text.as_bytes())) }
    }

    pub fn stamp(&self) -> PromptStamp {
        PromptStamp { module: self.name.to_string(), version: self.version, hash: self.hash.clone() }
    }

    /// The forced tool this module's reply comes through.
    pub fn tool_name(&self) -> String {
        match self.name {
            "intake" => "record_needs".into(),
            "milestones" => "record_milestone_rationales".into(),
            "critic" => "record_findings".into(),
            other => format!("record_{other}"),
        }
    }
}

/// `<!-- prep prompt module: NAME · version: N -->` on the first line; 0 when absent (a test refuses that).
fn version_of(text: &str) -> u32 {
    let first = text.lines().next().unwrap_or("");
    first.split("version:").nth(1).and_then(|rest| rest.trim().trim_end_matches("-->").trim().parse().ok()).unwrap_or(0)
}

const SOURCES: [(&str, &str); 7] = [
    ("intake", include_str!("../prompts/intake.md")),
    ("scope", include_str!("../prompts/scope.md")),
    ("requirements", include_str!("../prompts/requirements.md")),
    ("criteria", include_str!("../prompts/criteria.md")),
    ("pricing", include_str!("../prompts/pricing.md")),
    ("milestones", include_str!("../prompts/milestones.md")),
    ("critic", include_str!("../prompts/critic.md")),
];

/// All seven modules.
pub fn modules() -> Vec<PromptModule> {
    SOURCES.iter().map(|(name, text)| PromptModule::load(name, text)).collect()
}

/// The module that drafts an artifact.
pub fn for_artifact(kind: ArtifactKind) -> PromptModule {
    by_name(kind.as_str())
}

pub fn critic() -> PromptModule {
    by_name("critic")
}

fn by_name(name: &str) -> PromptModule {
    let (name, text) = SOURCES.iter().find(|(n, _)| *n == name).copied().unwrap_or(SOURCES[6]);
    PromptModule::load(name, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_versioned_modules_each_with_the_house_rules_and_a_distinct_hash() {
        let all = modules();
        assert_eq!(all.len(), 7);
        let mut hashes = std::collections::BTreeSet::new();
        for m in &all {
            assert!(m.version >= 1, "{} has no version line", m.name);
            assert!(m.text.contains("Never score, rank or recommend vendors"), "{} lacks the house rules", m.name);
            assert!(m.text.contains("trust=\"untrusted\""), "{} does not say fenced text is data", m.name);
            assert!(m.text.contains(&format!("`{}`", m.tool_name())), "{} does not name its tool", m.name);
            assert_eq!(m.hash.len(), 64);
            assert!(hashes.insert(m.hash.clone()));
        }
        assert_eq!(for_artifact(ArtifactKind::Criteria).tool_name(), "record_criteria");
    }
}
