//! Benchmark of the model path of one contract's review against the fake model server at a fixed latency per call.
//! Prints (JSON, grouped by where each figure comes from) the measured wall time against the critical path of the
//! model calls (computed from the fixed latency, not measured), and the uncached input tokens (read from the fake
//! server's request log, which simulates the prompt cache) against the contract's own tokens plus the checklist's
//! (estimated at four characters a token). Usage: `cargo run --release -p pactwise-api --example bench_review_model -- FILE
//! [--latency-ms 300] [--type service]`.

use anyhow::{Context, Result};
use pactwise_api::{Api, ApiOptions, ReviewMode, catalog};
use pactwise_model::fake::{FakeModelServer, FakeReply, FakeRule, FakeScript};
use pactwise_model::{ApiKey, InMemoryApiKeySource, ModelConfig};
use pactwise_pipeline::model_path::{DEFAULT_CONCURRENCY, render_window, windows};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

const KEY: &str = "sk-ant-bench-key-for-the-fake-server";

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = args.first().context("usage: bench_review_model FILE [--latency-ms N] [--type ID]")?.clone();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let latency: u64 = flag("--latency-ms").map_or(Ok(300), |v| v.parse()).context("--latency-ms")?;
    let type_id = flag("--type").unwrap_or_else(|| "service".into());
    let catalog = catalog().map_err(|e| anyhow::anyhow!(e.message))?;
    let t = catalog.contract_type(&type_id).context("unknown --type")?.clone();

    // The fake answers the classifier with the type and each section with every item present, quoting the
    // contract's first line (so verification has work to do), all after the same fixed latency.
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {file}"))?;
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
    let mut rules = vec![FakeRule::new(
        "Which type is the document above?",
        FakeReply::forced_tool(json!({"type_id": t.id, "confidence": 0.95, "reason": "bench"})).with_delay(latency),
    )];
    for section in &t.sections {
        let items: Vec<_> = t
            .items
            .iter()
            .filter(|i| i.section == section.id)
            .map(|i| json!({"item_id": i.id, "status": "present", "confidence": 0.9, "quote": first_line, "page": 1}))
            .collect();
        rules.push(FakeRule::new(
            format!("Checklist section: {}.", section.name),
            FakeReply::forced_tool(json!({ "items": items })).with_delay(latency),
        ));
    }
    let server = FakeModelServer::start(FakeScript {
        api_key: Some(KEY.into()),
        rules,
        simulate_cache: true,
        ..FakeScript::default()
    })
    .await?;
    let tmp = tempfile::tempdir()?;
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).map_err(|e| anyhow::anyhow!("{e}"))?)),
        model: ModelConfig::default().with_endpoint(server.endpoint()),
        ..ApiOptions::default()
    };
    let api = Api::open_with(tmp.path().join("data"), options).map_err(|e| anyhow::anyhow!(e.message))?;
    let scope = api.local_session().await.map_err(|e| anyhow::anyhow!(e.message))?;

    let started = Instant::now();
    let review = api
        .review_file(&scope, std::path::Path::new(&file), ReviewMode::Auto)
        .await
        .map_err(|e| anyhow::anyhow!(e.message))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    anyhow::ensure!(review.contract_type.as_ref().is_some_and(|c| c.method == "model"), "the model path did not run");

    // The critical path: classification, then per window the cache-writing section call, then the other sections
    // in waves of at most DEFAULT_CONCURRENCY (and, without that bound, one wave).
    let pages = pactwise_api::extract_file(std::path::Path::new(&file), Default::default(), |_| {})
        .await
        .map_err(|e| anyhow::anyhow!(e.message))?;
    let page_list: Vec<pactwise_domain::Page> =
        pages.pages.iter().map(|p| pactwise_domain::Page::plain(p.number, p.text.clone())).collect();
    let window_count = windows(&page_list).len() as u64;
    let sections = t.sections.iter().filter(|s| t.items.iter().any(|i| i.section == s.id)).count() as u64;
    let waves = (sections - 1).div_ceil(DEFAULT_CONCURRENCY as u64);
    let critical_ms = (latency * (1 + window_count * (1 + waves))) as f64;
    let unbounded_ms = (latency * (1 + window_count * (1 + u64::from(sections > 1)))) as f64;

    // Tokens, from the fake server's log.
    let log = server.message_requests();
    let uncached: u64 = log
        .iter()
        .filter_map(|r| r.usage)
        .map(|u| u64::from(u.input_tokens) + u64::from(u.cache_write_5m_tokens) + u64::from(u.cache_write_1h_tokens))
        .sum();
    let cache_read: u64 = log.iter().filter_map(|r| r.usage).map(|u| u64::from(u.cache_read_tokens)).sum();
    let contract_tokens: u64 = page_list.iter().map(|p| render_window(&[p]).len() as u64).sum::<u64>() / 4;
    let checklist_chars: usize = t
        .items
        .iter()
        .map(|i| {
            i.id.len()
                + i.question.len()
                + i.guidance.present.len()
                + i.guidance.partial.len()
                + i.guidance.absent.len()
                + i.red_flags.iter().map(String::len).sum::<usize>()
        })
        .sum();
    let checklist_tokens = checklist_chars as u64 / 4;
    // Where each figure comes from, said in the output: measured here, computed from the fixed latency and the
    // contract's shape (not measured), or read from the fake server's request log (its simulated prompt cache, not
    // the real API's).
    let report = json!({
        "file": file,
        "type": t.id,
        "latency_ms_per_call": latency,
        "measured": {
            "wall_ms": wall_ms.round(),
            "items": review.items.len(),
            "verified_quotes": review.items.iter().filter(|i| i.verified).count(),
        },
        "computed": {
            "how": "critical path = the fixed latency x the calls that must follow each other (classification, then \
                    per window the cache-writing section call and the other sections in waves of the concurrency \
                    bound); token counts = characters / 4",
            "sections": sections,
            "windows": window_count,
            "concurrency": DEFAULT_CONCURRENCY,
            "critical_path_ms": critical_ms,
            "critical_path_unbounded_ms": unbounded_ms,
            "wall_over_critical_path": (wall_ms / critical_ms * 1000.0).round() / 1000.0,
            "contract_tokens_estimated": contract_tokens,
            "checklist_tokens_estimated": checklist_tokens,
        },
        "from_fake_server_log": {
            "how": "counted by the fake model server per request; its prompt cache is simulated, not the real API's",
            "model_calls": log.len(),
            "uncached_input_tokens": uncached,
            "cache_read_tokens": cache_read,
            "uncached_over_contract_plus_checklist":
                ((uncached as f64 / (contract_tokens + checklist_tokens) as f64) * 1000.0).round() / 1000.0,
        },
    });
    println!("{report:#}");
    Ok(())
}
