//! The agents' optional model mode. Every step runs its rule-based code first; an agent that has a model part in
//! the plan's graph definition (`graphs/agent_plan.json`, compiled in — never from a request) may then have the
//! model draft the step's summary from the findings the rules produced. Code checks the draft ([`check`]): every
//! figure in it must be in the findings, the risk level must be the one the rules computed, nothing may rank or
//! recommend; otherwise the rules' summary stays and the step says why. The call goes through the gateway like every
//! other (budget gate, circuit breaker, usage ledger), with no tools but the forced one that records the draft; the
//! request, the findings and the person's recalled memories are attached as fenced, untrusted documents.

use crate::memory;
use crate::registry::AgentType;
use crate::steps::{RunInput, StepOutput, StepStatus};
use pactwise_domain::RunId;
use pactwise_engine::{ModelSpec, NodeContext, ToolAsk};
use pactwise_model::PromptDocument;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The plan's graph definition: which agents have a model part, with its ledger mode and instruction.
const DEFINITION: &str = include_str!("../graphs/agent_plan.json");

/// A drafted summary longer than this is set aside.
pub const MAX_DRAFT_CHARS: usize = 600;

/// How a step's summary came to be, when a model part was tried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Drafted {
    /// The model wrote the summary and the check passed.
    ByModel,
    /// The model's draft was not used; the rules' summary stands.
    SetAside { why: String },
}

/// What the model is asked to record.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SummaryDraft {
    /// The step's summary for the person who asked: at most three plain sentences, every figure as in the findings.
    pub summary: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Definition {
    #[allow(dead_code)]
    description: String,
    agents: BTreeMap<String, ModelSpec>,
}

/// Reads a definition: each entry must name an agent that runs steps.
pub fn parse_definition(json: &str) -> Result<BTreeMap<AgentType, ModelSpec>, String> {
    let def: Definition = serde_json::from_str(json).map_err(|e| format!("the agents' graph definition: {e}"))?;
    def.agents
        .into_iter()
        .map(|(id, spec)| match AgentType::from_id(&id) {
            Some(AgentType::Manager) => Err("the manager makes the plan; it has no step to draft".to_string()),
            Some(agent) if !spec.prompt.trim().is_empty() && !spec.mode.trim().is_empty() => Ok((agent, spec)),
            Some(_) => Err(format!("{id}: the mode and the prompt must not be empty")),
            None => Err(format!("{id} is not an agent type")),
        })
        .collect()
}

/// The model parts of the built-in definition (none if it could not be read: the rules then do everything).
pub fn model_parts() -> &'static BTreeMap<AgentType, ModelSpec> {
    static PARTS: OnceLock<BTreeMap<AgentType, ModelSpec>> = OnceLock::new();
    PARTS.get_or_init(|| {
        parse_definition(DEFINITION).unwrap_or_else(|e| {
            tracing::error!(error = %e, "the agents' model parts are off");
            BTreeMap::new()
        })
    })
}

fn recalled_by_run() -> &'static Mutex<HashMap<RunId, Vec<String>>> {
    static HELD: OnceLock<Mutex<HashMap<RunId, Vec<String>>>> = OnceLock::new();
    HELD.get_or_init(Default::default)
}

/// The person's recalled memories, held in this process for a run while it is driven. They are private to the
/// person, so they are never written to the run (an organization's record, shared with its desktops); a step that
/// asks the model reads them here. Released when the guard drops; a run resumed elsewhere drafts without them.
#[must_use = "the memories are released when the guard drops"]
pub struct HeldMemories(RunId);

/// Holds `memories` for `run` until the guard drops.
pub fn hold_memories(run: RunId, memories: Vec<String>) -> HeldMemories {
    if let Ok(mut held) = recalled_by_run().lock() {
        held.insert(run, memories);
    }
    HeldMemories(run)
}

impl Drop for HeldMemories {
    fn drop(&mut self) {
        if let Ok(mut held) = recalled_by_run().lock() {
            held.remove(&self.0);
        }
    }
}

/// The memories held for `run` (none when nothing holds them).
pub fn held_memories(run: RunId) -> Vec<String> {
    recalled_by_run().lock().ok().and_then(|held| held.get(&run).cloned()).unwrap_or_default()
}

/// The text the draft is drawn from and checked against: this step's and the earlier steps' summaries, findings
/// and warnings.
pub fn findings_text(out: &StepOutput, earlier: &BTreeMap<AgentType, StepOutput>) -> String {
    let mut s = String::new();
    for o in earlier.values().filter(|o| o.agent != out.agent).chain(std::iter::once(out)) {
        s.push_str(&format!("{}: {}\n", o.agent.name(), o.summary));
        for line in o.findings.iter().chain(&o.warnings) {
            s.push_str(&format!("- {line}\n"));
        }
    }
    s
}

/// The question for the model: written by code; the request, the findings and memories go as fenced documents.
pub fn ask(
    out: &StepOutput,
    input: &RunInput,
    earlier: &BTreeMap<AgentType, StepOutput>,
    memories: &[String],
) -> Result<ToolAsk, String> {
    let mut documents = vec![
        PromptDocument::new("The request, as the person typed it", input.request.clone()),
        PromptDocument::new("The agents' findings", findings_text(out, earlier)),
    ];
    if !memories.is_empty() {
        let refs: Vec<&str> = memories.iter().map(String::as_str).collect();
        documents.push(PromptDocument::new("What the agents remember of this person", memory::prompt_block(&refs)));
    }
    let level = out.risk.as_deref().map(|l| format!(" The risk level is {l}.")).unwrap_or_default();
    Ok(ToolAsk {
        documents,
        question: format!(
            "Write the summary of the {} agent's step from the findings.{level} Record it with record_summary.",
            out.agent.name()
        ),
        tool_name: "record_summary".into(),
        tool_description: "Record the step's summary.".into(),
        schema: pactwise_model::schema::object_schema::<SummaryDraft>().map_err(|e| e.to_string())?,
        max_tokens: Some(600),
        timeout: None,
    })
}

fn figure_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\d(?:[\d,]*\d)?(?:\.\d+)?").expect("a valid pattern"))
}

/// The figures in `text`, normalised: separators dropped, zero decimals dropped ("50,000.00" is "50000"), number
/// words as digits ("three" is "3"; "one" is left out: it is as often a pronoun as a count).
pub fn figures(text: &str) -> BTreeSet<String> {
    let mut found: BTreeSet<String> = figure_pattern()
        .find_iter(text)
        .map(|m| {
            let f = m.as_str().replace(',', "");
            match f.split_once('.') {
                Some((whole, frac)) if frac.chars().all(|c| c == '0') => whole.to_string(),
                _ => f,
            }
        })
        .collect();
    for word in text.split(|c: char| !c.is_alphabetic()) {
        if let Some(n) = crate::manager::text::number_word(word).filter(|n| *n != 1) {
            found.insert(n.to_string());
        }
    }
    found
}

fn words_of(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

const RISK_LEVELS: [&str; 3] = ["low", "medium", "high"];
const RANKING_WORDS: [&str; 9] =
    ["recommend", "recommended", "recommends", "rank", "ranked", "ranking", "best", "score", "scored"];

/// The check a draft must pass before it replaces the rules' summary: not empty, not too long, every figure found
/// in the findings, the risk level the rules computed (and no other), no ranking or recommending. The cleaned
/// summary, or why it was set aside in people's words.
pub fn check(draft: &str, out: &StepOutput, earlier: &BTreeMap<AgentType, StepOutput>) -> Result<String, String> {
    let text = draft.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err("it was empty".into());
    }
    if text.chars().count() > MAX_DRAFT_CHARS {
        return Err(format!("it was longer than {MAX_DRAFT_CHARS} characters"));
    }
    let known = figures(&findings_text(out, earlier));
    // Each figure as the draft wrote it ("1,000,000", "three"), so the reason reads as the draft did.
    let mut written =
        figure_pattern().find_iter(&text).map(|m| m.as_str()).chain(text.split(|c: char| !c.is_alphabetic()));
    if let Some(f) = written.find(|w| figures(w).iter().any(|f| !known.contains(f))) {
        return Err(format!("it named {f}, which no agent found"));
    }
    let words = words_of(&text);
    if let Some(w) = RANKING_WORDS.iter().find(|w| words.contains(**w)) {
        return Err(format!("it ranked or recommended (\u{201c}{w}\u{201d}), which the agents never do"));
    }
    if let Some(level) = out.risk.as_deref() {
        if !words.contains(level) {
            return Err(format!("it did not give the risk level the agents found ({level})"));
        }
        if let Some(other) = RISK_LEVELS.iter().find(|l| **l != level && words.contains(**l)) {
            return Err(format!("it called the risk {other}; the agents found it {level}"));
        }
    }
    Ok(crate::steps::sentence(&text))
}

/// The model's part of a step done by the rules: asks for the draft when the step is done, the node has a model
/// part and a model is configured, and keeps it only if [`check`] passes. `time_left` bounds the call.
pub fn refine(
    ctx: &NodeContext<'_>,
    input: &RunInput,
    earlier: &BTreeMap<AgentType, StepOutput>,
    mut out: StepOutput,
    time_left: Duration,
) -> StepOutput {
    if out.status != StepStatus::Done || !ctx.has_model() {
        return out;
    }
    let _span = tracing::info_span!("agents.draft", agent = out.agent.id()).entered();
    let set_aside = |why: String| Some(Drafted::SetAside { why });
    if time_left.is_zero() {
        out.drafted = set_aside("no time was left for the model".into());
        return out;
    }
    let mut question = match ask(&out, input, earlier, &held_memories(ctx.run)) {
        Ok(q) => q,
        Err(e) => {
            out.drafted = set_aside(format!("the question could not be written ({e})"));
            return out;
        }
    };
    question.timeout = Some(time_left);
    out.drafted = match ctx.ask_tool(&question) {
        Err(failure) => set_aside(format!("the model did not answer ({})", failure.message)),
        Ok(value) => match serde_json::from_value::<SummaryDraft>(value) {
            Err(_) => set_aside("its answer was not a summary".into()),
            Ok(draft) => match check(&draft.summary, &out, earlier) {
                Ok(summary) => {
                    out.summary = summary;
                    Some(Drafted::ByModel)
                }
                Err(why) => {
                    tracing::info!(agent = out.agent.id(), "the model's summary was set aside");
                    set_aside(why)
                }
            },
        },
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(agent: AgentType, summary: &str, findings: &[&str], risk: Option<&str>) -> StepOutput {
        let mut o = StepOutput::not_run(agent, StepStatus::Done, summary);
        o.findings = findings.iter().map(|s| s.to_string()).collect();
        o.risk = risk.map(String::from);
        o
    }

    #[test]
    fn the_built_in_definition_gives_legal_and_analytics_a_model_part() {
        let parts = parse_definition(DEFINITION).unwrap();
        assert_eq!(parts.keys().copied().collect::<Vec<_>>(), [AgentType::Legal, AgentType::Analytics]);
        assert_eq!(model_parts(), &parts);
    }

    #[test]
    fn a_definition_naming_the_manager_or_an_unknown_agent_is_refused() {
        let spec = r#"{"mode":"m","prompt":"p"}"#;
        for id in ["manager", "oracle"] {
            let json = format!(r#"{{"description":"d","agents":{{"{id}":{spec}}}}}"#);
            assert!(parse_definition(&json).is_err(), "{id}");
        }
        let empty = r#"{"description":"d","agents":{"legal":{"mode":"m","prompt":" "}}}"#;
        assert!(parse_definition(empty).unwrap_err().contains("must not be empty"));
    }

    #[test]
    fn memories_are_held_only_while_the_guard_lives() {
        let run = RunId::new();
        {
            let _held = hold_memories(run, vec!["Dana approves Tailspin renewals".into()]);
            assert_eq!(held_memories(run), ["Dana approves Tailspin renewals"]);
            assert!(held_memories(RunId::new()).is_empty(), "another run holds nothing");
        }
        assert!(held_memories(run).is_empty());
    }

    #[test]
    fn figures_are_normalised_and_number_words_count() {
        let f = figures("Fees of 50,000.00 EUR, 3 red flags, two reminders, MSA-2026-014, 12.5%.");
        assert_eq!(
            f.into_iter().collect::<Vec<_>>(),
            ["014", "12.5", "2", "2026", "3", "50000"].map(String::from).to_vec()
        );
        assert!(!figures("one of them").contains("1"));
    }

    #[test]
    fn a_draft_that_keeps_to_the_findings_replaces_the_summary() {
        let legal = out(AgentType::Legal, "2 red flags in MSA-2026-014.", &["Liability is uncapped."], None);
        let earlier = BTreeMap::from([(AgentType::Legal, legal)]);
        let o = out(AgentType::Analytics, "Risk high: 2 red flags.", &["2 red flags."], Some("high"));
        let draft = "The risk is high: MSA-2026-014 has two red flags, among them uncapped liability";
        assert_eq!(check(draft, &o, &earlier).unwrap(), format!("{draft}."));
    }

    #[test]
    fn a_draft_is_set_aside_for_an_invented_figure_a_changed_level_or_a_ranking() {
        let o = out(AgentType::Analytics, "Risk medium: notice in 5 days.", &["Notice in 5 days."], Some("medium"));
        let none = BTreeMap::new();
        let cases = [
            ("Risk medium: notice in 7 days.", "it named 7, which no agent found"),
            ("Risk medium: a penalty of 1,000,000 EUR applies.", "it named 1,000,000, which no agent found"),
            ("Risk medium: notice in nine days.", "it named nine, which no agent found"),
            ("The risk is low: notice in 5 days.", "it did not give the risk level the agents found (medium)"),
            ("Risk medium, though high for notice in 5 days.", "it called the risk high; the agents found it medium"),
            ("Risk medium; Tailspin is the best vendor.", "which the agents never do"),
            ("   ", "it was empty"),
        ];
        for (draft, why) in cases {
            let got = check(draft, &o, &none).unwrap_err();
            assert!(got.contains(why), "{draft}: {got}");
        }
        let long = format!("Risk medium: {}", "notice in 5 days ".repeat(60));
        assert!(check(&long, &o, &none).unwrap_err().contains("longer than"));
    }
}
