//! `pactwise-extract`: the extract crate as a command, for benchmarks and evaluations until `pactwise extract`
//! takes its place. Start it with `OMP_THREAD_LIMIT=1` in the environment when it will OCR.
//!
//! ```text
//! pactwise-extract extract FILE [--password P] [--max-pages N] [--no-ocr] [--ocr-workers N] [--quiet]
//!                                  (--max-pages: at least 1, default pactwise_extract::DEFAULT_MAX_PAGES)
//! pactwise-extract fixtures DIR
//! pactwise-extract scans DIR --from CONTRACTS_DIR [--pages N] [--dpi D]   # scanned pages of real contract text
//! pactwise-extract long-pdf FILE --from CONTRACTS_DIR [--pages N]        # a long text-layer PDF
//! pactwise-extract eval-cuad DATA_DIR [--every K]                         # word recall of CUAD PDFs vs texts
//! pactwise-extract eval-ocr SCANS_DIR                                     # OCR word accuracy, ours vs tesseract
//! ```

use anyhow::{Context, Result, bail};
use pactwise_domain::{PageSource, Progress, ProgressPhase};
use pactwise_extract::eval::{Recall, word_edits, word_recall};
use pactwise_extract::fixtures::{self, FixturePage};
use pactwise_extract::{ExtractConfig, ExtractOptions, ExtractReport, Extractor};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

struct Args {
    positional: Vec<String>,
    flags: Vec<(String, Option<String>)>,
}

impl Args {
    fn parse() -> Args {
        let mut positional = Vec::new();
        let mut flags = Vec::new();
        let mut it = std::env::args().skip(1).peekable();
        while let Some(a) = it.next() {
            if let Some(name) = a.strip_prefix("--") {
                let takes_value = !matches!(name, "no-ocr" | "quiet" | "json" | "help");
                let value = if takes_value { it.next() } else { None };
                flags.push((name.to_owned(), value));
            } else {
                positional.push(a);
            }
        }
        Args { positional, flags }
    }

    fn flag(&self, name: &str) -> Option<&str> {
        self.flags.iter().find(|(n, _)| n == name).and_then(|(_, v)| v.as_deref())
    }

    fn has(&self, name: &str) -> bool {
        self.flags.iter().any(|(n, _)| n == name)
    }

    fn number(&self, name: &str, default: usize) -> Result<usize> {
        self.flag(name).map_or(Ok(default), |v| v.parse().with_context(|| format!("--{name} takes a number")))
    }

    fn path(&self, i: usize, what: &str) -> Result<PathBuf> {
        self.positional.get(i).map(PathBuf::from).with_context(|| format!("missing {what}"))
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<ExitCode> {
    if args.has("help") || args.positional.iter().any(|a| a == "-h" || a == "help") {
        println!("{}", usage());
        return Ok(ExitCode::SUCCESS);
    }
    let mut config = ExtractConfig::from_env();
    config.ocr_workers = args.number("ocr-workers", 0)?;
    let extractor = Extractor::new(config);
    match args.positional.first().map(String::as_str) {
        Some("extract") => extract(&extractor, args),
        Some("fixtures") => {
            let dir = args.path(1, "DIR")?;
            for path in fixtures::write_all(&dir, &extractor.config().pdfium_path)? {
                println!("{}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Some("scans") => scans(&extractor, args),
        Some("long-pdf") => long_pdf(&extractor, args),
        Some("eval-cuad") => eval_cuad(&extractor, args),
        Some("eval-ocr") => eval_ocr(&extractor, args),
        _ => bail!("{}", usage()),
    }
}

fn usage() -> String {
    format!(
        "usage: pactwise-extract extract FILE [--password P] [--max-pages N] [--no-ocr] [--ocr-workers N] [--quiet]\n\
         \x20      pactwise-extract fixtures|scans|long-pdf|eval-cuad|eval-ocr ... (see the source)\n\
         --max-pages N  {}",
        pactwise_extract::max_pages_help()
    )
}

fn progress_bar(p: Progress) {
    let label = match p.phase {
        ProgressPhase::Reading => "reading",
        ProgressPhase::Ocr => "ocr",
    };
    let width = 30usize;
    let filled = (p.done as usize * width).checked_div(p.total as usize).unwrap_or(width);
    eprint!("\r{label:>7} [{}{}] page {}/{}", "#".repeat(filled), " ".repeat(width - filled), p.done, p.total);
    if p.done == p.total {
        eprintln!();
    }
}

fn quiet(_: Progress) {}

fn extract(extractor: &Extractor, args: &Args) -> Result<ExitCode> {
    let file = args.path(1, "FILE")?;
    let options = ExtractOptions {
        password: args.flag("password"),
        max_pages: args
            .flag("max-pages")
            .map(pactwise_extract::parse_max_pages)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        ocr: !args.has("no-ocr"),
        progress: if args.has("quiet") { &quiet } else { &progress_bar },
    };
    match extractor.extract_file(&file, &options) {
        Ok(doc) => {
            let report = ExtractReport::new(file.display().to_string(), &doc);
            let mut out = std::io::stdout().lock();
            serde_json::to_writer(&mut out, &report)?;
            writeln!(out)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let code = e.code();
            eprintln!("error [{code}]: {e}");
            Ok(ExitCode::from(if code.is_bad_input() { 2 } else { 1 }))
        }
    }
}

/// Contract texts from a folder, in name order.
fn contract_texts(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|p| Ok((p.file_stem().unwrap_or_default().to_string_lossy().into_owned(), std::fs::read_to_string(&p)?)))
        .collect()
}

/// Pages of real contract text, taken from the start of several contracts (one page each, then the next contract).
fn contract_pages(dir: &Path, count: usize) -> Result<Vec<Vec<String>>> {
    let mut pages = Vec::new();
    for (_, text) in contract_texts(dir)? {
        for page in fixtures::page_lines(&text).into_iter().skip(1).take(1) {
            if page.len() >= fixtures::LINES_PER_PAGE / 2 {
                pages.push(page);
            }
        }
        if pages.len() >= count {
            break;
        }
    }
    Ok(pages)
}

fn scans(extractor: &Extractor, args: &Args) -> Result<ExitCode> {
    let out = args.path(1, "DIR")?;
    let from = PathBuf::from(args.flag("from").context("--from CONTRACTS_DIR is required")?);
    let count = args.number("pages", 8)?;
    let dpi = args.number("dpi", 200)? as u32;
    std::fs::create_dir_all(&out)?;
    let pdfium_path = &extractor.config().pdfium_path;
    let mut scanned = Vec::new();
    for (i, lines) in contract_pages(&from, count)?.into_iter().enumerate() {
        let image = fixtures::scanned_page(pdfium_path, &lines, dpi, 1000 + i as u64)?;
        image.save(out.join(format!("page-{:02}.png", i + 1)))?;
        std::fs::write(out.join(format!("page-{:02}.txt", i + 1)), lines.join("\n"))?;
        scanned.push(FixturePage::Scan(image));
    }
    std::fs::write(out.join("scanned.pdf"), fixtures::build_pdf(pdfium_path, &scanned)?)?;
    // The same pixels as one multi-page TIFF, for image intake.
    let mut tiff = std::io::Cursor::new(Vec::new());
    {
        let mut encoder = tiff::encoder::TiffEncoder::new(&mut tiff)?;
        for page in &scanned {
            if let FixturePage::Scan(image) = page {
                encoder.write_image::<tiff::encoder::colortype::Gray8>(
                    image.width(),
                    image.height(),
                    image.as_raw(),
                )?;
            }
        }
    }
    std::fs::write(out.join("scans.tiff"), tiff.into_inner())?;
    eprintln!("wrote {} scanned pages to {}", scanned.len(), out.display());
    Ok(ExitCode::SUCCESS)
}

fn long_pdf(extractor: &Extractor, args: &Args) -> Result<ExitCode> {
    let out = args.path(1, "FILE")?;
    let from = PathBuf::from(args.flag("from").context("--from CONTRACTS_DIR is required")?);
    let count = args.number("pages", 240)?;
    let mut pages = Vec::new();
    for (_, text) in contract_texts(&from)? {
        pages.extend(fixtures::page_lines(&text).into_iter().map(FixturePage::Text));
        if pages.len() >= count {
            break;
        }
    }
    pages.truncate(count);
    std::fs::write(&out, fixtures::build_pdf(&extractor.config().pdfium_path, &pages)?)?;
    eprintln!("wrote {} pages to {}", pages.len(), out.display());
    Ok(ExitCode::SUCCESS)
}

fn eval_cuad(extractor: &Extractor, args: &Args) -> Result<ExitCode> {
    let data = args.path(1, "DATA_DIR (the cuad folder)")?;
    let every = args.number("every", 1)?.max(1);
    let mut pdfs: Vec<PathBuf> = std::fs::read_dir(data.join("pdfs"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
        .collect();
    pdfs.sort();
    let started = Instant::now();
    let (mut ok, mut failed, mut pages, mut ocr_pages) = (0, 0, 0, 0);
    let mut total = Recall::default();
    let mut worst: Vec<(f64, String)> = Vec::new();
    for pdf in pdfs.iter().step_by(every) {
        let stem = pdf.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let reference = std::fs::read_to_string(data.join("contracts").join(format!("{stem}.txt")))
            .with_context(|| format!("no text for {stem}"))?;
        match extractor.extract_file(pdf, &ExtractOptions::default()) {
            Ok(doc) => {
                ok += 1;
                pages += doc.pages.len();
                ocr_pages += doc.pages.iter().filter(|p| p.source == PageSource::Ocr).count();
                let text: Vec<&str> = doc.pages.iter().map(|p| p.text.as_str()).collect();
                let recall = word_recall(&text.join("\n"), &reference);
                total.add(recall);
                worst.push((recall.ratio(), stem));
            }
            Err(e) => {
                failed += 1;
                eprintln!("FAILED {stem}: {e}");
            }
        }
    }
    worst.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (r, name) in worst.iter().take(5) {
        eprintln!("lowest recall {r:.4} {name}");
    }
    println!(
        "{}",
        serde_json::json!({
            "figure": "cuad_word_recall", "documents": ok + failed, "extracted": ok, "failed": failed,
            "pages": pages, "ocr_pages": ocr_pages, "word_recall": (total.ratio() * 10000.0).round() / 10000.0,
            "reference_words": total.reference, "seconds": started.elapsed().as_secs_f64(),
        })
    );
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn eval_ocr(extractor: &Extractor, args: &Args) -> Result<ExitCode> {
    let dir = args.path(1, "SCANS_DIR")?;
    let mut truths = Vec::new();
    for i in 1.. {
        let path = dir.join(format!("page-{i:02}.txt"));
        if !path.exists() {
            break;
        }
        truths.push(std::fs::read_to_string(path)?);
    }
    if truths.is_empty() {
        bail!("no page-NN.txt in {} (make them with `pactwise-extract scans`)", dir.display());
    }
    let pdf = extractor.extract_file(&dir.join("scanned.pdf"), &ExtractOptions::default())?;
    let tiff = extractor.extract_file(&dir.join("scans.tiff"), &ExtractOptions::default())?;
    let (mut ours_pdf, mut ours_tiff, mut theirs, mut reference) = (0usize, 0usize, 0usize, 0usize);
    let mut measured = true;
    let mut confidences = Vec::new();
    for (i, truth) in truths.iter().enumerate() {
        for (doc, edits_sum) in [(&pdf, &mut ours_pdf), (&tiff, &mut ours_tiff)] {
            let page = doc.pages.get(i).context("our extraction has fewer pages than the scans")?;
            measured &= page.confidence.kind() == pactwise_domain::ConfidenceKind::Measured;
            confidences.push(page.confidence.value().unwrap_or(0.0));
            *edits_sum += word_edits(&page.text, truth).0;
        }
        reference += word_edits("", truth).1;
        let output = std::process::Command::new("tesseract")
            .arg(dir.join(format!("page-{:02}.png", i + 1)))
            .arg("-")
            .env("OMP_THREAD_LIMIT", "1")
            .stderr(std::process::Stdio::null())
            .output()
            .context("running the tesseract command")?;
        let (edits, _) = word_edits(&String::from_utf8_lossy(&output.stdout), truth);
        theirs += edits;
    }
    let accuracy = |edits: usize| 1.0 - edits as f64 / reference as f64;
    let mean_confidence = confidences.iter().sum::<f32>() / confidences.len() as f32;
    println!(
        "{}",
        serde_json::json!({
            "figure": "ocr_word_accuracy", "pages": truths.len(), "reference_words": reference,
            "ours_scanned_pdf": (accuracy(ours_pdf) * 10000.0).round() / 10000.0,
            "ours_tiff": (accuracy(ours_tiff) * 10000.0).round() / 10000.0,
            "tesseract_cli": (accuracy(theirs) * 10000.0).round() / 10000.0,
            "ours_confidence_kind": if measured { "measured" } else { "not measured" },
            "ours_mean_confidence": (mean_confidence * 1000.0).round() / 1000.0,
        })
    );
    Ok(ExitCode::SUCCESS)
}
