//! The contract indexed once: its pages, each cut into sentences (byte ranges of the page's own text, so any sentence
//! quoted is on its page verbatim), where each sentence sits in the document's structure (zone, section, heading,
//! definition, cross-reference), and the head of the document where the title and the preamble sit. Running headers
//! and footers are cut out before sentences are made, so no sentence runs into a page's furniture.

use pactwise_domain::Page;
use pactwise_structure::{DocumentStructure, Section, Zone, is_bare_cross_reference};
use regex::Regex;
use std::ops::Range;
use std::sync::LazyLock;

/// A definition whose term is not in quotes: an optional number, then a few words, then "means" or "shall mean".
static UNQUOTED_DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\W*(?:\d+(?:\.\d+)*\.?\s+)?["“]?([A-Za-z][A-Za-z -]{0,40}?)["”]?\s+(?:shall\s+)?means?\b"#)
        .expect("valid pattern")
});

/// How much of the document's beginning counts as its head (title, parties, recitals).
const HEAD_CHARS: usize = 3_000;
/// A sentence longer than this is cut at its next semicolon or line break, so a quote stays readable.
const LONG_SENTENCE: usize = 1_500;

/// One sentence: the index of its page in [`ContractIndex::pages`] and its byte range in that page's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub page: usize,
    pub range: Range<usize>,
}

/// Where a sentence sits in the document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Place {
    /// The zone that decides (the worst of the lines it touches).
    pub zone: Zone,
    /// Its innermost section (index into the structure's sections).
    pub section: Option<u32>,
    /// It is only a section's number and heading.
    pub heading_only: bool,
    /// It starts a definition ("X" means ...).
    pub definition: bool,
    /// It only points at another part of the document.
    pub cross_reference: bool,
}

impl Place {
    /// May this sentence be offered as a clause's evidence? Operative text and exhibits only: never a running line,
    /// the table of contents, a bare heading or a cross-reference; definitions, recitals, the cover, the preamble
    /// and signature blocks name things, they do not agree them.
    pub fn is_operative(&self) -> bool {
        matches!(self.zone, Zone::Operative | Zone::Exhibit)
            && !self.heading_only
            && !self.cross_reference
            && !self.definition
    }

    /// May it be quoted at all (for an item about a definition, the definitions too)?
    pub fn is_quotable(&self) -> bool {
        self.zone.may_hold_clauses() && !self.heading_only && !self.cross_reference
    }
}

/// The contract's text, indexed once for all items.
pub struct ContractIndex {
    pages: Vec<Page>,
    sentences: Vec<Sentence>,
    /// For each page, the index of its first sentence in `sentences` (and one past the last page's).
    page_starts: Vec<usize>,
    /// Sentences a page break cuts in two (common in text whose pages we made by length): the last sentence of a
    /// page, the first of the next, and the two joined, so a clause is recognised across the break.
    joins: Vec<(usize, usize, String)>,
    head: String,
    structure: DocumentStructure,
    /// Parallel to `sentences`.
    places: Vec<Place>,
}

impl ContractIndex {
    pub fn build(pages: &[Page]) -> ContractIndex {
        ContractIndex::with_structure(pages, DocumentStructure::build(pages))
    }

    /// Indexes the pages with a structure read before (stored with the document).
    pub fn with_structure(pages: &[Page], structure: DocumentStructure) -> ContractIndex {
        let _span = tracing::debug_span!("offline.index", pages = pages.len()).entered();
        let mut sentences = Vec::new();
        let mut page_starts = Vec::with_capacity(pages.len() + 1);
        for (p, page) in pages.iter().enumerate() {
            page_starts.push(sentences.len());
            // Running lines and table-of-contents lines cut the page into segments; sentences never cross them.
            let mut cuts: Vec<(Range<usize>, bool)> = structure
                .lines
                .iter()
                .filter(|l| l.page == page.number && (l.zone.is_running() || l.zone == Zone::TableOfContents))
                .map(|l| (l.range(), l.zone == Zone::TableOfContents))
                .collect();
            cuts.sort_by_key(|(r, _)| r.start);
            let mut at = 0;
            let mut segments: Vec<Range<usize>> = Vec::new();
            for (range, keep) in cuts {
                if range.start > at {
                    segments.push(at..range.start);
                }
                if keep {
                    segments.push(range.clone());
                }
                at = at.max(range.end);
            }
            segments.push(at..page.text.len());
            for segment in segments {
                let Some(text) = page.text.get(segment.clone()) else { continue };
                sentences.extend(
                    split_sentences(text).into_iter().map(|range| Sentence {
                        page: p,
                        range: segment.start + range.start..segment.start + range.end,
                    }),
                );
            }
        }
        page_starts.push(sentences.len());
        let places: Vec<Place> = sentences
            .iter()
            .map(|s| {
                let page = &pages[s.page];
                let placed = structure.place(page.number, s.range.clone());
                let text = &page.text[s.range.clone()];
                Place {
                    zone: placed.worst_zone().unwrap_or(Zone::Operative),
                    section: placed.section_index,
                    heading_only: placed.in_heading,
                    definition: placed.definition.is_some(),
                    cross_reference: is_bare_cross_reference(text),
                }
            })
            .collect();
        // The head: the first characters of the document's own text, without running lines or the contents table.
        let mut head = String::with_capacity(HEAD_CHARS + 64);
        'lines: for line in structure.lines.iter().filter(|l| !l.zone.is_running() && l.zone != Zone::TableOfContents) {
            for c in structure.line_text(pages, line).chars() {
                if head.len() >= HEAD_CHARS {
                    break 'lines;
                }
                head.push(c);
            }
            head.push('\n');
        }
        let mut joins = Vec::new();
        for p in 0..pages.len().saturating_sub(1) {
            let first = page_starts[p + 1];
            if first == 0 || first >= sentences.len() {
                continue;
            }
            let (before, after) = (&sentences[first - 1], &sentences[first]);
            if before.page != p || after.page != p + 1 {
                continue;
            }
            let tail = &pages[p].text[before.range.clone()];
            if tail.ends_with(['.', '!', '?', ':']) {
                continue;
            }
            joins.push((first - 1, first, format!("{tail} {}", &pages[p + 1].text[after.range.clone()])));
        }
        ContractIndex { pages: pages.to_vec(), sentences, page_starts, joins, head, structure, places }
    }

    /// The document's structure.
    pub fn structure(&self) -> &DocumentStructure {
        &self.structure
    }

    /// Where sentence `i` sits.
    pub fn place(&self, i: usize) -> Place {
        self.places[i]
    }

    /// The headings of the section holding sentence `i` and of its parents, joined ("Indemnification / Insurance").
    pub fn headings_of(&self, i: usize) -> String {
        self.places[i]
            .section
            .map(|s| self.structure.headings_of(&self.structure.sections[s as usize]))
            .unwrap_or_default()
    }

    /// The term sentence `i` defines, when it starts a definition (in the definitions section the term may be
    /// written without quotes: "1.9 INITIAL TERM shall mean ...").
    pub fn defined_term(&self, i: usize) -> Option<&str> {
        let sentence = &self.sentences[i];
        let placed = self.structure.place(self.pages[sentence.page].number, sentence.range.clone());
        if placed.definition.is_some() {
            return placed.definition;
        }
        if self.places[i].zone != Zone::Definitions {
            return None;
        }
        UNQUOTED_DEFINITION.captures(self.sentence_text(sentence)).and_then(|c| c.get(1)).map(|m| m.as_str())
    }

    /// The section holding sentence `i`.
    pub fn section_of(&self, i: usize) -> Option<&Section> {
        self.places[i].section.map(|s| &self.structure.sections[s as usize])
    }

    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    pub fn sentences(&self) -> &[Sentence] {
        &self.sentences
    }

    /// Sentences cut by a page break: (last sentence of a page, first of the next, their joined text).
    pub fn joined_sentences(&self) -> &[(usize, usize, String)] {
        &self.joins
    }

    /// The first characters of the document: title, preamble, parties.
    pub fn head(&self) -> &str {
        &self.head
    }

    pub fn sentence_text(&self, sentence: &Sentence) -> &str {
        &self.pages[sentence.page].text[sentence.range.clone()]
    }

    /// The 1-based page number a sentence is on, as the page states it.
    pub fn page_number(&self, sentence: &Sentence) -> u32 {
        self.pages[sentence.page].number
    }

    /// The index (into [`ContractIndex::sentences`]) of the sentence of page `page` holding byte `at`.
    pub fn sentence_at(&self, page: usize, at: usize) -> Option<usize> {
        let (first, end) = (self.page_starts[page], self.page_starts[page + 1]);
        let slice = &self.sentences[first..end];
        let i = slice.partition_point(|s| s.range.start <= at);
        (i > 0 && slice[i - 1].range.end > at).then(|| first + i - 1)
    }
}

/// Words after which a full stop does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "inc", "ltd", "co", "corp", "no", "nos", "sec", "secs", "art", "arts", "para", "u.s", "e.g", "i.e", "etc", "st",
    "mr", "mrs", "ms", "dr", "jr", "sr", "vs", "v", "n.v", "b.v", "s.a", "l.p", "l.l.c", "p.c", "cf", "approx", "dept",
    "est", "fig", "ref", "ave", "blvd", "rd", "ste", "gmbh", "plc", "llc", "n.a", "u.k", "ag", "s.p.a", "pty", "bhd",
];

/// Cuts a page's text into sentences: at a full stop, question or exclamation mark followed by whitespace and a
/// capital, digit or opening bracket/quote (not after an abbreviation or a single letter), at blank lines, and inside
/// an overlong sentence at semicolons or line breaks. Ranges are trimmed of whitespace; empty ones are dropped.
pub(crate) fn split_sentences(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut cuts = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if matches!(b, b'.' | b'?' | b'!') && ends_sentence(text, i) {
            cuts.push(start..i + 1);
            start = i + 1;
        } else if b == b'\n' {
            // A blank line ends a paragraph.
            let mut j = i + 1;
            while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\r') {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == b'\n' {
                cuts.push(start..i);
                start = j;
                i = j;
            }
        }
        i += 1;
    }
    cuts.push(start..bytes.len());
    let mut out = Vec::with_capacity(cuts.len());
    for range in cuts {
        for piece in cut_long(text, range) {
            if let Some(trimmed) = trim(text, piece) {
                out.push(trimmed);
            }
        }
    }
    out
}

fn ends_sentence(text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    let rest = &text[at + 1..];
    let after = rest.trim_start_matches([' ', '\t', '\r', '\n']);
    if after.len() == rest.len() && !rest.is_empty() {
        return false; // "2.1", "U.S." inside a word
    }
    let Some(next) = after.chars().next() else { return true };
    if !(next.is_uppercase() || next.is_ascii_digit() || matches!(next, '(' | '"' | '\u{201C}' | '[' | '\'')) {
        return false;
    }
    if bytes[at] != b'.' {
        return true;
    }
    // The word before the full stop.
    let before = &text[..at];
    let word_start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || c == '(' || c == ',')
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = before[word_start..].trim_matches(|c: char| c == '"' || c == '\'');
    let lower = word.to_ascii_lowercase();
    if word.chars().count() == 1 && word.chars().all(|c| c.is_alphabetic()) {
        return false; // an initial: "M. D. Anderson"
    }
    !ABBREVIATIONS.contains(&lower.as_str())
}

fn cut_long(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    if range.len() <= LONG_SENTENCE {
        return vec![range];
    }
    let mut out = Vec::new();
    let mut start = range.start;
    let slice = &text[range.clone()];
    for (offset, c) in slice.char_indices() {
        let at = range.start + offset;
        if at - start >= LONG_SENTENCE / 3 && (c == ';' || c == '\n') {
            out.push(start..at + 1);
            start = at + 1;
        }
    }
    out.push(start..range.end);
    out
}

fn trim(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let slice = &text[range.clone()];
    let lead = slice.len() - slice.trim_start().len();
    let trimmed = slice.trim();
    if trimmed.chars().filter(|c| c.is_alphanumeric()).count() < 3 {
        return None;
    }
    let start = range.start + lead;
    Some(start..start + trimmed.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(text: &str) -> Vec<&str> {
        split_sentences(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn sentences_end_at_full_stops_but_not_after_abbreviations_or_section_numbers() {
        let text = "Acme Inc. shall pay under Section 2.1 of this Agreement. The term is five years.\n\n7. NOTICES\nAll notices go to M. D. Anderson.";
        assert_eq!(
            sentences(text),
            [
                "Acme Inc. shall pay under Section 2.1 of this Agreement.",
                "The term is five years.",
                "NOTICES\nAll notices go to M. D. Anderson."
            ]
        );
    }

    #[test]
    fn a_sentence_cut_by_a_page_break_is_joined_for_matching() {
        let index = ContractIndex::build(&[
            Page::plain(1, "The term is one year. Licensee shall not challenge"),
            Page::plain(2, "the validity of the Marks. Fees are due monthly."),
        ]);
        let joins = index.joined_sentences();
        assert_eq!(joins.len(), 1);
        assert_eq!(joins[0].2, "Licensee shall not challenge the validity of the Marks.");
        assert_eq!(index.page_number(&index.sentences()[joins[0].1]), 2);
    }

    #[test]
    fn a_sentence_is_found_from_a_byte_offset_of_its_page() {
        let index = ContractIndex::build(&[Page::plain(1, "First one. Second one."), Page::plain(2, "Third one.")]);
        assert_eq!(index.sentences().len(), 3);
        let second = index.sentence_at(0, 13).unwrap();
        assert_eq!(index.sentence_text(&index.sentences()[second]), "Second one.");
        assert_eq!(index.page_number(&index.sentences()[index.sentence_at(1, 0).unwrap()]), 2);
        assert_eq!(index.sentence_at(0, 10), None, "the space between sentences belongs to none");
    }
}
