//! The Contracts area at scale (issue 20), run by `bench/contracts.sh`: the CUAD dev contracts' texts imported and
//! finalized through the real api by the offline path (no API key) into a fresh data directory, then the list query
//! timed through `Api::contract_list` (unfiltered, each filter, a search, a combination) beside a peer doing the
//! same work the obvious way: every finalized contract's `extractions_json` read and filtered, sorted and paged in
//! Rust. Then the same at 10,000 contracts (the finalized rows copied, as a large organization would have them).
//!
//! The upcoming-dates view is checked against the extracted fields: each contract's expiration date and notice
//! deadline are computed here, independently of `rules::contract_dates` (own date arithmetic), and compared with
//! every date `Api::upcoming_dates` returns over windows that cover them all.
//!
//! "Today" is fixed at 2019-07-01 (a FixedClock) so "expiring within N days" meets the CUAD contracts' real dates.
//! Prints one JSON line per figure (p50/p95 in ms, ours and the peer's, the ratio), then the dates check.
//! Usage: `bench_contracts --cuad DIR [--reps 30] [--scale 10000] [--limit N]`.

use anyhow::{Context, Result, bail};
use chrono::{Datelike, NaiveDate, TimeZone, Utc, Weekday};
use pactwise_api::{Api, ApiOptions, ContractQuery, CorrectionInput, FinalizeInput, ImportOptions, OrgScope, catalog};
use pactwise_domain::{FixedClock, RiskLevel};
use pactwise_model::InMemoryApiKeySource;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

struct Args {
    cuad: PathBuf,
    reps: usize,
    scale: usize,
    limit: Option<usize>,
}

fn args() -> Result<Args> {
    let mut a = Args { cuad: PathBuf::new(), reps: 30, scale: 10_000, limit: None };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--cuad" => a.cuad = PathBuf::from(value()?),
            "--reps" => a.reps = value()?.parse()?,
            "--scale" => a.scale = value()?.parse()?,
            "--limit" => a.limit = Some(value()?.parse()?),
            other => bail!("unknown flag {other}"),
        }
    }
    if a.cuad.as_os_str().is_empty() {
        bail!("--cuad DIR (the CUAD folder with contracts/*.txt) is required");
    }
    Ok(a)
}

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2019, 7, 1).unwrap()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// p50 and p95 in milliseconds of `reps` runs of `f` (after one warm-up run), and what the last run returned.
async fn time<T, F, Fut>(reps: usize, mut f: F) -> Result<(f64, f64, T)>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut last = f().await?;
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        last = f().await?;
        ms.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((percentile(&ms, 0.5), percentile(&ms, 0.95), last))
}

// ---- the peer: the same list done by scanning extractions_json in Rust ----

struct Scanned {
    document: String,
    name: String,
    type_id: String,
    counterparty: Option<String>,
    risk: Option<String>,
    fields: Value,
}

fn expiration(fields: &Value) -> Option<NaiveDate> {
    let n = &fields["expiration_date"]["normalized"];
    if n["kind"] != "date" {
        return None;
    }
    NaiveDate::parse_from_str(n["iso"].as_str()?, "%Y-%m-%d").ok()
}

/// The notice deadline computed here: the expiration less the notice period, by hand.
fn notice(fields: &Value) -> Option<NaiveDate> {
    let end = expiration(fields)?;
    let n = &fields["renewal_notice"]["normalized"];
    if n["kind"] != "duration" {
        return None;
    }
    let number = n["number"].as_u64()? as i64;
    match n["unit"].as_str()? {
        "day" => Some(end - chrono::Duration::days(number)),
        "week" => Some(end - chrono::Duration::days(7 * number)),
        "month" | "year" => {
            let months = if n["unit"] == "year" { 12 * number } else { number };
            let total = end.year() as i64 * 12 + end.month0() as i64 - months;
            let (y, m0) = (total.div_euclid(12) as i32, total.rem_euclid(12) as u32);
            let last_day = (28..=31).rev().find(|d| NaiveDate::from_ymd_opt(y, m0 + 1, *d).is_some())?;
            NaiveDate::from_ymd_opt(y, m0 + 1, end.day().min(last_day))
        }
        "business_day" => {
            let mut day = end;
            let mut left = number;
            while left > 0 {
                day -= chrono::Duration::days(1);
                if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
                    left -= 1;
                }
            }
            Some(day)
        }
        _ => None,
    }
}

fn law(fields: &Value) -> Option<String> {
    let g = &fields["governing_law"];
    let name =
        if g["normalized"]["kind"] == "jurisdiction" { g["normalized"]["name"].as_str() } else { g["value"].as_str() };
    name.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty())
}

fn words_of(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "value"
                    && let Value::String(s) = v
                {
                    out.push(' ');
                    out.push_str(s);
                }
                words_of(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| words_of(i, out)),
        _ => {}
    }
}

/// The peer keeps one connection open, as ours does (`Db`'s thread).
type PeerConn = Arc<std::sync::Mutex<rusqlite::Connection>>;

fn peer_list(conn: &PeerConn, org: &str, q: &ContractQuery) -> Result<(u32, Vec<String>)> {
    let conn = conn.lock().expect("the peer's connection");
    let mut stmt = conn.prepare_cached(
        "SELECT c.document_id, d.name, c.type_id, c.counterparty, c.risk, c.extractions_json
         FROM contracts c JOIN documents d ON d.id = c.document_id
         WHERE c.org_id = ?1 AND c.finalized_at IS NOT NULL AND d.deleted_at IS NULL",
    )?;
    let rows = stmt.query_map([org], |r| {
        Ok(Scanned {
            document: r.get(0)?,
            name: r.get(1)?,
            type_id: r.get(2)?,
            counterparty: r.get(3)?,
            risk: r.get(4)?,
            fields: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or(Value::Null),
        })
    })?;
    let t = today();
    let within =
        |d: Option<NaiveDate>, days: u32| d.is_some_and(|d| d >= t && d <= t + chrono::Duration::days(days.into()));
    let words: Vec<String> = q
        .search
        .as_deref()
        .unwrap_or("")
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut hits: Vec<Scanned> = Vec::new();
    for row in rows {
        let r = row?;
        if q.type_id.as_ref().is_some_and(|t| *t != r.type_id)
            || q.counterparty
                .as_ref()
                .is_some_and(|c| !r.counterparty.as_deref().unwrap_or("").to_lowercase().contains(&c.to_lowercase()))
            || q.governing_law.as_ref().is_some_and(|l| !law(&r.fields).is_some_and(|x| x.eq_ignore_ascii_case(l)))
            || q.risk.as_ref().is_some_and(|k| r.risk.as_deref() != Some(k.as_str()))
            || q.expiring_within_days.is_some_and(|d| !within(expiration(&r.fields), d))
            || q.notice_within_days.is_some_and(|d| !within(notice(&r.fields), d))
        {
            continue;
        }
        if !words.is_empty() {
            let mut text =
                format!("{} {} {}", r.name, r.counterparty.as_deref().unwrap_or(""), r.type_id.replace('_', " "));
            words_of(&r.fields, &mut text);
            let tokens: Vec<String> = text
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            let last = words.len() - 1;
            let all = words
                .iter()
                .enumerate()
                .all(|(i, w)| tokens.iter().any(|t| if i == last { t.starts_with(w.as_str()) } else { t == w }));
            if !all {
                continue;
            }
        }
        hits.push(r);
    }
    hits.sort_by(|a, b| a.name.to_lowercase().cmp(&b.name.to_lowercase()).then(a.document.cmp(&b.document)));
    let total = hits.len() as u32;
    let limit = if q.limit == 0 { 100 } else { q.limit } as usize;
    Ok((total, hits.into_iter().skip(q.offset as usize).take(limit).map(|r| r.document).collect()))
}

// ---- set-up ----

async fn import_and_finalize(api: &Api, scope: &OrgScope, files: Vec<PathBuf>) -> Result<(usize, usize, f64)> {
    let start = Instant::now();
    let mut finalized = 0;
    let mut refused = 0;
    let catalog = catalog()?;
    for (n, chunk) in files.chunks(25).enumerate() {
        let report = api.import_documents(scope, chunk.to_vec(), ImportOptions::default(), &|_| {}).await?;
        for imported in &report.imported {
            let id = imported.document.id;
            let review = api.document_review(scope, id).await?;
            if review.finalized_at.is_some() {
                // The same text under another file name: one document, finalized once.
                continue;
            }
            let Some(t) = review.contract_type.as_ref().and_then(|t| catalog.contract_type(&t.id)) else {
                refused += 1;
                continue;
            };
            for item in t.items.iter().filter(|i| i.risk == RiskLevel::Critical) {
                let input = CorrectionInput {
                    item_id: item.id.clone(),
                    confirm: true,
                    status: None,
                    quote: None,
                    note: None,
                    acknowledge_warnings: true,
                };
                api.correct_item(scope, id, input).await?;
            }
            match api.finalize_review(scope, id, FinalizeInput::default()).await {
                Ok(_) => finalized += 1,
                Err(e) => {
                    eprintln!("not finalized: {} ({})", imported.document.name, e.message);
                    refused += 1;
                }
            }
        }
        eprintln!("[{}/{}] imported and finalized", ((n + 1) * 25).min(files.len()), files.len());
    }
    Ok((finalized, refused, start.elapsed().as_secs_f64()))
}

/// Copies the organization's finalized contracts (documents and contract rows, through the triggers that keep the
/// search index) until there are `target` of them.
fn scale_to(db: &Path, org: &str, target: usize) -> Result<usize> {
    let mut conn = rusqlite::Connection::open(db)?;
    let have: i64 =
        conn.query_row("SELECT count(*) FROM contracts WHERE org_id = ?1 AND finalized_at IS NOT NULL", [org], |r| {
            r.get(0)
        })?;
    let have = have as usize;
    let originals: Vec<String> = conn
        .prepare(
            "SELECT document_id FROM contracts WHERE org_id = ?1 AND finalized_at IS NOT NULL ORDER BY document_id",
        )?
        .query_map([org], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let tx = conn.transaction()?;
    for n in 0..target.saturating_sub(have) {
        let from = &originals[n % originals.len()];
        let id = uuid::Uuid::now_v7().to_string();
        let hash = format!("{:064x}", 0xbe9c_0000_0000u64 + n as u64);
        tx.execute(
            "INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at)
             SELECT ?1, org_id, ?2, name || ' (copy ' || ?3 || ')', media_type, size, created_by, created_at
             FROM documents WHERE id = ?4",
            rusqlite::params![id, hash, n as i64 + 1, from],
        )?;
        tx.execute(
            "INSERT INTO contracts (document_id, org_id, type_id, counterparty, extractions_json, vendor_id,
                 vendor_link, vendor_match, updated_at, finalized_by, finalized_at, expires_on, notice_by,
                 governing_law, risk, red_flags, critical_gaps, derived_version)
             SELECT ?1, org_id, type_id, counterparty, extractions_json, vendor_id, vendor_link, vendor_match,
                 updated_at, finalized_by, finalized_at, expires_on, notice_by, governing_law, risk, red_flags,
                 critical_gaps, derived_version
             FROM contracts WHERE document_id = ?2",
            rusqlite::params![id, from],
        )?;
    }
    tx.commit()?;
    let now: i64 =
        conn.query_row("SELECT count(*) FROM contracts WHERE org_id = ?1 AND finalized_at IS NOT NULL", [org], |r| {
            r.get(0)
        })?;
    Ok(now as usize)
}

/// The most frequent value of a list column among finalized contracts.
fn most_common(db: &Path, org: &str, column: &str) -> Result<Option<String>> {
    let conn = rusqlite::Connection::open(db)?;
    Ok(conn
        .query_row(
            &format!(
                "SELECT {column} FROM contracts WHERE org_id = ?1 AND finalized_at IS NOT NULL AND {column} IS NOT NULL
                 GROUP BY {column} COLLATE NOCASE ORDER BY count(*) DESC LIMIT 1"
            ),
            [org],
            |r| r.get(0),
        )
        .ok())
}

async fn measure(api: &Api, scope: &OrgScope, db: &Path, reps: usize, contracts: usize) -> Result<()> {
    let org = scope.org().to_string();
    let peer_conn: PeerConn = Arc::new(std::sync::Mutex::new(rusqlite::Connection::open(db)?));
    let ty = most_common(db, &org, "type_id")?;
    let law_name = most_common(db, &org, "governing_law")?;
    let risk = most_common(db, &org, "risk")?;
    let counterparty_word = most_common(db, &org, "counterparty")?
        .and_then(|c| c.split_whitespace().next().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned()));
    let queries: Vec<(&str, ContractQuery)> = vec![
        ("unfiltered", ContractQuery::default()),
        ("type", ContractQuery { type_id: ty.clone(), ..Default::default() }),
        ("counterparty", ContractQuery { counterparty: counterparty_word.clone(), ..Default::default() }),
        ("governing_law", ContractQuery { governing_law: law_name.clone(), ..Default::default() }),
        ("risk", ContractQuery { risk: risk.clone(), ..Default::default() }),
        ("expiring_within_365_days", ContractQuery { expiring_within_days: Some(365), ..Default::default() }),
        ("notice_due_within_180_days", ContractQuery { notice_within_days: Some(180), ..Default::default() }),
        ("search_distribution", ContractQuery { search: Some("distribution".into()), ..Default::default() }),
        ("search_prefix_deleg", ContractQuery { search: Some("deleg".into()), ..Default::default() }),
        (
            "search_and_law_and_expiring",
            ContractQuery {
                search: Some("agreement".into()),
                governing_law: law_name.clone(),
                expiring_within_days: Some(3650),
                ..Default::default()
            },
        ),
        ("last_page", ContractQuery { offset: contracts.saturating_sub(50) as u32, ..Default::default() }),
    ];
    for (name, q) in queries {
        let (p50, p95, ours) = time(reps, || {
            let q = q.clone();
            async move { Ok(api.contract_list(scope, q).await?) }
        })
        .await?;
        let (peer50, peer95, peer) = time(reps, || {
            let q = q.clone();
            let org = org.clone();
            let conn = peer_conn.clone();
            async move { tokio::task::spawn_blocking(move || peer_list(&conn, &org, &q)).await? }
        })
        .await?;
        let ours_ids: Vec<String> = ours.items.iter().map(|r| r.document.to_string()).collect();
        let same = ours.total == peer.0 && ours_ids == peer.1;
        println!(
            "{}",
            json!({
                "figure": "contract_list", "query": name, "contracts": contracts, "matches": ours.total,
                "ours_ms": {"p50": round(p50), "p95": round(p95)},
                "peer_scan_json_ms": {"p50": round(peer50), "p95": round(peer95)},
                "ratio_peer_over_ours_p50": round(peer50 / p50.max(1e-9)),
                "same_result_as_peer": same, "goal_ms": 200, "p95_under_goal": p95 < 200.0,
            })
        );
        if !same {
            eprintln!("{name}: ours {} {:?}.. peer {} {:?}..", ours.total, ours_ids.first(), peer.0, peer.1.first());
        }
    }
    let (p50, p95, _) = time(reps, || async { Ok(api.contract_facets(scope).await?) }).await?;
    println!(
        "{}",
        json!({"figure": "contract_facets", "contracts": contracts, "ours_ms": {"p50": round(p50), "p95": round(p95)}})
    );
    let (p50, p95, _) = time(reps, || async { Ok(api.upcoming_dates(scope, today(), 12).await?) }).await?;
    println!(
        "{}",
        json!({"figure": "upcoming_dates_12_months", "contracts": contracts, "ours_ms": {"p50": round(p50), "p95": round(p95)}})
    );
    Ok(())
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Every date the upcoming view returns, over windows covering all dates, against the dates computed here.
async fn check_dates(api: &Api, scope: &OrgScope, db: &Path) -> Result<()> {
    let conn = rusqlite::Connection::open(db)?;
    let mut expected: BTreeSet<(String, &'static str, NaiveDate)> = BTreeSet::new();
    let mut stmt = conn.prepare(
        "SELECT c.document_id, c.extractions_json FROM contracts c JOIN documents d ON d.id = c.document_id
         WHERE c.org_id = ?1 AND c.finalized_at IS NOT NULL AND d.deleted_at IS NULL",
    )?;
    let rows: Vec<(String, String)> =
        stmt.query_map([scope.org().to_string()], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    for (doc, json) in &rows {
        let fields: Value = serde_json::from_str(json)?;
        if let Some(d) = expiration(&fields) {
            expected.insert((doc.clone(), "expiration", d));
        }
        if let Some(d) = notice(&fields) {
            expected.insert((doc.clone(), "notice_deadline", d));
        }
    }
    let (Some(first), Some(last)) = (expected.iter().map(|e| e.2).min(), expected.iter().map(|e| e.2).max()) else {
        println!("{}", json!({"figure": "upcoming_dates_check", "dates": 0}));
        return Ok(());
    };
    let mut seen: BTreeSet<(String, &'static str, NaiveDate)> = BTreeSet::new();
    let mut from = NaiveDate::from_ymd_opt(first.year(), first.month(), 1).unwrap();
    let mut by_month: BTreeMap<String, usize> = BTreeMap::new();
    while from <= last {
        let window = api.upcoming_dates(scope, from, 60).await?;
        for m in &window.months {
            for d in &m.dates {
                assert_eq!(m.month, d.date.format("%Y-%m").to_string(), "a date sits in its month");
                let kind = match d.kind {
                    pactwise_api::DateKind::Expiration => "expiration",
                    pactwise_api::DateKind::NoticeDeadline => "notice_deadline",
                };
                seen.insert((d.document.to_string(), kind, d.date));
                *by_month.entry(m.month.clone()).or_default() += 1;
            }
        }
        from = window.until;
    }
    let missing = expected.difference(&seen).count();
    let extra = seen.difference(&expected).count();
    println!(
        "{}",
        json!({
            "figure": "upcoming_dates_check", "contracts": rows.len(),
            "expected_dates": expected.len(),
            "expirations": expected.iter().filter(|e| e.1 == "expiration").count(),
            "notice_deadlines": expected.iter().filter(|e| e.1 == "notice_deadline").count(),
            "returned_dates": seen.len(), "missing": missing, "extra": extra,
            "months_with_dates": by_month.len(), "correct": missing == 0 && extra == 0,
        })
    );
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let a = args()?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(a.cuad.join("contracts"))
        .with_context(|| format!("reading {}", a.cuad.join("contracts").display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    if let Some(limit) = a.limit {
        files.truncate(limit);
    }
    let tmp = tempfile::tempdir()?;
    let clock = Arc::new(FixedClock::new(Utc.from_utc_datetime(&today().and_hms_opt(9, 0, 0).unwrap())));
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), clock, ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options)?;
    let scope = api.local_session().await?;
    let db = api.data_dir().database();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!("importing and finalizing {} contracts offline", files.len());
    let (finalized, refused, secs) = import_and_finalize(&api, &scope, files.clone()).await?;
    println!(
        "{}",
        json!({"figure": "import_and_finalize_offline", "files": files.len(), "finalized": finalized,
               "not_finalized": refused, "seconds": round(secs), "loadavg": load.trim()})
    );
    check_dates(&api, &scope, &db).await?;
    measure(&api, &scope, &db, a.reps, finalized).await?;
    if a.scale > finalized {
        let n = scale_to(&db, &scope.org().to_string(), a.scale)?;
        eprintln!("copied the finalized contracts up to {n}");
        measure(&api, &scope, &db, a.reps, n).await?;
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("{}", json!({"figure": "done", "loadavg": load.trim()}));
    Ok(())
}
