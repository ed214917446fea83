//! A document's structure, computed once from its pages (text only, so PDF text layers, OCR'd scans and the synthetic
//! pages of DOCX and TXT files are read alike): which lines are running headers, footers, filing stamps and page
//! numbers; where the table of contents, the cover, the preamble and the recitals are; the numbered sections with
//! their headings and nesting (Article 10 → 10.5 → (a)); the definitions section and each defined term; the signature
//! blocks; the schedules and exhibits. Both review paths use it to take evidence from operative text only.
//! Pure: no store, no network. Rules here describe layouts, never the wording of one contract.

mod lines;
mod numbering;
mod running;
mod toc;
mod xref;
mod zones;

use pactwise_domain::Page;
use serde::{Deserialize, Serialize};
use std::ops::Range;

pub use numbering::{SectionNumber, parse_section_number};
pub use xref::is_bare_cross_reference;

/// Bumped whenever the rules change, so stored structures are recomputed.
pub const STRUCTURE_VERSION: u32 = 4;

/// What part of the document a line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Zone {
    /// Title page material before the preamble: the document's name, the parties' names as a title block.
    Cover,
    /// A table of contents or a list of exhibits: headings pointing at text elsewhere.
    TableOfContents,
    /// The opening paragraph naming the parties and the date.
    Preamble,
    /// "Whereas" clauses and background: why the parties contract, not what they agree.
    Recitals,
    /// The definitions section.
    Definitions,
    /// The operative body: what the parties agree.
    Operative,
    /// "In witness whereof" and the signature lines.
    SignatureBlock,
    /// Schedules, exhibits, annexes and appendices after the body.
    Exhibit,
    /// A line repeated at the top of pages.
    RunningHeader,
    /// A line repeated at the bottom of pages (filing stamps, document codes).
    RunningFooter,
    /// A page number.
    PageNumber,
}

impl Zone {
    /// Lines of this zone are furniture of the page, never content.
    pub fn is_running(self) -> bool {
        matches!(self, Zone::RunningHeader | Zone::RunningFooter | Zone::PageNumber)
    }

    /// May a clause be quoted from this zone? Never from running lines or the table of contents; the rest may hold
    /// clauses (callers weigh recitals, cover and signature blocks lower).
    pub fn may_hold_clauses(self) -> bool {
        !self.is_running() && self != Zone::TableOfContents
    }

    /// In people's words, for warnings ("the quote is in the table of contents").
    pub fn describe(self) -> &'static str {
        match self {
            Zone::Cover => "the cover page",
            Zone::TableOfContents => "the table of contents",
            Zone::Preamble => "the opening paragraph",
            Zone::Recitals => "the recitals",
            Zone::Definitions => "the definitions",
            Zone::Operative => "the body of the contract",
            Zone::SignatureBlock => "the signature block",
            Zone::Exhibit => "an exhibit or schedule",
            Zone::RunningHeader => "a running header",
            Zone::RunningFooter => "a running footer",
            Zone::PageNumber => "a page number",
        }
    }
}

/// One non-empty line of a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The page's number (1-based, as in [`Page::number`]).
    pub page: u32,
    /// Byte range of the line in the page's text, trimmed of surrounding whitespace.
    pub start: u32,
    pub end: u32,
    pub zone: Zone,
    /// The innermost section the line belongs to (index into [`DocumentStructure::sections`]).
    pub section: Option<u32>,
    /// When the line starts a section: the byte offset in the page where the section's number and heading end (the
    /// rest of the line is body text).
    pub heading_end: Option<u32>,
    /// When the line starts a definition: its index into [`DocumentStructure::definitions`].
    pub definition: Option<u32>,
    /// A line of only rule characters ("-----", "_____", "====="): a heading's underline or a separator, no words.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rule: bool,
}

impl Line {
    pub fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A numbered (or, in documents without numbers, capitalised) section of the body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// The number as written: "Article 10", "10.5", "(a)"; `None` for an unnumbered heading.
    pub label: Option<String>,
    /// The number normalised for comparison: "10", "10.5"; `None` for sub-clauses and unnumbered headings.
    pub key: Option<String>,
    /// The heading's words: "Limitation of Liability".
    pub heading: Option<String>,
    /// 1 for articles or top-level sections, deeper for their parts.
    pub level: u8,
    pub parent: Option<u32>,
    /// Index of the line that starts it, and one past the last line it holds (in [`DocumentStructure::lines`]).
    pub first_line: u32,
    pub end_line: u32,
}

/// A term the contract defines ("Territory" means ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub term: String,
    /// The line where the definition starts.
    pub line: u32,
}

/// The structure of one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentStructure {
    pub version: u32,
    pub lines: Vec<Line>,
    pub sections: Vec<Section>,
    pub definitions: Vec<Definition>,
}

/// Where a span of page text sits, for choosing and checking quotes.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement<'a> {
    /// The zones of the lines the span touches, in order, without repeats.
    pub zones: Vec<Zone>,
    /// The innermost section holding the span's first line, and its index in [`DocumentStructure::sections`].
    pub section: Option<&'a Section>,
    pub section_index: Option<u32>,
    /// The span lies entirely within a section's number and heading.
    pub in_heading: bool,
    /// The span touches a line that starts a definition: the defined term.
    pub definition: Option<&'a str>,
}

impl Placement<'_> {
    /// The zone that decides: the first zone that may not hold clauses, else the first zone.
    pub fn worst_zone(&self) -> Option<Zone> {
        self.zones.iter().copied().find(|z| !z.may_hold_clauses()).or_else(|| self.zones.first().copied())
    }
}

impl DocumentStructure {
    /// Reads the structure of a document from its pages (in order).
    pub fn build(pages: &[Page]) -> DocumentStructure {
        let _span = tracing::debug_span!("structure.build", pages = pages.len()).entered();
        let mut doc = lines::split(pages);
        running::mark(&mut doc, pages);
        toc::mark(&mut doc);
        let (sections, heading_ends) = numbering::sections(&doc);
        zones::assign(&mut doc, sections, heading_ends)
    }

    /// The line holding byte `at` of page `page` (its number), if any.
    pub fn line_at(&self, page: u32, at: usize) -> Option<(usize, &Line)> {
        let first = self.lines.partition_point(|l| l.page < page);
        let end = self.lines.partition_point(|l| l.page <= page);
        let slice = &self.lines[first..end];
        let i = slice.partition_point(|l| (l.start as usize) <= at);
        (i > 0 && (slice[i - 1].end as usize) > at).then(|| (first + i - 1, &slice[i - 1]))
    }

    /// Lines of page `page` that overlap `range`, as indices into [`DocumentStructure::lines`].
    pub fn lines_overlapping(&self, page: u32, range: Range<usize>) -> Range<usize> {
        let first = self.lines.partition_point(|l| l.page < page);
        let end = self.lines.partition_point(|l| l.page <= page);
        let slice = &self.lines[first..end];
        let a = slice.partition_point(|l| (l.end as usize) <= range.start);
        let b = slice.partition_point(|l| (l.start as usize) < range.end);
        first + a..first + b.max(a)
    }

    /// Where a span of page `page`'s text sits.
    pub fn place(&self, page: u32, range: Range<usize>) -> Placement<'_> {
        let lines = self.lines_overlapping(page, range.clone());
        let mut zones = Vec::new();
        let mut definition = None;
        for line in &self.lines[lines.clone()] {
            if !zones.contains(&line.zone) {
                zones.push(line.zone);
            }
            if definition.is_none() {
                definition = line.definition.map(|d| self.definitions[d as usize].term.as_str());
            }
        }
        let first = self.lines.get(lines.start).filter(|_| !lines.is_empty());
        let section_index = first.and_then(|l| l.section);
        let section = section_index.map(|s| &self.sections[s as usize]);
        // Only a heading: one line with words, the span ending where its heading ends, or past the line's end over
        // nothing but its underline.
        let mut worded = self.lines[lines].iter().filter(|l| !l.rule);
        let in_heading = match (worded.next(), worded.next()) {
            (Some(line), None) => line.heading_end.is_some_and(|end| range.end <= end as usize || end == line.end),
            _ => false,
        };
        Placement { zones, section, section_index, in_heading, definition }
    }

    /// The section's path from its article down: ["Article 10 Representations ...", "10.5 Limitation of Liability"].
    pub fn section_path<'a>(&'a self, section: &'a Section) -> Vec<&'a Section> {
        let mut path = vec![section];
        let mut at = section.parent;
        while let Some(p) = at {
            let s = &self.sections[p as usize];
            path.push(s);
            at = s.parent;
        }
        path.reverse();
        path
    }

    /// The headings of a section and its ancestors joined ("Representations, Warranties and Covenants; Limitation of
    /// Liability / Limitation of Liability"), for matching an item's topic against where a quote sits.
    pub fn headings_of(&self, section: &Section) -> String {
        self.section_path(section).iter().filter_map(|s| s.heading.as_deref()).collect::<Vec<_>>().join(" / ")
    }

    /// The text of a line.
    pub fn line_text<'p>(&self, pages: &'p [Page], line: &Line) -> &'p str {
        let range = line.range();
        pages.iter().find(|p| p.number == line.page).and_then(|p| p.text.get(range)).unwrap_or("")
    }

    /// How many lines of each zone: a short summary for logs and tests.
    pub fn zone_counts(&self) -> Vec<(Zone, usize)> {
        let mut out: Vec<(Zone, usize)> = Vec::new();
        for line in &self.lines {
            match out.iter_mut().find(|(z, _)| *z == line.zone) {
                Some((_, n)) => *n += 1,
                None => out.push((line.zone, 1)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
