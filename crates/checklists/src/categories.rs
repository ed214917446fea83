//! Per-CUAD-category clause signals (`checklists/categories.toml`): wording that shows a contract contains a clause of
//! that category, shared by every item mapped to the category. The offline evaluator decides an item's presence from
//! its category's signals (one precise detector per category rather than a separate keyword list per item) and uses the
//! item's own signals only to choose among supporting sentences, or for items that test no CUAD category.

use crate::compiled::{CompiledPatterns, check_patterns};
use crate::validate::Problem;
use pactwise_domain::CuadCategory;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The file's name inside the library directory.
pub const CATEGORIES_FILE: &str = "categories.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CategoriesFile {
    #[serde(default)]
    categories: Vec<CategorySignals>,
}

/// One category's signals as the data file states them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategorySignals {
    pub category: CuadCategory,
    /// A sentence matching any of these supports the category.
    pub clause: Vec<String>,
    /// A sentence that also matches one of these does not (a definition, a cross-reference, a negation).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Whole-document conditions: when given, at least one must match somewhere in the contract.
    #[serde(default)]
    pub requires: Vec<String>,
}

/// One category's signals, compiled.
#[derive(Debug, Clone)]
pub struct CompiledCategorySignals {
    pub category: CuadCategory,
    pub clause: Vec<Regex>,
    pub exclude: Vec<Regex>,
    pub requires: Vec<Regex>,
}

impl CompiledCategorySignals {
    fn compile(signals: &CategorySignals, compiled: &CompiledPatterns) -> CompiledCategorySignals {
        let compile = |patterns: &[String]| patterns.iter().filter_map(|p| compiled.get(p).ok()).collect();
        CompiledCategorySignals {
            category: signals.category,
            clause: compile(&signals.clause),
            exclude: compile(&signals.exclude),
            requires: compile(&signals.requires),
        }
    }

    /// Whether a sentence is evidence: it matches a clause pattern and no exclusion.
    pub fn supports(&self, sentence: &str) -> bool {
        self.clause.iter().any(|r| r.is_match(sentence)) && !self.exclude.iter().any(|r| r.is_match(sentence))
    }
}

/// Parses and checks the categories file; the compiled signals, or the problems found.
pub(crate) fn parse(text: &str, problems: &mut Vec<Problem>) -> Vec<CategorySignals> {
    let file = match toml::from_str::<CategoriesFile>(text) {
        Ok(file) => file,
        Err(error) => {
            problems.push(Problem::new(CATEGORIES_FILE, "", format!("not a valid categories file: {error}")));
            return Vec::new();
        }
    };
    let mut seen = HashSet::new();
    for signals in &file.categories {
        let at = signals.category.as_str();
        if !seen.insert(signals.category) {
            problems.push(Problem::new(CATEGORIES_FILE, at, "category listed twice"));
        }
        if signals.clause.is_empty() {
            problems.push(Problem::new(CATEGORIES_FILE, at, "a category needs at least one clause pattern"));
        }
        check_patterns(CATEGORIES_FILE, &format!("{at} clause"), &signals.clause, problems);
        check_patterns(CATEGORIES_FILE, &format!("{at} exclude"), &signals.exclude, problems);
        check_patterns(CATEGORIES_FILE, &format!("{at} requires"), &signals.requires, problems);
    }
    file.categories
}

/// Compiles every category's signals (done once, on first use).
pub(crate) fn compile_all(signals: &[CategorySignals], compiled: &CompiledPatterns) -> Vec<CompiledCategorySignals> {
    signals.iter().map(|one| CompiledCategorySignals::compile(one, compiled)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_supports_a_category_when_a_clause_pattern_matches_and_no_exclusion_does() {
        let mut problems = Vec::new();
        let parsed = parse(
            r#"
[[categories]]
category = "Audit Rights"
clause = ['audit\s+the\s+books']
exclude = ['audited\s+financial']
"#,
            &mut problems,
        );
        assert!(problems.is_empty(), "{problems:?}");
        let compiled = compile_all(&parsed, &CompiledPatterns::default());
        assert_eq!(compiled[0].category, CuadCategory::AuditRights);
        assert!(compiled[0].supports("The Supplier may AUDIT the books of the Distributor once a year."));
        assert!(!compiled[0].supports("It shall audit the books and deliver audited financial statements."));
        assert!(!compiled[0].supports("Payment is due in thirty days."));
    }

    #[test]
    fn unknown_categories_duplicates_and_bad_patterns_are_all_reported() {
        let mut problems = Vec::new();
        parse("[[categories]]\ncategory = \"Governing law\"\nclause = ['x']\n", &mut problems);
        assert_eq!(problems.len(), 1, "a misspelt category name is refused: {problems:?}");
        problems.clear();
        parse(
            "[[categories]]\ncategory = \"Insurance\"\nclause = ['(unclosed']\n\n[[categories]]\ncategory = \"Insurance\"\nclause = []\n",
            &mut problems,
        );
        let messages: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert!(messages.iter().any(|m| m.contains("does not compile")), "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("listed twice")), "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("at least one clause pattern")), "{messages:?}");
    }
}
