//! Tables of contents and lists of exhibits: dense runs of headings that point at text elsewhere. A run counts when
//! a heading names it ("Table of Contents") or when most of its numbers open sections again later in the document;
//! both the usual one-entry-per-line layout and a whole table run into one line (plain-text filings) are read.

use crate::Zone;
use crate::lines::{WorkDoc, title_like};
use crate::numbering::parse_section_number;
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

/// The fewest entries a table of contents has.
const MIN_ENTRIES: usize = 5;
/// An entry line is short.
const MAX_ENTRY_WORDS: usize = 16;

static TOC_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(table\s+of\s+contents|contents|index|index\s+of\s+(sections|articles)|list\s+of\s+(exhibits|schedules|annexes|appendices)|(exhibits|schedules)\s*:?)$")
        .expect("valid pattern")
});
static EXHIBIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?i:(exhibit|schedule|annex|appendix|attachment|addendum))\s+([A-Z0-9][A-Za-z0-9.\-]*)")
        .expect("valid pattern")
});
/// Entries run together on one line: "Article 1. Definitions Article 2. Grant of Rights 2.1 Grant of ...".
static INLINE_ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|\s)(?:(?i:article|section|exhibit|schedule)\s+)?([0-9]{1,3}(?:\.[0-9]{1,3})?|[IVX]{1,5})\.?\s+[A-Z\x22\u{201C}]")
        .expect("valid pattern")
});
static PAGE_REF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\.{3,}|…|\s)\s*(?:[0-9]{1,3}|[ivx]{1,5})$").expect("valid pattern"));
static MODAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(shall|will|may|must|hereby|agrees?)\b").expect("valid pattern"));

/// What a line can be inside a table of contents.
#[derive(Debug, PartialEq)]
enum Entry {
    /// A heading naming the table.
    Heading,
    /// One or more entries, with the keys of their numbers.
    Entries(Vec<String>),
    /// A short title line (the title of an entry whose number stands on the line before).
    Title,
    Other,
}

fn key_of(text: &str) -> Option<String> {
    if let Some(c) = EXHIBIT.captures(text) {
        return Some(format!("{} {}", c[1].to_lowercase(), c[2].trim_end_matches('.').to_lowercase()));
    }
    parse_section_number(text).and_then(|n| n.key)
}

fn classify(text: &str) -> Entry {
    let words = text.split_whitespace().count();
    if words <= 6 && TOC_HEADING.is_match(text.trim_end_matches(':')) {
        return Entry::Heading;
    }
    if MODAL.is_match(text) {
        return Entry::Other;
    }
    let inline: Vec<String> = INLINE_ENTRY.captures_iter(text).map(|c| c[1].to_owned()).collect();
    if inline.len() >= 3 && words <= inline.len() * 10 {
        let keys = inline
            .iter()
            .filter_map(|k| parse_section_number(&format!("{k}. X")).and_then(|n| n.key))
            .collect::<Vec<_>>();
        if keys.len() >= 3 {
            return Entry::Entries(keys);
        }
    }
    if words > MAX_ENTRY_WORDS {
        return Entry::Other;
    }
    if let Some(key) = key_of(text) {
        // An entry is a number and a title (and maybe a page number), never a number and a sentence.
        let len =
            EXHIBIT.find(text).map(|m| m.end()).or_else(|| parse_section_number(text).map(|n| n.len)).unwrap_or(0);
        let rest = PAGE_REF.replace(text[len..].trim(), "");
        let rest = rest.trim().trim_matches(|c: char| c == '.' || c == ':' || c == '-' || c.is_whitespace());
        // Lists of exhibits often give their titles in sentence case.
        if rest.is_empty() || title_like(rest) || EXHIBIT.is_match(text) {
            return Entry::Entries(vec![key]);
        }
        return Entry::Other;
    }
    let without_page = PAGE_REF.replace(text, "");
    if words <= 12 && title_like(without_page.trim_end_matches(['.', ':'])) {
        return Entry::Title;
    }
    Entry::Other
}

pub(crate) fn mark(doc: &mut WorkDoc<'_>) {
    let content: Vec<usize> = doc.content().collect();
    let kinds: Vec<Entry> = content.iter().map(|&i| classify(doc.lines[i].text)).collect();
    let mut pos = 0;
    while pos < content.len() {
        if !matches!(kinds[pos], Entry::Heading | Entry::Entries(_)) {
            pos += 1;
            continue;
        }
        // Grow the run: entries and titles, at most two titles in a row.
        let start = pos;
        let mut end = pos + 1;
        let mut titles_in_row = 0;
        while end < content.len() {
            // The line after a number standing alone is that entry's title, however it is written.
            let after_bare_number = matches!(&kinds[end - 1], Entry::Entries(k) if k.len() == 1)
                && parse_section_number(doc.lines[content[end - 1]].text)
                    .is_some_and(|n| n.len >= doc.lines[content[end - 1]].text.len())
                && doc.lines[content[end]].words() <= 12;
            // One odd short line between two entries does not end the table.
            let bridged = doc.lines[content[end]].words() <= 12
                && matches!(kinds.get(end + 1), Some(Entry::Entries(_)))
                && matches!(&kinds[end - 1], Entry::Entries(_));
            match &kinds[end] {
                Entry::Entries(_) | Entry::Heading => titles_in_row = 0,
                _ if after_bare_number || bridged => titles_in_row = 0,
                Entry::Title if titles_in_row < 2 => titles_in_row += 1,
                _ => break,
            }
            end += 1;
        }
        // Trailing titles belong to the body.
        while end > start + 1 && kinds[end - 1] == Entry::Title {
            end -= 1;
        }
        let keys: Vec<&String> = kinds[start..end]
            .iter()
            .flat_map(|k| match k {
                Entry::Entries(keys) => keys.iter().collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        let named = kinds[start..end].contains(&Entry::Heading);
        let accepted = keys.len() >= MIN_ENTRIES && {
            let later: HashSet<String> = content[end..].iter().filter_map(|&i| key_of(doc.lines[i].text)).collect();
            let again = keys.iter().filter(|k| later.contains(k.as_str())).count();
            named || again * 2 >= keys.len()
        };
        if accepted {
            for &i in &content[start..end] {
                doc.lines[i].zone = Some(Zone::TableOfContents);
            }
            pos = end;
        } else {
            pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{DocumentStructure, Zone};
    use pactwise_domain::Page;

    const BODY: &str = "ARTICLE 1 DEFINITIONS\n1.1 \"Affiliate\" means any entity that controls a Party.\nARTICLE 2 GRANT\n2.1 Grant of Rights. Licensor grants Licensee a licence to the Products in the Territory.\n2.2 Sub-distribution. Licensee may appoint sub-distributors with consent.\nARTICLE 3 FEES\n3.1 Fees. Licensee shall pay the fees set out in Exhibit A.\nARTICLE 10 LIABILITY\n10.5 Limitation of Liability. Neither party shall be liable for more than the fees paid.";

    fn zone_of(s: &DocumentStructure, pages: &[Page], text: &str) -> Zone {
        s.lines.iter().find(|l| s.line_text(pages, l) == text).map(|l| l.zone).unwrap()
    }

    #[test]
    fn a_table_of_contents_with_one_entry_per_line_is_found_and_its_numbers_are_not_sections() {
        let toc = "Table of Contents\nArticle 1. Definitions\nArticle 2. Grant\n2.1\nGrant of Rights\n2.2\nSub-distribution\nArticle 3. Fees\nArticle 10. Liability\n10.5\nLimitation of Liability";
        let pages = vec![Page::plain(1, toc), Page::plain(2, BODY)];
        let s = DocumentStructure::build(&pages);
        assert_eq!(zone_of(&s, &pages, "10.5"), Zone::TableOfContents);
        assert_eq!(zone_of(&s, &pages, "Limitation of Liability"), Zone::TableOfContents);
        let cap = s.sections.iter().find(|x| x.key.as_deref() == Some("10.5")).unwrap();
        assert_eq!(cap.heading.as_deref(), Some("Limitation of Liability"));
        assert_eq!(s.lines[cap.first_line as usize].page, 2, "the section is the body's, not the table's");
    }

    #[test]
    fn a_table_of_contents_run_into_one_line_is_found_without_a_heading() {
        let toc = "Article 1. Definitions Article 2. Grant 2.1 Grant of Rights 2.2 Sub-distribution Article 3. Fees 3.1 Fees Article 10. Liability 10.5 Limitation of Liability";
        let pages = vec![Page::plain(1, format!("{toc}\n\n{BODY}"))];
        let s = DocumentStructure::build(&pages);
        assert_eq!(zone_of(&s, &pages, toc), Zone::TableOfContents);
        assert_eq!(
            zone_of(
                &s,
                &pages,
                "10.5 Limitation of Liability. Neither party shall be liable for more than the fees paid."
            ),
            Zone::Operative
        );
    }

    #[test]
    fn a_run_of_body_headings_is_not_a_table_of_contents() {
        let pages = vec![Page::plain(1, BODY)];
        let s = DocumentStructure::build(&pages);
        assert!(s.lines.iter().all(|l| l.zone != Zone::TableOfContents));
    }
}
