//! Patterns: checked at load with `regex-syntax` (cheap: parse only), compiled into `regex::Regex` the first time a
//! caller asks for a type's or an item's signals, then kept. Compiling all ~5,000 patterns of the library up front
//! would cost seconds at every start; a review needs the classifier patterns and one type's items.

use crate::validate::Problem;
use pactwise_domain::{ChecklistItem, Signals};
use regex::{Regex, RegexBuilder};
use std::collections::HashMap;
use std::sync::Mutex;

/// Compiles one library pattern exactly as the catalog does: case-insensitive, Unicode, linear-time matching.
pub fn compile_pattern(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).case_insensitive(true).build()
}

/// The catalog's patterns compiled so far, one compiled regex per distinct pattern text. The library repeats many
/// patterns across types and categories (6,523 patterns, 3,013 distinct), and one with a bounded repeat of a Unicode
/// class (`[^.]{0,250}`, `(\w+\s+){0,12}`) compiles to a megabyte or two; each is compiled once and its clones
/// share the compiled program.
#[derive(Debug, Default)]
pub(crate) struct CompiledPatterns {
    by_text: Mutex<HashMap<Box<str>, Result<Regex, String>>>,
}

impl CompiledPatterns {
    /// The pattern compiled by [`compile_pattern`], from this cache when it was compiled before.
    pub(crate) fn get(&self, pattern: &str) -> Result<Regex, String> {
        let mut by_text = self.by_text.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(compiled) = by_text.get(pattern) {
            return compiled.clone();
        }
        let compiled = compile_pattern(pattern).map_err(|e| e.to_string());
        by_text.insert(pattern.into(), compiled.clone());
        compiled
    }

    /// How many distinct patterns have been compiled.
    pub(crate) fn len(&self) -> usize {
        self.by_text.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len()
    }
}

/// A type's classifier patterns, compiled.
#[derive(Debug, Clone)]
pub struct CompiledTypeSignals {
    pub title_patterns: Vec<Regex>,
    pub distinctive_terms: Vec<Regex>,
    pub negative_cues: Vec<Regex>,
}

/// An item's evaluator patterns, compiled.
#[derive(Debug, Clone)]
pub struct CompiledItemSignals {
    pub present: Vec<Regex>,
    pub partial: Vec<Regex>,
    pub absent: Vec<Regex>,
}

/// Compiles patterns that passed validation. Validation parses each with the same syntax and flags, so a failure here
/// can only be the regex crate's size limit; such a pattern is left out and logged rather than failing a review.
fn compile_validated(patterns: &[String], compiled: &CompiledPatterns) -> Vec<Regex> {
    patterns
        .iter()
        .filter_map(|pattern| match compiled.get(pattern) {
            Ok(regex) => Some(regex),
            Err(error) => {
                tracing::warn!(%pattern, %error, "a validated checklist pattern did not compile; it is skipped");
                None
            }
        })
        .collect()
}

impl CompiledTypeSignals {
    pub(crate) fn compile(signals: &Signals, compiled: &CompiledPatterns) -> CompiledTypeSignals {
        CompiledTypeSignals {
            title_patterns: compile_validated(&signals.title_patterns, compiled),
            distinctive_terms: compile_validated(&signals.distinctive_terms, compiled),
            negative_cues: compile_validated(&signals.negative_cues, compiled),
        }
    }
}

impl CompiledItemSignals {
    pub(crate) fn compile(item: &ChecklistItem, compiled: &CompiledPatterns) -> CompiledItemSignals {
        CompiledItemSignals {
            present: compile_validated(&item.signals.present, compiled),
            partial: compile_validated(&item.signals.partial, compiled),
            absent: compile_validated(&item.signals.absent, compiled),
        }
    }
}

/// Checks that each pattern is valid Rust `regex` syntax (case-insensitive, Unicode; so no look-around and no
/// back-references) and cannot match empty text (which would match every contract).
pub(crate) fn check_patterns(file: &str, location: &str, patterns: &[String], problems: &mut Vec<Problem>) {
    for (index, pattern) in patterns.iter().enumerate() {
        let at = format!("{location}[{index}]");
        if pattern.trim().is_empty() {
            problems.push(Problem::new(file, &at, "pattern is empty"));
            continue;
        }
        let mut parser = regex_syntax::ParserBuilder::new().case_insensitive(true).build();
        match parser.parse(pattern) {
            Ok(hir) if hir.properties().minimum_len() == Some(0) => {
                problems.push(Problem::new(
                    file,
                    &at,
                    format!("pattern {pattern:?} matches empty text, so it matches every contract"),
                ));
            }
            Ok(_) => {}
            Err(error) => {
                let reason = error.to_string().lines().last().unwrap_or_default().trim().to_owned();
                problems.push(Problem::new(file, &at, format!("pattern {pattern:?} does not compile: {reason}")));
            }
        }
    }
}

/// Checks every pattern of a type: its classifier signals and each item's evaluator signals.
pub(crate) fn check_type_patterns(file: &str, t: &pactwise_domain::ContractType, problems: &mut Vec<Problem>) {
    check_patterns(file, "signals.title_patterns", &t.signals.title_patterns, problems);
    check_patterns(file, "signals.distinctive_terms", &t.signals.distinctive_terms, problems);
    check_patterns(file, "signals.negative_cues", &t.signals.negative_cues, problems);
    for item in &t.items {
        let at = |field: &str| format!("{} signals.{field}", item.id);
        check_patterns(file, &at("present"), &item.signals.present, problems);
        check_patterns(file, &at("partial"), &item.signals.partial, problems);
        check_patterns(file, &at("absent"), &item.signals.absent, problems);
    }
}
