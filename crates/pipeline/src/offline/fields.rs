//! The contract record's fields found by rules: the parties named in the preamble, the agreement, effective and
//! expiration dates, renewal, and the governing law normalised to the jurisdiction's name. Each value carries the
//! sentence it came from as its quote (cut from the page's own text) and a low confidence.

use super::{ContractIndex, Sentence};
use crate::values;
use pactwise_domain::{Extracted, Extractions, Quote, Value};
use regex::{Regex, RegexBuilder};
use std::sync::LazyLock;

const CONFIDENCE: f32 = 0.3;

fn ci(pattern: &str) -> Regex {
    RegexBuilder::new(pattern).case_insensitive(true).build().expect("field patterns are valid")
}

const MONTHS: &str = "january|february|march|april|may|june|july|august|september|october|november|december|jan\\.?|feb\\.?|mar\\.?|apr\\.?|jun\\.?|jul\\.?|aug\\.?|sept?\\.?|oct\\.?|nov\\.?|dec\\.?";

static DATE: LazyLock<Regex> = LazyLock::new(|| {
    ci(&format!(
        r"\b(({MONTHS})\s+\d{{1,2}}(st|nd|rd|th)?\s*,?\s+\d{{4}}|\d{{1,2}}(st|nd|rd|th)?\s+(day\s+of\s+)?({MONTHS}),?\s+\d{{4}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}})"
    ))
});
static GOVERNING: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"(governed|construed|interpreted|controlled|governing\s+law)[^.;]{0,200}\blaws?\b|\blaws?\s+of\s+[^.;]{0,80}(shall\s+)?(govern|appl(y|ies))|(governed|construed|interpreted)\s+(\w+\s+){0,6}(english|swiss|german|french|prc|chinese|israeli|dutch|japanese|[a-z]+\s+state)\s+laws?",
    )
});
/// Weaker wording, tried only when no sentence has the strong one: "made under ... the laws of", "in accordance with".
static GOVERNING_WEAK: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"(enforced|subject\s+to|made\s+under|in\s+accordance\s+with|requires?\s+application\s+of)[^.;]{0,120}\blaws?\b")
});
static ORGANISED_UNDER: LazyLock<Regex> =
    LazyLock::new(|| ci(r"(organi[sz]ed|incorporated|existing|formed|registered)\s+(and\s+existing\s+)?under"));
static PREAMBLE_START: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(by\s+and\s+between|by\s+and\s+among|between|among|entered\s+into\s+by|made\s+by)\b"));
static DEFINED_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\((?:[^()"“”]{0,60}?)["“]([^"”]{1,60})["”][^()]{0,80}\)"#).expect("valid"));
static NAME_CUT: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r",?\s+(an?\s+([\w.-]+\s+){0,4}(corporation|company|limited|partnership|llc|entity|organi[sz]ation|bank|society|association|trust|institution|university|individual|resident|citizen|person|national)|organi[sz]ed|incorporated\s+(under|in)|having\s+(its|a)|with\s+(its|a)\s+(principal|registered)|whose|located|residing|of\s+\d|\(|\bat\s+\d)",
    )
});
static PREAMBLE_END: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\n\s*\n\s*(w\s*h\s*e\s*r\s*e\s*a\s*s|recitals|background|now,?\s+therefore|witnesseth|1\.)|\bwhereas\b|\bnow,?\s+therefore\b|\bwitnesseth\b|\brecitals\b",
    )
});
static SEPARATOR: LazyLock<Regex> = LazyLock::new(|| ci(r"(\bbetween\b|\bamong\b|\band\b|;|\)\s*,)"));
static EXPIRY: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"(initial\s+term|term\s+of\s+this\s+agreement|shall\s+(expire|terminate)\s+on|continue\s+in\s+(full\s+)?(force|effect)\s+(until|for))",
    )
});
static PERIOD: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(\w+(-\w+)?\s+)?\(?\d+\)?\s+(calendar\s+)?(years?|months?)\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)\s+(years?|months?)\b|perpetual\w*|indefinite\w*",
    )
});
static RENEWAL: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"(automatically\s+(be\s+)?(renew|extend)|renew\w*\s+(automatically|for\s+(an?\s+)?(additional|successive|further|consecutive))|successive\s+(\w+\s+){0,2}(\(\d+\)\s+)?(year|month|renewal)\w*\s+(terms?|periods?)|renewal\s+terms?)",
    )
});

/// Jurisdictions as CUAD and lawyers name them, longest first where one name contains another.
const JURISDICTIONS: &[(&str, &str)] = &[
    ("district of columbia", "District of Columbia"),
    ("new hampshire", "New Hampshire"),
    ("new jersey", "New Jersey"),
    ("new mexico", "New Mexico"),
    ("new york", "New York"),
    ("north carolina", "North Carolina"),
    ("north dakota", "North Dakota"),
    ("south carolina", "South Carolina"),
    ("south dakota", "South Dakota"),
    ("west virginia", "West Virginia"),
    ("rhode island", "Rhode Island"),
    ("alabama", "Alabama"),
    ("alaska", "Alaska"),
    ("arizona", "Arizona"),
    ("arkansas", "Arkansas"),
    ("california", "California"),
    ("colorado", "Colorado"),
    ("connecticut", "Connecticut"),
    ("delaware", "Delaware"),
    ("florida", "Florida"),
    ("georgia", "Georgia"),
    ("hawaii", "Hawaii"),
    ("idaho", "Idaho"),
    ("illinois", "Illinois"),
    ("indiana", "Indiana"),
    ("iowa", "Iowa"),
    ("kansas", "Kansas"),
    ("kentucky", "Kentucky"),
    ("louisiana", "Louisiana"),
    ("maine", "Maine"),
    ("maryland", "Maryland"),
    ("massachusetts", "Massachusetts"),
    ("michigan", "Michigan"),
    ("minnesota", "Minnesota"),
    ("mississippi", "Mississippi"),
    ("missouri", "Missouri"),
    ("montana", "Montana"),
    ("nebraska", "Nebraska"),
    ("nevada", "Nevada"),
    ("ohio", "Ohio"),
    ("oklahoma", "Oklahoma"),
    ("oregon", "Oregon"),
    ("pennsylvania", "Pennsylvania"),
    ("tennessee", "Tennessee"),
    ("texas", "Texas"),
    ("utah", "Utah"),
    ("vermont", "Vermont"),
    ("virginia", "Virginia"),
    ("washington", "Washington"),
    ("wisconsin", "Wisconsin"),
    ("wyoming", "Wyoming"),
    ("british columbia", "British Columbia, Canada"),
    ("nova scotia", "Nova Scotia, Canada"),
    ("new brunswick", "New Brunswick, Canada"),
    ("ontario", "Ontario, Canada"),
    ("quebec", "Quebec, Canada"),
    ("alberta", "Alberta, Canada"),
    ("manitoba", "Manitoba, Canada"),
    ("saskatchewan", "Saskatchewan, Canada"),
    ("new south wales", "New South Wales, Australia"),
    ("victoria", "Victoria, Australia"),
    ("queensland", "Queensland, Australia"),
    ("england and wales", "England and Wales"),
    ("england", "England"),
    ("scotland", "Scotland"),
    ("northern ireland", "Northern Ireland"),
    ("ireland", "Ireland"),
    ("people's republic of china", "People's Republic of China"),
    ("peoples republic of china", "People's Republic of China"),
    ("prc", "People's Republic of China"),
    ("hong kong", "Hong Kong"),
    ("taiwan", "Taiwan"),
    ("singapore", "Singapore"),
    ("japan", "Japan"),
    ("korea", "Korea"),
    ("india", "India"),
    ("israel", "Israel"),
    ("germany", "Germany"),
    ("france", "France"),
    ("switzerland", "Switzerland"),
    ("netherlands", "Netherlands"),
    ("belgium", "Belgium"),
    ("spain", "Spain"),
    ("italy", "Italy"),
    ("sweden", "Sweden"),
    ("denmark", "Denmark"),
    ("norway", "Norway"),
    ("finland", "Finland"),
    ("austria", "Austria"),
    ("luxembourg", "Luxembourg"),
    ("papua new guinea", "Papua New Guinea"),
    ("south africa", "Republic of South Africa"),
    ("mexico", "Mexico"),
    ("brazil", "Brazil"),
    ("australia", "Australia"),
    ("canada", "Canada"),
    ("china", "People's Republic of China"),
    ("united kingdom", "United Kingdom"),
    ("united states", "United States"),
    ("english", "England"),
    ("swiss", "Switzerland"),
    ("german", "Germany"),
    ("french", "France"),
    ("italian", "Italy"),
    ("chinese", "People's Republic of China"),
    ("israeli", "Israel"),
    ("dutch", "Netherlands"),
    ("japanese", "Japan"),
];

/// Words that are defined terms of the contract rather than names of parties.
const NOT_PARTY_NAMES: &[&str] = &[
    "agreement",
    "effective date",
    "party",
    "parties",
    "contract",
    "amendment",
    "this agreement",
    "the agreement",
    "execution date",
    "commencement date",
    "term",
    "territory",
    "products",
    "services",
];

/// The fields rules can find. Fields not found stay empty.
pub fn extract_fields(index: &ContractIndex) -> Extractions {
    let _span = tracing::debug_span!("offline.extract_fields").entered();
    Extractions {
        parties: parties(index),
        agreement_date: agreement_date(index),
        effective_date: effective_date(index),
        expiration_date: expiration(index),
        renewal: renewal(index),
        governing_law: governing_law(index),
        ..Extractions::default()
    }
}

fn extracted(index: &ContractIndex, value: String, normalized: Option<Value>, sentence: &Sentence) -> Extracted {
    Extracted {
        value,
        normalized,
        quote: Some(Quote { text: index.sentence_text(sentence).to_owned(), page: index.page_number(sentence) }),
        confidence: CONFIDENCE,
    }
}

/// The governing law: the first choice-of-law sentence, and in it the first jurisdiction named after the governing
/// words (or anywhere in the sentence: "made in the State of California and governed by the laws thereof"). Weaker
/// wording counts only when no sentence has the usual one, and never a sentence about where a party is organised.
pub fn governing_law(index: &ContractIndex) -> Option<Extracted> {
    for pattern in [&*GOVERNING, &*GOVERNING_WEAK] {
        for sentence in index.sentences() {
            let text = index.sentence_text(sentence);
            let Some(m) = pattern.find(text) else { continue };
            if ORGANISED_UNDER.is_match(text) && !GOVERNING.is_match(text) {
                continue;
            }
            if let Some(name) = jurisdiction_in(&text[m.start()..]).or_else(|| jurisdiction_in(text)) {
                let normalized = Some(Value::Jurisdiction { name: name.to_owned() });
                return Some(extracted(index, name.to_owned(), normalized, sentence));
            }
        }
    }
    None
}

/// The jurisdiction named first in `text` (the longest name where two start at the same place).
pub fn jurisdiction_in(text: &str) -> Option<&'static str> {
    let lower = normalise_apostrophes(&text.to_lowercase()).split_whitespace().collect::<Vec<_>>().join(" ");
    let mut best: Option<(usize, usize, &'static str)> = None;
    for (key, name) in JURISDICTIONS {
        let mut from = 0;
        while let Some(at) = lower[from..].find(key).map(|i| from + i) {
            let before_ok = lower[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            let after_ok = lower[at + key.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
            if before_ok && after_ok {
                if best.is_none_or(|(s, l, _)| at < s || (at == s && key.len() > l)) {
                    best = Some((at, key.len(), name));
                }
                break;
            }
            from = at + key.len();
        }
    }
    best.map(|(_, _, name)| name)
}

fn normalise_apostrophes(text: &str) -> String {
    text.replace(['\u{2019}', '\u{2018}'], "'")
}

/// The parties named in the preamble: each defined name in brackets ("Acme"), with the name written before it.
pub fn parties(index: &ContractIndex) -> Vec<Extracted> {
    let head = index.head();
    let Some(start) = PREAMBLE_START.find(head) else { return Vec::new() };
    let window_end = floor_boundary(head, (start.start() + 1_000).min(head.len()));
    let mut preamble = &head[start.start()..window_end];
    if let Some(end) = PREAMBLE_END.find(preamble) {
        preamble = &preamble[..end.start()];
    }
    let sentence = index.sentences().iter().find(|s| {
        let text = index.sentence_text(s);
        text.len() > 20 && preamble.contains(text.get(..text.len().min(60)).unwrap_or(text))
    });
    let mut names: Vec<(String, Value)> = Vec::new();
    let mut last_end = 0;
    for caps in DEFINED_NAME.captures_iter(preamble) {
        let whole = caps.get(0).expect("group 0");
        let defined = caps[1].trim().to_owned();
        let before = &preamble[last_end..whole.start()];
        last_end = whole.end();
        if NOT_PARTY_NAMES.contains(&defined.to_lowercase().as_str()) {
            continue;
        }
        let segment = SEPARATOR.find_iter(before).last().map_or(before, |m| &before[m.end()..]);
        let cut = NAME_CUT.find(segment).map_or(segment, |m| &segment[..m.start()]);
        let name = cut.trim().trim_matches(|c: char| c == ',' || c == ':' || c.is_whitespace()).to_owned();
        let looks_like_a_name = name.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && name.split_whitespace().count() <= 10
            && name.chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit());
        let party = if !looks_like_a_name || name.eq_ignore_ascii_case(&defined) {
            let name = if looks_like_a_name { name } else { defined };
            Value::Party { name, defined_as: None, role: None }
        } else {
            Value::Party { name, defined_as: Some(defined), role: None }
        };
        let value = party.display();
        if !names.iter().any(|(n, _)| n.eq_ignore_ascii_case(&value)) {
            names.push((value, party));
        }
        if names.len() == 6 {
            break;
        }
    }
    names
        .into_iter()
        .map(|(value, party)| match sentence {
            Some(s) => extracted(index, value, Some(party), s),
            None => Extracted { value, normalized: Some(party), quote: None, confidence: CONFIDENCE },
        })
        .collect()
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The date the agreement is dated or made: the first date in the head's opening sentences.
fn agreement_date(index: &ContractIndex) -> Option<Extracted> {
    let dated = ci(r"\b(dated|as\s+of|made|entered\s+into|executed|day\s+of|effective)\b");
    first_dated_sentence(index, 4_000, |text| dated.is_match(text))
}

/// The effective date: a sentence that speaks of effectiveness and holds a date.
fn effective_date(index: &ContractIndex) -> Option<Extracted> {
    let effective = ci(r"\beffective\b|\bcommencement\s+date\b");
    first_dated_sentence(index, 20_000, |text| effective.is_match(text))
}

fn first_dated_sentence(index: &ContractIndex, within: usize, keep: impl Fn(&str) -> bool) -> Option<Extracted> {
    let mut seen = 0usize;
    for sentence in index.sentences() {
        let text = index.sentence_text(sentence);
        seen += text.len();
        if seen > within {
            break;
        }
        if keep(text)
            && let Some(date) = DATE.find(text)
        {
            let normalized = values::dates(date.as_str())
                .first()
                .map(|(_, d)| Value::Date { iso: d.format("%Y-%m-%d").to_string() });
            let value = normalized.as_ref().map_or_else(|| date.as_str().to_owned(), Value::display);
            return Some(extracted(index, value, normalized, sentence));
        }
    }
    None
}

/// When the initial term ends: a date or a period named in the term clause.
fn expiration(index: &ContractIndex) -> Option<Extracted> {
    for sentence in index.sentences() {
        let text = index.sentence_text(sentence);
        if !EXPIRY.is_match(text) {
            continue;
        }
        if let Some(m) = DATE.find(text).or_else(|| PERIOD.find(text)) {
            let normalized = values::value_for(pactwise_domain::CuadCategory::ExpirationDate, m.as_str(), |_| None);
            let value = normalized
                .as_ref()
                .map_or_else(|| m.as_str().split_whitespace().collect::<Vec<_>>().join(" "), Value::display);
            return Some(extracted(index, value, normalized, sentence));
        }
    }
    None
}

/// The renewal clause: its period when it names one, else that the term renews.
fn renewal(index: &ContractIndex) -> Option<Extracted> {
    for sentence in index.sentences() {
        let text = index.sentence_text(sentence);
        if let Some(m) = RENEWAL.find(text) {
            let after = &text[m.start()..];
            let normalized = PERIOD
                .find(after)
                .and_then(|p| values::value_for(pactwise_domain::CuadCategory::RenewalTerm, p.as_str(), |_| None));
            let value =
                normalized.as_ref().map_or_else(|| "renews".to_owned(), |v| format!("renews for {}", v.display()));
            return Some(extracted(index, value, normalized, sentence));
        }
    }
    None
}
