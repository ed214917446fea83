//! What each agent does in a plan's run: a pure function of the run's input (the plan, the organization's facts
//! read at the start, the thresholds) and the outputs of the steps before it. Rule-based, every figure computed
//! by code; the words are for people. A step that cannot do its job says why (`Err`), and the engine's handler
//! decides from the plan whether that stops the run or skips only what depends on it.

use crate::config::AgentsConfig;
use crate::facts::{ContractFacts, Facts};
use crate::manager::{Plan, RequestType, Urgency, money_words};
use crate::registry::AgentType;
use chrono::{Duration, NaiveDate};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A run's input as the api writes it when a request is run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunInput {
    /// The request as the person typed it (data, never instructions).
    pub request: String,
    pub plan: Plan,
    pub facts: Facts,
    pub config: AgentsConfig,
    /// The day the request was run (relative dates and "days until" count from it).
    pub today: NaiveDate,
}

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Done,
    Failed,
    /// Not run: a step it depends on failed.
    Skipped,
}

/// Work an agent asks for after its step: queued on the task queue once per `key`, one level deep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FollowUp {
    pub agent: AgentType,
    /// What makes two follow-ups the same (the same one is never queued twice).
    pub key: String,
    /// Why, in words.
    pub why: String,
    pub work: crate::tasks::TaskWork,
    /// Not before this day.
    pub not_before: Option<NaiveDate>,
}

/// A step's outcome, kept in the run's `steps` channel under the agent's id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepOutput {
    pub agent: AgentType,
    pub status: StepStatus,
    /// One sentence.
    pub summary: String,
    /// What it found, one line each.
    pub findings: Vec<String>,
    /// Short phrases the risk summary weighs ("3 red flags", "notice deadline in 5 days").
    pub warnings: Vec<String>,
    pub red_flags: u32,
    pub follow_ups: Vec<FollowUp>,
    /// The risk level the analytics agent computed (`low`, `medium`, `high`); a drafted summary must keep it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
    /// Whether the model drafted the summary (only for an agent with a model part, when a model is configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drafted: Option<crate::draft::Drafted>,
}

impl StepOutput {
    fn done(agent: AgentType, summary: impl Into<String>) -> StepOutput {
        StepOutput {
            agent,
            status: StepStatus::Done,
            summary: summary.into(),
            findings: Vec::new(),
            warnings: Vec::new(),
            red_flags: 0,
            follow_ups: Vec::new(),
            risk: None,
            drafted: None,
        }
    }

    /// A step that did not run, with why.
    pub fn not_run(agent: AgentType, status: StepStatus, why: impl Into<String>) -> StepOutput {
        StepOutput { status, ..StepOutput::done(agent, why) }
    }
}

/// What a step reads.
pub struct StepInput<'a> {
    pub run: &'a RunInput,
    /// Outputs of the steps already done, by agent.
    pub earlier: &'a BTreeMap<AgentType, StepOutput>,
}

impl StepInput<'_> {
    fn contracts(&self) -> &[ContractFacts] {
        &self.run.facts.contracts
    }
    fn config(&self) -> &AgentsConfig {
        &self.run.config
    }
}

/// Runs one agent's step.
pub fn run_step(agent: AgentType, input: &StepInput<'_>) -> Result<StepOutput, String> {
    let _span = tracing::debug_span!("agents.step", agent = agent.id()).entered();
    match agent {
        AgentType::Ocr => ocr(input),
        AgentType::Legal => Ok(legal(input)),
        AgentType::Financial => Ok(financial(input)),
        AgentType::Vendor => Ok(vendor(input)),
        AgentType::Compliance => Ok(compliance(input)),
        AgentType::Workflow => Ok(workflow(input)),
        AgentType::Secretary => Ok(secretary(input)),
        AgentType::Analytics => Ok(analytics(input)),
        AgentType::Notifications => Ok(notifications(input)),
        AgentType::Manager => Err("the manager makes the plan; it is not a step of one".into()),
    }
}

/// `text` as a sentence: a full stop added unless it already ends in one (or a question or exclamation mark).
pub(crate) fn sentence(text: &str) -> String {
    let t = text.trim_end();
    if t.ends_with(['.', '?', '!', '…']) { t.to_string() } else { format!("{t}.") }
}

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A day in words: `31 March 2027`.
pub fn day_words(d: NaiveDate) -> String {
    d.format("%-d %B %Y").to_string()
}

fn ocr(input: &StepInput<'_>) -> Result<StepOutput, String> {
    let contracts = input.contracts();
    if contracts.is_empty() {
        return Ok(StepOutput::done(
            AgentType::Ocr,
            "The request names no contract of the organization; nothing to read.",
        ));
    }
    let mut out = StepOutput::done(AgentType::Ocr, String::new());
    for c in contracts {
        if c.pages == 0 || c.empty_pages >= c.pages {
            return Err(format!(
                "{} has no readable text ({}): import it again or run OCR on a better scan; the other agents \
                 cannot work without it.",
                c.reference,
                if c.pages == 0 { "no pages were extracted".to_string() } else { "every page is blank".to_string() }
            ));
        }
        let mut line = format!("{}: {} read", c.reference, plural(c.pages, "page", "pages"));
        if c.scanned_pages > 0 {
            line.push_str(&format!(", {} of them through OCR", c.scanned_pages));
        }
        if c.empty_pages > 0 {
            line.push_str(&format!("; {} without text", plural(c.empty_pages, "page", "pages")));
            out.warnings.push(format!("{} has pages without text", c.reference));
        }
        out.findings.push(format!("{line}."));
    }
    out.summary = if contracts.len() == 1 {
        format!("{} is read.", contracts[0].reference)
    } else {
        format!("{} contracts are read.", contracts.len())
    };
    Ok(out)
}

fn legal(input: &StepInput<'_>) -> StepOutput {
    let contracts = input.contracts();
    let mut out = StepOutput::done(AgentType::Legal, String::new());
    if contracts.is_empty() {
        out.summary = "No contract to review: name its reference (for example MSA-2026-014) or import it first.".into();
        return out;
    }
    let mut flags = 0;
    for c in contracts {
        let red: Vec<_> = c.items.iter().filter(|i| !i.red_flags.is_empty()).collect();
        let gaps: Vec<_> = c
            .items
            .iter()
            .filter(|i| i.risk == "critical" && matches!(i.status.as_str(), "absent" | "partial"))
            .collect();
        flags += red.len() as u32;
        let state = if c.finalized { "reviewed by a lawyer" } else { "pre-filled, waiting for a lawyer to confirm" };
        out.findings.push(format!(
            "{}: {} evaluated ({state}); {}, {}.",
            c.reference,
            plural(c.items_evaluated, "checklist item", "checklist items"),
            plural(red.len() as u32, "red flag", "red flags"),
            plural(gaps.len() as u32, "critical gap", "critical gaps"),
        ));
        for i in &red {
            let page = i.page.map(|p| format!(" (page {p})")).unwrap_or_default();
            out.findings.push(sentence(&format!("Red flag{page}: {} — {}", i.question, i.red_flags.join("; "))));
        }
        for i in &gaps {
            out.findings.push(sentence(&format!("Critical item {}: {}", i.status, i.question)));
        }
        if !red.is_empty() {
            out.warnings.push(format!("{}: {}", c.reference, plural(red.len() as u32, "red flag", "red flags")));
        }
        if !gaps.is_empty() {
            out.warnings.push(format!(
                "{}: {}",
                c.reference,
                plural(gaps.len() as u32, "critical gap", "critical gaps")
            ));
        }
        if !c.finalized {
            out.warnings.push(format!("{} is not yet reviewed by a lawyer", c.reference));
        }
        // Red flags with regulatory references the plan does not check: Compliance follows up.
        let referenced = red.iter().any(|i| !i.regulatory.is_empty());
        if referenced && !input.run.plan.agents().contains(&AgentType::Compliance) {
            out.follow_ups.push(FollowUp {
                agent: AgentType::Compliance,
                key: format!("compliance/{}", c.document),
                why: format!("Red flags in {} carry regulatory references; Compliance lists them.", c.reference),
                work: crate::tasks::TaskWork::ComplianceCheck { contract: c.clone() },
                not_before: None,
            });
        }
    }
    out.red_flags = flags;
    out.summary = if flags == 0 {
        "No red flags in the contract's checklist.".into()
    } else {
        format!("{} in the checklist.", plural(flags, "red flag", "red flags"))
    };
    out
}

fn percent_of(part: i64, whole: i64) -> Option<i64> {
    (whole > 0).then(|| ((part as i128 * 100 + whole as i128 / 2) / whole as i128) as i64)
}

fn financial(input: &StepInput<'_>) -> StepOutput {
    let cfg = &input.config().financial;
    let currency = &input.config().manager.default_currency;
    let plan = &input.run.plan;
    let mut out = StepOutput::done(AgentType::Financial, String::new());
    let named = plan.entities.amounts.first();
    if let Some(m) = named {
        out.findings.push(format!("The request names {}.", money_words(m)));
    }
    let mut checked = false;
    for c in input.contracts() {
        match c.value(currency) {
            Some(v) => {
                out.findings.push(format!("{} states its value as {}.", c.reference, money_words(&v)));
                if let Some(budget) = named {
                    checked = true;
                    if budget.currency != v.currency {
                        out.findings.push(format!(
                            "The budget is in {} and the contract in {}; no conversion is made, compare them \
                             with the rate your finance team uses.",
                            budget.currency, v.currency
                        ));
                        out.warnings.push("budget and contract in different currencies".into());
                    } else if let Some(p) = percent_of(v.minor, budget.minor) {
                        let line = format!("{} is {p}% of the {} named.", money_words(&v), money_words(budget));
                        if p > 100 {
                            out.warnings.push(format!("{} over the budget", c.reference));
                            out.findings.push(format!(
                                "{line} It is over the budget by {}.",
                                money_words(&crate::Money {
                                    currency: v.currency.clone(),
                                    minor: v.minor - budget.minor,
                                    text: String::new(),
                                })
                            ));
                        } else if p >= cfg.budget_warning_percent as i64 {
                            out.warnings.push(format!("{} uses {p}% of the budget", c.reference));
                            out.findings.push(format!(
                                "{line} That is at or above the {}% warning.",
                                cfg.budget_warning_percent
                            ));
                        } else {
                            out.findings.push(line);
                        }
                    }
                }
            }
            None => out.findings.push(format!("{} states no value the agents can read.", c.reference)),
        }
        if let Some(terms) = &c.payment_terms {
            out.findings.push(format!("{} pricing and payment: \u{201c}{}\u{201d}.", c.reference, short(terms, 160)));
        }
    }
    if plan.request_type == RequestType::Invoice && plan.entities.amounts.len() >= 2 {
        // An invoice against an expected amount: the tolerance is the organization's.
        let (invoice, expected) = (&plan.entities.amounts[0], &plan.entities.amounts[1]);
        if invoice.currency == expected.currency && expected.minor > 0 {
            let diff = (invoice.minor - expected.minor).abs();
            let allowed = expected.minor as i128 * cfg.invoice_tolerance_percent as i128 / 100;
            if diff as i128 > allowed {
                out.warnings.push("invoice differs from the expected amount".into());
                out.findings.push(format!(
                    "The invoice ({}) differs from {} by more than the {}% tolerance.",
                    money_words(invoice),
                    money_words(expected),
                    cfg.invoice_tolerance_percent
                ));
            } else {
                out.findings.push(format!(
                    "The invoice is within {}% of {}.",
                    cfg.invoice_tolerance_percent,
                    money_words(expected)
                ));
            }
        }
    }
    out.summary = if !out.warnings.is_empty() {
        format!("{}.", capitalise(&out.warnings.join("; ")))
    } else if checked {
        "Within the budget.".into()
    } else if out.findings.is_empty() {
        "No amount to check: the request names none and no contract states its value.".into()
    } else {
        "The amounts are listed; there is no budget to check them against.".into()
    };
    out
}

/// `s` with its first letter upper-case.
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

fn short(text: &str, max: usize) -> String {
    let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() <= max { t } else { format!("{}…", t.chars().take(max).collect::<String>().trim_end()) }
}

fn vendor(input: &StepInput<'_>) -> StepOutput {
    let cfg = &input.config().vendor;
    let mut out = StepOutput::done(AgentType::Vendor, String::new());
    let today = input.run.today;
    for m in &input.run.plan.entities.vendors {
        let known = m.vendor.as_ref().and_then(|id| input.run.facts.vendors.iter().find(|v| &v.id == id));
        match known {
            Some(v) => {
                let mut line = format!(
                    "{} is a vendor of the organization ({}), with {}.",
                    v.name,
                    v.status,
                    plural(v.contracts, "finalized contract", "finalized contracts")
                );
                if v.status == "onboarding" {
                    let days = (today - v.since.date_naive()).num_days();
                    if days >= cfg.onboarding_stalled_days as i64 {
                        line.push_str(&format!(
                            " Its onboarding has waited {days} days, past the {}-day mark.",
                            cfg.onboarding_stalled_days
                        ));
                        out.warnings.push(format!("{}'s onboarding is stalled", v.name));
                    }
                }
                if v.status == "blocked" {
                    out.warnings.push(format!("{} is blocked", v.name));
                }
                out.findings.push(line);
            }
            None => {
                out.findings
                    .push(format!("{} is not a vendor of the organization yet; onboarding registers it.", m.name));
                out.warnings.push(format!("{} is a new vendor", m.name));
            }
        }
    }
    out.summary = match out.findings.len() {
        0 => "The request names no vendor.".into(),
        // One vendor: its line is the summary.
        1 => out.findings.remove(0),
        n => format!("{n} vendors checked."),
    };
    out
}

fn compliance(input: &StepInput<'_>) -> StepOutput {
    compliance_of(input.contracts())
}

/// The regulatory references of the checklist items a contract hits (red flags and critical gaps).
pub(crate) fn compliance_of(contracts: &[ContractFacts]) -> StepOutput {
    let mut out = StepOutput::done(AgentType::Compliance, String::new());
    let mut refs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in contracts {
        for i in &c.items {
            let hit =
                !i.red_flags.is_empty() || (i.risk == "critical" && matches!(i.status.as_str(), "absent" | "partial"));
            if hit {
                for r in &i.regulatory {
                    refs.entry(r.clone()).or_default().push(format!("{}: {}", c.reference, i.question));
                }
            }
        }
    }
    for (r, items) in &refs {
        out.findings.push(sentence(&format!("{r} — {}", items.join("; "))));
    }
    if !refs.is_empty() {
        out.warnings
            .push(format!("{} touched", plural(refs.len() as u32, "regulatory reference", "regulatory references")));
    }
    out.summary = if contracts.is_empty() {
        "No contract to check: the request names none the organization holds.".into()
    } else if refs.is_empty() {
        "No checklist item with a regulatory reference is hit.".into()
    } else {
        format!("{} behind the items hit.", plural(refs.len() as u32, "regulatory reference", "regulatory references"))
    };
    out
}

fn workflow(input: &StepInput<'_>) -> StepOutput {
    let plan = &input.run.plan;
    let (graph, what) = match plan.request_type {
        RequestType::VendorOnboarding => ("Vendor onboarding", "the vendor's name and the documents it provided"),
        RequestType::Invoice => ("Invoice processing", "the invoice, its purchase order and the goods receipt"),
        RequestType::Budget => ("Budget planning", "the budget lines and their amounts"),
        RequestType::Renewal => ("Renewal notice", "the contract and its notice deadline"),
        _ => ("", ""),
    };
    let mut out = StepOutput::done(AgentType::Workflow, String::new());
    if graph.is_empty() {
        out.summary = "No built-in workflow does this request's work.".into();
        return out;
    }
    let mut line =
        format!("The built-in workflow \u{201c}{graph}\u{201d} does this work; it is started from Runs with {what}");
    if let Some(v) = plan.entities.vendors.first() {
        line.push_str(&format!(" (vendor: {})", v.name));
    }
    if let Some(m) = plan.entities.amounts.first() {
        line.push_str(&format!(" (amount: {})", money_words(m)));
    }
    line.push('.');
    out.findings.push(line);
    out.summary = format!("\u{201c}{graph}\u{201d} is the workflow for this request.");
    // An onboarding it can fill in from the request is started (a follow-up, once per vendor).
    if plan.request_type == RequestType::VendorOnboarding
        && let Some(v) = plan.entities.vendors.first()
    {
        let known = v.vendor.as_ref().and_then(|id| input.run.facts.vendors.iter().find(|f| &f.id == id));
        match known.map(|k| k.status.as_str()) {
            Some("active") => out.findings.push(format!("{} is already active: no onboarding is started.", v.name)),
            Some("onboarding") => {
                out.findings.push(format!("An onboarding is already deciding on {}: no other is started.", v.name))
            }
            Some("blocked") => out
                .findings
                .push(format!("{} is blocked: no onboarding is started; a person reopens it from Vendors.", v.name)),
            _ => {
                let (vendor, key) = match &v.vendor {
                    Some(id) => (serde_json::json!({ "id": id }), id.clone()),
                    None => (serde_json::json!({ "name": v.name }), v.name.to_lowercase()),
                };
                out.follow_ups.push(FollowUp {
                    agent: AgentType::Workflow,
                    key: format!("workflow/vendor_onboarding/{key}"),
                    why: format!("Start \u{201c}Vendor onboarding\u{201d} for {}.", v.name),
                    work: crate::tasks::TaskWork::StartWorkflow {
                        graph: "vendor_onboarding".into(),
                        title: "Vendor onboarding".into(),
                        input: serde_json::json!({ "vendor": vendor }),
                    },
                    not_before: None,
                });
                out.summary = format!("\u{201c}Vendor onboarding\u{201d} is started for {}.", v.name);
            }
        }
    }
    if plan.request_type == RequestType::Renewal {
        renewal_notices(input, &mut out);
    }
    out
}

/// For a renewal: each named contract whose notice deadline is still ahead gets its "Renewal notice" decision
/// started now (once per contract and deadline; not when its reminder already started one).
fn renewal_notices(input: &StepInput<'_>, out: &mut StepOutput) {
    let mut started = Vec::new();
    for c in input.contracts() {
        let Some(notice_by) = c.notice_by else {
            out.findings.push(format!(
                "{} has no notice deadline on record: a person starts \u{201c}Renewal notice\u{201d} from Runs.",
                c.reference
            ));
            continue;
        };
        if !c.finalized {
            out.findings.push(format!(
                "{}'s review is not finalized: its notice deadline is not confirmed, so no renewal decision starts.",
                c.reference
            ));
        } else if c.renewal_started {
            out.findings
                .push(format!("A renewal decision on {} is already in the inbox: no other is started.", c.reference));
        } else if notice_by < input.run.today {
            out.findings.push(format!(
                "{}'s last day to give notice was {}: a person decides what to do from the contract.",
                c.reference,
                day_words(notice_by)
            ));
        } else {
            let mut form = serde_json::json!({
                "contract": c.reference, "document": c.document, "notice_by": notice_by.to_string(),
            });
            if let Some(end) = c.expires_on {
                form["expires_on"] = serde_json::json!(end.to_string());
            }
            out.follow_ups.push(FollowUp {
                agent: AgentType::Workflow,
                key: format!("workflow/renewal_notice/{}/{notice_by}", c.document),
                why: format!(
                    "Start \u{201c}Renewal notice\u{201d} for {}: renew or give notice by {}.",
                    c.reference,
                    day_words(notice_by)
                ),
                work: crate::tasks::TaskWork::StartWorkflow {
                    graph: "renewal_notice".into(),
                    title: "Renewal notice".into(),
                    input: form,
                },
                not_before: None,
            });
            started.push(c.reference.clone());
        }
    }
    if !started.is_empty() {
        out.summary = format!("\u{201c}Renewal notice\u{201d} is started for {}.", started.join(", "));
    }
}

fn secretary(input: &StepInput<'_>) -> StepOutput {
    let cfg = &input.config().secretary;
    let today = input.run.today;
    let mut out = StepOutput::done(AgentType::Secretary, String::new());
    let mut dates: Vec<(NaiveDate, String, String)> = Vec::new();
    for d in &input.run.plan.entities.dates {
        dates.push((d.date, format!("the date you named (\u{201c}{}\u{201d})", d.text), format!("request/{}", d.date)));
    }
    for c in input.contracts() {
        if let Some(n) = c.notice_by {
            dates.push((n, format!("{}'s last day to give notice", c.reference), format!("{}/notice/{n}", c.document)));
        }
        if let Some(e) = c.expires_on {
            dates.push((e, format!("{}'s expiry", c.reference), format!("{}/expiry/{e}", c.document)));
        }
    }
    dates.sort();
    for (date, what, key) in &dates {
        let days = (*date - today).num_days();
        let when = match days {
            d if d < 0 => format!("passed {} ago", plural((-d) as u32, "day", "days")),
            0 => "today".into(),
            d => format!("in {}", plural(d as u32, "day", "days")),
        };
        out.findings.push(format!("{}: {} ({when}).", capitalise(what), day_words(*date)));
        if (0..=cfg.close_deadline_days as i64).contains(&days) {
            out.warnings.push(format!("{what} is {when}"));
        } else if days < 0 {
            out.warnings.push(format!("{what} has passed"));
        }
        if days >= 0 {
            let remind = (*date - Duration::days(cfg.reminder_days_before as i64)).max(today);
            out.follow_ups.push(FollowUp {
                agent: AgentType::Notifications,
                key: format!("reminder/{key}"),
                why: format!("A reminder on {} for {what}.", day_words(remind)),
                work: crate::tasks::TaskWork::Notice {
                    title: format!("Reminder: {what}"),
                    message: format!(
                        "{} is on {} ({when} when the reminder was set).",
                        capitalise(what),
                        day_words(*date)
                    ),
                    urgent: days <= cfg.close_deadline_days as i64,
                },
                not_before: Some(remind),
            });
        }
    }
    out.summary = match dates.first() {
        None => "No date to keep: the request names none and no contract has a deadline.".into(),
        Some((d, what, _)) => format!(
            "Next: {what}, {}; {} set.",
            day_words(*d),
            plural(out.follow_ups.len() as u32, "reminder", "reminders")
        ),
    };
    out
}

/// The risk level over the other steps' outputs.
fn risk_level(input: &StepInput<'_>) -> (&'static str, Vec<String>) {
    let cfg = &input.config().analytics;
    let mut reasons = Vec::new();
    let mut flags = 0;
    for o in input.earlier.values() {
        flags += o.red_flags;
        if o.status == StepStatus::Done {
            reasons.extend(o.warnings.iter().cloned());
        } else {
            reasons.push(format!("{} did not run", o.agent.name()));
        }
    }
    let level = if flags >= cfg.high_red_flags {
        "high"
    } else if flags >= cfg.medium_red_flags || reasons.len() >= 2 {
        "medium"
    } else if reasons.is_empty() {
        "low"
    } else {
        "medium"
    };
    (level, reasons)
}

fn analytics(input: &StepInput<'_>) -> StepOutput {
    let (level, reasons) = risk_level(input);
    let mut out = StepOutput::done(AgentType::Analytics, String::new());
    out.findings = reasons.iter().map(|r| sentence(&capitalise(r))).collect();
    out.summary = if reasons.is_empty() {
        format!("Risk {level}: nothing to flag.")
    } else {
        format!("Risk {level}: {}.", reasons.join("; "))
    };
    if level == "high" {
        out.warnings.push("risk high".into());
    }
    out.risk = Some(level.into());
    out
}

fn notifications(input: &StepInput<'_>) -> StepOutput {
    let plan = &input.run.plan;
    let cfg = &input.config().notifications;
    let risk = input.earlier.get(&AgentType::Analytics).map(|a| a.summary.clone());
    let high = input.earlier.get(&AgentType::Analytics).is_some_and(|a| a.warnings.iter().any(|w| w == "risk high"));
    let urgent = plan.urgency == Urgency::High || high;
    let title = match plan.entities.contracts.iter().find(|c| c.contract.is_some()) {
        Some(c) => format!("{} for {}: done", capitalise(plan.request_type.words()), c.reference),
        None => match plan.entities.vendors.first() {
            Some(v) => format!("{} for {}: done", capitalise(plan.request_type.words()), v.name),
            None => format!("{}: done", capitalise(plan.request_type.words())),
        },
    };
    let message = risk.unwrap_or_else(|| "The agents finished the request.".into());
    let mut out = StepOutput::done(AgentType::Notifications, String::new());
    out.follow_ups.push(FollowUp {
        agent: AgentType::Notifications,
        key: String::new(), // the run's own: set by the engine's handler
        why: "The outcome goes to the inbox.".into(),
        work: crate::tasks::TaskWork::Notice { title: title.clone(), message: message.clone(), urgent },
        not_before: None,
    });
    let native = urgent || !cfg.native_for_urgent_only;
    out.summary = format!("The outcome goes to the inbox{}.", if native { " with a desktop notification" } else { "" });
    out.findings.push(format!("{title}. {message}"));
    out
}
