//! The rule-based checklist evaluator. An item that tests a CUAD category is answered from its category's shared
//! clause signals (`checklists/categories.toml`) and where such clauses live (`checklists/topics.toml`):
//!
//! - **present** when an operative sentence supports the category (or, failing that, a section whose heading names the
//!   clause has a body to quote). The quote is the best such sentence: in the body or an exhibit, never a running
//!   line, the table of contents, a bare heading, a cross-reference, a definition (unless the item asks about one,
//!   or it defines the very term the clause is about: "Initial Term" means ...), the recitals or a signature block;
//!   preferring the section whose heading names the clause, then its usual home, then a sentence the item's own
//!   patterns also match, then one whose clause carries more of the category's signals; a section whose heading
//!   names another topic comes last. A sentence that only qualifies the one before it is quoted with it.
//! - **absent** only when the whole text was read and nothing names the topic at all.
//! - **not evaluated**, with where to look, when the topic is mentioned but no clause matched, when only the
//!   definitions, recitals or cover speak of it, when every supporting sentence sits in a section about another
//!   topic (weak evidence is not quoted as the clause), or when pages could not be read.
//!
//! An item with no category is answered from its own signals, with the same rules for what may be quoted. Quotes are
//! whole sentences cut from the page's own text, so they are on their page verbatim.

use super::fields::{opens_with_the_term, states_the_value, value_sentence};
use super::index::Place;
use super::learned::{QuoteFrom, SentenceScores};
use super::{ContractIndex, RULES_CONFIDENCE_CAP};
use pactwise_checklists::{Catalog, CompiledCategorySignals, CompiledTopic};
use pactwise_domain::{
    ChecklistItem, Confidence, ContractType, CuadCategory, ItemFinding, ItemStatus, Method, PageSource, Quote,
};
use pactwise_structure::Zone;
use regex::Regex;
use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

/// Confidence of a rule finding backed by one sentence; each further supporting sentence adds a little.
const BASE_CONFIDENCE: f32 = 0.3;
/// A supporting sentence has at least this many words: a heading ("Change of Control.") names a topic, it does not
/// make a clause.
const MIN_CLAUSE_WORDS: usize = 6;
/// Confidence of an "absent" answer from rules: silence is weak evidence.
const ABSENT_CONFIDENCE: f32 = 0.25;
/// Confidence of a finding backed only by a section heading that names the clause.
const HEADING_CONFIDENCE: f32 = 0.3;
/// A best supporting sentence scoring below this lies in a section about another topic and matches none of the
/// item's own signals (see `best_sentence`): not evidence enough to quote as the clause.
const WEAK_EVIDENCE_SCORE: f32 = 0.55;
/// Categories whose clauses sit in their own sections (the term and its renewal, warranty periods, insurance, the
/// limits of liability): a best sentence outside those sections that carries a single signal and none of the item's
/// own words (a score below [`OUTSIDE_HOME_SCORE`]) is a passing mention ("during the Term and any renewal", "any
/// insurance proceeds"), left for a person with where to look. Chosen on the even half of the CUAD dev split, where
/// it removed more wrong quotes than right ones in each of these categories and no presence F1 fell.
const HOME_BOUND: [CuadCategory; 5] = [
    CuadCategory::RenewalTerm,
    CuadCategory::NoticePeriodToTerminateRenewal,
    CuadCategory::WarrantyDuration,
    CuadCategory::Insurance,
    CuadCategory::UncappedLiability,
];
/// The best score of a sentence outside the clause's home with one signal and none of the item's own: operative
/// text (1.0) in a section whose heading says nothing of the clause (0), plus nothing.
const OUTSIDE_HOME_SCORE: f32 = 1.05;
/// Confidence of a clause only the learned classifier found (the rules' signals did not match it).
const LEARNED_CONFIDENCE: f32 = 0.35;
/// A page of recognised text below this measured confidence cannot show that a clause is absent.
const READABLE_OCR: f32 = 0.6;

/// The sentences of a category's clauses, found once per contract and shared by the category's items.
pub struct Evidence {
    /// Supporting sentences that may be quoted as the clause (operative text), in document order.
    pub operative: Vec<usize>,
    /// Supporting sentences elsewhere (definitions, recitals, cover, preamble, signature blocks), in document order.
    pub elsewhere: Vec<usize>,
}

/// Answers every item of `contract_type` from the index by the rules alone, in catalog order: exactly one finding
/// per item.
pub fn evaluate(catalog: &Catalog, contract_type: &ContractType, index: &ContractIndex) -> Vec<ItemFinding> {
    evaluate_with(catalog, contract_type, index, None)
}

/// Answers every item of `contract_type` from the index, in catalog order, with the learned classifier's sentence
/// scores when given: an item whose category the classifier knows is decided as [`learned_finding`] says.
pub fn evaluate_with(
    catalog: &Catalog,
    contract_type: &ContractType,
    index: &ContractIndex,
    learned: Option<&SentenceScores>,
) -> Vec<ItemFinding> {
    let _span =
        tracing::debug_span!("offline.evaluate", contract_type = %contract_type.id, learned = learned.is_some())
            .entered();
    let mut evidence: HashMap<CuadCategory, Evidence> = HashMap::new();
    let mut value_sentences: HashMap<CuadCategory, Option<usize>> = HashMap::new();
    let unreadable = unreadable_pages(index);
    contract_type
        .items
        .iter()
        .map(|item| {
            let category = item.cuad_category.and_then(|c| catalog.category_signals(c).map(|s| (c, s)));
            match category {
                Some((c, signals)) => {
                    let found = evidence.entry(c).or_insert_with(|| category_evidence(signals, index));
                    let value_at = *value_sentences.entry(c).or_insert_with(|| value_sentence(index, c));
                    let rules = category_finding(catalog, item, c, found, value_at, index, &unreadable);
                    match learned {
                        Some(scores) => learned_finding(item, c, rules, scores, index),
                        None => rules,
                    }
                }
                None => own_signals_finding(catalog, item, index),
            }
        })
        .collect()
}

/// The sentences (indices into the index) that support a category, split by whether they may be quoted as the
/// clause.
pub fn category_evidence(signals: &CompiledCategorySignals, index: &ContractIndex) -> Evidence {
    let mut evidence = Evidence { operative: Vec::new(), elsewhere: Vec::new() };
    if !signals.requires.is_empty()
        && !signals.requires.iter().any(|r| index.pages().iter().any(|p| r.is_match(&p.text)))
    {
        return evidence;
    }
    let candidates = matching_sentences(&signals.clause, index);
    let mut found: BTreeSet<usize> = candidates
        .into_iter()
        .filter(|&s| {
            let text = index.sentence_text(&index.sentences()[s]);
            text.split_whitespace().count() >= MIN_CLAUSE_WORDS && signals.supports(text)
        })
        .collect();
    // A clause cut by a page break: recognised on the joined text, quoted by its longer part (which is on one page).
    for (before, after, joined) in index.joined_sentences() {
        if found.contains(before) || found.contains(after) || !signals.supports(joined) {
            continue;
        }
        let len = |i: usize| index.sentences()[i].range.len();
        found.insert(if len(*before) >= len(*after) { *before } else { *after });
    }
    for s in found {
        let place = index.place(s);
        if place.is_operative() {
            evidence.operative.push(s);
        } else if place.is_quotable() {
            evidence.elsewhere.push(s);
        }
    }
    evidence
}

/// Sentences in which one of `patterns` matches (searched page by page, then confirmed within the sentence).
fn matching_sentences(patterns: &[Regex], index: &ContractIndex) -> BTreeSet<usize> {
    let mut found = BTreeSet::new();
    for pattern in patterns {
        for (p, page) in index.pages().iter().enumerate() {
            for m in pattern.find_iter(&page.text) {
                if let Some(s) = index.sentence_at(p, m.start()) {
                    found.insert(s);
                }
            }
        }
    }
    found
}

/// How much a zone's text counts as a clause.
fn zone_weight(zone: Zone) -> f32 {
    match zone {
        Zone::Operative => 1.0,
        Zone::Exhibit => 0.8,
        Zone::Definitions => 0.6,
        _ => 0.2,
    }
}

/// Section headings of boilerplate that holds no category's clause unless the category's topic calls it home:
/// quoting "exclusive" from a confidentiality or notices section, or a post-termination duty from the survival
/// list, is evidence in the wrong place.
static BOILERPLATE_HEADINGS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)confidential|non-?disclosure|^notices?\b|\bnotices?$|surviv|entire\s+agreement|counterparts|severab|^waiver|amendments?$|force\s+majeure|independent\s+contractor|relationship\s+of\s+the\s+parties|publicity|press\s+releases?|^headings|further\s+assurances|^tax(es|ation)?\b|dispute|arbitration|indemn|representations|warrant",
    )
    .expect("valid pattern")
});

/// How strongly a sentence's place argues that it is (or is not) the category's clause: the section whose heading
/// names the clause, then its usual home; a section whose heading names another category's clause or some
/// boilerplate topic counts against it.
fn place_score(catalog: &Catalog, category: CuadCategory, topic: Option<&CompiledTopic>, headings: &str) -> f32 {
    let Some(topic) = topic else { return 0.0 };
    if topic.names_clause(headings) {
        return 1.0;
    }
    if topic.is_home(headings) {
        return 0.4;
    }
    if headings.is_empty() {
        return 0.0;
    }
    // The innermost heading decides what a section is about.
    let innermost = headings.rsplit(" / ").next().unwrap_or(headings);
    let foreign = CuadCategory::ALL
        .iter()
        .filter(|&&c| c != category)
        .filter_map(|&c| catalog.topic(c))
        .any(|t| t.names_clause(innermost))
        || BOILERPLATE_HEADINGS.is_match(innermost);
    if foreign { -0.6 } else { 0.0 }
}

/// How strongly a sentence argues that it is the item's clause: in the section whose heading names the clause
/// first, then in the clause's usual home, then one the item's own patterns also match, then one more of the
/// category's signals match; a sentence in a section about something else comes last.
fn sentence_score(
    catalog: &Catalog,
    item: &ChecklistItem,
    category: CuadCategory,
    index: &ContractIndex,
    i: usize,
) -> f32 {
    let place = index.place(i);
    let headings = index.headings_of(i);
    let mut score = zone_weight(place.zone) + place_score(catalog, category, catalog.topic(category), &headings);
    let text = index.sentence_text(&index.sentences()[i]);
    if catalog.item_signals(&item.id).is_some_and(|s| s.present.iter().any(|r| r.is_match(text))) {
        score += 0.5;
    }
    if let Some(signals) = catalog.category_signals(category) {
        let matched = signals.clause.iter().filter(|r| r.is_match(text)).count();
        score += 0.15 * matched.saturating_sub(1).min(2) as f32;
    }
    score
}

/// The best supporting sentence among `candidates` and its score ([`sentence_score`]), the earliest among equals:
/// how strong the evidence for the clause is.
fn best_sentence(
    catalog: &Catalog,
    item: &ChecklistItem,
    category: CuadCategory,
    candidates: &[usize],
    index: &ContractIndex,
) -> Option<(usize, f32)> {
    // Highest score; the earliest among equals (max_by keeps the last, so compare in reverse order).
    candidates
        .iter()
        .copied()
        .map(|i| (i, sentence_score(catalog, item, category, index, i)))
        .rev()
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// A sentence that opens by pointing back at what precedes it ("provided, however, ...", "However, ...", "The
/// foregoing restrictions shall not apply ...", "Notwithstanding the foregoing / Section 4.4, ...", "In such event",
/// "Such ...", "Further, ...", "In addition, ...", "This Section ...") qualifies or adds to a clause stated before
/// it: a carve-out, a condition, a consequence. After its number, if any.
static QUALIFIES_WHAT_PRECEDES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\W*(?:(?:section|article|clause)\s+)?(?:\(?[0-9]+(?:\.[0-9]+)*\.?\)?|\(?[a-z]{1,4}\)|[a-z]\.)?\s*(?:provided\b|however\b|notwithstanding\s+(?:the\s+(?:foregoing|above|preceding)|(?:sections?|paragraphs?|clauses?|articles?)\s+\(?[0-9a-z])|the\s+(?:foregoing|above|preceding)\b|such\s|in\s+(?:such|that|either|any\s+such)\s+(?:event|case)|in\s+addition|further(?:more)?\b|additionally|accordingly|any\s+such\b|this\s+(?:section|paragraph|clause|article|provision)\b)",
    )
    .expect("valid pattern")
});

/// For the quote, each further distinct signal of the category that the quoted clause carries (up to two) adds this
/// to the sentence's score: of two sentences that both show the clause is there, the one whose clause says more of
/// what such clauses say ("hereby grants ... an exclusive ... license", not "the license" in passing) is the one to
/// quote.
const QUOTE_SIGNAL_WEIGHT: f32 = 0.15;

/// A signal's match that the words of the clause's heading (`topics.toml` `headings`: "Exclusivity", "Limitation of
/// Liability", "Warranty Period") cover for at least this share of its length only names the clause.
const NAMING_SHARE: f32 = 0.6;
/// How much less a sentence counts, when choosing the quote, if each of its signals only names the clause.
const NAMING_PENALTY: f32 = 0.3;

/// Whether every match of the category's signals in a sentence is the clause's own name ("the limitation of
/// liability in this paragraph reflects ...", "during the Warranty Period", "subject to the exclusivity in
/// Section 5"): such a sentence refers to the clause; it does not state it.
pub(crate) fn only_names_the_clause(signals: &CompiledCategorySignals, topic: &CompiledTopic, text: &str) -> bool {
    let mut matches = signals.clause.iter().flat_map(|r| r.find_iter(text)).peekable();
    if matches.peek().is_none() {
        return false;
    }
    matches.all(|m| {
        let matched = m.as_str().trim();
        let named = topic.headings.iter().filter_map(|h| h.find(matched)).map(|h| h.len()).max().unwrap_or(0);
        named as f32 >= NAMING_SHARE * matched.len() as f32
    })
}

/// "Hereby" is the word by which a contract's sentence takes effect ("hereby grants", "hereby assigns", "hereby
/// appoints", "hereby waives"): such a sentence performs its clause rather than speaking of it.
static PERFORMS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\bhereby\b").expect("valid pattern"));
/// How much more a sentence that performs its clause ([`PERFORMS`]) counts when choosing the quote.
const PERFORMING_WEIGHT: f32 = 0.3;

/// A licence or right described as non-transferable ("a non-exclusive, non-transferable, royalty-free license to use
/// the Marks"): the grant, which says nothing of assigning the agreement, unless it also speaks of that
/// ([`ASSIGNS_THE_AGREEMENT`]).
static NON_TRANSFERABLE_GRANT: LazyLock<[Regex; 2]> = LazyLock::new(|| {
    [
        Regex::new(r"(?i)\bnon-?\s*(transferr?able|assignable|sublicensable)\b").expect("valid pattern"),
        Regex::new(r"(?i)\blicen[cs]e|\bright\s+to\s+use\b").expect("valid pattern"),
    ]
});
/// Assigning, transferring or delegating this agreement or a party's rights or duties under it, or doing so with
/// consent, either way round ("may not assign this Agreement", "its rights and obligations under this Agreement",
/// "This Agreement may not be assigned"): the assignment clause, not a word of transfer in passing ("transfer anything
/// of value", "exercising its rights").
static ASSIGNS_THE_AGREEMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(assign|transfer|delegat|cede)\w*\b[^.;]{0,80}\b(this\s+agreement|(its|their|any|such\s+party\W?s)\s+(\w+\s+){0,2}(rights|obligations|duties|interests?)\s+(\w+\s+){0,2}(under|hereunder|in\s+this|arising)|consent)|\bthis\s+agreement\b[^.;]{0,60}\b(assign|transfer)\w*",
    )
    .expect("valid pattern")
});
/// How much less a sentence that grants a non-transferable licence ([`NON_TRANSFERABLE_GRANT`]) counts when choosing
/// the Anti-Assignment quote.
const GRANT_NOT_ASSIGNMENT_PENALTY: f32 = 0.5;
/// How much more a sentence that speaks of assigning the agreement itself ([`ASSIGNS_THE_AGREEMENT`]) counts when
/// choosing the Anti-Assignment quote.
const ASSIGNMENT_CLAUSE_WEIGHT: f32 = 0.5;
/// How much more a sentence that opens with the agreement or its term as subject ([`opens_with_the_term`]) counts when
/// choosing the Expiration Date quote.
const TERM_SUBJECT_WEIGHT: f32 = 0.6;

/// A change of control (or of ownership) and an end of the agreement or a right in the same sentence, either first
/// ("may terminate this Agreement upon a Change of Control", "Upon a change in control ... shall automatically
/// terminate"): what the clause does, rather than a definition of the term or a passing mention.
static CONTROL_ENDS_SOMETHING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\bchanges?\s+(of|in)\s+(the\s+)?(control|ownership)\b[^.;]{0,200}\bterminat|\bterminat\w*\b[^.;]{0,200}\bchanges?\s+(of|in)\s+(the\s+)?(control|ownership)\b",
    )
    .expect("valid pattern")
});
/// How much more a sentence that ties a change of control to an end ([`CONTROL_ENDS_SOMETHING`]) counts when choosing
/// the Change Of Control quote.
const CONTROL_CONSEQUENCE_WEIGHT: f32 = 1.0;

/// A party bound to carry insurance ("shall obtain and maintain ... insurance", "agrees to carry ... insurance"): the
/// insurance clause itself, rather than its certificates, deductibles or the insured named on the policies.
static CARRIES_INSURANCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(shall|will|must|agrees?\s+to)\s+(\w+\s+){0,5}(obtain|carry|maintain|procure|purchase|keep)\b[^.;]{0,150}\binsurance",
    )
    .expect("valid pattern")
});
/// How much more a sentence that binds a party to carry insurance ([`CARRIES_INSURANCE`]) counts when choosing the
/// Insurance quote.
const DUTY_TO_INSURE_WEIGHT: f32 = 0.3;
/// How much less a Non-Compete sentence counts, when choosing its quote, if it is an exception to the restriction (the
/// Competitive Restriction Exception's signals support it: "the preceding sentence shall not prohibit ...",
/// "provided that nothing herein shall prevent ...").
const EXCEPTION_NOT_RESTRICTION_PENALTY: f32 = 0.5;

/// Whether a sentence of the Insurance clause binds a party to carry insurance.
pub(crate) fn binds_to_insure(category: CuadCategory, text: &str) -> bool {
    category == CuadCategory::Insurance && CARRIES_INSURANCE.is_match(text)
}

/// Whether a sentence of the Non-Compete clause is the exception to the restriction rather than the restriction.
fn excepts_from_the_restriction(catalog: &Catalog, category: CuadCategory, text: &str) -> bool {
    category == CuadCategory::NonCompete
        && catalog.category_signals(CuadCategory::CompetitiveRestrictionException).is_some_and(|s| s.supports(text))
}

/// Whether a sentence of the Change Of Control clause says what a change of control ends.
pub(crate) fn control_ends_something(category: CuadCategory, text: &str) -> bool {
    category == CuadCategory::ChangeOfControl && CONTROL_ENDS_SOMETHING.is_match(text)
}

/// Whether a sentence of the Anti-Assignment clause speaks of assigning the agreement or the rights and duties under it.
pub(crate) fn assigns_the_agreement(category: CuadCategory, text: &str) -> bool {
    category == CuadCategory::AntiAssignment && ASSIGNS_THE_AGREEMENT.is_match(text)
}

/// Whether a sentence of the Anti-Assignment clause is a grant that calls its licence non-transferable rather than the
/// clause that limits assigning the agreement.
pub(crate) fn grants_rather_than_assigns(category: CuadCategory, text: &str) -> bool {
    category == CuadCategory::AntiAssignment
        && NON_TRANSFERABLE_GRANT.iter().all(|r| r.is_match(text))
        && !ASSIGNS_THE_AGREEMENT.is_match(text)
}

/// The sentence to quote for an item among `candidates`: the strongest evidence ([`sentence_score`]), counting also
/// the category's signals in the clause it would be quoted with ([`clause_quote`]), less for a sentence that only
/// names the clause ([`only_names_the_clause`]), more for one that performs it ([`PERFORMS`]); for the Anti-Assignment
/// clause less for a grant of a non-transferable licence ([`grants_rather_than_assigns`]) and more for a sentence about
/// assigning the agreement itself ([`assigns_the_agreement`]), for the Insurance more for a duty to carry insurance
/// ([`binds_to_insure`]), for the Non-Compete less for an exception to it ([`excepts_from_the_restriction`]), for the
/// Expiration Date more for a sentence about the term itself ([`opens_with_the_term`]), for the Change Of Control more
/// for one that says what a change of control ends ([`control_ends_something`]); the earliest among equals. Presence
/// is still decided by [`best_sentence`]: a sentence may show that the clause is there without being the one to quote.
fn quote_sentence(
    catalog: &Catalog,
    item: &ChecklistItem,
    category: CuadCategory,
    candidates: &[usize],
    index: &ContractIndex,
) -> Option<usize> {
    let signals = catalog.category_signals(category);
    let topic = catalog.topic(category);
    let score = |i: usize| {
        let quote = clause_quote(index, i);
        let matched = signals.map_or(0, |s| s.clause.iter().filter(|r| r.is_match(&quote.text)).count());
        let text = index.sentence_text(&index.sentences()[i]);
        let names_only = match (signals, topic) {
            (Some(signals), Some(topic)) => only_names_the_clause(signals, topic, text),
            _ => false,
        };
        sentence_score(catalog, item, category, index, i)
            + QUOTE_SIGNAL_WEIGHT * matched.saturating_sub(1).min(2) as f32
            - if names_only { NAMING_PENALTY } else { 0.0 }
            + if PERFORMS.is_match(text) { PERFORMING_WEIGHT } else { 0.0 }
            - if grants_rather_than_assigns(category, text) { GRANT_NOT_ASSIGNMENT_PENALTY } else { 0.0 }
            + if assigns_the_agreement(category, text) { ASSIGNMENT_CLAUSE_WEIGHT } else { 0.0 }
            + if binds_to_insure(category, text) { DUTY_TO_INSURE_WEIGHT } else { 0.0 }
            - if excepts_from_the_restriction(catalog, category, text) {
                EXCEPTION_NOT_RESTRICTION_PENALTY
            } else {
                0.0
            }
            + if opens_with_the_term(category, text) { TERM_SUBJECT_WEIGHT } else { 0.0 }
            + if control_ends_something(category, text) { CONTROL_CONSEQUENCE_WEIGHT } else { 0.0 }
    };
    candidates.iter().copied().map(|i| (i, score(i))).rev().max_by(|a, b| a.1.total_cmp(&b.1)).map(|(i, _)| i)
}

fn finding(
    item: &ChecklistItem,
    status: ItemStatus,
    confidence: f32,
    quote: Option<Quote>,
    reason: String,
) -> ItemFinding {
    ItemFinding {
        item_id: item.id.clone(),
        value: None,
        status,
        confidence,
        quote,
        method: Method::Rules,
        red_flags: Vec::new(),
        reason: Some(reason),
    }
}

/// An item the rules leave for a person (not evaluated), with where to look.
fn left_for_a_person(item: &ChecklistItem, reason: String) -> ItemFinding {
    finding(item, ItemStatus::NotEvaluated, ABSENT_CONFIDENCE, None, reason)
}

fn quote_of(index: &ContractIndex, i: usize) -> Quote {
    let sentence = &index.sentences()[i];
    Quote { text: index.sentence_text(sentence).to_owned(), page: index.page_number(sentence) }
}

/// The longest a quote grows when it takes in the rest of its clause.
const CLAUSE_QUOTE_CHARS: usize = 700;

/// The quote for a clause: the sentence with as much of the rest of its numbered clause on the same page as can be
/// read at once (up to [`CLAUSE_QUOTE_CHARS`]; a clause's operative words are often split over sentences: "The term
/// is one year. It renews ..."), the whole clause when it is that short, else the sentences around it, one after and
/// one before in turn. A sentence that qualifies the one before it ([`QUALIFIES_WHAT_PRECEDES`]) is always quoted
/// with that one. Still a span of the page's own text.
pub fn clause_quote(index: &ContractIndex, i: usize) -> Quote {
    let sentences = index.sentences();
    let place = index.place(i);
    let same = |j: usize| {
        sentences[j].page == sentences[i].page
            && index.place(j).section == place.section
            && index.place(j).zone == place.zone
            && !index.place(j).heading_only
    };
    let page = &index.pages()[sentences[i].page];
    let span = |first: usize, last: usize| Quote {
        text: page.text[sentences[first].range.start..sentences[last].range.end].to_owned(),
        page: page.number,
    };
    // A sentence that qualifies the one before it ("provided, however, ...", "The foregoing shall not apply ...") is
    // read with it: alone it does not say what it qualifies.
    let qualifies = i > 0 && same(i - 1) && QUALIFIES_WHAT_PRECEDES.is_match(index.sentence_text(&sentences[i]));
    let (mut first, mut last) = if qualifies { (i - 1, i) } else { (i, i) };
    if place.section.is_none() {
        return span(first, last);
    }
    let fits =
        |first: usize, last: usize| sentences[last].range.end - sentences[first].range.start <= CLAUSE_QUOTE_CHARS;
    loop {
        let after = last + 1 < sentences.len() && same(last + 1) && fits(first, last + 1);
        if after {
            last += 1;
        }
        let before = first > 0 && same(first - 1) && fits(first - 1, last);
        if before {
            first -= 1;
        }
        if !after && !before {
            return span(first, last);
        }
    }
}

/// The sentences an item of `category` may quote: the operative ones that support the category, then the
/// definitions that may stand as the clause.
fn quote_candidates(
    catalog: &Catalog,
    item: &ChecklistItem,
    category: CuadCategory,
    found: &Evidence,
    index: &ContractIndex,
) -> Vec<usize> {
    let about_definition = crate::evidence::asks_about_a_definition(item);
    // For an item about a definition, the definitions are operative text too; so is the definition of the very term
    // the clause is about ("Initial Term" means the period from ... to ...), for any item of its category.
    let names_the_clause = |i: usize| {
        index.defined_term(i).is_some_and(|term| crate::evidence::term_names_the_clause(catalog, category, term))
    };
    let definitions: Vec<usize> = found
        .elsewhere
        .iter()
        .copied()
        .filter(|&i| index.place(i).zone == Zone::Definitions || index.place(i).definition)
        .filter(|&i| about_definition || names_the_clause(i))
        .collect();
    found.operative.iter().chain(&definitions).copied().collect()
}

fn category_finding(
    catalog: &Catalog,
    item: &ChecklistItem,
    category: CuadCategory,
    found: &Evidence,
    value_at: Option<usize>,
    index: &ContractIndex,
    unreadable: &[u32],
) -> ItemFinding {
    let topic = catalog.topic(category);
    let candidates = quote_candidates(catalog, item, category, found, index);
    if let Some((best, best_score)) = best_sentence(catalog, item, category, &candidates, index) {
        let n = candidates.len();
        // Every supporting sentence sits in a section about something else (a "sole remedy" in the warranty
        // section, a post-termination duty in the confidentiality section) and none says what the item asks: weak
        // evidence, left for a person with where to look rather than quoted as the clause.
        if best_score < WEAK_EVIDENCE_SCORE {
            let sentence = &index.sentences()[best];
            let heading = index.headings_of(best);
            return left_for_a_person(
                item,
                format!(
                    "only sentences in sections about other topics match the {category} signals (first on page {}, under \"{heading}\"); check whether they make such a clause",
                    index.page_number(sentence)
                ),
            );
        }
        if HOME_BOUND.contains(&category) && best_score < OUTSIDE_HOME_SCORE {
            let sentence = &index.sentences()[best];
            let heading = index.headings_of(best);
            let under = if heading.is_empty() { String::new() } else { format!(", under \"{heading}\"") };
            return left_for_a_person(
                item,
                format!(
                    "the {category} signals match only a passing mention outside the sections where such clauses live (page {}{under}); check whether it is such a clause",
                    index.page_number(sentence)
                ),
            );
        }
        // The sentence the field's value is read from states the clause (the term's end, the governing law): quoted
        // when it is operative text, unless the sentence the signals favour states it too.
        let chosen = quote_sentence(catalog, item, category, &candidates, index).unwrap_or(best);
        let quoted = match value_at {
            Some(v)
                if index.place(v).is_operative()
                    && !states_the_value(category, index.sentence_text(&index.sentences()[chosen])) =>
            {
                v
            }
            _ => chosen,
        };
        return finding(
            item,
            ItemStatus::Present,
            (BASE_CONFIDENCE + 0.05 * (n.min(4) - 1) as f32).min(RULES_CONFIDENCE_CAP),
            Some(clause_quote(index, quoted)),
            format!("{n} sentence(s) matched the {category} clause signals"),
        );
    }
    // A section whose heading names the clause: quote its first sentence of substance.
    if let Some(topic) = topic
        && let Some(first) = named_section_body(topic, index)
    {
        let heading = index.section_of(first).and_then(|s| s.heading.clone()).unwrap_or_default();
        return finding(
            item,
            ItemStatus::Present,
            HEADING_CONFIDENCE,
            Some(quote_of(index, first)),
            format!(
                "the section headed \"{heading}\" holds the {category} clause; no sentence matched its signals, so check its wording"
            ),
        );
    }
    // Only the definitions, the recitals, the cover or a signature block speak of it: not a clause, but worth a look.
    if let Some(&i) = found.elsewhere.first() {
        let page = index.page_number(&index.sentences()[i]);
        return left_for_a_person(
            item,
            format!(
                "only {} speaks of it (page {page}); no operative clause matched the {category} signals",
                index.place(i).zone.describe()
            ),
        );
    }
    // Absent only when the whole text was read and nothing names the topic.
    if !unreadable.is_empty() {
        let pages = unreadable.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ");
        return left_for_a_person(
            item,
            format!("no clause matched, but page(s) {pages} could not be read reliably, so it may be there"),
        );
    }
    if let Some(topic) = topic
        && let Some(i) = first_mention(topic, index)
    {
        let page = index.page_number(&index.sentences()[i]);
        return left_for_a_person(
            item,
            format!(
                "no sentence matched the {category} clause signals, but the contract speaks of its topic (first on page {page}); check whether it holds such a clause"
            ),
        );
    }
    finding(
        item,
        ItemStatus::Absent,
        ABSENT_CONFIDENCE,
        None,
        format!("no sentence matched the {category} clause signals and the contract never mentions its topic"),
    )
}

/// The rules' finding for an item of a category the learned classifier knows, combined with the classifier's scores:
///
/// - presence is decided as the training chose for the category ([`super::learned::Combine`]: the rules, the classifier, either or
///   both; the classifier says present when its best sentence reaches the category's threshold);
/// - the quote of a clause only the classifier found is its best sentence with the rest of its numbered clause on the
///   page, as the rules quote; of a clause the rules found, the rules' quote, or the classifier's when it reaches the
///   threshold and the training chose it for the category ([`QuoteFrom`]: whichever landed on more labelled spans). The classifier only reads operative sentences
///   ([`super::learned::classifier_sentences`]), and every quote still goes through the evidence checks and
///   verification on its page after this;
/// - a clause the rules found but the classifier does not, where the classifier decides, is left for a person with
///   where the rules looked;
/// - confidence stays under [`RULES_CONFIDENCE_CAP`].
pub fn learned_finding(
    item: &ChecklistItem,
    category: CuadCategory,
    rules: ItemFinding,
    scores: &SentenceScores,
    index: &ContractIndex,
) -> ItemFinding {
    let Some(model) = scores.category(category) else { return rules };
    let rules_present = rules.status == ItemStatus::Present;
    let best = scores.best(category).filter(|&(_, p)| p >= model.threshold);
    let present = model.combine.present(rules_present, best.is_some());
    match (present, best) {
        (true, Some((sentence, p))) if rules_present && model.quote == QuoteFrom::Classifier => ItemFinding {
            confidence: (rules.confidence + 0.05).min(RULES_CONFIDENCE_CAP),
            quote: Some(clause_quote(index, sentence)),
            reason: Some(format!(
                "{}; the learned classifier chose the quote (probability {p:.2})",
                rules.reason.as_deref().unwrap_or("the rules found it")
            )),
            ..rules
        },
        (true, _) if rules_present => {
            let agrees = best.is_some();
            ItemFinding {
                confidence: if agrees { (rules.confidence + 0.05).min(RULES_CONFIDENCE_CAP) } else { rules.confidence },
                reason: rules.reason.map(|r| if agrees { format!("{r}; the learned classifier agrees") } else { r }),
                ..rules
            }
        }
        (true, Some((sentence, p))) => finding(
            item,
            ItemStatus::Present,
            LEARNED_CONFIDENCE,
            Some(clause_quote(index, sentence)),
            format!(
                "the learned classifier found the {category} clause (probability {p:.2}); the rules' signals did not \
                 match it, so check its wording"
            ),
        ),
        (true, None) => rules,
        (false, _) if rules_present => {
            let page = rules.quote.as_ref().map_or(0, |q| q.page);
            left_for_a_person(
                item,
                format!(
                    "the {category} signals matched on page {page}, but the learned classifier scores no sentence as \
                     such a clause; check whether it is one"
                ),
            )
        }
        (false, _) => rules,
    }
}

/// The first sentence of substance that mentions the topic in the body of a section whose heading names the clause.
fn named_section_body(topic: &CompiledTopic, index: &ContractIndex) -> Option<usize> {
    (0..index.sentences().len()).find(|&i| {
        let text = index.sentence_text(&index.sentences()[i]);
        index.place(i).is_operative()
            && index.section_of(i).and_then(|s| s.heading.as_deref()).is_some_and(|h| topic.names_clause(h))
            && text.split_whitespace().count() >= MIN_CLAUSE_WORDS
            && topic.mentioned_in(text)
    })
}

/// The first operative sentence that mentions the topic.
fn first_mention(topic: &CompiledTopic, index: &ContractIndex) -> Option<usize> {
    (0..index.sentences().len()).find(|&i| {
        index.place(i).is_quotable()
            && matches!(index.place(i).zone, Zone::Operative | Zone::Exhibit | Zone::Definitions)
            && topic.mentioned_in(index.sentence_text(&index.sentences()[i]))
    })
}

/// Pages whose text cannot show that something is absent: recognised text below the readable confidence, or a page
/// that yielded (almost) no text at all among pages that did.
fn unreadable_pages(index: &ContractIndex) -> Vec<u32> {
    index
        .pages()
        .iter()
        .filter(|p| {
            let letters = p.text.chars().filter(|c| c.is_alphanumeric()).count();
            let weak_ocr = p.source == PageSource::Ocr
                && matches!(p.confidence, Confidence::Measured(v) | Confidence::Estimated(v) if v < READABLE_OCR);
            weak_ocr || (p.source == PageSource::Ocr && letters < 20)
        })
        .map(|p| p.number)
        .collect()
}

fn own_signals_finding(catalog: &Catalog, item: &ChecklistItem, index: &ContractIndex) -> ItemFinding {
    let absent = |reason: &str| finding(item, ItemStatus::Absent, ABSENT_CONFIDENCE, None, reason.to_owned());
    let Some(signals) = catalog.item_signals(&item.id) else { return absent("the item has no signals") };
    let about_definition = crate::evidence::asks_about_a_definition(item);
    let allowed = |p: Place| {
        p.is_operative() || (about_definition && p.is_quotable() && (p.definition || p.zone == Zone::Definitions))
    };
    for (status, patterns) in [(ItemStatus::Present, &signals.present), (ItemStatus::Partial, &signals.partial)] {
        let matched = matching_sentences(patterns, index);
        if let Some(&s) = matched.iter().find(|&&s| allowed(index.place(s))) {
            return finding(
                item,
                status,
                BASE_CONFIDENCE,
                Some(quote_of(index, s)),
                format!("the item's {} signals matched", status.as_str()),
            );
        }
        if let Some(&s) = matched.iter().find(|&&s| index.place(s).is_quotable()) {
            let page = index.page_number(&index.sentences()[s]);
            return left_for_a_person(
                item,
                format!("only {} matched the item's signals (page {page})", index.place(s).zone.describe()),
            );
        }
    }
    absent("no signal of the item matched")
}
