//! `pactwise`: the command-line front door to the same `api` the desktop app uses. Every command takes `--json`
//! and then prints exactly one JSON document on stdout; progress and messages go to stderr. Exit codes: 0 ok,
//! 1 failure, 2 bad usage or bad input.

mod agents;
mod contracts;
mod members;
mod output;
mod prep;
mod records;
mod runs;
mod secret;
mod source;
mod sync;
mod vendors;

use clap::{Parser, Subcommand};
use output::{Outcome, fail};
use pactwise_api::{Api, ApiError, DocumentQuery, ImportOptions, ImportProgress, ImportStage, parse_document_id};
use pactwise_api::{CorrectionInput, ReportOptions, ReviewMode};
use pactwise_domain::{Document, ErrorCode, ItemStatus, Quote};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// mimalloc instead of the system allocator: many small short-lived allocations (engine runs, pipeline stages, JSON)
/// are about a tenth cheaper in `bench/engine.sh`. The desktop app, which stays open, uses jemalloc instead, which
/// gives memory back after a burst (src-tauri/src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "pactwise", version, about = "Pactwise Desk from the command line", propagate_version = true)]
struct Cli {
    /// The data directory shared with the desktop app [default: the platform's app-data directory]
    #[arg(long, global = true, env = "PACTWISE_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,

    /// Print one JSON document on stdout instead of text
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Extract a file's pages (text layer, OCR for scans) and print them, without keeping the file
    Extract {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Password of a protected PDF
        #[arg(long)]
        password: Option<String>,
        #[arg(long, value_name = "N", value_parser = pactwise_api::parse_max_pages, help = pactwise_api::max_pages_help())]
        max_pages: Option<usize>,
    },
    /// Import files (PDF, DOCX, TXT, PNG, JPEG, TIFF) into the current organization
    Import {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Refuse files larger than this (e.g. 200MB, 1.5GB, 500000) [default: the organization's limit, 200MB]
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_size: Option<u64>,
        /// Password of protected PDFs; without a value it is asked for on the terminal (not echoed). Used to read
        /// the pages only: never stored or logged
        #[arg(long, value_name = "PASSWORD", num_args = 0..=1, default_missing_value = "")]
        password: Option<String>,
    },
    /// List the current organization's documents
    Documents {
        /// List the trash (deleted documents) instead
        #[arg(long)]
        deleted: bool,
    },
    /// Move a document to the trash (it can be restored)
    Delete {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Bring a document back from the trash
    Restore {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Run the document pipeline on a file without keeping it: type, checklist items, gate route, extractions
    Review {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Rules only: no model calls even when a key is set
        #[arg(long)]
        offline: bool,
        /// Run the whole state machine with no model calls and say which route the document would take
        #[arg(long, conflicts_with = "offline")]
        dry_run: bool,
    },
    /// Run the contract review report on a file (imported first if needed): clauses by type with text found on
    /// the cited page, rejected extractions, unprocessed parts; sign it off with `approve` (needs an API key)
    Report {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Model calls for this run, retries included [default: the organization's setting, else 60]
        #[arg(long, value_name = "N")]
        max_calls: Option<u32>,
        /// Seconds of model-driven work for this run [default: the organization's setting, else 300]
        #[arg(long, value_name = "SECS")]
        time_limit: Option<u32>,
    },
    /// Documents the review gate routed to a person, with the reason
    Queue,
    /// Show an imported document's review (type, items, gate, stages); --rerun runs a stage and those after again
    Pipeline {
        #[arg(value_name = "ID")]
        id: String,
        /// classify, checklist, gate or finalize
        #[arg(long, value_name = "STAGE")]
        rerun: Option<String>,
        /// Rules only for the stages that run
        #[arg(long)]
        offline: bool,
    },
    /// Confirm or correct one checklist item of an imported document (saved at once, audited, wins over re-runs)
    Correct {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long, value_name = "ITEM")]
        item: String,
        /// Confirm the pre-filled answer as it is
        #[arg(long, conflicts_with = "status")]
        confirm: bool,
        /// present, partial, absent or not_evaluated
        #[arg(long)]
        status: Option<String>,
        /// Supporting words, exactly as on the page (needs --page)
        #[arg(long, requires = "page")]
        quote: Option<String>,
        #[arg(long)]
        page: Option<u32>,
        #[arg(long)]
        note: Option<String>,
        /// Keep the quote although it may not be the clause (the warnings are recorded with the correction)
        #[arg(long)]
        keep_despite_warnings: bool,
    },
    /// Finalize a review once every critical item is confirmed or corrected (`correct`); links the vendor chosen
    Finalize {
        #[arg(value_name = "ID")]
        id: String,
        /// Link this vendor of the organization (by id)
        #[arg(long, value_name = "VENDOR_ID", conflicts_with = "new_vendor")]
        vendor_id: Option<String>,
        /// Create a vendor with this name and link it
        #[arg(long, value_name = "NAME")]
        new_vendor: Option<String>,
    },
    /// Finalized contracts: list (filters, search), show ID, dates (upcoming expirations and notice deadlines, --ics)
    Contracts {
        #[command(subcommand)]
        what: contracts::ContractsCommand,
    },
    /// Agents: plan "REQUEST" (the manager's plan, not run), list, config (--set agent.field=VALUE, --schema)
    Agents {
        #[command(subcommand)]
        what: agents::AgentsCommand,
    },
    /// Vendors: list, show ID, add NAME, duplicates, merge KEEP DUPLICATE, set-status ID STATUS, onboard ID
    Vendors {
        #[command(subcommand)]
        what: vendors::VendorsCommand,
    },
    /// PactWise Source tenders: publish PACKAGE, list, show, approve, invite, questions, answer, extend, open, score,
    /// lock, open-price, evaluation, award, ocds, audit
    Source {
        #[command(subcommand)]
        what: source::SourceCommand,
    },
    /// The audit log: list (filtered, newest first), actions, export --csv FILE
    Audit {
        #[command(subcommand)]
        what: records::AuditCommand,
    },
    /// Model spend by month, person and feature, with budgets and what remains (admins: the organization)
    Usage {
        /// The month for people and features (YYYY-MM) [default: this month]
        #[arg(long, value_name = "MONTH")]
        month: Option<String>,
    },
    /// Start the contract lifecycle (approval) of a finalized contract; its checklist risk decides who approves
    Lifecycle {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Reopen a finalized review so its items can be changed again (audited with the reason)
    Reopen {
        #[arg(value_name = "ID")]
        id: String,
        /// Why the review is reopened
        #[arg(long)]
        reason: String,
    },
    /// Search the organization's contracts by words and meaning (no API key needed)
    Search {
        #[arg(value_name = "QUERY")]
        query: String,
        /// Only inside this document (its id, from `pactwise list`)
        #[arg(long, value_name = "ID")]
        document: Option<String>,
        /// bm25 (words), dense (meaning) or hybrid (both, the default)
        #[arg(long, default_value = "hybrid", value_parser = |s: &str| s.parse::<pactwise_api::SearchMode>())]
        mode: pactwise_api::SearchMode,
        /// At most this many passages
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
    /// Ask the Contract Assistant about the organization's contracts (needs an API key; answers cite passages)
    Ask {
        #[arg(value_name = "QUESTION")]
        question: String,
        /// Keep the question in this assistant session (questions never see earlier turns)
        #[arg(long)]
        session: Option<String>,
    },
    /// The precedent corpus: `import DIR` adds the .md and .txt files of a folder as market examples
    Corpus {
        #[command(subcommand)]
        what: CorpusCommand,
    },
    /// Score the offline review on a labelled CUAD folder (contracts/*.txt and labels.jsonl)
    Eval {
        #[command(subcommand)]
        what: EvalCommand,
    },
    /// Seed the demo organization with a few contracts and switch to it
    Demo,
    /// The checklist library: `export` prints the whole catalog, `stats` its counts
    Checklists {
        #[command(subcommand)]
        what: ChecklistCommand,
    },
    /// Prep Studio: draft, check, approve, publish and export RFP packages
    Prep {
        #[command(subcommand)]
        what: prep::PrepCommand,
    },
    /// Settings of this installation and organization
    Settings {
        #[command(subcommand)]
        setting: SettingCommand,
    },
    /// The organization's members: list, add (prints a one-time sign-in code), role, remove, code
    Members {
        #[command(subcommand)]
        what: members::MembersCommand,
    },
    /// The organizations this install works in: list, switch
    Org {
        #[command(subcommand)]
        what: members::OrgCommand,
    },
    /// Sync with the organization's sync service: sign-in, now, status, sign-out
    Sync {
        #[command(subcommand)]
        what: sync::SyncCommand,
    },
    #[command(flatten)]
    Workflow(runs::WorkflowCommand),
}

#[derive(Subcommand)]
enum EvalCommand {
    /// Type accuracy, presence F1 per CUAD category and macro, quote precision, invented quotes, governing law
    Cuad {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Only the first N contracts of labels.jsonl
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// Recall@3 and MRR within a contract, nDCG@10 across the portfolio, for words, meaning and both (the 41 category
    /// descriptions as queries); latency, embedding speed, index size
    Retrieval {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Only the first N contracts of labels.jsonl
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// The benchmark's own store, kept between runs (its vectors are the embedding cache)
        #[arg(long, value_name = "DIR", default_value = "/var/cache/pactwise/retrieval-eval")]
        store: PathBuf,
    },
}

#[derive(Subcommand)]
enum CorpusCommand {
    /// Add a folder's .md and .txt files (recursively) to the precedent corpus
    Import {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

#[derive(Subcommand)]
enum ChecklistCommand {
    /// The whole catalog: every type and item with all fields, the version and the content hash
    Export,
    /// Counts per type, section, risk level and CUAD category, and optional-field coverage
    Stats,
}

#[derive(Subcommand)]
enum SettingCommand {
    /// Store the Anthropic API key in the OS keychain (typed without echo on a terminal, or piped in); --clear
    /// removes it (owners and admins)
    ApiKey {
        #[arg(long)]
        clear: bool,
    },
    /// Store the optional Voyage key (its legal-domain model for meaning-based search, when online) in the OS
    /// keychain, typed without echo or piped in; --clear removes it and search uses the local model (owners and admins)
    VoyageKey {
        #[arg(long)]
        clear: bool,
    },
    /// Show which model meaning-based search uses (local, or Voyage when its key is set)
    Voyage,
    /// Show whether model calls can be made (no key, keychain unavailable, ready)
    Model,
    /// Show the review gate's thresholds; --set NAME=VALUE changes one (owners and admins)
    Thresholds {
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// Set the organization's model budget, in US dollars per period
    Budget {
        /// organization, each_user, or a user id
        #[arg(long, default_value = "organization")]
        subject: String,
        /// daily or monthly
        #[arg(long, default_value = "monthly")]
        period: String,
        /// The limit in US dollars, e.g. 25 or 2.50
        #[arg(long, value_name = "USD", value_parser = parse_dollars)]
        limit: i64,
    },
}

fn eval_cuad(dir: &std::path::Path, limit: Option<usize>) -> Result<Outcome, ApiError> {
    let report = pactwise_api::eval_cuad(dir, limit)?;
    let json = serde_json::to_value(&report).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    let text = output::eval_text(&json);
    Ok(Outcome::ok(json, text))
}

fn eval_retrieval(dir: &std::path::Path, store: &std::path::Path, limit: Option<usize>) -> Result<Outcome, ApiError> {
    let mut last = String::new();
    let report = pactwise_api::eval_retrieval(dir, store, limit, &mut |step, done, total| {
        let line = format!("{step}: {}%", (done * 100).checked_div(total).unwrap_or(100));
        if line != last {
            eprintln!("{line}");
            last = line;
        }
    })?;
    let json = serde_json::to_value(&report).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    Ok(Outcome::ok(json, pactwise_api::retrieval_table(&report)))
}

fn parse_stage(text: &str) -> Result<pactwise_api::Stage, ApiError> {
    pactwise_api::Stage::parse(text).ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!("{text:?} is not a stage; use classify, checklist, gate or finalize"),
        )
    })
}

fn parse_dollars(text: &str) -> Result<i64, String> {
    let value: f64 = text
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("{text:?} is not an amount; write e.g. 25 or 2.50"))?;
    if !(0.0..=1e9).contains(&value) {
        return Err(format!("{text:?} is out of range; use an amount between 0 and 1,000,000,000 dollars"));
    }
    Ok((value * 1_000_000.0).round() as i64)
}

fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_lowercase().replace(' ', "");
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 =
        number.parse().map_err(|_| format!("{text:?} is not a size; write e.g. 200MB, 1.5GB or 500000"))?;
    let factor: f64 = match unit {
        "" | "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown unit {unit:?} in {text:?}; use B, KB, MB or GB")),
    };
    let bytes = value * factor;
    if !(1.0..=1e13).contains(&bytes) {
        return Err(format!("{text:?} is out of range; use a size between 1 byte and 10 TB"));
    }
    Ok(bytes.round() as u64)
}

/// Tesseract must not start OpenMP threads of its own (pages run on our workers instead), and the variable only
/// works if set before the process starts: commands that may OCR re-run the program with it set.
fn rerun_with_omp_limit() -> Option<ExitCode> {
    if std::env::var("OMP_THREAD_LIMIT").as_deref() == Ok("1") {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let status =
        std::process::Command::new(exe).args(std::env::args_os().skip(1)).env("OMP_THREAD_LIMIT", "1").status().ok()?;
    Some(ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `sync now` imports documents received from other devices (OCR for scans).
    if matches!(
        cli.command,
        Command::Extract { .. }
            | Command::Import { .. }
            | Command::Review { .. }
            | Command::Report { .. }
            | Command::Sync { what: sync::SyncCommand::Now }
    ) && let Some(code) = rerun_with_omp_limit()
    {
        return code;
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PACTWISE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error")),
        )
        .init();
    let json = cli.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(json, &ApiError::new(ErrorCode::Internal, format!("cannot start: {e}"))),
    };
    match runtime.block_on(run(cli)) {
        Ok(outcome) => outcome.print(json),
        Err(error) => fail(json, &error),
    }
}

async fn run(cli: Cli) -> Result<Outcome, ApiError> {
    if let Command::Checklists { what } = &cli.command {
        // The library is built into the program: no data directory needed.
        return checklists(what);
    }
    if let Command::Eval { what: EvalCommand::Cuad { dir, limit } } = &cli.command {
        // Scoring reads the folder and keeps nothing: no data directory needed.
        return eval_cuad(dir, *limit);
    }
    if let Command::Eval { what: EvalCommand::Retrieval { dir, limit, store } } = &cli.command {
        // The benchmark keeps its own store: no data directory needed.
        return eval_retrieval(dir, store, *limit);
    }
    if let Command::Extract { file, password, max_pages } = cli.command {
        // Extraction keeps nothing: no data directory needed.
        let request = pactwise_api::ExtractRequest { password, max_pages };
        let report = pactwise_api::extract_file(&file, request, progress_bar).await?;
        let json = serde_json::to_value(&report).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        let text = format!("{}: {} pages", file.display(), json["page_count"]);
        return Ok(Outcome::ok(json, text));
    }
    if let Command::Workflow(runs::WorkflowCommand::Bench { what }) = cli.command {
        // The benchmark makes its own database: no data directory needed.
        return runs::bench(what).await;
    }
    let root = pactwise_api::resolve_data_dir(cli.data_dir)?;
    let api = Api::open(root)?;
    let outcome = dispatch(&api, cli.command).await;
    api.flush();
    outcome
}

async fn dispatch(api: &Api, command: Command) -> Result<Outcome, ApiError> {
    match command {
        Command::Demo => {
            let (scope, report) = api.seed_demo().await?;
            let docs = api.list_documents(&scope, DocumentQuery::default()).await?;
            let text = format!(
                "Demo organization {:?} is ready with {} documents ({} new); it is now the current organization.\n{}",
                output::clean(&report.organization),
                report.documents,
                report.created,
                output::document_table(&docs)
            );
            Ok(Outcome::ok(json!(report), text))
        }
        // Sync works on the install's signed-in organization, whatever the current session is.
        Command::Sync { what } => sync::run(api, what).await,
        command => {
            let scope = api.local_session().await?;
            match command {
                Command::Import { files, max_size, password } => {
                    let password = match password.as_deref() {
                        Some("") => Some(
                            secret::read_secret(
                                "Type the PDF password and press Enter (it is not shown): ",
                                secret::Piped::FirstLine,
                            )
                            .map_err(|e| {
                                ApiError::new(ErrorCode::InvalidInput, format!("could not read the password ({e})"))
                            })?,
                        ),
                        _ => password,
                    };
                    let progress = |p: ImportProgress| match p.stage {
                        ImportStage::Done => eprintln!("[{}/{}] imported {}", p.index, p.total, p.file),
                        ImportStage::Failed => eprintln!("[{}/{}] could not import {}", p.index, p.total, p.file),
                        ImportStage::Extracting if p.pages > 0 => progress_bar(pactwise_domain::page::Progress {
                            phase: pactwise_domain::page::ProgressPhase::Reading,
                            done: p.page,
                            total: p.pages,
                        }),
                        ImportStage::Reviewing => eprintln!("[{}/{}] reviewing {}", p.index, p.total, p.file),
                        ImportStage::Checking | ImportStage::Copying | ImportStage::Extracting => {}
                    };
                    let report = api
                        .import_documents(&scope, files, ImportOptions { max_bytes: max_size, password }, &progress)
                        .await?;
                    Ok(output::import_outcome(&report))
                }
                Command::Documents { deleted } => {
                    let docs = api.list_documents(&scope, DocumentQuery { deleted }).await?;
                    let text = if docs.is_empty() {
                        if deleted { "The trash is empty.".to_string() } else { "No documents yet.".to_string() }
                    } else {
                        output::document_table(&docs)
                    };
                    Ok(Outcome::ok(json!({ "documents": docs }), text))
                }
                Command::Delete { id } => {
                    let doc = api.delete_document(&scope, parse_document_id(&id)?).await?;
                    Ok(single(doc, "Moved to the trash"))
                }
                Command::Restore { id } => {
                    let doc = api.restore_document(&scope, parse_document_id(&id)?).await?;
                    Ok(single(doc, "Restored"))
                }
                Command::Settings { setting } => settings(api, &scope, setting).await,
                Command::Prep { what } => prep::run(api, &scope, what).await,
                Command::Review { file, offline, dry_run } => {
                    let mode = match (offline, dry_run) {
                        (_, true) => ReviewMode::DryRun,
                        (true, false) => ReviewMode::Offline,
                        (false, false) => ReviewMode::Auto,
                    };
                    let review = api.review_file(&scope, &file, mode).await?;
                    Ok(output::review_outcome(&review))
                }
                Command::Search { query, document, mode, limit } => {
                    if mode != pactwise_api::SearchMode::Bm25 {
                        // Vectors the desktop has not computed yet are computed here first (kept for next time).
                        let last = std::sync::atomic::AtomicU32::new(0);
                        api.prepare_semantic_search(&scope, |s| {
                            let step = s.done / 100 + 1;
                            if !s.ready && !s.unavailable && last.swap(step, Ordering::Relaxed) != step {
                                eprintln!("{}", s.message);
                            }
                        })
                        .await?;
                    }
                    let found = api.search_passages(&scope, &query, document.as_deref(), mode, limit).await?;
                    Ok(output::search_outcome(&found))
                }
                Command::Ask { question, session } => {
                    let answer = api.ask(&scope, &question, session).await?;
                    Ok(output::answer_outcome(&answer))
                }
                Command::Corpus { what: CorpusCommand::Import { dir } } => {
                    let report = api.corpus_import(&dir).await?;
                    for s in &report.skipped {
                        eprintln!("skipped {s}");
                    }
                    let text = format!(
                        "{} precedent text(s) imported, {} unchanged; the corpus holds {}.",
                        report.imported, report.unchanged, report.total
                    );
                    Ok(Outcome::ok(json!(report), text))
                }
                Command::Report { file, max_calls, time_limit } => {
                    let imported = api
                        .import_documents(&scope, vec![file], ImportOptions::default(), &|p: ImportProgress| {
                            if p.stage == ImportStage::Reviewing {
                                eprintln!("classifying {}", p.file);
                            }
                        })
                        .await?;
                    if let Some(failed) = imported.failed.into_iter().next() {
                        return Err(failed.error);
                    }
                    let document = imported.imported.into_iter().next().ok_or_else(|| {
                        ApiError::new(ErrorCode::Internal, "the import reported no document and no failure")
                    })?;
                    if let Some(error) = document.extraction_error {
                        return Err(error);
                    }
                    eprintln!("running the contract review report on {}", output::clean(&document.document.name));
                    let options = ReportOptions { max_calls, time_limit_secs: time_limit };
                    let view = api.start_report(&scope, document.document.id, options).await?;
                    Ok(output::report_outcome(&view))
                }
                Command::Queue => {
                    let queue = api.review_queue(&scope).await?;
                    Ok(output::queue_outcome(&queue))
                }
                Command::Pipeline { id, rerun, offline } => {
                    let id = parse_document_id(&id)?;
                    let review = match rerun {
                        None if !offline => api.document_review(&scope, id).await?,
                        rerun => {
                            let stage = rerun.as_deref().map(parse_stage).transpose()?;
                            let mode = if offline { ReviewMode::Offline } else { ReviewMode::Auto };
                            api.run_pipeline(&scope, id, mode, stage).await?
                        }
                    };
                    Ok(output::review_outcome(&review))
                }
                Command::Correct { id, item, confirm, status, quote, page, note, keep_despite_warnings } => {
                    let status = status
                        .map(|s| {
                            ItemStatus::parse(&s).ok_or_else(|| {
                                ApiError::new(
                                    ErrorCode::InvalidInput,
                                    format!("{s:?} is not a status; use present, partial, absent or not_evaluated"),
                                )
                            })
                        })
                        .transpose()?;
                    if !confirm && status.is_none() {
                        return Err(ApiError::new(ErrorCode::InvalidInput, "give --confirm or --status STATUS"));
                    }
                    let quote = quote.zip(page).map(|(text, page)| Quote { text, page });
                    let input = CorrectionInput {
                        item_id: item,
                        confirm,
                        status,
                        quote,
                        note,
                        acknowledge_warnings: keep_despite_warnings,
                    };
                    let review = api.correct_item(&scope, parse_document_id(&id)?, input).await?;
                    Ok(output::review_outcome(&review))
                }
                Command::Reopen { id, reason } => {
                    let review = api.reopen_review(&scope, parse_document_id(&id)?, reason).await?;
                    Ok(output::review_outcome(&review))
                }
                Command::Finalize { id, vendor_id, new_vendor } => {
                    contracts::finalize(api, &scope, &id, vendor_id, new_vendor).await
                }
                Command::Contracts { what } => contracts::run(api, &scope, what).await,
                Command::Vendors { what } => vendors::run(api, &scope, what).await,
                Command::Source { what } => source::run(api, &scope, what).await,
                Command::Agents { what } => agents::run(api, &scope, what).await,
                Command::Audit { what } => records::audit(api, &scope, what).await,
                Command::Usage { month } => records::usage(api, &scope, month).await,
                Command::Lifecycle { id } => {
                    let run = api.start_contract_lifecycle(&scope, pactwise_api::parse_document_id(&id)?).await?;
                    let json = serde_json::to_value(&run).map_err(|e| {
                        pactwise_api::ApiError::new(pactwise_domain::ErrorCode::Internal, e.to_string())
                    })?;
                    Ok(output::Outcome::ok(json, format!("lifecycle run {} started: {}", run.id, run.status)))
                }
                Command::Workflow(command) => runs::dispatch(api, &scope, command).await,
                Command::Members { what } => members::run(api, &scope, what).await,
                Command::Org { what } => members::run_org(api, &scope, what).await,
                Command::Demo
                | Command::Sync { .. }
                | Command::Checklists { .. }
                | Command::Extract { .. }
                | Command::Eval { .. } => {
                    unreachable!("handled above")
                }
            }
        }
    }
}

async fn settings(api: &Api, scope: &pactwise_api::OrgScope, setting: SettingCommand) -> Result<Outcome, ApiError> {
    match setting {
        SettingCommand::ApiKey { clear: true } => {
            let status = api.clear_api_key(scope).await?;
            Ok(Outcome::ok(
                json!({ "api_key": "cleared", "model": status }),
                "API key removed from the keychain.".into(),
            ))
        }
        SettingCommand::ApiKey { clear: false } => {
            let key = secret::read_secret(
                "Paste the API key and press Enter (it is not shown and not echoed back): ",
                secret::Piped::Whole,
            )
            .map_err(|e| {
                ApiError::new(ErrorCode::InvalidInput, format!("could not read the key from stdin ({e}); pipe it in"))
            })?;
            let status = api.set_api_key(scope, key).await?;
            Ok(Outcome::ok(json!({ "api_key": "set", "model": status }), "API key stored in the OS keychain.".into()))
        }
        SettingCommand::VoyageKey { clear: true } => {
            let status = api.clear_voyage_key(scope).await?;
            Ok(Outcome::ok(json!({ "voyage_key": "cleared", "voyage": status }), status.summary.clone()))
        }
        SettingCommand::VoyageKey { clear: false } => {
            let key = secret::read_secret(
                "Paste the Voyage key and press Enter (it is not shown and not echoed back): ",
                secret::Piped::Whole,
            )
            .map_err(|e| {
                ApiError::new(ErrorCode::InvalidInput, format!("could not read the key from stdin ({e}); pipe it in"))
            })?;
            let status = api.set_voyage_key(scope, key).await?;
            Ok(Outcome::ok(json!({ "voyage_key": "set", "voyage": status }), status.summary.clone()))
        }
        SettingCommand::Voyage => {
            let status = api.voyage_status().await;
            Ok(Outcome::ok(json!({ "voyage": status }), status.summary.clone()))
        }
        SettingCommand::Model => {
            let status = api.model_status().await;
            let mut text = format!(
                "Model: {}",
                serde_json::to_value(status.availability).unwrap_or_default().as_str().unwrap_or("unknown")
            );
            if let Some(endpoint) = &status.endpoint {
                text.push_str(&format!(" (requests go to {endpoint}, not the default API: PACTWISE_MODEL_ENDPOINT)"));
            }
            Ok(Outcome::ok(json!({ "model": status.availability, "endpoint": status.endpoint }), text))
        }
        SettingCommand::Thresholds { set } => {
            let mut thresholds = api.thresholds(scope).await?;
            for pair in set {
                let (name, value) = pair.split_once('=').ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::InvalidInput,
                        format!("{pair:?}: write NAME=VALUE, e.g. critical_min_confidence=0.8"),
                    )
                })?;
                let value: f32 = value.trim().parse().map_err(|_| {
                    ApiError::new(
                        ErrorCode::InvalidInput,
                        format!("{value:?} is not a number; use a value from 0 to 1"),
                    )
                })?;
                thresholds = api.set_threshold(scope, name.trim(), value).await?;
            }
            let json = serde_json::to_value(thresholds).unwrap_or_default();
            let text = json
                .as_object()
                .map(|o| o.iter().map(|(k, v)| format!("{k:32} {v}")).collect::<Vec<_>>().join("\n"))
                .unwrap_or_default();
            Ok(Outcome::ok(json!({ "thresholds": json }), text))
        }
        SettingCommand::Budget { subject, period, limit } => {
            api.set_model_budget(scope, &subject, &period, limit).await?;
            let budgets = api.model_budgets(scope).await?;
            Ok(Outcome::ok(
                json!({ "budgets": budgets }),
                format!("Budget set: {subject}, {period}, ${:.2}", limit as f64 / 1e6),
            ))
        }
    }
}

/// Page i of n on stderr, redrawn in place.
fn progress_bar(p: pactwise_domain::page::Progress) {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return;
    }
    let label = match p.phase {
        pactwise_domain::page::ProgressPhase::Reading => "reading",
        pactwise_domain::page::ProgressPhase::Ocr => "ocr",
    };
    let width = 30usize;
    let filled = (p.done as usize * width).checked_div(p.total as usize).unwrap_or(width).min(width);
    eprint!("\r{label:>7} [{}{}] page {}/{}", "#".repeat(filled), " ".repeat(width - filled), p.done, p.total);
    if p.done >= p.total {
        eprintln!();
    }
}

fn checklists(what: &ChecklistCommand) -> Result<Outcome, ApiError> {
    match what {
        ChecklistCommand::Export => {
            let catalog = serde_json::to_value(pactwise_api::checklist_export()?)
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
            let text = serde_json::to_string_pretty(&catalog).unwrap_or_default();
            Ok(Outcome::ok(catalog, text))
        }
        ChecklistCommand::Stats => {
            let stats = serde_json::to_value(pactwise_api::checklist_stats()?)
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
            let text = format!(
                "{} types, {} items (catalog {} {})\n{}",
                stats["type_count"],
                stats["item_count"],
                stats["catalog"]["version"].as_str().unwrap_or("?"),
                &stats["catalog"]["hash"].as_str().unwrap_or("?")
                    [..12.min(stats["catalog"]["hash"].as_str().unwrap_or("?").len())],
                serde_json::to_string_pretty(&stats["by_risk"]).unwrap_or_default()
            );
            Ok(Outcome::ok(stats, text))
        }
    }
}

fn single(doc: Document, verb: &str) -> Outcome {
    let text = format!("{verb}: {} ({})", output::clean(&doc.name), doc.id);
    Outcome::ok(json!({ "document": doc }), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_and_without_units() {
        assert_eq!(parse_size("200MB"), Ok(200_000_000));
        assert_eq!(parse_size("1.5 GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("500000"), Ok(500_000));
        assert_eq!(parse_size("2MiB"), Ok(2 * 1024 * 1024));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn dollars_parse_to_micro_dollars() {
        assert_eq!(parse_dollars("25"), Ok(25_000_000));
        assert_eq!(parse_dollars("$2.50"), Ok(2_500_000));
        assert!(parse_dollars("-1").is_err());
        assert!(parse_dollars("lots").is_err());
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
