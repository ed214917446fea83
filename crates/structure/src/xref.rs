//! Cross-references: a sentence that only points elsewhere ("See Section 10.5.", "as set forth in Article 12") names
//! a clause, it does not make one, so it is never offered as a clause's evidence.

use regex::Regex;
use std::sync::LazyLock;

static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(sections?|articles?|clauses?|paragraphs?|subsections?|exhibits?|schedules?|annex(es)?|appendi(x|ces))\s+[0-9A-Z][0-9A-Za-z.]*(\([0-9a-z]{1,4}\))*(\s*(,|and|or|through|to|-)\s*[0-9A-Z][0-9A-Za-z.]*(\([0-9a-z]{1,4}\))*)*",
    )
    .expect("valid pattern")
});
static POINTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\W*(see|refer to|as (set forth|provided|described|defined|specified) in|pursuant to|subject to|in accordance with|under)\b")
        .expect("valid pattern")
});
static STOP: &[&str] = &[
    "the",
    "a",
    "an",
    "of",
    "in",
    "to",
    "and",
    "or",
    "as",
    "this",
    "that",
    "such",
    "set",
    "forth",
    "provided",
    "described",
    "defined",
    "specified",
    "see",
    "refer",
    "herein",
    "hereof",
    "hereto",
    "below",
    "above",
    "with",
    "under",
    "pursuant",
    "accordance",
    "subject",
    "agreement",
];

/// Does this sentence only point at another part of the document?
pub fn is_bare_cross_reference(sentence: &str) -> bool {
    if !REFERENCE.is_match(sentence) {
        return false;
    }
    let rest = REFERENCE.replace_all(sentence, " ");
    let content = rest
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(&w.to_lowercase().as_str()))
        .count();
    content <= 3 || (POINTER.is_match(sentence) && content <= 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_are_cross_references_and_clauses_that_cite_a_section_are_not() {
        assert!(is_bare_cross_reference("See Section 10.5."));
        assert!(is_bare_cross_reference("As set forth in Sections 10.5 and 10.6 of this Agreement."));
        assert!(is_bare_cross_reference("Limitation of liability: Article 12."));
        assert!(!is_bare_cross_reference(
            "Except for breaches of Section 8, neither Party shall be liable for any indirect or consequential damages."
        ));
        assert!(!is_bare_cross_reference("Neither Party shall be liable for indirect damages."));
    }
}
