//! The last pass: cover, preamble, recitals, operative body, definitions, signature block and exhibits, then each
//! line's innermost section and the defined terms.

use crate::lines::{self, WorkDoc, title_like};
use crate::numbering::parse_section_number;
use crate::{Definition, DocumentStructure, Line, STRUCTURE_VERSION, Section, Zone};
use regex::Regex;
use std::sync::LazyLock;

static PREAMBLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(between|among|by and between|entered into|made (and entered )?(into )?(as of|on|this|effective)|is dated|dated as of|is made|effective as of)\b")
        .expect("valid pattern")
});
static AGREEMENT_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(agreement|contract|amendment|lease|licen[cs]e|addendum|memorandum|terms|deed|arrangement|understanding|order)\b")
        .expect("valid pattern")
});
static RECITALS_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\W*(recitals?|background|preliminary statements?|witnesseth|w\s*i\s*t\s*n\s*e\s*s\s*s\s*e\s*t\s*h|whereas)\b")
        .expect("valid pattern")
});
static RECITALS_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(^\W*now,?\s+therefore|^\W*now\s+it\s+is\s+(hereby\s+)?agreed|\bagree[sd]?\s+as\s+follows\b|^\W*in\s+consideration\s+of\b|^\W*the\s+parties\s+(hereto\s+)?(hereby\s+)?agree)")
        .expect("valid pattern")
});
static IN_WITNESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^\W*in\s+witness\s+(whereof|thereof|of\s+which)").expect("valid pattern"));
static SIGNATURE_LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^(by|name|title|its|date|signature|signed)\s*:").expect("valid pattern"));
static EXHIBIT_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?i:(exhibit|schedule|annex|appendix|attachment|addendum))\s+([A-Z0-9][A-Za-z0-9.\-]*)\b")
        .expect("valid pattern")
});
static BRACKETS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\s*\([^)]{0,6}\))+").expect("valid pattern"));
static DEFINITIONS_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(certain\s+|general\s+)?(definitions?|defined\s+terms|interpretation|definitions\s+and\s+interpretation|interpretation\s+and\s+definitions)\b")
        .expect("valid pattern")
});
static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^["“”']([^"“”']{1,80})["“”']\s*(?:,\s*|\s+)(?:shall\s+|will\s+)?(?:means?|mean\b|has\s+the\s+meaning|have\s+the\s+meanings?|shall\s+have\s+the\s+meaning|refers?\s+to|includes?|is\s+defined|shall\s+include|:)"#)
        .expect("valid pattern")
});

/// How far into the document the opening (cover, preamble, recitals) may reach, as a share of its lines.
const OPENING_SHARE: usize = 3; // a third

pub(crate) fn assign(
    doc: &mut WorkDoc<'_>,
    mut sections: Vec<Section>,
    heading_ends: Vec<(usize, usize)>,
) -> DocumentStructure {
    let content: Vec<usize> = doc.content().collect();
    let n_lines = doc.lines.len();
    let mut zone: Vec<Option<Zone>> = doc.lines.iter().map(|l| l.zone).collect();

    // The body's first section: where the opening must end at the latest.
    // The body's first section: "1", "1.1" or "Article 1" if there is one, else the first numbered one.
    let numbered = || sections.iter().filter(|s| s.label.is_some());
    let first_section_line = numbered()
        .find(|s| matches!(s.key.as_deref(), Some("1" | "1.1")))
        .or_else(|| numbered().next())
        .map(|s| s.first_line as usize);
    let opening_limit = first_section_line.unwrap_or(n_lines / OPENING_SHARE + 1).min(n_lines);
    let opening: Vec<usize> = content.iter().copied().take_while(|&i| i < opening_limit).collect();

    // Preamble: the first paragraph that names an agreement and its parties or date.
    let preamble = opening.iter().position(|&i| {
        let t = doc.lines[i].text;
        t.split_whitespace().count() >= 8 && PREAMBLE.is_match(t) && AGREEMENT_WORD.is_match(t)
    });
    let mut cursor = 0; // position in `opening` after the parts assigned so far
    if let Some(p) = preamble {
        for &i in &opening[..p] {
            zone[i] = Some(Zone::Cover);
        }
        // The preamble runs on until its paragraph ends (a line ending a sentence), a recital starts or 12 lines.
        let mut end = p;
        while end < opening.len() && end - p < 12 {
            let line = &doc.lines[opening[end]];
            if end > p && (RECITALS_START.is_match(line.text) || line.blank_before) {
                break;
            }
            zone[opening[end]] = Some(Zone::Preamble);
            end += 1;
            if line.text.ends_with(['.', ':']) || line.text.ends_with(".\"") || line.text.ends_with(".”") {
                break;
            }
        }
        cursor = end;
    } else {
        // No preamble: short title lines on the first page before anything else are the cover.
        let first_page = doc.lines.first().map_or(0, |l| l.page);
        for &i in &opening {
            let l = &doc.lines[i];
            if l.page != first_page || l.words() > 15 || parse_section_number(l.text).is_some() {
                break;
            }
            zone[i] = Some(Zone::Cover);
            cursor += 1;
        }
    }
    // Recitals: from a "whereas" or "recitals" line to the line that says the parties agree.
    if let Some(start) = opening[cursor..].iter().position(|&i| RECITALS_START.is_match(doc.lines[i].text)) {
        let start = cursor + start;
        let end = opening[start..].iter().position(|&i| RECITALS_END.is_match(doc.lines[i].text));
        let end = match end {
            Some(e) => start + e + 1,
            None => opening.len(),
        };
        // Lines between the preamble and the recitals belong to the preamble.
        for &i in &opening[cursor..start] {
            zone[i] = Some(Zone::Preamble);
        }
        for &i in &opening[start..end] {
            zone[i] = Some(Zone::Recitals);
        }
    } else if let Some(end) = opening[cursor..].iter().position(|&i| RECITALS_END.is_match(doc.lines[i].text)) {
        // "NOW, THEREFORE, the parties agree as follows:" without whereas clauses.
        let end = cursor + end;
        if doc.lines[opening[end]].words() <= 60 {
            zone[opening[end]] = Some(Zone::Recitals);
        }
    }

    // Signature blocks: "In witness whereof" (or a run of signature labels) and the short lines after it; body text
    // that resumes after the signatures (terms printed after a signature page) is not part of the block.
    let body_start = opening.iter().rposition(|&i| zone[i].is_some()).map_or(0, |p| opening[p] + 1);
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    let witness: Vec<usize> =
        content.iter().copied().filter(|&i| i >= body_start && IN_WITNESS.is_match(doc.lines[i].text)).collect();
    let starts = if witness.is_empty() {
        let from = (n_lines * 3 / 5).max(body_start);
        content
            .iter()
            .copied()
            .filter(|&i| i >= from)
            .find(|&i| {
                SIGNATURE_LABEL.is_match(doc.lines[i].text)
                    && content
                        .iter()
                        .copied()
                        .filter(|&j| j > i && j <= i + 6)
                        .any(|j| SIGNATURE_LABEL.is_match(doc.lines[j].text))
            })
            .into_iter()
            .collect()
    } else {
        witness
    };
    for start in starts {
        if blocks.last().is_some_and(|&(_, end)| start < end) {
            continue;
        }
        let from = content.partition_point(|&i| i < start);
        let mut end = from;
        // The "in witness" paragraph itself, up to the end of its sentence.
        while end < content.len() {
            let text = doc.lines[content[end]].text;
            end += 1;
            if text.ends_with(['.', ':']) || end - from >= 6 {
                break;
            }
        }
        // Then signature lines: short lines and labelled ones.
        while end < content.len() {
            let l = &doc.lines[content[end]];
            if l.words() > 12 && !SIGNATURE_LABEL.is_match(l.text) {
                break;
            }
            if EXHIBIT_HEADING.is_match(l.text) && l.words() <= 12 {
                break;
            }
            end += 1;
        }
        let end_line = content.get(end).copied().unwrap_or(n_lines);
        blocks.push((start, end_line));
    }
    let signature_start = blocks.first().map(|&(s, _)| s);

    // Exhibits: a short line naming one, after the signature block, or opening a page late in the document.
    let late = n_lines * 2 / 5;
    let exhibit_starts: Vec<usize> = content
        .iter()
        .copied()
        .filter(|&i| i > body_start && zone[i].is_none())
        .filter(|&i| {
            let l = &doc.lines[i];
            if l.words() > 12 || !EXHIBIT_HEADING.is_match(l.text) {
                return false;
            }
            let rest = EXHIBIT_HEADING.replace(l.text, "");
            let rest = BRACKETS.replace(&rest, "");
            let rest = rest.trim_start_matches(|c: char| !c.is_alphanumeric());
            let capitals = rest.chars().filter(|c| c.is_alphabetic()).all(|c| c.is_uppercase());
            if !(rest.is_empty() || capitals || title_like(rest)) {
                return false;
            }
            let first_on_page = !doc.synthetic && l.nth_in_page == first_content_on_page(doc, i);
            signature_start.is_some_and(|s| i > s) || (i >= late && (first_on_page || l.blank_before))
        })
        .collect();
    let first_exhibit = exhibit_starts.first().copied();
    for &(s, e) in &blocks {
        for &i in content.iter().filter(|&&i| i >= s && i < e) {
            zone[i] = Some(Zone::SignatureBlock);
        }
    }
    if let Some(first) = first_exhibit {
        for &i in content.iter().filter(|&&i| i >= first) {
            if zone[i].is_none() {
                zone[i] = Some(Zone::Exhibit);
            }
        }
    }

    // Sections do not run across the body's end into the signature block or an exhibit.
    let mut boundaries: Vec<usize> = blocks.iter().map(|&(s, _)| s).chain(exhibit_starts.iter().copied()).collect();
    boundaries.sort_unstable();
    for k in 0..sections.len() {
        let first = sections[k].first_line as usize;
        if let Some(&b) = boundaries.iter().find(|&&b| b > first) {
            sections[k].end_line = sections[k].end_line.min(b as u32);
        }
        if let Some(p) = sections[k].parent {
            let parent_first = sections[p as usize].first_line as usize;
            if boundaries.iter().any(|&b| parent_first < b && b <= first) {
                sections[k].parent = None;
            }
        }
    }

    // The definitions section.
    for s in &sections {
        if s.heading.as_deref().is_some_and(|h| DEFINITIONS_HEADING.is_match(h)) {
            for z in &mut zone[s.first_line as usize..s.end_line as usize] {
                if z.is_none() {
                    *z = Some(Zone::Definitions);
                }
            }
        }
    }

    // Everything else is the operative body.
    let mut lines: Vec<Line> = doc
        .lines
        .iter()
        .zip(&zone)
        .map(|(l, z)| Line {
            page: l.page,
            start: l.start as u32,
            end: l.end as u32,
            zone: z.unwrap_or(Zone::Operative),
            section: None,
            heading_end: None,
            definition: None,
            rule: lines::is_rule(l.text),
        })
        .collect();
    for (line, end) in heading_ends {
        lines[line].heading_end = Some(end as u32);
    }
    // Each line's innermost section (sections are in document order, parents before their parts).
    for (k, s) in sections.iter().enumerate() {
        for line in &mut lines[s.first_line as usize..s.end_line as usize] {
            if line.zone.may_hold_clauses() {
                line.section = Some(k as u32);
            }
        }
    }
    // Defined terms: a line that starts with a quoted term and "means" (after its number, if any).
    let mut definitions = Vec::new();
    for (i, l) in doc.lines.iter().enumerate() {
        if !matches!(lines[i].zone, Zone::Definitions | Zone::Operative | Zone::Exhibit) {
            continue;
        }
        let text = match parse_section_number(l.text) {
            Some(n) => &l.text[n.len..],
            None => l.text,
        };
        if let Some(c) = DEFINITION.captures(text) {
            lines[i].definition = Some(definitions.len() as u32);
            definitions.push(Definition { term: c[1].trim().to_owned(), line: i as u32 });
        }
    }
    DocumentStructure { version: STRUCTURE_VERSION, lines, sections, definitions }
}

fn first_content_on_page(doc: &WorkDoc<'_>, i: usize) -> usize {
    let page = doc.lines[i].page;
    doc.lines.iter().filter(|l| l.page == page).find(|l| l.zone.is_none()).map_or(0, |l| l.nth_in_page)
}

#[cfg(test)]
mod tests {
    use crate::{DocumentStructure, Zone};
    use pactwise_domain::Page;

    const CONTRACT: &str = "SUPPLY AGREEMENT\n\nThis Supply Agreement is entered into as of May 1, 2020 by and between Acme Corp. (\"Acme\") and Beta LLC (\"Beta\").\n\nRECITALS\n\nWHEREAS, Acme makes widgets; and\n\nWHEREAS, Beta wishes to buy widgets exclusively from Acme.\n\nNOW, THEREFORE, the parties agree as follows:\n\n1. DEFINITIONS\n\n1.1 \"Products\" means the widgets listed in Exhibit A.\n\n1.2 \"Territory\" means the United States.\n\n2. SUPPLY\n\n2.1 Exclusivity. Beta shall buy Products only from Acme during the Term.\n\n(a) Beta may buy elsewhere if Acme cannot deliver within 30 days.\n\n2.2 Price. The price is set out in Exhibit A.\n\nIN WITNESS WHEREOF, the parties have signed this Agreement.\n\nACME CORP.\n\nBy: /s/ Jane Roe\n\nTitle: CEO\n\nEXHIBIT A\n\nPRODUCTS AND PRICES\n\nWidget, $10 each.";

    fn zone_of(s: &DocumentStructure, pages: &[Page], starts: &str) -> Zone {
        s.lines.iter().find(|l| s.line_text(pages, l).starts_with(starts)).map(|l| l.zone).unwrap()
    }

    #[test]
    fn each_part_of_a_plain_contract_gets_its_zone() {
        let pages = vec![Page::plain(1, CONTRACT)];
        let s = DocumentStructure::build(&pages);
        assert_eq!(zone_of(&s, &pages, "SUPPLY AGREEMENT"), Zone::Cover);
        assert_eq!(zone_of(&s, &pages, "This Supply Agreement"), Zone::Preamble);
        assert_eq!(zone_of(&s, &pages, "WHEREAS, Beta"), Zone::Recitals);
        assert_eq!(zone_of(&s, &pages, "NOW, THEREFORE"), Zone::Recitals);
        assert_eq!(zone_of(&s, &pages, "1.2 \"Territory\""), Zone::Definitions);
        assert_eq!(zone_of(&s, &pages, "2.1 Exclusivity"), Zone::Operative);
        assert_eq!(zone_of(&s, &pages, "By: /s/"), Zone::SignatureBlock);
        assert_eq!(zone_of(&s, &pages, "Widget, $10"), Zone::Exhibit);
        let terms: Vec<&str> = s.definitions.iter().map(|d| d.term.as_str()).collect();
        assert_eq!(terms, ["Products", "Territory"]);
    }

    #[test]
    fn recitals_without_a_closing_formula_end_at_the_first_numbered_section() {
        let text = "HOSTING AGREEMENT\n\nThis Agreement is made on this 12th day of May 2003 by and between Alder Web, \
Inc. and Birch Stores LLC.\n\nWhereas, Alder builds web sites.\n\nWhereas Birch wishes to buy them.\n\nBe it agreed on \
this day that the following will govern the relationship between the parties.\n\n1    TERM\n\nThis agreement shall \
be for a term of five years.\n\n2    SERVICES\n\nAlder shall host the sites.\n\n3    FEES\n\nBirch shall pay the \
fees.\n\n4    NOTICES\n\nNotices shall be in writing.\n\n5    LAW\n\nThe laws of Ohio govern.";
        let pages = vec![Page::plain(1, text)];
        let s = DocumentStructure::build(&pages);
        assert_eq!(zone_of(&s, &pages, "Whereas Birch"), Zone::Recitals);
        assert_eq!(zone_of(&s, &pages, "This agreement shall be for a term"), Zone::Operative);
    }

    #[test]
    fn sections_nest_and_carry_their_headings() {
        let pages = vec![Page::plain(1, CONTRACT)];
        let s = DocumentStructure::build(&pages);
        let text = "(a) Beta may buy elsewhere";
        let at = CONTRACT.find(text).unwrap();
        let placed = s.place(1, at..at + text.len());
        let path: Vec<String> =
            s.section_path(placed.section.unwrap()).iter().map(|x| x.label.clone().unwrap_or_default()).collect();
        assert_eq!(path, ["2", "2.1", "(a)"]);
        assert_eq!(s.headings_of(placed.section.unwrap()), "SUPPLY / Exclusivity");
        let heading = "2.1 Exclusivity.";
        let at = CONTRACT.find(heading).unwrap();
        assert!(s.place(1, at..at + heading.len()).in_heading);
    }
}
