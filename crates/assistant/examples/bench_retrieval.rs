//! Retrieval benchmark: indexes every contract of a folder of `.txt` files (e.g. ../shared/data/cuad/contracts) into
//! one organization's passage index on a file database, then runs a fixed set of contract questions as searches and
//! prints the index build time and the search latency (median and p95). Usage:
//! `cargo run --release -p pactwise-assistant --example bench_retrieval -- DIR [ROUNDS]`.

use pactwise_assistant::{chunk, query};
use pactwise_domain::{Page, Role, SystemClock};
use pactwise_retrieval::{Mode, Retriever};
use pactwise_store::{NewDocument, Store};
use std::sync::Arc;
use std::time::Instant;

const QUESTIONS: &[&str] = &[
    "What is the limitation of liability cap?",
    "Which contracts renew automatically?",
    "notice period to terminate for convenience",
    "governing law New York",
    "exclusive distributor territory",
    "most favored nation pricing",
    "audit rights books and records",
    "non-compete after termination",
    "change of control assignment consent",
    "minimum purchase commitment",
    "source code escrow release",
    "insurance coverage amount",
    "warranty period defects",
    "indemnify third party intellectual property claims",
    "confidential information survival",
    "royalty payment quarterly reports",
    "liquidated damages late delivery",
    "right of first refusal",
    "non-solicitation of employees",
    "uncapped liability gross negligence",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.first().ok_or("usage: bench_retrieval DIR [ROUNDS]")?;
    let rounds: usize = args.get(1).map_or(Ok(25), |r| r.parse())?;
    let tmp = std::env::temp_dir().join(format!("pactwise-bench-retrieval-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let store = Store::open(&tmp.join("bench.db"), Arc::new(SystemClock))?;
    let platform = store.platform();
    let org = platform.create_organization("Bench")?;
    let user = platform.create_user("Bench", None)?;
    platform.set_membership(org, user, Role::Owner)?;
    let scope = store.sessions().open(platform.start_session(user, org)?)?;

    let mut files: Vec<_> = std::fs::read_dir(dir)?.filter_map(Result::ok).map(|e| e.path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "txt"));
    files.sort();
    let mut documents = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let text = std::fs::read_to_string(path)?;
        let new = NewDocument {
            name: path.file_name().unwrap_or_default().to_string_lossy().into_owned(),
            media_type: pactwise_domain::MediaType::Txt,
            size: text.len() as u64,
            content_hash: format!("{i:064x}"),
        };
        let (doc, _) = store.documents().record(&scope, &new)?;
        // Pages of about 3,000 characters, as the TXT reader makes them.
        let chars: Vec<char> = text.chars().collect();
        let pages: Vec<Page> = chars
            .chunks(3_000)
            .enumerate()
            .map(|(n, c)| Page::plain(n as u32 + 1, c.iter().collect::<String>()))
            .collect();
        documents.push((doc.id, pages));
    }

    let started = Instant::now();
    let mut passages = 0usize;
    for (id, pages) in &documents {
        let chunks = chunk::chunk_pages(pages);
        passages += chunks.len();
        store.passages().replace(&scope, *id, &chunks)?;
    }
    let build = started.elapsed();
    let retriever = Retriever::words_only();
    let started = Instant::now();
    let word_index = retriever.word_index(&store, &scope)?;
    let word_index_build = started.elapsed();

    let mut latencies = Vec::new();
    let mut hits = 0usize;
    for _ in 0..rounds {
        for q in QUESTIONS {
            query::match_expression(q).ok_or("a question without terms")?;
            let t = Instant::now();
            // What the search tool does: words ranked by BM25, passages with every word first, up to 6.
            let found = retriever.search(&store, &scope, q, None, Mode::Bm25, 6)?.hits;
            latencies.push(t.elapsed().as_secs_f64() * 1000.0);
            hits += found.len();
        }
    }
    latencies.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| latencies[((latencies.len() as f64 - 1.0) * p).round() as usize];
    let report = serde_json::json!({
        "contracts": documents.len(),
        "passages": passages,
        "index_build_s": (build.as_secs_f64() * 1000.0).round() / 1000.0,
        "word_index_read_s": (word_index_build.as_secs_f64() * 1000.0).round() / 1000.0,
        "word_index_mb": (word_index.size() as f64 / 1e5).round() / 10.0,
        "searches": latencies.len(),
        "hits_per_search": hits as f64 / latencies.len() as f64,
        "latency_ms_median": (pct(0.5) * 1000.0).round() / 1000.0,
        "latency_ms_p95": (pct(0.95) * 1000.0).round() / 1000.0,
        "latency_ms_max": (latencies.last().copied().unwrap_or(0.0) * 1000.0).round() / 1000.0,
    });
    println!("{report:#}");
    drop(store);
    std::fs::remove_dir_all(&tmp).ok();
    Ok(())
}
