//! Running lines: what repeats at the top or bottom of pages (headers, footers, filing stamps, document codes) and
//! page numbers. Found by repetition and position alone, never by wording.

use crate::Zone;
use crate::lines::{WorkDoc, normalise};
use pactwise_domain::Page;
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// How many lines at each end of a page may be running lines (fewer on short pages).
const EDGE_LINES: usize = 4;
/// A running line is short.
const MAX_WORDS: usize = 14;

fn at_edge(nth: usize, count: usize) -> bool {
    nth < EDGE_LINES || nth + EDGE_LINES >= count
}

static PAGE_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)^(?:
            (?:page\s+)?\d{1,4}(?:\s+of\s+\d{1,4})?
          | page\s+[ivxlc]{1,6}
          | [ivxlc]{1,6}
          | [-–—]\s*\d{1,4}\s*[-–—]
          | \d{1,4}\s*/\s*\d{1,4}
          | [A-Z]{1,2}\s*[-–]\s*\d{1,3}
        )$",
    )
    .expect("valid page-number pattern")
});

/// Lines that repeat in a contract's own text without being running lines.
static NOT_RUNNING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(whereas|now,? therefore|witnesseth|by|name|title|date|its|signature|address|attention|article|section|exhibit|schedule|annex|appendix|attachment|addendum)\b")
        .expect("valid pattern")
});

pub(crate) fn mark(doc: &mut WorkDoc<'_>, _pages: &[Page]) {
    // Page numbers: a line that is only a number (or "Page 3 of 9", "- 3 -", "ii") at an edge of its page.
    for line in &mut doc.lines {
        let at_edge = line.nth_in_page < 3 || line.nth_in_page + 3 >= line.lines_in_page;
        if (at_edge || doc.synthetic) && PAGE_NUMBER.is_match(line.text) && !looks_like_clause_number(line.text) {
            line.zone = Some(Zone::PageNumber);
        }
    }
    // Repeated lines: the same normalised text on several pages.
    let mut pages_of: HashMap<String, HashSet<usize>> = HashMap::new();
    let mut occurrences: HashMap<String, usize> = HashMap::new();
    for line in &doc.lines {
        if line.zone.is_some() || line.words() > MAX_WORDS || NOT_RUNNING.is_match(line.text) {
            continue;
        }
        let at_edge = at_edge(line.nth_in_page, line.lines_in_page);
        if !doc.synthetic && !at_edge {
            continue;
        }
        let key = normalise(line.text);
        if key.chars().filter(|c| c.is_alphanumeric()).count() < 3 {
            continue;
        }
        pages_of.entry(key.clone()).or_default().insert(line.page_index);
        *occurrences.entry(key).or_default() += 1;
    }
    let needed_pages = if doc.page_count <= 4 { 2 } else { 3.max(doc.page_count.div_ceil(4)) };
    let running: HashSet<&String> = pages_of
        .iter()
        .filter(|(key, pages)| {
            if doc.synthetic {
                // Page boundaries are ours: count occurrences spread over the text instead.
                occurrences[*key] >= 3 && pages.len() >= 2
            } else {
                pages.len() >= needed_pages
            }
        })
        .map(|(k, _)| k)
        .collect();
    if running.is_empty() {
        return;
    }
    for line in &mut doc.lines {
        if line.zone.is_some() || line.words() > MAX_WORDS || NOT_RUNNING.is_match(line.text) {
            continue;
        }
        let at_edge = at_edge(line.nth_in_page, line.lines_in_page);
        if !doc.synthetic && !at_edge {
            continue;
        }
        if running.contains(&normalise(line.text)) {
            let top = !doc.synthetic && line.nth_in_page * 2 < line.lines_in_page;
            line.zone = Some(if top { Zone::RunningHeader } else { Zone::RunningFooter });
        }
    }
}

/// "1." or "(a)" on a line of its own are clause numbers, not page numbers; a bare "1" is taken as a page number.
fn looks_like_clause_number(text: &str) -> bool {
    text.ends_with('.') || text.starts_with('(')
}

#[cfg(test)]
mod tests {
    use crate::{DocumentStructure, Zone};
    use pactwise_domain::Page;

    fn laid_out(number: u32, text: String) -> Page {
        let mut page = Page::plain(number, text);
        page.synthetic = false;
        page
    }

    const WORDS: [&str; 8] = ["zero", "one", "two", "three", "four", "five", "six", "seven"];

    #[test]
    fn a_filing_stamp_and_page_numbers_repeated_on_every_page_are_running_lines() {
        let pages: Vec<Page> = (1..=6)
            .map(|n| {
                laid_out(
                    n,
                    format!(
                        "{} is what page {n} says in its body.\nThe rest of the page differs: {}.\n{n}\nSource: ACME CORP, 10-K, 3/{n}/2019",
                        WORDS[n as usize],
                        WORDS[7 - n as usize]
                    ),
                )
            })
            .collect();
        let s = DocumentStructure::build(&pages);
        let zones: Vec<Zone> = s.lines.iter().filter(|l| l.page == 3).map(|l| l.zone).collect();
        assert_eq!(zones[2], Zone::PageNumber);
        assert_eq!(zones[3], Zone::RunningFooter);
        assert!(zones[0].may_hold_clauses());
    }

    #[test]
    fn a_line_repeated_in_plain_text_is_a_running_line_but_whereas_is_not() {
        let text = |from: usize| {
            (from..from + 3)
                .map(|n| format!("Clause {} says what it says.\n\nACME-DOCS 1234.5\n\nWHEREAS,\n", WORDS[n]))
                .collect::<String>()
        };
        let s = DocumentStructure::build(&[Page::plain(1, text(0)), Page::plain(2, text(3))]);
        let stamp = s.lines.iter().find(|l| l.zone == Zone::RunningFooter);
        assert!(stamp.is_some());
        assert!(s.lines.iter().filter(|l| l.zone.is_running()).count() == 6);
    }
}
