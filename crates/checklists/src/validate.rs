//! Structural rules of the library: ids, sections, required texts, critical items' red flags. Pattern compilation is
//! checked in `compiled`. Counts (34 types, 1032 items) and coverage targets are checked by the crate's tests, so a
//! small fixture library loads too.

use pactwise_domain::{ContractType, RiskLevel};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// One thing wrong with the library: the file, where in it (an item id, a field), and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    pub location: String,
    pub message: String,
}

impl Problem {
    pub(crate) fn new(file: &str, location: &str, message: impl Into<String>) -> Problem {
        Problem { file: file.to_owned(), location: location.to_owned(), message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.location.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.location, self.message)
        }
    }
}

/// Sections per type, as the data format fixes them.
pub(crate) const SECTIONS_PER_TYPE: std::ops::RangeInclusive<usize> = 4..=8;

fn is_snake_case(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !id.ends_with('_')
        && !id.contains("__")
}

pub(crate) fn check_version(version: &str, problems: &mut Vec<Problem>) {
    let parts: Vec<&str> = version.split('.').collect();
    let numeric = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    if parts.len() != 3 || !parts.iter().all(|p| numeric(p)) || parts[0].len() != 4 {
        problems.push(Problem::new(
            "catalog.toml",
            "version",
            format!("{version:?} is not a version of the form YEAR.MONTH.RELEASE (for example 2026.11.1)"),
        ));
    }
}

/// Items carry their type; data files may leave it out. Fills it in, or reports a mismatch.
pub(crate) fn fill_item_types(file: &str, contract_type: &mut ContractType, problems: &mut Vec<Problem>) {
    for item in &mut contract_type.items {
        if item.type_id.is_empty() {
            item.type_id.clone_from(&contract_type.id);
        } else if item.type_id != contract_type.id {
            problems.push(Problem::new(
                file,
                &item.id,
                format!("item says type {:?} but is in the file of type {:?}", item.type_id, contract_type.id),
            ));
        }
    }
}

fn require_text(file: &str, location: &str, field: &str, text: &str, problems: &mut Vec<Problem>) {
    if text.trim().is_empty() {
        problems.push(Problem::new(file, location, format!("{field} is empty")));
    }
}

pub(crate) fn check_type(file: &str, t: &ContractType, problems: &mut Vec<Problem>) {
    if !is_snake_case(&t.id) {
        problems.push(Problem::new(file, "id", format!("type id {:?} is not snake_case", t.id)));
    }
    if file.strip_suffix(".toml") != Some(t.id.as_str()) {
        problems.push(Problem::new(file, "id", format!("type id {:?} does not match the file name", t.id)));
    }
    require_text(file, "", "name", &t.name, problems);
    require_text(file, "", "description", &t.description, problems);
    for alias in &t.aliases {
        require_text(file, "aliases", "an alias", alias, problems);
    }
    if t.signals.title_patterns.is_empty() {
        problems.push(Problem::new(file, "signals.title_patterns", "needs at least one pattern"));
    }
    if t.signals.distinctive_terms.is_empty() {
        problems.push(Problem::new(file, "signals.distinctive_terms", "needs at least one term"));
    }

    if !SECTIONS_PER_TYPE.contains(&t.sections.len()) {
        problems.push(Problem::new(
            file,
            "sections",
            format!(
                "has {} sections; a type has {} to {}",
                t.sections.len(),
                SECTIONS_PER_TYPE.start(),
                SECTIONS_PER_TYPE.end()
            ),
        ));
    }
    let mut section_ids = HashSet::new();
    for section in &t.sections {
        let location = format!("sections.{}", section.id);
        if !is_snake_case(&section.id) {
            problems.push(Problem::new(file, &location, "section id is not snake_case"));
        }
        if !section_ids.insert(section.id.as_str()) {
            problems.push(Problem::new(file, &location, "section id appears twice"));
        }
        require_text(file, &location, "name", &section.name, problems);
    }

    let mut items_per_section: HashMap<&str, usize> = HashMap::new();
    for item in &t.items {
        let id = item.id.as_str();
        if !section_ids.contains(item.section.as_str()) {
            problems.push(Problem::new(
                file,
                id,
                format!("section {:?} is not one of this type's sections", item.section),
            ));
        }
        *items_per_section.entry(item.section.as_str()).or_default() += 1;
        let prefix = format!("{}.{}.", t.id, item.section);
        match id.strip_prefix(&prefix) {
            Some(slug) if is_snake_case(slug) => {}
            _ => problems.push(Problem::new(
                file,
                id,
                format!("item id must be {prefix}<slug> with a snake_case slug (type id, section id, slug)"),
            )),
        }
        require_text(file, id, "question", &item.question, problems);
        if !item.question.trim_end().ends_with('?') {
            problems.push(Problem::new(file, id, "the question does not end with a question mark"));
        }
        require_text(file, id, "guidance.present", &item.guidance.present, problems);
        require_text(file, id, "guidance.partial", &item.guidance.partial, problems);
        require_text(file, id, "guidance.absent", &item.guidance.absent, problems);
        for (field, value) in [
            ("benchmark", &item.benchmark),
            ("preferred_position", &item.preferred_position),
            ("fallback_position", &item.fallback_position),
        ] {
            if let Some(text) = value {
                require_text(file, id, field, text, problems);
            }
        }
        for flag in &item.red_flags {
            require_text(file, id, "a red flag", flag, problems);
        }
        if item.risk == RiskLevel::Critical && item.red_flags.is_empty() {
            problems.push(Problem::new(file, id, "a critical item needs at least one red flag"));
        }
        for reference in &item.regulatory {
            require_text(file, id, "regulatory.citation", &reference.citation, problems);
            require_text(file, id, "regulatory.note", &reference.note, problems);
        }
        if item.signals.present.is_empty() {
            problems.push(Problem::new(file, id, "signals.present needs at least one pattern"));
        }
    }
    for section in &t.sections {
        if !items_per_section.contains_key(section.id.as_str()) {
            problems.push(Problem::new(file, &format!("sections.{}", section.id), "section has no items"));
        }
    }
}

/// Rules across files: type ids, item ids and CUAD types are unique in the whole library.
pub(crate) fn check_library(types: &[ContractType], problems: &mut Vec<Problem>) {
    let mut type_ids = HashSet::new();
    let mut item_ids: HashMap<&str, &str> = HashMap::new();
    let mut cuad_types = HashMap::new();
    for t in types {
        let file = format!("{}.toml", t.id);
        if !type_ids.insert(t.id.as_str()) {
            problems.push(Problem::new(&file, "id", format!("type id {:?} is used by two files", t.id)));
        }
        if let Some(cuad) = t.cuad_type
            && let Some(other) = cuad_types.insert(cuad, t.id.as_str())
        {
            problems.push(Problem::new(&file, "cuad_type", format!("CUAD type {cuad} is also claimed by {other}")));
        }
        for item in &t.items {
            if let Some(other) = item_ids.insert(item.id.as_str(), t.id.as_str()) {
                problems.push(Problem::new(&file, &item.id, format!("item id is used twice (also in {other}.toml)")));
            }
        }
    }
}
