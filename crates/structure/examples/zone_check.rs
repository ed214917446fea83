//! Where CUAD's labelled clauses fall in the structure read from each contract: a labelled clause should sit in the
//! body, the definitions or an exhibit, never in a running line or the table of contents.
//! `cargo run --release -p pactwise-structure --example zone_check -- CUAD_DIR [--pdf]`

use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor};
use pactwise_structure::{DocumentStructure, Zone};
use std::collections::BTreeMap;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir =
        std::path::PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!("usage: zone_check CUAD_DIR [--pdf]"))?);
    let pdf = args.any(|a| a == "--pdf");
    let extractor = Extractor::new(ExtractConfig::from_env());
    let labels = std::fs::read_to_string(dir.join("labels.jsonl"))?;
    let mut counts: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut bad: Vec<String> = Vec::new();
    let mut docs = 0;
    for line in labels.lines() {
        let rec: serde_json::Value = serde_json::from_str(line)?;
        let slug = rec["contract"].as_str().unwrap_or_default();
        let path = if pdf {
            dir.join("pdfs").join(format!("{slug}.pdf"))
        } else {
            dir.join("contracts").join(format!("{slug}.txt"))
        };
        let Ok(doc) = extractor.extract_file(&path, &ExtractOptions::default()) else { continue };
        docs += 1;
        let s = DocumentStructure::build(&doc.pages);
        let Some(clauses) = rec["clauses"].as_object() else { continue };
        for (category, spans) in clauses {
            let group = match category.as_str() {
                "Document Name" | "Parties" | "Agreement Date" | "Effective Date" => category.clone(),
                _ => "clauses".to_owned(),
            };
            for span in spans.as_array().into_iter().flatten() {
                let text = span["text"].as_str().unwrap_or_default();
                let probe: String = text.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
                if probe.len() < 12 {
                    continue;
                }
                // Find the probe in each page with whitespace collapsed, and map its start back to the page's text.
                let found = doc.pages.iter().find_map(|p| {
                    let mut flat = String::new();
                    let mut origin = Vec::new();
                    let mut space = false;
                    for (i, c) in p.text.char_indices() {
                        if c.is_whitespace() {
                            space = !flat.is_empty();
                            continue;
                        }
                        if space {
                            flat.push(' ');
                            origin.push(i);
                            space = false;
                        }
                        flat.push(c);
                        origin.extend(std::iter::repeat_n(i, c.len_utf8()));
                    }
                    flat.find(&probe).map(|at| (p.number, origin[at]))
                });
                let zone = match found {
                    Some((page, at)) => s.line_at(page, at).map(|(_, l)| l.zone),
                    None => None,
                };
                let name = zone.map_or("not located".to_owned(), |z| format!("{z:?}"));
                if group == "clauses"
                    && matches!(
                        zone,
                        Some(
                            Zone::TableOfContents
                                | Zone::RunningFooter
                                | Zone::RunningHeader
                                | Zone::PageNumber
                                | Zone::Cover
                                | Zone::SignatureBlock
                        )
                    )
                {
                    bad.push(format!("{slug} {category} {name}: {}", probe));
                }
                *counts.entry(group.clone()).or_default().entry(name).or_default() += 1;
            }
        }
    }
    println!("documents {docs}");
    for (group, zones) in &counts {
        let total: usize = zones.values().sum();
        let parts: Vec<String> =
            zones.iter().map(|(z, n)| format!("{z} {n} ({:.1}%)", 100.0 * *n as f64 / total as f64)).collect();
        println!("{group}: {}", parts.join(", "));
    }
    for b in bad.iter().take(60) {
        println!("  {b}");
    }
    println!("clause spans in furniture zones: {}", bad.len());
    Ok(())
}
