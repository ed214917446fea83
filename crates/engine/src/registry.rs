//! What the engine can run: graph definitions (validated when added) and the handlers their nodes name.

use crate::EngineError;
use crate::graph::{GraphDef, ModelSpec, NodeKind};
use crate::machine::{NodeFailure, NodeOutput};
use crate::model::{AskFailure, ModelPort, ToolAsk};
use chrono::{DateTime, Utc};
use pactwise_domain::{Clock, DocumentId, OrgId, RunId};
use pactwise_store::PageTexts;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The read-only tool a step may use on documents: page text of the run's own organization.
pub trait DocumentText {
    /// Pages `first..=last` of a live document of `org`, with its page count (`None`: not extracted).
    fn page_texts(&self, org: OrgId, document: DocumentId, first: u32, last: u32) -> Result<Option<PageTexts>, String>;
}

/// The records a step may change, always of the run's own organization, each write idempotent for the run (a step
/// that runs again after a crash changes nothing more). A step that says it changed a record did so through this.
pub trait Records {
    /// An onboarding run's decision moves the vendor: active when approved, blocked when declined; a vendor known
    /// only by name is registered when approved. Returns the vendor as it now is, `None` when nothing was written
    /// (`store::Vendors::onboarding_decided_for_worker`, which follows a merge).
    fn vendor_onboarding_decided(
        &self,
        org: OrgId,
        run: RunId,
        vendor: pactwise_store::OnboardedVendor<'_>,
        approved: bool,
    ) -> Result<Option<pactwise_store::VendorRecord>, String>;

    /// An invoice processing run records the contract and vendor its invoice matched
    /// (`store::Vendors::invoice_matched_for_worker`, idempotent per invoice and run).
    fn invoice_matched(
        &self,
        org: OrgId,
        run: RunId,
        invoice: DocumentId,
        contract: Option<DocumentId>,
        vendor: Option<&str>,
    ) -> Result<(), String>;
}

/// What a handler sees: the run's channels as of the start of the super-step, and (for agent nodes with a model
/// part) the gateway with the graph's mode and prompt.
pub struct NodeContext<'a> {
    pub run: RunId,
    pub org: OrgId,
    pub node: &'a str,
    /// 1 for the first attempt.
    pub attempt: u32,
    pub channels: &'a BTreeMap<String, Value>,
    pub now: DateTime<Utc>,
    pub model_spec: Option<&'a ModelSpec>,
    pub model: Option<&'a dyn ModelPort>,
    /// The engine's clock, for steps that measure the time they spend (`now` is the super-step's start).
    pub clock: &'a dyn Clock,
    /// Page text of the run's organization's documents (read-only).
    pub documents: Option<&'a dyn DocumentText>,
    /// The organization's records a step may change (vendor status); `None` where no store is behind the run.
    pub records: Option<&'a dyn Records>,
}

impl NodeContext<'_> {
    pub fn channel(&self, name: &str) -> &Value {
        self.channels.get(name).unwrap_or(&Value::Null)
    }

    pub fn input(&self) -> &Value {
        self.channel(crate::graph::INPUT_CHANNEL)
    }

    /// Whether this step can ask the model (it has a model part and a model is configured).
    pub fn has_model(&self) -> bool {
        self.model_spec.is_some() && self.model.is_some()
    }

    /// One forced tool call with the graph's mode and prompt (see [`ModelPort::ask_tool`]).
    pub fn ask_tool(&self, ask: &ToolAsk) -> Result<Value, AskFailure> {
        let (Some(spec), Some(model)) = (self.model_spec, self.model) else {
            return Err(AskFailure {
                code: "model_unavailable".into(),
                message: "no model is configured for this step".into(),
            });
        };
        let _span = tracing::info_span!("model_call", node = self.node, mode = %spec.mode).entered();
        model.ask_tool(self.org, spec, ask)
    }

    /// Pages `first..=last` of a document of the run's organization (the organization is the run's, not an
    /// argument).
    pub fn page_texts(&self, document: DocumentId, first: u32, last: u32) -> Result<Option<PageTexts>, String> {
        let reader = self.documents.ok_or_else(|| "no document reader is configured".to_string())?;
        let _span = tracing::info_span!("tool_call", node = self.node, tool = "page_texts", first, last).entered();
        reader.page_texts(self.org, document, first, last)
    }

    /// Asks the model for a draft with the graph's mode and prompt, `data` attached as untrusted. `None` when the
    /// node has no model part, no model is configured, or the call failed (the caller falls back to rules).
    pub fn draft(&self, data: &Value) -> Option<String> {
        let (spec, model) = (self.model_spec?, self.model?);
        match model.draft(self.org, spec, data) {
            Ok(text) => Some(text),
            Err(e) => {
                tracing::info!(node = self.node, error = %e, "model unavailable for this step; using the rule-based fallback");
                None
            }
        }
    }
}

/// Code behind a node (or a compensation). Must be deterministic given its context, apart from the model's draft.
pub trait NodeHandler: Send + Sync {
    fn run(&self, ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure>;
}

impl<F> NodeHandler for F
where
    F: Fn(&NodeContext<'_>) -> Result<NodeOutput, NodeFailure> + Send + Sync,
{
    fn run(&self, ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
        self(ctx)
    }
}

#[derive(Default, Clone)]
pub struct Registry {
    handlers: HashMap<String, Arc<dyn NodeHandler>>,
    graphs: BTreeMap<String, GraphDef>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn handler(&mut self, name: &str, handler: impl NodeHandler + 'static) -> &mut Self {
        self.handlers.insert(name.to_string(), Arc::new(handler));
        self
    }

    pub fn get_handler(&self, name: &str) -> Option<&dyn NodeHandler> {
        self.handlers.get(name).map(|h| h.as_ref())
    }

    /// Parses, validates and adds a graph definition. Its handlers, and the graphs its subgraph nodes run, must
    /// already be known.
    pub fn add_graph_json(&mut self, json: &str) -> Result<&GraphDef, EngineError> {
        let graph: GraphDef = serde_json::from_str(json).map_err(|e| EngineError::InvalidGraph(e.to_string()))?;
        self.add_graph(graph)
    }

    pub fn add_graph(&mut self, graph: GraphDef) -> Result<&GraphDef, EngineError> {
        self.check(&graph)?;
        let name = graph.name.clone();
        self.graphs.insert(name.clone(), graph);
        Ok(&self.graphs[&name])
    }

    /// Checks a graph against this registry without adding it: its shape, its handlers and the graphs its subgraph
    /// nodes run must be known.
    pub fn check(&self, graph: &GraphDef) -> Result<(), EngineError> {
        graph.validate().map_err(EngineError::InvalidGraph)?;
        for n in &graph.nodes {
            let handler = match &n.kind {
                NodeKind::Agent { handler, .. } | NodeKind::Condition { handler } => Some(handler),
                _ => None,
            };
            for h in handler.into_iter().chain(n.compensate.iter()) {
                if !self.handlers.contains_key(h) {
                    return Err(EngineError::InvalidGraph(format!(
                        "{}: node {:?} names unknown handler {h:?}",
                        graph.name, n.id
                    )));
                }
            }
            if let NodeKind::Subgraph { graph: child, .. } = &n.kind
                && !self.graphs.contains_key(child)
            {
                return Err(EngineError::InvalidGraph(format!(
                    "{}: node {:?} runs unknown graph {child:?}",
                    graph.name, n.id
                )));
            }
        }
        Ok(())
    }

    pub fn graph(&self, name: &str) -> Result<&GraphDef, EngineError> {
        self.graphs.get(name).ok_or_else(|| EngineError::UnknownGraph(name.to_string()))
    }

    pub fn graphs(&self) -> impl Iterator<Item = &GraphDef> {
        self.graphs.values()
    }
}
