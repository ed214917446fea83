//! Prints the structure read from a file (PDF, DOCX, TXT, image), for looking at how a layout was understood:
//! `cargo run -p pactwise-structure --example show_structure -- FILE [--lines]`.

use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor};
use pactwise_structure::DocumentStructure;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or_else(|| anyhow::anyhow!("usage: show_structure FILE [--lines]"))?;
    let show_lines = args.any(|a| a == "--lines");
    let extractor = Extractor::new(ExtractConfig::from_env());
    let doc = extractor.extract_file(std::path::Path::new(&path), &ExtractOptions::default())?;
    let s = DocumentStructure::build(&doc.pages);
    println!(
        "pages {} lines {} sections {} definitions {}",
        doc.pages.len(),
        s.lines.len(),
        s.sections.len(),
        s.definitions.len()
    );
    println!("zones {:?}", s.zone_counts());
    for sec in &s.sections {
        if sec.level <= 2 {
            let line = &s.lines[sec.first_line as usize];
            println!(
                "{}{} {} (p{} lines {}..{})",
                "  ".repeat(sec.level as usize - 1),
                sec.label.as_deref().unwrap_or("-"),
                sec.heading.as_deref().unwrap_or(""),
                line.page,
                sec.first_line,
                sec.end_line
            );
        }
    }
    if show_lines {
        for l in &s.lines {
            let text = s.line_text(&doc.pages, l);
            let short: String = text.chars().take(90).collect();
            println!(
                "p{:<3} {:<16} {:>5} {}",
                l.page,
                format!("{:?}", l.zone),
                l.section.map_or(String::new(), |x| x.to_string()),
                short
            );
        }
    }
    Ok(())
}
