//! A query's terms: common words dropped, each once, at most 16. As a safe FTS5 query (the precedent corpus's, and
//! whether a query has anything to search for) every term is quoted, so no FTS5 syntax from a person or the model
//! can change the query, and terms are joined with OR; the word index stems the same terms.

const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "do",
    "does",
    "for",
    "from",
    "has",
    "have",
    "how",
    "if",
    "in",
    "is",
    "it",
    "its",
    "of",
    "on",
    "or",
    "our",
    "shall",
    "that",
    "the",
    "their",
    "there",
    "this",
    "to",
    "under",
    "was",
    "we",
    "what",
    "when",
    "where",
    "which",
    "who",
    "will",
    "with",
    "would",
    "you",
    "your",
    "contract",
    "contracts",
    "agreement",
    "agreements",
    "clause",
    "say",
    "says",
];

/// The FTS5 MATCH expression for `words` (any term), or `None` when nothing searchable is left.
pub fn match_expression(words: &str) -> Option<String> {
    Some(terms(words)?.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(" OR "))
}

/// The searchable terms of `words`: lower case, common words dropped, each once, at most 16.
pub(crate) fn terms(words: &str) -> Option<Vec<String>> {
    let mut terms: Vec<String> = Vec::new();
    for raw in words.split(|c: char| !c.is_alphanumeric()) {
        let term = raw.to_lowercase();
        if term.chars().count() < 2 || STOPWORDS.contains(&term.as_str()) || terms.contains(&term) {
            continue;
        }
        terms.push(term);
        if terms.len() == 16 {
            break;
        }
    }
    (!terms.is_empty()).then_some(terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_quoted_and_fts_syntax_cannot_get_through() {
        assert_eq!(match_expression("What is the liability cap?").unwrap(), "\"liability\" OR \"cap\"");
        let hostile = "cap\" OR x:* NEAR(a b) AND NOT -col:secret";
        let expr = match_expression(hostile).unwrap();
        assert!(!expr.contains(':') && !expr.contains('*') && !expr.contains('('), "{expr}");
        assert_eq!(match_expression("the of and ?"), None);
    }
}
