//! The same [`Block`]s as a PDF (through `krilla`): A4, 2 cm margins, DejaVu Sans regular and bold embedded (subset,
//! with a ToUnicode map, so every glyph prints and the text reads back as written), a footer with the document's
//! title and "Page i of n". Lines are broken at spaces by the width of the shaped text (`rustybuzz`, the shaper
//! `krilla` draws with), and each line is drawn from the same shaped runs it was measured with, so no line runs
//! past the right margin; a word longer than a line is cut where it reaches the margin. A table's cells break the
//! same way inside their column; a row is kept on one page and the header row is repeated on each page the table
//! runs onto.
//!
//! The fonts come from the Debian package `fonts-dejavu-core` at build time (see `build.rs`); DejaVu's licence
//! (the Bitstream Vera terms) allows embedding and redistributing them.

use crate::{Block, Table, one_line};
use krilla::Document;
use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point, Rect};
use krilla::metadata::Metadata;
use krilla::num::NormalizedF32;
use krilla::page::PageSettings;
use krilla::paint::{Fill, FillRule};
use krilla::text::{Font, TextDirection};

const REGULAR: &[u8] = include_bytes!(env!("PACTWISE_FONT_REGULAR"));
const BOLD: &[u8] = include_bytes!(env!("PACTWISE_FONT_BOLD"));

/// A4 in points.
pub const PAGE_WIDTH: f32 = 595.28;
pub const PAGE_HEIGHT: f32 = 841.89;
/// 2 cm, as the DOCX has.
pub const MARGIN: f32 = 56.69;
/// The width lines may take.
const MEASURE: f32 = PAGE_WIDTH - 2.0 * MARGIN;
const FOOTER_SIZE: f32 = 8.0;

#[derive(Debug, thiserror::Error)]
#[error("writing the PDF failed: {0}")]
pub struct PdfError(String);

/// A piece of one line in one face.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    text: String,
    bold: bool,
    width: f32,
}

/// Something placed on a page: a run of text at its baseline, or the bar beside a quote. `y` grows downwards.
#[derive(Debug, Clone, PartialEq)]
enum Mark {
    Text {
        x: f32,
        baseline: f32,
        size: f32,
        run: Run,
        grey: bool,
    },
    Bar {
        x: f32,
        top: f32,
        bottom: f32,
    },
    /// A filled rectangle: a table's rule (grey) or the shade behind its header row (light).
    Rect {
        left: f32,
        top: f32,
        right: f32,
        bottom: f32,
        shade: bool,
    },
}

/// A font for measuring (rustybuzz) and drawing (krilla) the same glyphs.
struct Face {
    shaper: rustybuzz::Face<'static>,
    font: Font,
}

impl Face {
    fn load(data: &'static [u8]) -> Result<Face, PdfError> {
        let broken = || PdfError("the embedded font cannot be read".into());
        Ok(Face {
            shaper: rustybuzz::Face::from_slice(data, 0).ok_or_else(broken)?,
            font: Font::new(data.into(), 0).ok_or_else(broken)?,
        })
    }

    /// The advance of `text` at `size` points, shaped as `krilla` shapes it for drawing.
    fn width(&self, text: &str, size: f32) -> f32 {
        let mut buffer = rustybuzz::UnicodeBuffer::new();
        buffer.push_str(text);
        buffer.guess_segment_properties();
        buffer.set_direction(rustybuzz::Direction::LeftToRight);
        let shaped = rustybuzz::shape(&self.shaper, &[], buffer);
        let units: i64 = shaped.glyph_positions().iter().map(|p| i64::from(p.x_advance)).sum();
        units as f32 * size / self.shaper.units_per_em() as f32
    }
}

struct Faces {
    regular: Face,
    bold: Face,
}

impl Faces {
    fn load() -> Result<Faces, PdfError> {
        Ok(Faces { regular: Face::load(REGULAR)?, bold: Face::load(BOLD)? })
    }

    fn face(&self, bold: bool) -> &Face {
        if bold { &self.bold } else { &self.regular }
    }

    fn run(&self, text: String, bold: bool, size: f32) -> Run {
        Run { width: self.face(bold).width(&text, size), text, bold }
    }
}

/// How a block is set.
struct Style {
    size: f32,
    space_before: f32,
    /// Where the text starts, from the left margin.
    indent: f32,
    /// Keep this block on the page of the lines that follow it (headings).
    keep_with_next: bool,
    grey: bool,
}

impl Style {
    fn of(block: &Block<'_>) -> Style {
        let plain = Style { size: 10.0, space_before: 4.0, indent: 0.0, keep_with_next: false, grey: false };
        match block {
            Block::Title(_) => Style { size: 18.0, space_before: 0.0, ..plain },
            Block::Heading(_) => Style { size: 13.0, space_before: 16.0, keep_with_next: true, ..plain },
            Block::Subheading(_) => Style { size: 10.5, space_before: 10.0, keep_with_next: true, ..plain },
            Block::Field(..) => Style { space_before: 2.0, ..plain },
            Block::Detail(..) => Style { space_before: 1.0, indent: 14.0, ..plain },
            Block::Quote(_) => Style { indent: 14.0, grey: true, ..plain },
            Block::Bullet(_) => Style { indent: 14.0, space_before: 2.0, ..plain },
            Block::Table(_) => Style { size: 9.0, space_before: 6.0, ..plain },
            Block::Text(_) | Block::PageBreak => plain,
        }
    }

    fn line_height(&self) -> f32 {
        self.size * 1.35
    }
}

/// Breaks `pieces` (text with its face) into lines no wider than `width`: at spaces, or inside a word that alone is
/// wider than a line. Each line is a list of runs, measured.
fn break_lines(faces: &Faces, pieces: &[(&str, bool)], size: f32, width: f32) -> Vec<Vec<Run>> {
    let fits = |line: &[Run]| line.iter().map(|r| r.width).sum::<f32>() <= width;
    let mut lines: Vec<Vec<Run>> = Vec::new();
    let mut line: Vec<Run> = Vec::new();
    for &(text, bold) in pieces {
        for word in one_line(text).split(' ').filter(|w| !w.is_empty()) {
            // The line with this word added: a space after the last run, the word in its face.
            let with = |line: &[Run], word: &str| {
                let mut next = line.to_vec();
                match next.last_mut() {
                    Some(last) if last.bold == bold => {
                        *last = faces.run(format!("{} {word}", last.text), bold, size);
                    }
                    Some(last) => {
                        *last = faces.run(format!("{} ", last.text), last.bold, size);
                        next.push(faces.run(word.to_owned(), bold, size));
                    }
                    None => next.push(faces.run(word.to_owned(), bold, size)),
                }
                next
            };
            let candidate = with(&line, word);
            if fits(&candidate) {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                let alone = with(&line, word);
                if fits(&alone) {
                    line = alone;
                    continue;
                }
            }
            // A word wider than a line: cut it where it reaches the margin (at least one character per line).
            let mut rest: Vec<char> = word.chars().collect();
            while !rest.is_empty() {
                // The longest prefix that fits (at least one character), by halving.
                let (mut fit, mut over) = (1, rest.len() + 1);
                while over - fit > 1 {
                    let mid = (fit + over) / 2;
                    if faces.run(rest[..mid].iter().collect(), bold, size).width <= width {
                        fit = mid;
                    } else {
                        over = mid;
                    }
                }
                let take = fit;
                let piece = faces.run(rest[..take].iter().collect(), bold, size);
                rest.drain(..take);
                if rest.is_empty() {
                    line = vec![piece];
                } else {
                    lines.push(vec![piece]);
                }
            }
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The blocks placed on pages (without the footer).
fn lay_out(faces: &Faces, blocks: &[Block<'_>]) -> Vec<Vec<Mark>> {
    let bottom = PAGE_HEIGHT - MARGIN;
    let mut pages: Vec<Vec<Mark>> = vec![Vec::new()];
    let mut y = MARGIN;
    for (i, block) in blocks.iter().enumerate() {
        if *block == Block::PageBreak {
            if !pages.last().is_some_and(Vec::is_empty) {
                pages.push(Vec::new());
                y = MARGIN;
            }
            continue;
        }
        if let Block::Table(table) = block {
            lay_out_table(faces, table, &mut pages, &mut y);
            continue;
        }
        let style = Style::of(block);
        let label;
        let pieces: Vec<(&str, bool)> = match block {
            Block::Title(t) | Block::Heading(t) | Block::Subheading(t) => vec![(t, true)],
            Block::Text(t) | Block::Quote(t) | Block::Bullet(t) => vec![(t, false)],
            Block::Field(l, v) | Block::Detail(l, v) => {
                label = format!("{}:", one_line(l));
                vec![(label.as_str(), true), (v, false)]
            }
            Block::PageBreak | Block::Table(_) => Vec::new(),
        };
        let lines = break_lines(faces, &pieces, style.size, MEASURE - style.indent);
        let height = style.line_height();
        let at_top = pages.last().is_none_or(Vec::is_empty);
        let before = if at_top { 0.0 } else { style.space_before };
        // A heading keeps its first lines and those of the next block together on a page; a short paragraph just
        // before a table (its introduction) keeps with the table's header and first row.
        let next = blocks.get(i + 1).map_or(0.0, lead);
        let needed = if style.keep_with_next {
            // A heading over a table's introduction keeps with the table too.
            let with_table = match (blocks.get(i + 1), blocks.get(i + 2)) {
                (Some(intro @ Block::Text(t)), Some(table @ Block::Table(_))) => {
                    let intro_style = Style::of(intro);
                    let intro_lines = break_lines(faces, &[(t, false)], intro_style.size, MEASURE).len();
                    Some(intro_style.space_before + intro_style.line_height() * intro_lines as f32 + lead(table))
                }
                _ => None,
            };
            before + height * lines.len().min(3) as f32 + with_table.unwrap_or(next)
        } else if matches!(blocks.get(i + 1), Some(Block::Table(_))) && lines.len() <= 3 {
            before + height * lines.len() as f32 + next
        } else {
            before + height * lines.len().min(2) as f32
        };
        if !at_top && y + needed > bottom {
            pages.push(Vec::new());
            y = MARGIN;
        } else {
            y += before;
        }
        for (n, line) in lines.into_iter().enumerate() {
            if y + height > bottom {
                pages.push(Vec::new());
                y = MARGIN;
            }
            let page = pages.last_mut().expect("there is always a page");
            let baseline = y + style.size;
            if n == 0 && matches!(block, Block::Bullet(_)) {
                let run = faces.run("•".to_owned(), false, style.size);
                page.push(Mark::Text { x: MARGIN + 3.0, baseline, size: style.size, run, grey: false });
            }
            if matches!(block, Block::Quote(_)) {
                page.push(Mark::Bar { x: MARGIN + 3.0, top: y + 1.0, bottom: y + height + 1.0 });
            }
            let mut x = MARGIN + style.indent;
            for run in line {
                let width = run.width;
                page.push(Mark::Text { x, baseline, size: style.size, run, grey: style.grey });
                x += width;
            }
            y += height;
        }
    }
    pages
}

/// The room the start of `block` needs to be worth beginning on a page: two lines, or a table's header and first
/// row (estimated at a line each).
fn lead(block: &Block<'_>) -> f32 {
    let style = Style::of(block);
    match block {
        Block::Table(_) => style.space_before + 2.0 * (style.line_height() + 2.0 * CELL_PAD),
        _ => style.line_height() * 2.0,
    }
}

/// Cell padding in a table, in points.
const CELL_PAD: f32 = 3.0;
/// The width of a table's rules, in points.
const RULE: f32 = 0.5;

/// A table placed from `y` on the last page: each row as tall as its tallest cell, a row that does not fit starts
/// a new page that begins with the header row again. A row taller than a whole page is placed on a page of its own
/// and runs past its bottom margin (cells here are a few lines).
fn lay_out_table(faces: &Faces, table: &Table, pages: &mut Vec<Vec<Mark>>, y: &mut f32) {
    if table.header.is_empty() {
        return;
    }
    let style = Style::of(&Block::Table(table));
    let height = style.line_height();
    let bottom = PAGE_HEIGHT - MARGIN;
    let widths = table.column_widths(MEASURE);
    // Each row as its cells' lines, and the row's height.
    let set = |cells: &[&str], bold: bool| {
        let lines: Vec<Vec<Vec<Run>>> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, w)| break_lines(faces, &[(cell, bold)], style.size, w - 2.0 * CELL_PAD))
            .collect();
        let tallest = lines.iter().map(Vec::len).max().unwrap_or(0).max(1);
        (lines, tallest as f32 * height + 2.0 * CELL_PAD)
    };
    let header_cells: Vec<&str> = table.header.iter().map(String::as_str).collect();
    let header = set(&header_cells, true);
    let rows: Vec<_> = table.rows.iter().map(|r| set(&table.cells(r), false)).collect();
    let place = |page: &mut Vec<Mark>, (lines, row_height): &(Vec<Vec<Vec<Run>>>, f32), top: f32, shade: bool| {
        let right = MARGIN + widths.iter().sum::<f32>();
        if shade {
            page.push(Mark::Rect { left: MARGIN, top, right, bottom: top + row_height, shade: true });
        }
        page.push(Mark::Rect { left: MARGIN, top, right, bottom: top + RULE, shade: false });
        page.push(Mark::Rect {
            left: MARGIN,
            top: top + row_height,
            right,
            bottom: top + row_height + RULE,
            shade: false,
        });
        let mut x = MARGIN;
        for (cell, w) in lines.iter().zip(&widths) {
            page.push(Mark::Rect { left: x, top, right: x + RULE, bottom: top + row_height, shade: false });
            for (n, line) in cell.iter().enumerate() {
                let baseline = top + CELL_PAD + n as f32 * height + style.size;
                let mut at = x + CELL_PAD;
                for run in line {
                    let width = run.width;
                    page.push(Mark::Text { x: at, baseline, size: style.size, run: run.clone(), grey: false });
                    at += width;
                }
            }
            x += w;
        }
        page.push(Mark::Rect { left: x, top, right: x + RULE, bottom: top + row_height, shade: false });
    };
    let at_top = pages.last().is_none_or(Vec::is_empty);
    let first = header.1 + rows.first().map_or(0.0, |r| r.1);
    if !at_top && *y + style.space_before + first > bottom {
        pages.push(Vec::new());
        *y = MARGIN;
    } else if !at_top {
        *y += style.space_before;
    }
    let page = pages.last_mut().expect("there is always a page");
    place(page, &header, *y, true);
    *y += header.1;
    for row in &rows {
        if *y + row.1 > bottom {
            pages.push(Vec::new());
            *y = MARGIN;
            let page = pages.last_mut().expect("there is always a page");
            place(page, &header, *y, true);
            *y += header.1;
        }
        let page = pages.last_mut().expect("there is always a page");
        place(page, row, *y, false);
        *y += row.1;
    }
}

/// The footer of page `number` of `count`: the title (shortened to fit) and the page number.
fn footer(faces: &Faces, title: &str, number: usize, count: usize) -> Vec<Mark> {
    let baseline = PAGE_HEIGHT - MARGIN / 2.0;
    let page = faces.run(format!("Page {number} of {count}"), false, FOOTER_SIZE);
    let room = MEASURE - page.width - 12.0;
    let mut title: Vec<char> = one_line(title).chars().collect();
    let mut shown = faces.run(title.iter().collect(), false, FOOTER_SIZE);
    while shown.width > room && !title.is_empty() {
        title.pop();
        shown = faces.run(format!("{}…", title.iter().collect::<String>().trim_end()), false, FOOTER_SIZE);
    }
    let x = PAGE_WIDTH - MARGIN - page.width;
    vec![
        Mark::Text { x: MARGIN, baseline, size: FOOTER_SIZE, run: shown, grey: true },
        Mark::Text { x, baseline, size: FOOTER_SIZE, run: page, grey: true },
    ]
}

/// The document as the bytes of a PDF file. Its title (metadata and footer) is the first [`Block::Title`].
pub fn write(blocks: &[Block<'_>]) -> Result<Vec<u8>, PdfError> {
    let faces = Faces::load()?;
    let title = blocks
        .iter()
        .find_map(|b| match b {
            Block::Title(t) => Some(one_line(t)),
            _ => None,
        })
        .unwrap_or_default();
    let pages = lay_out(&faces, blocks);
    let count = pages.len();
    let mut document = Document::new();
    document.set_metadata(Metadata::new().title(title.clone()).creator("Pactwise Desk".into()).language("en".into()));
    let settings = PageSettings::from_wh(PAGE_WIDTH, PAGE_HEIGHT).ok_or_else(|| PdfError("bad page size".into()))?;
    let black = Fill { paint: rgb::Color::new(0, 0, 0).into(), opacity: NormalizedF32::ONE, rule: FillRule::NonZero };
    let grey = Fill { paint: rgb::Color::new(80, 80, 80).into(), ..black.clone() };
    let rule = Fill { paint: rgb::Color::new(170, 170, 170).into(), ..black.clone() };
    let light = Fill { paint: rgb::Color::new(235, 235, 235).into(), ..black.clone() };
    for (i, marks) in pages.into_iter().enumerate() {
        let mut page = document.start_page_with(settings.clone());
        let mut surface = page.surface();
        for mark in marks.iter().chain(footer(&faces, &title, i + 1, count).iter()) {
            match mark {
                Mark::Text { x, baseline, size, run, grey: g } => {
                    surface.set_fill(Some(if *g { grey.clone() } else { black.clone() }));
                    surface.draw_text(
                        Point::from_xy(*x, *baseline),
                        faces.face(run.bold).font.clone(),
                        *size,
                        &run.text,
                        false,
                        TextDirection::LeftToRight,
                    );
                }
                Mark::Rect { left, top, right, bottom, shade } => {
                    if let Some(rect) = Rect::from_ltrb(*left, *top, *right, *bottom) {
                        let mut path = PathBuilder::new();
                        path.push_rect(rect);
                        if let Some(path) = path.finish() {
                            surface.set_fill(Some(if *shade { light.clone() } else { rule.clone() }));
                            surface.draw_path(&path);
                        }
                    }
                }
                Mark::Bar { x, top, bottom } => {
                    if let Some(rect) = Rect::from_ltrb(*x, *top, *x + 1.5, *bottom) {
                        let mut path = PathBuilder::new();
                        path.push_rect(rect);
                        if let Some(path) = path.finish() {
                            surface.set_fill(Some(rule.clone()));
                            surface.draw_path(&path);
                        }
                    }
                }
            }
        }
        surface.finish();
        page.finish();
    }
    document.finish().map_err(|e| PdfError(format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(pages: &[Vec<Mark>]) -> Vec<(f32, f32, String)> {
        pages
            .iter()
            .flatten()
            .filter_map(|m| match m {
                Mark::Text { x, run, .. } => Some((*x, run.width, run.text.clone())),
                Mark::Bar { .. } | Mark::Rect { .. } => None,
            })
            .collect()
    }

    #[test]
    fn lines_break_at_spaces_by_measured_width_and_stay_inside_the_margin() {
        let faces = Faces::load().unwrap();
        let long = "The Supplier's aggregate liability arising out of or in connection with this Agreement, whether \
                    in contract, tort (including negligence) or otherwise, shall not exceed the fees paid in the \
                    twelve months preceding the claim; WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW"
            .repeat(6);
        let pages = lay_out(&faces, &[Block::Title("Memo"), Block::Quote(&long), Block::Bullet(&long)]);
        let placed = texts(&pages);
        assert!(placed.len() > 20, "a long quote takes many lines");
        for (x, width, text) in &placed {
            assert!(x + width <= PAGE_WIDTH - MARGIN + 0.01, "{text:?} ends at {} past the margin", x + width);
        }
        let all: String = placed.iter().map(|(_, _, t)| t.as_str()).collect::<Vec<_>>().join(" ");
        assert!(all.contains("liability arising"), "words stay whole and spaced");
        // A line ends where the next word would not fit: lines are filled, not cut early.
        let quote_lines: Vec<&(f32, f32, String)> = placed.iter().filter(|(x, _, _)| *x == MARGIN + 14.0).collect();
        assert!(quote_lines.iter().filter(|(_, w, _)| *w > MEASURE - 14.0 - 60.0).count() * 2 > quote_lines.len());
    }

    #[test]
    fn a_heading_at_the_foot_of_a_page_moves_to_the_next_with_its_text() {
        let faces = Faces::load().unwrap();
        let mut blocks = vec![Block::Title("Memo")];
        let filler = vec!["A line of body text."; 200];
        blocks.extend(filler.iter().map(|t| Block::Text(t)));
        blocks.push(Block::Heading("Critical items"));
        blocks.push(Block::Text("Liability is capped."));
        let pages = lay_out(&faces, &blocks);
        let page_of = |needle: &str| {
            pages.iter().position(|p| p.iter().any(|m| matches!(m, Mark::Text { run, .. } if run.text == needle)))
        };
        assert_eq!(page_of("Critical items"), page_of("Liability is capped."));
        for page in &pages {
            for m in page {
                if let Mark::Text { baseline, .. } = m {
                    assert!(*baseline <= PAGE_HEIGHT - MARGIN, "text stays above the bottom margin");
                }
            }
        }
    }

    #[test]
    fn a_long_table_runs_onto_new_pages_with_its_header_and_stays_inside_the_margins() {
        let faces = Faces::load().unwrap();
        let long = "A requirement long enough to take several lines in its narrow column of the table. ".repeat(3);
        let table = Table {
            widths: vec![1, 4, 2],
            header: vec!["Code".into(), "Requirement".into(), "Your answer".into()],
            rows: (0..60).map(|i| vec![format!("R-{i:02}"), long.clone(), String::new()]).collect(),
        };
        let pages = lay_out(&faces, &[Block::Title("RFP"), Block::Table(&table), Block::Text("After the table")]);
        assert!(pages.len() > 2, "sixty rows of several lines take pages");
        for page in &pages {
            let headers = page.iter().filter(|m| matches!(m, Mark::Text { run, .. } if run.text == "Your answer"));
            assert_eq!(headers.count(), 1, "each page repeats the header once");
            for m in page {
                match m {
                    Mark::Text { x, baseline, run, .. } => {
                        assert!(x + run.width <= PAGE_WIDTH - MARGIN + 0.01, "{:?} past the right margin", run.text);
                        assert!(*baseline <= PAGE_HEIGHT - MARGIN, "{:?} below the bottom margin", run.text);
                    }
                    Mark::Rect { right, bottom, .. } => {
                        assert!(*right <= PAGE_WIDTH - MARGIN + RULE + 0.01 && *bottom <= PAGE_HEIGHT - MARGIN + RULE);
                    }
                    Mark::Bar { .. } => {}
                }
            }
        }
        let all: Vec<String> = pages
            .iter()
            .flatten()
            .filter_map(|m| match m {
                Mark::Text { run, .. } => Some(run.text.clone()),
                _ => None,
            })
            .collect();
        for i in 0..60 {
            assert!(all.contains(&format!("R-{i:02}")), "row {i} is placed");
        }
        assert_eq!(all.last().map(String::as_str), Some("After the table"));

        // A table's short introduction at the foot of a page moves with the table.
        let mut blocks = vec![Block::Title("RFP")];
        let filler = vec!["A line of body text."; 39];
        blocks.extend(filler.iter().map(|t| Block::Text(t)));
        blocks.push(Block::Text("Answer each requirement below."));
        blocks.push(Block::Table(&table));
        let pages = lay_out(&faces, &blocks);
        let page_of = |needle: &str| {
            pages.iter().position(|p| p.iter().any(|m| matches!(m, Mark::Text { run, .. } if run.text == needle)))
        };
        assert_eq!(page_of("Answer each requirement below."), page_of("R-00"));
        assert_eq!(page_of("Answer each requirement below."), Some(1), "the filler fills the first page");
        // And so does the heading above that introduction.
        blocks.insert(blocks.len() - 2, Block::Heading("4. Requirements"));
        blocks.drain(1..4);
        let pages = lay_out(&faces, &blocks);
        let page_of = |needle: &str| {
            pages.iter().position(|p| p.iter().any(|m| matches!(m, Mark::Text { run, .. } if run.text == needle)))
        };
        assert_eq!(page_of("4. Requirements"), page_of("R-00"));
        assert_eq!(page_of("4. Requirements"), page_of("Answer each requirement below."));
        assert!(write(&[Block::Title("RFP"), Block::Table(&table)]).unwrap().starts_with(b"%PDF-"));
    }

    #[test]
    fn a_page_break_starts_a_new_page_and_every_page_has_a_numbered_footer() {
        let bytes =
            write(&[Block::Title("Review memo"), Block::Text("Summary"), Block::PageBreak, Block::Text("Details")])
                .unwrap();
        assert!(bytes.starts_with(b"%PDF-"));
        let faces = Faces::load().unwrap();
        let pages = lay_out(&faces, &[Block::Text("Summary"), Block::PageBreak, Block::Text("Details")]);
        assert_eq!(pages.len(), 2);
        let foot = texts(&[footer(&faces, &"A very long contract name ".repeat(20), 2, 7)]);
        assert_eq!(foot[1].2, "Page 2 of 7");
        assert!(foot[0].2.ends_with('…'), "a long title is shortened: {:?}", foot[0].2);
        assert!(foot[0].0 + foot[0].1 < foot[1].0, "the title ends before the page number");
    }
}
