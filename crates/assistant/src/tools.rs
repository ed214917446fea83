//! The four read-only tools and their executor. Every lookup goes through the store with the caller's scope, so
//! another organization's contracts and deleted ones are never searched, cited or named, whatever ids the model
//! sends. Inputs are validated against their schemas by the gateway before the executor sees them; unknown fields
//! are refused, so no input can carry an organization.

use crate::{Citation, CitationKind, MAX_CITATIONS, NamedContract};
use pactwise_domain::DocumentId;
use pactwise_model::retry::BoxFuture;
use pactwise_model::{ToolAllowlist, ToolDefinition, ToolExecutor, ToolFailure};
use pactwise_retrieval::{Mode, Retriever};
use pactwise_store::{Db, OrgScope};
use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::{LazyLock, Mutex};

/// The tools offered to the model, and no others.
pub const TOOL_NAMES: [&str; 4] =
    ["search_contract_text", "search_contracts", "search_in_contract", "search_precedents"];

/// Passages per search, at most.
const MAX_HITS: u32 = 6;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TextSearch {
    /// Words to look for in the organization's contracts.
    query: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ContractSearch {
    /// Contract type id or name words, e.g. "nda" or "services".
    #[serde(default)]
    contract_type: Option<String>,
    /// Words of the counterparty's name.
    #[serde(default)]
    counterparty: Option<String>,
    /// A jurisdiction, e.g. "New York".
    #[serde(default)]
    governing_law: Option<String>,
    /// Words of the contract's title.
    #[serde(default)]
    title: Option<String>,
    /// A year or date text the contract's dates should contain, e.g. "2026".
    #[serde(default)]
    date: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct InContractSearch {
    /// The contract's document_id, from an earlier result.
    document_id: String,
    query: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PrecedentSearch {
    query: String,
}

/// The allowlist of one request: exactly the four read-only tools.
pub fn allowlist() -> ToolAllowlist {
    let tool = |name: &str, description: &str, schema: Result<ToolDefinition, _>| {
        schema.unwrap_or_else(|e| panic!("the schema of {name} ({description}) is invalid: {e}"))
    };
    ToolAllowlist::new(vec![
        tool(
            "search_contract_text",
            "",
            ToolDefinition::for_input::<TextSearch>(
                "search_contract_text",
                "Full-text search of the organization's contracts; returns short passages with ids like C1.",
            ),
        ),
        tool(
            "search_contracts",
            "",
            ToolDefinition::for_input::<ContractSearch>(
                "search_contracts",
                "Find the organization's contracts by type, counterparty, governing law, title or date; returns \
                 contract records (no passages).",
            ),
        ),
        tool(
            "search_in_contract",
            "",
            ToolDefinition::for_input::<InContractSearch>(
                "search_in_contract",
                "Full-text search inside one of the organization's contracts, by its document_id.",
            ),
        ),
        tool(
            "search_precedents",
            "",
            ToolDefinition::for_input::<PrecedentSearch>(
                "search_precedents",
                "Search the precedent corpus of model clauses: market examples, never the organization's \
                 contracts; returns passages with ids like M1.",
            ),
        ),
    ])
}

/// A passage retrieved in this request.
#[derive(Debug, Clone)]
struct Retrieved {
    marker: String,
    citation: Citation,
}

#[derive(Default)]
struct RequestState {
    retrieved: Vec<Retrieved>,
    contracts: Vec<NamedContract>,
}

/// The executor of one request: the caller's scope and what its searches returned.
pub struct Retrieval {
    db: Db,
    scope: OrgScope,
    retriever: Arc<Retriever>,
    state: Mutex<RequestState>,
}

fn fence(text: &str) -> String {
    text.replace("</passage>", "</ passage>").replace("</contract>", "</ contract>")
}

fn failure(e: impl std::fmt::Display) -> ToolFailure {
    ToolFailure(format!("the search failed: {e}"))
}

static MARKER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[([CM])(\d{1,3})\]").expect("valid"));

/// The markers a stored answer uses, in order of first mention: the order [`Retrieval::cite`] stored its citations
/// in, so the n-th marker names the n-th stored citation (an earlier answer read again gets its markers back).
pub fn markers_in(answer: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for caps in MARKER.captures_iter(answer) {
        let marker = format!("{}{}", &caps[1], &caps[2]);
        if !out.contains(&marker) {
            out.push(marker);
        }
    }
    out
}

impl Retrieval {
    pub fn new(db: Db, scope: OrgScope, retriever: Arc<Retriever>) -> Self {
        Retrieval { db, scope, retriever, state: Mutex::new(RequestState::default()) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, RequestState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a passage (the same passage twice keeps its first id) and returns its marker.
    fn register(&self, citation: Citation) -> String {
        let mut state = self.state();
        if let Some(existing) = state.retrieved.iter().find(|r| {
            r.citation.kind == citation.kind
                && r.citation.document == citation.document
                && r.citation.precedent == citation.precedent
                && r.citation.page == citation.page
                && r.citation.start == citation.start
        }) {
            return existing.marker.clone();
        }
        let prefix = match citation.kind {
            CitationKind::Contract => "C",
            CitationKind::Precedent => "M",
        };
        let n = state.retrieved.iter().filter(|r| r.citation.kind == citation.kind).count() + 1;
        let marker = format!("{prefix}{n}");
        state
            .retrieved
            .push(Retrieved { marker: marker.clone(), citation: Citation { marker: marker.clone(), ..citation } });
        marker
    }

    /// The answer with markers that point at nothing retrieved removed, and the citations it refers to (in order of
    /// first mention, deduplicated, capped).
    pub fn cite(&self, answer: &str) -> (String, Vec<crate::Citation>) {
        let state = self.state();
        let mut citations: Vec<Citation> = Vec::new();
        let text = MARKER.replace_all(answer, |caps: &regex::Captures<'_>| {
            let marker = format!("{}{}", &caps[1], &caps[2]);
            match state.retrieved.iter().find(|r| r.marker == marker) {
                Some(r) => {
                    if !citations.iter().any(|c| c.marker == marker) && citations.len() < MAX_CITATIONS {
                        citations.push(r.citation.clone());
                    }
                    caps[0].to_owned()
                }
                None => {
                    tracing::warn!(%marker, "the answer cited a passage that was not retrieved; the citation is dropped");
                    String::new()
                }
            }
        });
        (text.split_whitespace().collect::<Vec<_>>().join(" ").replace(" .", ".").replace(" ,", ","), citations)
    }

    /// Contracts that structured lookups returned.
    pub fn named_contracts(&self) -> Vec<NamedContract> {
        self.state().contracts.clone()
    }

    async fn search_text(&self, query: &str, document: Option<DocumentId>) -> Result<String, ToolFailure> {
        let (scope, retriever, query) = (self.scope.clone(), self.retriever.clone(), query.to_owned());
        // A remote model (Voyage, when configured) reads the query here, before the search runs on the store's thread.
        retriever.prepare_query(scope.org(), &query).await;
        // Hybrid retrieval (words and meaning fused); the hits are re-read with the caller's scope.
        let searched = self
            .db
            .call(move |store| retriever.search(store, &scope, &query, document, Mode::Hybrid, MAX_HITS as usize))
            .await
            .map_err(failure)?;
        if !searched.searchable {
            return Err(ToolFailure("the query has no searchable words; use words that appear in contracts".into()));
        }
        let hits = searched.hits;
        if hits.is_empty() {
            return Ok("No passages found in the organization's contracts.".into());
        }
        let mut out = String::new();
        for hit in hits {
            let marker = self.register(Citation {
                marker: String::new(),
                kind: CitationKind::Contract,
                document: Some(hit.document),
                precedent: None,
                title: hit.document_name.clone(),
                page: Some(hit.page),
                start: hit.start,
                end: hit.end,
                excerpt: hit.text.clone(),
                label: None,
                supporting: Vec::new(),
            });
            let _ = writeln!(
                out,
                "<passage id=\"{marker}\" contract=\"{}\" document_id=\"{}\" page=\"{}\" trust=\"untrusted\">\n{}\n</passage>",
                hit.document_name.replace('"', "'"),
                hit.document,
                hit.page,
                fence(&hit.text)
            );
        }
        Ok(out)
    }

    async fn search_contracts(&self, input: ContractSearch) -> Result<String, ToolFailure> {
        let scope = self.scope.clone();
        let all = self.db.call(move |store| store.passages().contracts(&scope)).await.map_err(failure)?;
        let has = |haystack: &str, needle: &Option<String>| {
            needle.as_ref().is_none_or(|n| {
                let h = haystack.to_lowercase();
                n.to_lowercase().split_whitespace().all(|w| h.contains(w))
            })
        };
        let found: Vec<_> = all
            .into_iter()
            .filter(|c| {
                let law = c.extractions.pointer("/governing_law/value").and_then(Value::as_str).unwrap_or("");
                let dates = ["agreement_date", "effective_date", "expiration_date"]
                    .iter()
                    .filter_map(|k| c.extractions.pointer(&format!("/{k}/value")).and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                has(&c.type_id.replace('_', " "), &input.contract_type)
                    && has(c.counterparty.as_deref().unwrap_or(""), &input.counterparty)
                    && has(law, &input.governing_law)
                    && has(&c.name, &input.title)
                    && has(&dates, &input.date)
            })
            .take(20)
            .collect();
        if found.is_empty() {
            return Ok("No contracts match.".into());
        }
        let mut out = String::new();
        {
            let mut state = self.state();
            for c in &found {
                if !state.contracts.iter().any(|n| n.document == c.document) {
                    state.contracts.push(NamedContract { document: c.document, title: c.name.clone() });
                }
            }
        }
        for c in found {
            let field = |k: &str| {
                c.extractions.pointer(&format!("/{k}/value")).and_then(Value::as_str).unwrap_or("-").to_owned()
            };
            let _ = writeln!(
                out,
                "<contract document_id=\"{}\" title=\"{}\" type=\"{}\" counterparty=\"{}\" governing_law=\"{}\" \
                 effective_date=\"{}\" expiration_date=\"{}\" value=\"{}\" trust=\"untrusted\"/>",
                c.document,
                fence(&c.name).replace('"', "'"),
                c.type_id,
                fence(c.counterparty.as_deref().unwrap_or("-")).replace('"', "'"),
                fence(&field("governing_law")).replace('"', "'"),
                fence(&field("effective_date")).replace('"', "'"),
                fence(&field("expiration_date")).replace('"', "'"),
                fence(&field("value")).replace('"', "'"),
            );
        }
        Ok(out)
    }

    async fn search_in_contract(&self, input: InContractSearch) -> Result<String, ToolFailure> {
        let not_found = || ToolFailure("no contract with that document_id in your organization".into());
        let id: DocumentId = input.document_id.trim().parse().map_err(|_| not_found())?;
        let scope = self.scope.clone();
        // The contract must be the caller's organization's and not deleted before anything is searched.
        let title = self.db.call(move |store| store.passages().title(&scope, id)).await.map_err(failure)?;
        if title.is_none() {
            return Err(not_found());
        }
        self.search_text(&input.query, Some(id)).await
    }

    async fn search_precedents(&self, query: &str) -> Result<String, ToolFailure> {
        let (retriever, query) = (self.retriever.clone(), query.to_owned());
        retriever.prepare_query(self.scope.org(), &query).await;
        let searched = self
            .db
            .call(move |store| retriever.search_precedents(store, &query, Mode::Hybrid, MAX_HITS as usize, false))
            .await
            .map_err(failure)?;
        if !searched.searchable {
            return Err(ToolFailure("the query has no searchable words".into()));
        }
        let hits = searched.hits;
        if hits.is_empty() {
            return Ok("No precedent found.".into());
        }
        let mut out = String::from("MARKET EXAMPLES from the precedent corpus (not the organization's contracts):\n");
        for hit in hits {
            let marker = self.register(Citation {
                marker: String::new(),
                kind: CitationKind::Precedent,
                document: None,
                precedent: Some(hit.precedent.clone()),
                title: hit.title.clone(),
                page: None,
                start: hit.start,
                end: hit.end,
                excerpt: hit.text.clone(),
                label: Some("market example".into()),
                supporting: Vec::new(),
            });
            let _ = writeln!(
                out,
                "<passage id=\"{marker}\" precedent=\"{}\" source=\"{}\" trust=\"untrusted\">\n{}\n</passage>",
                hit.title.replace('"', "'"),
                hit.source.replace('"', "'"),
                fence(&hit.text)
            );
        }
        Ok(out)
    }
}

impl ToolExecutor for Retrieval {
    fn execute<'a>(&'a self, name: &'a str, input: &'a Value) -> BoxFuture<'a, Result<String, ToolFailure>> {
        Box::pin(async move {
            let parse = |e: serde_json::Error| ToolFailure(format!("invalid input: {e}"));
            let span = tracing::info_span!("assistant_tool", tool = name);
            let _enter = span.enter();
            drop(_enter);
            let result = match name {
                "search_contract_text" => {
                    let input: TextSearch = serde_json::from_value(input.clone()).map_err(parse)?;
                    self.search_text(&input.query, None).await
                }
                "search_contracts" => {
                    self.search_contracts(serde_json::from_value(input.clone()).map_err(parse)?).await
                }
                "search_in_contract" => {
                    self.search_in_contract(serde_json::from_value(input.clone()).map_err(parse)?).await
                }
                "search_precedents" => {
                    let input: PrecedentSearch = serde_json::from_value(input.clone()).map_err(parse)?;
                    self.search_precedents(&input.query).await
                }
                other => Err(ToolFailure(format!("{other} is not a tool of the Contract Assistant"))),
            };
            tracing::info!(tool = name, ok = result.is_ok(), "tool call");
            result
        })
    }
}

#[cfg(test)]
mod marker_tests {
    use super::markers_in;

    #[test]
    fn markers_come_back_in_order_of_first_mention_once_each() {
        assert_eq!(markers_in("Yes [C2], see [M1] and again [C2]; also [C1]."), ["C2", "M1", "C1"]);
        assert!(markers_in("No citation [X1] here").is_empty());
    }
}
