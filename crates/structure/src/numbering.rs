//! Section numbers at the start of a line ("ARTICLE X", "Section 10.5", "10.5", "(a)", "(iv)") and the sections they
//! open: heading words, nesting, and where each section ends.

use crate::Section;
use crate::lines::{WorkDoc, is_rule, title_like};
use regex::Regex;
use std::sync::LazyLock;

/// The most words a heading has.
const MAX_HEADING_WORDS: usize = 14;

/// A section number read from the start of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionNumber {
    /// As written, without trailing punctuation: "Article 10", "10.5", "(a)".
    pub label: String,
    /// Normalised for comparison ("10", "10.5"); `None` for lettered and bracketed sub-clauses.
    pub key: Option<String>,
    pub style: NumberStyle,
    /// Byte length of the number (with its trailing punctuation and the spaces after it) at the start of the line.
    pub len: usize,
}

/// How a number is written; a new style under an open one nests deeper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberStyle {
    /// "Article 10", "ARTICLE X".
    Article,
    /// "Section 10.5" or "10.5": `depth` is the count of its parts (10.5 → 2).
    Decimal { depth: u8 },
    /// "(a)", "a)".
    Letter,
    /// "(iv)".
    Roman,
    /// "(A)".
    UpperLetter,
    /// "(1)".
    Bracketed,
}

static ARTICLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?i:(article|section|sec\.|§)\s*)([0-9]{1,3}(?:\.[0-9]{1,3}){0,4}|[IVXLC]{1,7}|[ivxlc]{1,7}|(?i:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty))\b[.:\-–—)]?\s*")
        .expect("valid pattern")
});
static DECIMAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([0-9]{1,3}(?:\.[0-9]{1,3}){0,4})(\.|\))?(?:\s+|$)").expect("valid pattern"));
/// "2. 2. 1." numbering with spaces after the full stops, each part closed by its own full stop.
static SPACED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([0-9]{1,3}\.(?:[ \t]{0,2}[0-9]{1,3}\.){1,4})(?:\s+|$)").expect("valid pattern"));
static BRACKETED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\(([a-z]{1,2}|[ivxlc]{1,6}|[A-Z]{1,2}|[IVXLC]{1,6}|[0-9]{1,2})\)\s*").expect("valid pattern")
});

const WORD_NUMBERS: [&str; 20] = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

fn roman_value(s: &str) -> Option<u32> {
    let mut total = 0u32;
    let mut prev = 0u32;
    for c in s.chars().rev() {
        let v = match c.to_ascii_uppercase() {
            'I' => 1,
            'V' => 5,
            'X' => 10,
            'L' => 50,
            'C' => 100,
            _ => return None,
        };
        if v < prev {
            total = total.checked_sub(v)?;
        } else {
            total += v;
            prev = v;
        }
    }
    (total > 0).then_some(total)
}

/// Reads the section number at the start of `line`, if there is one.
pub fn parse_section_number(line: &str) -> Option<SectionNumber> {
    if let Some(c) = ARTICLE.captures(line) {
        let word = c.get(1).map_or("", |m| m.as_str()).to_lowercase();
        let raw = c.get(2).map_or("", |m| m.as_str());
        let key = if raw.starts_with(|c: char| c.is_ascii_digit()) {
            raw.to_owned()
        } else if let Some(i) = WORD_NUMBERS.iter().position(|w| raw.eq_ignore_ascii_case(w)) {
            (i + 1).to_string()
        } else {
            roman_value(raw)?.to_string()
        };
        let len = c.get(0).map_or(0, |m| m.len());
        let rest = &line[len..];
        // "Section 2 of the Act ..." in running text: a heading number is followed by a heading or a capital.
        if !(rest.is_empty() || rest.starts_with(|c: char| c.is_uppercase() || c == '"' || c == '“' || c == '(')) {
            return None;
        }
        let style = if word.starts_with("article") {
            NumberStyle::Article
        } else {
            NumberStyle::Decimal { depth: key.split('.').count() as u8 }
        };
        let written = line[..len].trim_end_matches(|c: char| c.is_whitespace() || ".:-–—)".contains(c));
        return Some(SectionNumber { label: written.to_owned(), key: Some(key), style, len });
    }
    if let Some(c) = SPACED.captures(line) {
        let parts: Vec<&str> = c[1].split('.').map(str::trim).filter(|p| !p.is_empty()).collect();
        let len = c.get(0).map_or(0, |m| m.len());
        let rest = &line[len..];
        let first: u32 = parts.first().and_then(|x| x.parse().ok())?;
        if first == 0 || first > 300 {
            return None;
        }
        if !(rest.is_empty() || rest.starts_with(|c: char| c.is_alphabetic() || c == '"' || c == '“' || c == '(')) {
            return None;
        }
        let key = parts.join(".");
        return Some(SectionNumber {
            label: key.clone(),
            key: Some(key),
            style: NumberStyle::Decimal { depth: parts.len() as u8 },
            len,
        });
    }
    if let Some(c) = DECIMAL.captures(line) {
        let raw = c.get(1).map_or("", |m| m.as_str());
        let first: u32 = raw.split('.').next().and_then(|x| x.parse().ok())?;
        if first == 0 || first > 300 {
            return None;
        }
        let len = c.get(0).map_or(0, |m| m.len());
        let rest = &line[len..];
        let single = !raw.contains('.');
        // "1 Company" or "2019 Fees" are not headings: a single number needs its full stop or bracket, unless a wide
        // gap sets it apart from a heading in capitals ("1    TERM").
        let gap_heading = || {
            let gap = c.get(0).map_or("", |m| m.as_str())[raw.len()..].to_owned();
            let width = gap.chars().filter(|c| c.is_whitespace()).count();
            (gap.contains('\t') || (3..=10).contains(&width))
                && rest.split_whitespace().count() <= 8
                && !rest.chars().any(|c| c.is_ascii_digit())
                && rest.chars().any(char::is_alphabetic)
                && !rest.chars().any(char::is_lowercase)
        };
        if single && c.get(2).is_none() && !rest.is_empty() && !gap_heading() {
            return None;
        }
        if !(rest.is_empty() || rest.starts_with(|c: char| c.is_uppercase() || c == '"' || c == '“' || c == '(')) {
            return None;
        }
        let depth = raw.split('.').count() as u8;
        return Some(SectionNumber {
            label: raw.to_owned(),
            key: Some(raw.to_owned()),
            style: NumberStyle::Decimal { depth },
            len,
        });
    }
    if let Some(c) = BRACKETED.captures(line) {
        let inner = c.get(1).map_or("", |m| m.as_str());
        let len = c.get(0).map_or(0, |m| m.len());
        let style = if inner.chars().all(|c| c.is_ascii_digit()) {
            NumberStyle::Bracketed
        } else if inner.chars().all(|c| "ivxlc".contains(c)) && roman_value(inner).is_some() {
            NumberStyle::Roman
        } else if inner.chars().all(|c| c.is_ascii_lowercase()) {
            NumberStyle::Letter
        } else if inner.chars().all(|c| "IVXLC".contains(c)) && inner.len() > 1 {
            NumberStyle::Roman
        } else {
            NumberStyle::UpperLetter
        };
        return Some(SectionNumber { label: format!("({inner})"), key: None, style, len });
    }
    None
}

/// Splits the words after a section number into its heading and the body that follows on the same line:
/// "Limitation of Liability. Neither Party ..." → heading "Limitation of Liability", body starting at "Neither".
/// Returns the heading and its byte length within `rest` (with the punctuation after it).
pub(crate) fn heading_in(rest: &str) -> Option<(String, usize)> {
    let rest_trim = rest.trim_end();
    if rest_trim.is_empty() {
        return None;
    }
    // The whole rest is a heading when it is short and capitalised like one.
    let words = rest_trim.split_whitespace().count();
    let body_punct = rest_trim.trim_end_matches(['.', ':']);
    if words <= MAX_HEADING_WORDS && title_like(body_punct) && !body_punct.contains(". ") {
        return Some((clean(body_punct), rest.len()));
    }
    // Otherwise a heading ends at the first full stop, colon or dash followed by the body.
    for (i, c) in rest.char_indices() {
        if i > 160 {
            break;
        }
        if matches!(c, '.' | ':' | '—' | '–') {
            let head = &rest[..i];
            let after = &rest[i + c.len_utf8()..];
            let head_words = head.split_whitespace().count();
            if head_words == 0 || head_words > MAX_HEADING_WORDS || !after.starts_with(char::is_whitespace) {
                continue;
            }
            // Not the full stop of an abbreviation inside the heading ("U.S. Sales").
            if c == '.' && head.ends_with(|c: char| c.is_uppercase()) && head.len() >= 2 {
                let before = head.chars().rev().nth(1);
                if before.is_some_and(|b| b == '.') {
                    continue;
                }
            }
            if !title_like(head) {
                return None;
            }
            let consumed = i + c.len_utf8() + (after.len() - after.trim_start().len());
            return Some((clean(head), consumed));
        }
    }
    None
}

fn clean(heading: &str) -> String {
    heading.split_whitespace().collect::<Vec<_>>().join(" ").trim_matches(|c: char| c == '-' || c == '.').to_owned()
}

/// A number at the start of a wrapped line is often the end of a reference in the line before ("... breach of" /
/// "Article 8 or ..."): a section starts only after a line that ends a sentence, a list item or a heading.
fn continues_a_sentence(number: &SectionNumber, previous: Option<&str>) -> bool {
    let Some(prev) = previous else { return false };
    let prev = prev.trim_end();
    // A wrapped line before is a full one; a short line (an address, a title) does not run on into a number.
    let words = prev.split_whitespace().count();
    if words < 10
        || prev.ends_with(['.', ':', ';', '!', '?', '"', '”'])
        || words <= MAX_HEADING_WORDS && title_like(prev)
    {
        return false;
    }
    let bracketed = !matches!(number.style, NumberStyle::Article | NumberStyle::Decimal { .. });
    if bracketed {
        let last = prev.rsplit(char::is_whitespace).next().unwrap_or("");
        return !(prev.ends_with(',') || matches!(last, "and" | "or" | "and/or"));
    }
    true
}

/// A section found in the working document, before zones are known.
pub(crate) struct Found {
    pub line: usize,
    pub number: Option<SectionNumber>,
    pub heading: Option<String>,
    /// Byte offset (in the page) where number and heading end.
    pub heading_end: usize,
}

/// The sections of the document's content lines (running lines and the table of contents are skipped) with their
/// levels and extent; and for each line that opens one, where its heading ends.
pub(crate) fn sections(doc: &WorkDoc<'_>) -> (Vec<Section>, Vec<(usize, usize)>) {
    let mut found: Vec<Found> = Vec::new();
    // Lines that hold the heading of the number on the line before them.
    let mut extra_headings: Vec<(usize, usize)> = Vec::new();
    let content: Vec<usize> = doc.content().collect();
    for (pos, &i) in content.iter().enumerate() {
        let line = &doc.lines[i];
        let number = parse_section_number(line.text)
            .filter(|n| !continues_a_sentence(n, pos.checked_sub(1).map(|p| doc.lines[content[p]].text)));
        if let Some(number) = number {
            let rest = &line.text[number.len..];
            let (heading, consumed) = match heading_in(rest) {
                Some((h, n)) => (Some(h), n),
                None if rest.trim().is_empty() => {
                    // The heading may stand on the next line ("ARTICLE 10" / "LIMITATION OF LIABILITY").
                    let next = content.get(pos + 1).map(|&n| &doc.lines[n]);
                    let heading_line = next
                        .filter(|n| n.words() <= MAX_HEADING_WORDS && title_like(n.text))
                        .filter(|n| parse_section_number(n.text).is_none());
                    if let Some(n) = heading_line {
                        extra_headings.push((content[pos + 1], n.end));
                    }
                    let heading = heading_line.map(|n| clean(n.text.trim_end_matches(['.', ':'])));
                    (heading, rest.len())
                }
                None => (None, 0),
            };
            found.push(Found {
                line: i,
                heading_end: line.start + number.len + consumed,
                number: Some(number),
                heading,
            });
        } else if line.words() <= 8
            && line.text.chars().any(|c| c.is_alphabetic())
            && line.text.chars().filter(|c| c.is_alphabetic()).all(|c| c.is_uppercase())
            && !line.text.ends_with(',')
        {
            // An unnumbered heading in capitals ("MISCELLANEOUS").
            found.push(Found {
                line: i,
                heading_end: line.end,
                number: None,
                heading: Some(clean(line.text.trim_end_matches(['.', ':']))),
            });
        }
    }
    // A short title line underlined by a rule ("Confidentiality" / "===============") is a heading, numbered or not;
    // it opens no section of its own (only capitals do, in documents without numbers).
    let opens: std::collections::HashSet<usize> = found.iter().map(|f| f.line).collect();
    for pair in content.windows(2) {
        let (line, next) = (&doc.lines[pair[0]], &doc.lines[pair[1]]);
        if is_rule(next.text)
            && !is_rule(line.text)
            && !opens.contains(&pair[0])
            && line.words() <= MAX_HEADING_WORDS
            && line.text.chars().any(char::is_alphabetic)
            && !line.text.ends_with(['.', ',', ';', ':'])
            && title_like(line.text)
        {
            extra_headings.push((pair[0], line.end));
        }
    }
    // A heading on its own line after a bare number is part of that number's line, not a section of its own.
    let mut skip = vec![false; found.len()];
    for k in 1..found.len() {
        let prev = &found[k - 1];
        let bare =
            prev.number.is_some() && doc.lines[prev.line].text.len() == prev.number.as_ref().map_or(0, |n| n.len);
        if bare && found[k].number.is_none() && found[k].heading == prev.heading {
            skip[k] = true;
        }
    }
    let numbered_top = found.iter().filter(|f| f.number.is_some()).count();
    let found: Vec<Found> = found
        .into_iter()
        .zip(skip)
        .filter(|(f, s)| !s && (f.number.is_some() || numbered_top < 3))
        .map(|(f, _)| f)
        .collect();
    let (sections, mut heading_ends) = nest(doc, found);
    heading_ends.extend(extra_headings);
    (sections, heading_ends)
}

/// Gives each found section its level and parent and ends it where the next section of the same or a higher level
/// starts.
fn nest(doc: &WorkDoc<'_>, found: Vec<Found>) -> (Vec<Section>, Vec<(usize, usize)>) {
    let has_articles = found.iter().any(|f| f.number.as_ref().is_some_and(|n| n.style == NumberStyle::Article));
    let mut sections: Vec<Section> = Vec::with_capacity(found.len());
    let mut heading_ends = Vec::with_capacity(found.len());
    // Open sections: (index into sections, style).
    let mut stack: Vec<(usize, Option<NumberStyle>)> = Vec::new();
    for f in found {
        let style = f.number.as_ref().map(|n| n.style);
        let style = disambiguate_roman(style, f.number.as_ref(), &stack, &sections);
        let level: u8 = match style {
            None => 1,
            Some(NumberStyle::Article) => 1,
            Some(NumberStyle::Decimal { depth }) => {
                // In documents with articles, "Section 5" and "5.1" are both an article's parts.
                if has_articles { depth.max(2) } else { depth }
            }
            Some(_) => {
                // A bracketed number: one deeper than the open section of another style, or a sibling of the open
                // one of the same style.
                match stack.iter().rposition(|(_, s)| *s == style) {
                    Some(p) => sections[stack[p].0].level,
                    None => stack.last().map_or(1, |&(i, _)| sections[i].level.saturating_add(1)),
                }
            }
        };
        while let Some(&(i, _)) = stack.last() {
            if sections[i].level >= level {
                stack.pop();
            } else {
                break;
            }
        }
        let parent = stack.last().map(|&(i, _)| i as u32);
        let index = sections.len();
        sections.push(Section {
            label: f.number.as_ref().map(|n| n.label.clone()),
            key: f.number.as_ref().and_then(|n| n.key.clone()),
            heading: f.heading,
            level,
            parent,
            first_line: f.line as u32,
            end_line: doc.lines.len() as u32,
        });
        heading_ends.push((f.line, f.heading_end));
        stack.push((index, style));
    }
    // A section ends where the next one of the same or a higher level starts.
    for i in 0..sections.len() {
        let level = sections[i].level;
        if let Some(next) = sections[i + 1..].iter().find(|s| s.level <= level) {
            sections[i].end_line = next.first_line;
        }
    }
    (sections, heading_ends)
}

/// "(i)" after "(h)" is the letter i, not the roman one; likewise "(v)" after "(u)" and "(x)" after "(w)".
fn disambiguate_roman(
    style: Option<NumberStyle>,
    number: Option<&SectionNumber>,
    stack: &[(usize, Option<NumberStyle>)],
    sections: &[Section],
) -> Option<NumberStyle> {
    if style != Some(NumberStyle::Roman) {
        return style;
    }
    let label = number.map(|n| n.label.as_str()).unwrap_or("");
    let letter = label.trim_matches(|c| c == '(' || c == ')');
    if letter.len() != 1 {
        return style;
    }
    let Some(&(open, _)) = stack.iter().rev().find(|(_, s)| *s == Some(NumberStyle::Letter)) else { return style };
    let prev = sections[open].label.as_deref().unwrap_or("").trim_matches(|c| c == '(' || c == ')').to_owned();
    let expected = prev.chars().next().and_then(|c| char::from_u32(c as u32 + 1));
    if expected.is_some_and(|e| letter.starts_with(e)) { Some(NumberStyle::Letter) } else { style }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(line: &str) -> Option<(String, Option<String>)> {
        parse_section_number(line).map(|n| (n.label, n.key))
    }

    #[test]
    fn section_numbers_are_read_in_their_usual_forms() {
        assert_eq!(number("ARTICLE X MISCELLANEOUS"), Some(("ARTICLE X".into(), Some("10".into()))));
        assert_eq!(number("Article 10. Representations"), Some(("Article 10".into(), Some("10".into()))));
        assert_eq!(number("Section 10.5 Limitation of Liability."), Some(("Section 10.5".into(), Some("10.5".into()))));
        assert_eq!(number("10.5 Limitation of Liability."), Some(("10.5".into(), Some("10.5".into()))));
        assert_eq!(number("10.5"), Some(("10.5".into(), Some("10.5".into()))));
        assert_eq!(number("12. TERM"), Some(("12".into(), Some("12".into()))));
        assert_eq!(number("(a) Recoveries. Any monetary recovery"), Some(("(a)".into(), None)));
        assert_eq!(number("ARTICLE ONE"), Some(("ARTICLE ONE".into(), Some("1".into()))));
        assert_eq!(number("2. 2. 1.   an expression which denotes"), Some(("2.2.1".into(), Some("2.2.1".into()))));
        assert_eq!(
            number("1    TERM"),
            Some(("1".into(), Some("1".into()))),
            "a wide gap before a heading in capitals"
        );
        assert_eq!(number("1 Company"), None);
        assert_eq!(number("3    units of the Product"), None);
        assert_eq!(number("1                              EXHIBIT 10.13"), None, "a page number far from a title");
    }

    #[test]
    fn numbers_in_running_text_are_not_section_numbers() {
        assert_eq!(number("2019 was a good year"), None);
        assert_eq!(number("10.5 million dollars"), None);
        assert_eq!(number("Section 2 of the Act applies"), None);
        assert_eq!(number("500 units per month"), None);
    }

    #[test]
    fn a_heading_is_split_from_the_body_on_its_line() {
        let (h, n) = heading_in("Limitation of Liability. Neither Party shall be liable").unwrap();
        assert_eq!(h, "Limitation of Liability");
        assert_eq!(&"Limitation of Liability. Neither Party shall be liable"[n..], "Neither Party shall be liable");
        assert_eq!(heading_in("Term and Termination").unwrap().0, "Term and Termination");
        assert_eq!(heading_in("Neither Party shall be liable to the other for anything."), None);
    }
}
