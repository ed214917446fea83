//! The working view of a document while its structure is read: every non-empty line with its page and position.

use crate::Zone;
use pactwise_domain::Page;
use regex::Regex;
use std::sync::LazyLock;

/// One non-empty line while the structure is being read.
pub(crate) struct WorkLine<'p> {
    /// The page's number.
    pub page: u32,
    /// Index of the page in the document.
    pub page_index: usize,
    /// Trimmed byte range in the page's text.
    pub start: usize,
    pub end: usize,
    pub text: &'p str,
    /// Position among the page's non-empty lines, and how many there are.
    pub nth_in_page: usize,
    pub lines_in_page: usize,
    /// A blank line (or the page start) comes before it.
    pub blank_before: bool,
    /// Set by the early passes (running lines, table of contents); the rest is decided at the end.
    pub zone: Option<Zone>,
}

impl WorkLine<'_> {
    pub fn words(&self) -> usize {
        self.text.split_whitespace().count()
    }
}

pub(crate) struct WorkDoc<'p> {
    pub lines: Vec<WorkLine<'p>>,
    /// The document's page boundaries were made by us (TXT, DOCX without page breaks).
    pub synthetic: bool,
    pub page_count: usize,
}

impl WorkDoc<'_> {
    /// Indices of the lines no earlier pass has claimed (content lines), in order.
    pub fn content(&self) -> impl Iterator<Item = usize> + '_ {
        self.lines.iter().enumerate().filter(|(_, l)| l.zone.is_none()).map(|(i, _)| i)
    }
}

/// Cuts every page into trimmed non-empty lines.
pub(crate) fn split(pages: &[Page]) -> WorkDoc<'_> {
    let mut lines = Vec::new();
    for (page_index, page) in pages.iter().enumerate() {
        let first = lines.len();
        let mut offset = 0;
        let mut blank = true;
        for raw in page.text.split('\n') {
            let start_raw = offset;
            offset += raw.len() + 1;
            if raw.trim().is_empty() {
                blank = true;
                continue;
            }
            for piece in pieces(raw) {
                let text = raw[piece.clone()].trim();
                if text.is_empty() {
                    continue;
                }
                let lead = raw[piece.clone()].len() - raw[piece.clone()].trim_start().len();
                let start = start_raw + piece.start + lead;
                lines.push(WorkLine {
                    page: page.number,
                    page_index,
                    start,
                    end: start + text.len(),
                    text,
                    nth_in_page: lines.len() - first,
                    lines_in_page: 0,
                    blank_before: blank,
                    zone: None,
                });
                blank = false;
            }
        }
        let count = lines.len() - first;
        for line in &mut lines[first..] {
            line.lines_in_page = count;
        }
    }
    WorkDoc { lines, synthetic: pages.iter().any(|p| p.synthetic), page_count: pages.len() }
}

/// A line longer than this that holds runs of spaces is text whose line breaks were lost (the spaces stand where
/// they were): it is read as the lines the runs separate.
const LOST_BREAKS: usize = 300;

/// A line longer than this is a page or more whose line breaks were lost (no runs of spaces mark them): it is cut
/// where a numbered section starts after the end of a sentence, so the sections in it are read as sections.
const RUN_TOGETHER: usize = 1_000;

/// A numbered section starting inside a run-together line: the end of a sentence, then "4." or "4.1" (or "4.1.2")
/// and a capital ("... of this Agreement. 4. Term. This Agreement ...", "... hereunder. 3.1 Purchase Orders.").
static INLINE_SECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"[.;:"\u{201D})]\s+(\d{1,2}\.(?:\d{1,2}(?:\.\d{1,2})?\.?)?)\s+[A-Z]"#).expect("valid pattern")
});

/// The byte ranges of the lines inside one line of text: itself, or for a long line with runs of three or more
/// spaces, the pieces between those runs; and a run-together line cut where its numbered sections start.
fn pieces(raw: &str) -> Vec<std::ops::Range<usize>> {
    spaced_pieces(raw).into_iter().flat_map(|piece| section_pieces(raw, piece)).collect()
}

/// A piece longer than [`RUN_TOGETHER`] cut before each numbered section that starts inside it.
fn section_pieces(raw: &str, piece: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    if piece.len() <= RUN_TOGETHER {
        return vec![piece];
    }
    let text = &raw[piece.clone()];
    let mut out = Vec::new();
    let mut start = piece.start;
    for c in INLINE_SECTION.captures_iter(text) {
        let at = piece.start + c.get(1).map_or(0, |m| m.start());
        if at > start {
            out.push(start..at);
            start = at;
        }
    }
    out.push(start..piece.end);
    out
}

/// The pieces of a long line with runs of three or more spaces (lost line breaks), else the line itself.
fn spaced_pieces(raw: &str) -> Vec<std::ops::Range<usize>> {
    if raw.trim().len() <= LOST_BREAKS || !raw.trim().contains("   ") {
        return std::iter::once(0..raw.len()).collect();
    }
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' {
            let mut j = i;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            if j - i >= 3 {
                out.push(start..i);
                start = j;
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out.push(start..raw.len());
    out
}

/// A line reduced to what stays the same when a running line repeats: lower case, every run of digits as `#`,
/// letters, digits and single spaces only.
pub(crate) fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last_digit = false;
    let mut last_space = true;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('#');
            }
            last_digit = true;
            last_space = false;
        } else if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
            last_digit = false;
            last_space = false;
        } else if !last_space {
            // Punctuation and spaces both separate words.
            out.push(' ');
            last_space = true;
            last_digit = false;
        }
    }
    out.trim_end().to_owned()
}

/// Is most of this short text capitalised like a heading (Title Case or UPPER CASE)?
/// A line of only rule characters, at least three: a heading's underline ("-----", "_____", "=====", "~~~~~",
/// "*****") or a separator. It holds no words of the contract.
pub(crate) fn is_rule(text: &str) -> bool {
    let text = text.trim();
    text.chars().filter(|c| !c.is_whitespace()).count() >= 3
        && text.chars().all(|c| {
            c.is_whitespace() || matches!(c, '-' | '_' | '=' | '~' | '*' | '\u{2014}' | '\u{2013}' | '\u{2500}')
        })
}

pub(crate) fn title_like(text: &str) -> bool {
    const SMALL: &[&str] = &[
        "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "under",
        "upon", "with", "its", "their", "vs", "not", "no", "other", "than", "this", "that", "these", "those", "such",
        "each", "any", "all", "per", "via", "over", "between", "among", "within", "without", "after", "before",
        "during", "against", "about", "off", "out", "up",
    ];
    let mut words = 0;
    let mut capital = 0;
    for word in text.split(|c: char| c.is_whitespace() || c == '/') {
        let w = word.trim_matches(|c: char| !c.is_alphanumeric());
        let Some(first) = w.chars().next() else { continue };
        if first.is_ascii_digit() {
            continue;
        }
        if SMALL.contains(&w.to_lowercase().as_str()) && !first.is_uppercase() {
            continue;
        }
        words += 1;
        if first.is_uppercase() {
            capital += 1;
        }
    }
    words > 0 && capital * 10 >= words * 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalising_keeps_what_repeats_and_drops_numbers_and_punctuation() {
        assert_eq!(normalise("Source: ZOGENIX, INC., 10-Q, 5/9/2019"), "source zogenix inc # q # # #");
        assert_eq!(normalise("Page 3 of 12"), "page # of #");
        assert_eq!(normalise("  - 7 -  "), "#");
    }

    #[test]
    fn headings_are_title_like_and_sentences_are_not() {
        assert!(title_like("Limitation of Liability"));
        assert!(title_like("REPRESENTATIONS AND WARRANTIES"));
        assert!(title_like("Representations, Warranties and Covenants; Limitation of Liability"));
        assert!(!title_like("Neither party shall be liable for indirect damages"));
    }

    #[test]
    fn a_long_line_with_lost_breaks_is_read_as_its_lines() {
        let body = "word ".repeat(70);
        let text = format!(
            "Exhibit 10.1     SUPPLY AGREEMENT     This Agreement is made between A and B.     1. Term. {body}"
        );
        let pages = [Page::plain(1, text.clone())];
        let doc = split(&pages);
        let texts: Vec<&str> = doc.lines.iter().map(|l| l.text).collect();
        assert_eq!(texts[..3], ["Exhibit 10.1", "SUPPLY AGREEMENT", "This Agreement is made between A and B."]);
        assert_eq!(&text[doc.lines[1].start..doc.lines[1].end], "SUPPLY AGREEMENT");
        assert!(texts[3].starts_with("1. Term."));
    }

    #[test]
    fn a_run_together_page_is_cut_where_its_numbered_sections_start() {
        let filler = "The parties shall cooperate in good faith on every matter under this agreement. ".repeat(12);
        let text = format!(
            "SUPPLY AGREEMENT This Agreement is made between A and B. 1. Supply. {filler}2. Term. This Agreement runs \
             for two years, under Section 3. 2.1 Renewal. It renews for one year at a time. The fee is $2.5 million."
        );
        let pages = [Page::plain(1, text.clone())];
        let doc = split(&pages);
        let texts: Vec<&str> = doc.lines.iter().map(|l| l.text).collect();
        assert_eq!(texts.len(), 4, "{texts:?}");
        assert_eq!(texts[0], "SUPPLY AGREEMENT This Agreement is made between A and B.");
        assert!(texts[1].starts_with("1. Supply.") && texts[2].starts_with("2. Term."));
        assert_eq!(texts[3], "2.1 Renewal. It renews for one year at a time. The fee is $2.5 million.");
        assert_eq!(&text[doc.lines[3].start..doc.lines[3].end], texts[3]);
        // A line of ordinary length is never cut.
        let short = [Page::plain(1, "This Agreement is made between A and B. 1. Supply. A supplies B.")];
        assert_eq!(split(&short).lines.len(), 1);
    }

    #[test]
    fn lines_are_trimmed_with_their_page_offsets() {
        let pages = [Page::plain(1, "  Title  \n\nFirst line.\nSecond"), Page::plain(2, "Next page")];
        let doc = split(&pages);
        let texts: Vec<_> = doc.lines.iter().map(|l| (l.page, l.text, l.blank_before)).collect();
        assert_eq!(texts, [(1, "Title", true), (1, "First line.", true), (1, "Second", false), (2, "Next page", true)]);
        assert_eq!(&pages[0].text[doc.lines[1].start..doc.lines[1].end], "First line.");
        assert_eq!(doc.lines[2].lines_in_page, 3);
    }
}
