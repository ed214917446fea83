//! The contract record's fields found by rules: the parties named in the preamble, the agreement, effective and
//! expiration dates, renewal, and the governing law normalised to the jurisdiction's name (`jurisdictions`). Each
//! value carries the sentence it came from as its quote (cut from the page's own text) and a low confidence.

use super::jurisdictions::jurisdiction_in;
use super::{ContractIndex, Sentence};
use crate::values;
use pactwise_domain::{Extracted, Extractions, Quote, Value};
use pactwise_structure::Zone;
use regex::{Regex, RegexBuilder};
use std::sync::LazyLock;

const CONFIDENCE: f32 = 0.3;

fn ci(pattern: &str) -> Regex {
    RegexBuilder::new(pattern).case_insensitive(true).build().expect("field patterns are valid")
}

static GOVERNING: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"(governed|construed|interpreted|controlled|governing\s+law)[^.;]{0,200}\blaws?\b|\blaws?\s+of\s+[^.;]{0,80}(shall\s+)?(govern|appl(y|ies))",
    )
});
/// Weaker wording, tried only when no sentence has the strong one: "made under ... the laws of", "in accordance with".
static GOVERNING_WEAK: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"(enforced|subject\s+to|made\s+under|in\s+accordance\s+with|requires?\s+application\s+of)[^.;]{0,120}\blaws?\b")
});
static THIS_AGREEMENT: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(this|the)\s+(\w+\s+){0,3}(agreement|contract)\b|\bhere(under|in|of|to)\b"));
static ORGANISED_UNDER: LazyLock<Regex> =
    LazyLock::new(|| ci(r"(organi[sz]ed|incorporated|existing|formed|registered)\s+(and\s+existing\s+)?under"));
static PREAMBLE_START: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(by\s+and\s+between|by\s+and\s+among|between|among|entered\s+into\s+by|made\s+by)\b"));
static DEFINED_NAME: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r#"\((?:[^()"“”]{0,200}?)["“]([^"”]{1,60})["”][^()]{0,160}\)|\bhereinafter\s+(?:(?:referred\s+to|called|known)\s+)?(?:as\s+)?(?:the\s+)?["“]([^"”]{1,60})["”]"#,
    )
});
static NAME_CUT: LazyLock<Regex> = LazyLock::new(|| {
    ci(&format!(
        r",?\s+({DESCRIBED}|organi[sz]ed|incorporated\s+(under|in)|having\s+(its|a)|with\s+(its|a)\s+(principal|registered)|whose|located|residing|of\s+\d|\d{{3,}}\b|\(|\bat\s+\d)"
    ))
});
/// What a party is, right after its name: "a Nevada corporation", "an individual".
const DESCRIBED: &str = r"an?\s+([\w.-]+\s+){0,4}(corporation|company|limited|partnership|llc|entity|organi[sz]ation|bank|society|association|trust|institution|university|individual|resident|citizen|person|national)";
/// A name followed by what says it is an organisation: ", a Nevada Corporation".
static DESCRIBED_AS_ORGANISATION: LazyLock<Regex> = LazyLock::new(|| ci(&format!(r"^,?\s+{DESCRIBED}")));
static PREAMBLE_END: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\n\s*\n\s*(w\s*h\s*e\s*r\s*e\s*a\s*s|recitals|background|now,?\s+therefore|witnesseth|1\.)|\bwhereas\b|\bnow,?\s+therefore\b|\bwitnesseth\b|\brecitals\b",
    )
});
/// What opens the text before a party's name: "between", "by and among", "and", list numbers, punctuation.
static PARTY_LEAD: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"^[\s,;:.)]*(((by\s+and\s+)?(between|among)|and|&)\b)?[\s,;:]*(\(?(\d{1,2}|[a-h]|i{1,3}|iv|v)\)\s*)?(the\s+undersigned,?\s+)?",
    )
});
static SEPARATOR: LazyLock<Regex> = LazyLock::new(|| ci(r"(\bbetween\b|\bamong\b|\band\b|;|:|\)\s*,|\n\s*\n)"));
/// The agreement's own opening clause before its first party: "This Agreement is entered into on 1 August 2026 by",
/// "… is made as of … between". The first party's name follows it.
static OPENING_BY: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"\b(made|entered\s+into|executed|dated)\b[^()]{0,160}?\b(by\s+and\s+between|between|among|by)\b[\s:,]*")
});
/// Words of a sentence, not of a name: "This Agreement is entered into on August 1".
static SENTENCE: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(is|are)\s+(made|entered|dated|executed)\b|\bentered\s+into\b"));
static RENEWAL: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"(\btacit(ly)?\s+(be\s+)?(renew\w*|extend\w*|extension)|\b(renew|extend)\w*\s+tacitly\b|automatically\s+(be\s+)?(renew|extend|continue)|\b(continue|extend)s?\s+automatically\b|successive\s+(annual|yearly|monthly)\s+(terms?|periods?)|\bautomatic\s+([\w-]+\s+){0,3}(renewal|extension)s?\b|renew\w*\s+(automatically|for\s+(an?\s+)?(additional|successive|further|consecutive))|successive\s+(\w+\s+){0,2}(\(\d+\)\s+)?(year|month|renewal)\w*\s+(terms?|periods?)|renewal\s+terms?)",
    )
});

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
    let agreement_date = agreement_date(index);
    let effective_date = effective_date(index, agreement_date.as_ref());
    let expiration_date = expiration(index, effective_date.as_ref(), agreement_date.as_ref());
    let (renewal_at, renewal) = renewal(index);
    let renewal_notice = renewal_notice(index, renewal_at);
    Extractions {
        parties: parties(index),
        agreement_date,
        effective_date,
        expiration_date,
        renewal,
        renewal_notice,
        governing_law: governing_law(index),
        ..Extractions::default()
    }
}

/// The sentence a field's value is read from (an index into [`ContractIndex::sentences`]), for the checklist items of
/// the same clause: the expiry's term sentence for the Expiration Date clause, the choice-of-law sentence for the
/// Governing Law clause. The sentence that gives the value is the one that states the clause, so the item quotes it
/// rather than another sentence its signals also match ("for a period of seven years" in a records clause), unless
/// that sentence already states the value ([`states_the_value`]). None when the rules read no value.
pub(crate) fn value_sentence(index: &ContractIndex, category: pactwise_domain::CuadCategory) -> Option<usize> {
    use pactwise_domain::CuadCategory;
    let read = match category {
        CuadCategory::ExpirationDate => {
            let agreement = agreement_date(index);
            let effective = effective_date(index, agreement.as_ref());
            expiration(index, effective.as_ref(), agreement.as_ref())
        }
        CuadCategory::GoverningLaw => governing_law(index),
        _ => None,
    }?;
    let quote = read.quote?;
    let p = index.pages().iter().position(|p| p.number == quote.page)?;
    let at = index.pages()[p].text.find(quote.text.as_str())?;
    index.sentence_at(p, at)
}

/// Whether a sentence the clause signals chose already states what [`value_sentence`] would give: for the Expiration
/// Date clause, a sentence whose subject is the agreement or its term ("This Agreement shall commence on ... and
/// continue until ..."), which is the term clause even when the value is read from another sentence.
pub(crate) fn states_the_value(category: pactwise_domain::CuadCategory, text: &str) -> bool {
    category == pactwise_domain::CuadCategory::ExpirationDate && TERM_SUBJECT.is_match(text)
}

/// Whether a sentence of the Expiration Date clause opens with the agreement or its term as its subject ("This
/// Agreement shall commence on ...", "Unless earlier terminated, the Term shall ..."): the term clause itself, which
/// the quote prefers to a sentence that measures some other period.
pub(crate) fn opens_with_the_term(category: pactwise_domain::CuadCategory, text: &str) -> bool {
    category == pactwise_domain::CuadCategory::ExpirationDate && OPENS_WITH_TERM_SUBJECT.is_match(text)
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
    // A sentence that speaks of this agreement first ("This Agreement shall be governed by ..."), then any (a legal
    // opinion "limited to matters governed by the laws of Tennessee" is not the choice of law).
    let passes = [(&*GOVERNING, true), (&*GOVERNING, false), (&*GOVERNING_WEAK, true), (&*GOVERNING_WEAK, false)];
    for (pattern, about_this_agreement) in passes {
        for sentence in index.sentences() {
            let text = index.sentence_text(sentence);
            if about_this_agreement && !THIS_AGREEMENT.is_match(text) {
                continue;
            }
            let Some(m) = pattern.find(text) else { continue };
            if ORGANISED_UNDER.is_match(text) && !GOVERNING.is_match(text) {
                continue;
            }
            if let Some(name) = jurisdiction_in(&text[m.start()..]).or_else(|| jurisdiction_in(text)) {
                let normalized = Some(Value::Jurisdiction { name: name.to_string() });
                return Some(extracted(index, name.to_string(), normalized, sentence));
            }
        }
    }
    None
}

/// The parties named in the preamble: each defined name in brackets ("Acme") or after "hereinafter referred to as",
/// with the name written before it; a last party the preamble names without defining a name for it. A cover that
/// names the parties ("between X and Y") may come before the preamble that defines them: the first opening that
/// names two parties wins, else the one that names the most.
pub fn parties(index: &ContractIndex) -> Vec<Extracted> {
    let head = index.head();
    // The opening paragraphs from "between" or "among"; where the parties come first ("X ("A") and Y ("B") agree"),
    // the paragraph the structure calls the preamble, else the head.
    let mut windows: Vec<&str> = PREAMBLE_START.find_iter(head).take(4).map(|m| &head[m.start()..]).collect();
    windows.extend(first_run(index, Zone::Preamble));
    if windows.is_empty() {
        windows.push(head);
    }
    let mut best: Option<(&str, Vec<(String, Value)>)> = None;
    for window in windows {
        let mut preamble = &window[..floor_boundary(window, 1_000.min(window.len()))];
        if let Some(end) = PREAMBLE_END.find(preamble) {
            preamble = &preamble[..end.start()];
        }
        let names = parties_in(head, preamble);
        let enough = names.len() >= 2;
        if best.as_ref().is_none_or(|(_, b)| names.len() > b.len()) {
            best = Some((preamble, names));
        }
        if enough {
            break;
        }
    }
    let (preamble, names) = best.unwrap_or(("", Vec::new()));
    let sentence = index.sentences().iter().find(|s| {
        let text = index.sentence_text(s);
        !preamble.is_empty() && text.len() > 20 && preamble.contains(text.get(..text.len().min(60)).unwrap_or(text))
    });
    let mut out: Vec<Extracted> = names
        .into_iter()
        .map(|(value, party)| match sentence {
            Some(s) => extracted(index, value, Some(party), s),
            None => Extracted { value, normalized: Some(party), quote: None, confidence: CONFIDENCE },
        })
        .collect();
    // Organisations that sign and that the opening did not name (agreements among many parties, joint filings
    // that name their parties only where they sign), quoted with their signature line.
    for (name, quote) in signing_organisations(index) {
        let key = comparable_name(&name);
        let known = out.iter().any(|e| {
            let have = comparable_name(&e.value);
            have.contains(&key)
                || key.contains(&comparable_name(match &e.normalized {
                    Some(Value::Party { name, .. }) => name,
                    _ => &e.value,
                }))
        });
        if known || out.len() >= 64 {
            continue;
        }
        let party = Value::Party { name: name.clone(), defined_as: None, role: None };
        out.push(Extracted {
            value: party.display(),
            normalized: Some(party),
            quote: Some(quote),
            confidence: CONFIDENCE,
        });
    }
    out
}

/// A name compared without case, punctuation or spacing ("ACME, INC." is "acme inc").
fn comparable_name(name: &str) -> String {
    let lowered = name.to_lowercase();
    lowered.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

/// An organisation's name in capitals ending in its legal form, as signature blocks print it: "SCULPTOR CAPITAL LP",
/// "ACME WIDGETS, INC.".
static SIGNING_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b[A-Z][A-Z0-9&'./-]*(?:,?\s+[A-Z0-9&'./-]+){0,7}?,?\s+(?:INC|INCORPORATED|LLC|L\.L\.C|LP|L\.P|LLP|LTD|LIMITED|CORPORATION|CORP|COMPANY|TRUST|PLC|GMBH|AG|S\.A|N\.V|B\.V|S\.À\s?R\.L(?:\s+II)?)\b\.?",
    )
    .expect("valid")
});

/// A signatory's title or a signature label, after which a name in capitals starts.
static SIGNATORY_TITLE: LazyLock<Regex> = LazyLock::new(|| ci(&format!("^({SIGNATORY_WORDS})$")));
/// The words of [`SIGNATORY_TITLE`], which [`NOT_IN_NAME`] leaves out of a signing organisation's name too.
const SIGNATORY_WORDS: &str = "officer|president|director|secretary|manager|member|partner|treasurer|chairman|chair|\
signatory|counsel|representative|trustee|agent|title|name|date|dated|witness";
static IN_WITNESS: LazyLock<Regex> = LazyLock::new(|| ci(r"\bin\s+witness\s+(whereof|thereof)\b"));
/// The formula that names who signs: "For and on behalf of X", "Signed for and on behalf of X".
static ON_BEHALF_OF: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"\bfor\s+and\s+on\s+behalf\s+of\s*:?\s+([^\s:(][^:(]{1,80}?)(?:\s{2,}|\s+by\s*:|\s+name\s*:|\s*\(|$)")
});
/// Capital words that open a signature line without being a name.
static SIGNING_LEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^((ACKNOWLEDGED|ACCEPTED|AGREED|AND|TO|BY|OF|THIS|AGREEMENT|IN|WITNESS|WHEREOF|FOR|ON|BEHALF|CEO|CFO|COO|PRESIDENT|SECRETARY|DIRECTOR|DATED|SIGNED)[,:]?\s+)+",
    )
    .expect("valid")
});

/// The organisations named in capitals in the signature blocks, each with its line as the quote.
fn signing_organisations(index: &ContractIndex) -> Vec<(String, Quote)> {
    let structure = index.structure();
    let mut out: Vec<(String, Quote)> = Vec::new();
    // The signature blocks, and signature pages the structure did not recognise as such (the line that opens
    // them with "In witness whereof", and lines signing "for and on behalf of" a party after it).
    let mut witnessed = false;
    let skipped = |line: &pactwise_structure::Line| {
        matches!(
            line.zone,
            Zone::RunningHeader | Zone::RunningFooter | Zone::PageNumber | Zone::TableOfContents | Zone::Cover
        )
    };
    let lines: Vec<_> = structure.lines.iter().filter(|l| !skipped(l)).collect();
    for (n, line) in lines.iter().enumerate() {
        let text = structure.line_text(index.pages(), line);
        let opens_signatures = IN_WITNESS.is_match(text) || DATED_LINE.is_match(text);
        // After the signatures open, a line with signatures on it ("/s/", "By:", "Name:") is a signature line
        // wherever the structure placed it (joint filings sign page after page), and so is a line that holds only
        // an organisation's name in capitals right above one ("BLUE HERON HOLDINGS L.L.C." / "By: /s/ ...").
        let signs = witnessed && SIGNATURE_LINE.is_match(text);
        let names_the_next_signer = witnessed
            && lines.get(n + 1).is_some_and(|next| SIGNATURE_LINE.is_match(structure.line_text(index.pages(), next)))
            && SIGNING_NAME
                .find(text)
                .is_some_and(|m| text[..m.start()].trim().is_empty() && text[m.end()..].trim().is_empty());
        witnessed |= opens_signatures;
        let in_block = line.zone == Zone::SignatureBlock || opens_signatures || signs || names_the_next_signer;
        let signs_after_witness = witnessed && ON_BEHALF_OF.is_match(text);
        if !(in_block || signs_after_witness) {
            continue;
        }
        // "For and on behalf of Belgacom S.A.  By: ...": the name after the formula, in any case.
        for c in ON_BEHALF_OF.captures_iter(text) {
            let name = keep_abbreviation_stop(c[1].trim().trim_end_matches([',', ':', ';']).trim_end());
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            let key = comparable_name(&name);
            if looks_like_a_name(&name)
                && !name.starts_with("The Part")
                && !out.iter().any(|(n, _)| comparable_name(n) == key)
            {
                out.push((name, Quote { text: text.to_owned(), page: line.page }));
            }
        }
        for m in SIGNING_NAME.find_iter(text) {
            // "By: Clarus IV GP, L.P.": capitals that end a name written in small letters are not a name; after a
            // signatory's title ("Chief Financial Officer SCULPTOR LP") they are.
            let before = text[..m.start()].trim_end();
            let previous = before.rsplit(char::is_whitespace).next().unwrap_or("");
            let mixed_case = previous.chars().next().is_some_and(char::is_uppercase)
                && previous.chars().any(char::is_lowercase)
                && !previous.ends_with([',', ':', ';', ')'])
                && before.len() == m.start() - 1;
            if mixed_case && !SIGNATORY_TITLE.is_match(previous) {
                continue;
            }
            // "By: Rowan GP, LLC Its General Partner": an organisation that signs for a party in some capacity.
            if ITS_CAPACITY.is_match(&text[m.end()..]) {
                continue;
            }
            // "ACKNOWLEDGED AND AGREED TO ACME INC.", "CEO ACME TRUST": the words before the name are not part of it.
            let name = SIGNING_LEAD.replace(m.as_str().trim(), "").split_whitespace().collect::<Vec<_>>().join(" ");
            let key = comparable_name(&name);
            if key.split(' ').count() < 2 || out.iter().any(|(n, _)| comparable_name(n) == key) {
                continue;
            }
            out.push((name, Quote { text: text.to_owned(), page: line.page }));
        }
        // "Chief Compliance Officer Rowan Advisors, LP By:/s/ ...": an organisation written in small
        // letters that signs, its name read back from its legal form to the title, date or label before it.
        for c in SIGNS_AS.captures_iter(text) {
            let Some(form) = c.name("form") else { continue };
            let Some(name) = name_before(&text[..form.start()], form.as_str()) else { continue };
            let key = comparable_name(&name);
            if key.split(' ').count() < 2 || out.iter().any(|(n, _)| comparable_name(n) == key) {
                continue;
            }
            out.push((name, Quote { text: text.to_owned(), page: line.page }));
        }
    }
    out
}

/// The capacity in which an organisation signs for a party: "..., its general partner", "Its: Manager".
static ITS_CAPACITY: LazyLock<Regex> = LazyLock::new(|| ci(r"^\s*,?\s*its\b"));
/// A legal form, which ends the name before it: "ELM LABS, SA" before "Cedar Devices, Inc.".
static LEGAL_FORM_WORD: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"^(inc|incorporated|llc|l\.l\.c|lp|l\.p|llp|ltd|limited|corp|corporation|plc|gmbh|ag|sa|s\.a|nv|n\.v|bv|b\.v)$")
});
/// A line that opens the signatures of a joint filing: "Dated: July 6, 2020".
static DATED_LINE: LazyLock<Regex> = LazyLock::new(|| ci(r"^\s*dated\s*:"));
/// Marks of a signature: "/s/", "By:", "Name:", "Title:".
static SIGNATURE_LINE: LazyLock<Regex> = LazyLock::new(|| ci(r"/s/|\b(by|name|title)\s*:"));
/// A legal form that ends a name, then the signature: ", LP By:", ", Ltd. /s/".
static SIGNS_AS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?P<form>(?:,\s*|\s+)(?:Inc|Incorporated|LLC|L\.L\.C|LP|L\.P|LLP|Ltd|Limited|Corporation|Corp|Company|Trust|PLC|GmbH|AG|S\.A|N\.V|B\.V)\b\.?)\s*(?:By\s*:|/s/)",
    )
    .expect("valid")
});
/// Words before a signing organisation's name that are not part of it: titles, labels, "Esq.".
static NOT_IN_NAME: LazyLock<Regex> =
    LazyLock::new(|| ci(&format!(r"^({SIGNATORY_WORDS}|esq\.?|by|its|the|and)$|:$|\d")));

/// The name that ends at `before`'s end, read back word by word while the words are capitalised (or join such
/// words: "Growth and Opportunity Fund"), up to a title, a label or a date; with the legal form `form` after it.
fn name_before(before: &str, form: &str) -> Option<String> {
    let words: Vec<&str> = before.split_whitespace().collect();
    let mut start = words.len();
    while start > 0 && words.len() - start < 8 {
        let word = words[start - 1];
        let capital =
            word.trim_start_matches('(').chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit());
        let joins = matches!(word, "and" | "of" | "&" | "de");
        let form = LEGAL_FORM_WORD.is_match(word.trim_matches(|c: char| c == ',' || c == '.' || c == ';'));
        if form || NOT_IN_NAME.is_match(word) && !(joins && start < words.len()) || !(capital || joins) {
            break;
        }
        start -= 1;
    }
    // A name starts with a capital, not with a joining word.
    while start < words.len() && matches!(words[start], "and" | "of" | "&" | "de") {
        start += 1;
    }
    if start == words.len() {
        return None;
    }
    let name = format!("{}{}", words[start..].join(" "), form);
    looks_like_a_name(&name).then_some(name)
}

fn looks_like_a_name(name: &str) -> bool {
    name.chars().filter(|c| c.is_alphabetic()).count() >= 2
        && name.split_whitespace().count() <= 10
        && name.chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
        && !NOT_PARTY_NAMES.contains(&name.to_lowercase().as_str())
        && !SENTENCE.is_match(name)
}

/// The parties one opening paragraph names.
fn parties_in(head: &str, preamble: &str) -> Vec<(String, Value)> {
    let mut names: Vec<(String, Value)> = Vec::new();
    let mut last_end = 0;
    for caps in DEFINED_NAME.captures_iter(preamble) {
        let whole = caps.get(0).expect("group 0");
        let defined = caps.get(1).or_else(|| caps.get(2)).map_or("", |m| m.as_str()).trim().to_owned();
        let before = &preamble[last_end..whole.start()];
        last_end = whole.end();
        if NOT_PARTY_NAMES.contains(&defined.to_lowercase().as_str()) {
            continue;
        }
        // The name opens the text since the previous party ("and Acme Inc., a Delaware corporation with its office
        // at ... (\"Acme\")"); failing that, it follows the last separator.
        let name_in = |segment: &str| {
            let cut = NAME_CUT.find(segment).map_or(segment, |m| &segment[..m.start()]);
            let name = cut.trim().trim_matches(|c: char| c == ',' || c == ':' || c == ';' || c.is_whitespace());
            name.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        let lead = match OPENING_BY.find_iter(before).last() {
            Some(m) => &before[m.end()..],
            None => PARTY_LEAD.find(before).map_or(before, |m| &before[m.end()..]),
        };
        let opening = name_in(lead);
        let segment = SEPARATOR.find_iter(before).last().map_or(before, |m| &before[m.end()..]);
        let name = if looks_like_a_name(&opening) { opening } else { name_in(segment) };
        let is_name = looks_like_a_name(&name);
        let party = if !is_name || name.eq_ignore_ascii_case(&defined) {
            let name = if is_name { name } else { defined };
            Value::Party { name, defined_as: None, role: None }
        } else {
            Value::Party { name, defined_as: Some(defined), role: None }
        };
        let value = party.display();
        if !names.iter().any(|(n, _)| n.eq_ignore_ascii_case(&value)) {
            names.push((value, party));
        }
        if names.len() == 12 {
            break;
        }
    }
    if names.is_empty() {
        return undefined_parties(head, preamble);
    }
    // "between Acme Inc. ("Acme"), and Beta Corp. 10 Main Street ...": a last party named without a defined name,
    // also after the previous party's description ("..., with offices in Ohio; and Beta Works, a Nevada corporation").
    if let Some(rest) = preamble.get(last_end..)
        && let Some(m) =
            LAST_AND.find(rest).or_else(|| LATER_AND.find(&rest[..floor_boundary(rest, 200.min(rest.len()))]))
    {
        let piece = &rest[m.end()..];
        let cut = [NAME_CUT.find(piece), UNDEFINED_CUT.find(piece)].into_iter().flatten().map(|m| m.start()).min();
        let name = keep_abbreviation_stop(
            piece[..cut.unwrap_or(piece.len())].trim().trim_matches(|c: char| c == ',' || c.is_whitespace()),
        );
        let described = cut.is_some_and(|at| DESCRIBED_AS_ORGANISATION.is_match(&piece[at..]));
        if looks_like_a_name(name) && (ORGANISATION.is_match(name) || described) {
            let party = Value::Party { name: name.to_owned(), defined_as: None, role: None };
            names.push((party.display(), party));
        }
    }
    names
}

/// The text after the last defined name that opens a further party: ", and".
static LAST_AND: LazyLock<Regex> = LazyLock::new(|| ci(r"^[\s,;)]*\band\b[\s,:]*"));
/// The same after the previous party's description: "; and".
static LATER_AND: LazyLock<Regex> = LazyLock::new(|| ci(r";\s*and\b[\s,:]*"));
/// A name that says it is an organisation ("Inc.", "Corporation", "LLC", "Ltd", "GmbH").
static ORGANISATION: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(inc|incorporated|corp|corporation|company|co|llc|l\.l\.c|ltd|limited|lp|l\.p|llp|plc|gmbh|ag|sa|s\.a|nv|n\.v|bv|b\.v|trust|bank|association|partners|group|holdings)\b\.?$",
    )
});

static PARTY_LETTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
            r"(?m)(?:^|\s{2,})[ \t]*(Party\s+[A-Z])\s*:\s*([^\n:]{3,100}?)(?:\s+(?:(?:Registered\s+|Legal\s+|Business\s+)?(?:Address|Domicile|Contact|Tel|Telephone|Legal\s+representative|Authori[sz]ed\s+signatory|Representative))\s*:|\s{3,}|[ \t]*$)",
        )
        .expect("valid")
});
static AND: LazyLock<Regex> = LazyLock::new(|| ci(r"\band\b"));
static BETWEEN: LazyLock<Regex> = LazyLock::new(|| ci(r"^\W*(by\s+and\s+)?(between|among)\s*:?"));
static UNDEFINED_CUT: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\bhereinafter\b|\baddress\b|,\s*\d|\s\d{3,}\b|\n\s*\n|\s{3,}"));

/// A name without its closing full stop, unless the stop ends an abbreviation of a company form ("Acme Inc.",
/// "Beta S.A.", "Gamma Co."), which is part of the name; a doubled stop ("Acme Inc..") is one.
fn keep_abbreviation_stop(name: &str) -> &str {
    let Some(stripped) = name.strip_suffix('.') else { return name };
    if stripped.ends_with('.') {
        return keep_abbreviation_stop(stripped);
    }
    let last = stripped.rsplit(|c: char| c.is_whitespace() || c == ',').next().unwrap_or("");
    if !last.is_empty() && last.len() <= 5 && last.chars().next().is_some_and(char::is_uppercase) {
        name
    } else {
        keep_abbreviation_stop(stripped.trim_end())
    }
}

/// Parties the preamble names without defining a name for them: "Party A: X" lines of the head, else "between X,
/// a Delaware corporation, and Y, a Nevada corporation".
fn undefined_parties(head: &str, preamble: &str) -> Vec<(String, Value)> {
    fn push(out: &mut Vec<(String, Value)>, name: &str, defined: Option<String>) {
        let name = name.trim().trim_matches(|c: char| c == ',' || c == ':' || c.is_whitespace());
        let name = keep_abbreviation_stop(name);
        let looks_like_a_name = name.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && name.split_whitespace().count() <= 10
            && name.chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
            && !NOT_PARTY_NAMES.contains(&name.to_lowercase().as_str());
        if looks_like_a_name && !out.iter().any(|(_, v)| matches!(v, Value::Party { name: n, .. } if n == name)) {
            let party = Value::Party { name: name.to_owned(), defined_as: defined, role: None };
            out.push((party.display(), party));
        }
    }
    let mut out: Vec<(String, Value)> = Vec::new();
    for caps in PARTY_LETTER.captures_iter(head).take(6) {
        push(&mut out, &caps[2], Some(caps[1].to_owned()));
    }
    if !out.is_empty() {
        return out;
    }
    let Some(start) = BETWEEN.find(preamble) else { return out };
    for piece in party_pieces(&preamble[start.end()..]).into_iter().take(3) {
        // "between\n\nACME INC.\n\nand\n\nBETA LLC": the name starts after the blank lines around it.
        let piece = piece.trim_start();
        let cut = [NAME_CUT.find(piece), UNDEFINED_CUT.find(piece)].into_iter().flatten().map(|m| m.start()).min();
        push(&mut out, &piece[..cut.unwrap_or(piece.len())], None);
    }
    out
}

/// The text after "between", cut at each "and" that opens another party. An "AND" in capitals between words in
/// capitals belongs to a name ("BLUE RIVER FILM AND TELEVISION CORPORATION") when the name before it does not end in
/// a legal form and the words after it do ("ALDER INC. AND BIRCH LLC" are two).
fn party_pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut from = 0;
    for m in AND.find_iter(text) {
        let before = text[from..m.start()].trim_end();
        let next_in_capitals = text[m.end()..]
            .split_whitespace()
            .next()
            .is_some_and(|w| w.chars().any(char::is_alphabetic) && !w.chars().any(char::is_lowercase));
        let last_in_capitals = before
            .split_whitespace()
            .last()
            .is_some_and(|w| w.chars().any(char::is_alphabetic) && !w.chars().any(char::is_lowercase));
        // ... and the name it joins ends in a legal form ("... TELEVISION CORPORATION, located at").
        let after = &text[m.end()..];
        let after = &after[..AND.find(after).map_or(after.len(), |n| n.start())];
        let cut = [NAME_CUT.find(after), UNDEFINED_CUT.find(after)].into_iter().flatten().map(|c| c.start()).min();
        let joined = keep_abbreviation_stop(
            after[..cut.unwrap_or(after.len())].trim().trim_matches(|c: char| c == ',' || c.is_whitespace()),
        );
        let joins_a_name = m.as_str() == "AND"
            && next_in_capitals
            && last_in_capitals
            && !ORGANISATION.is_match(before)
            && ORGANISATION.is_match(joined);
        if !joins_a_name {
            pieces.push(&text[from..m.start()]);
            from = m.end();
        }
    }
    pieces.push(&text[from..]);
    pieces
}

/// The text of the first run of lines the structure puts in `zone` (on one page).
fn first_run(index: &ContractIndex, zone: Zone) -> Option<&str> {
    let lines = &index.structure().lines;
    let first = lines.iter().position(|l| l.zone == zone)?;
    let page_number = lines[first].page;
    let last = lines[first..].iter().take_while(|l| l.zone == zone && l.page == page_number).last()?;
    let page = index.pages().iter().find(|p| p.number == page_number)?;
    page.text.get(lines[first].start as usize..last.end as usize)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

static DATED: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"(\b(dated|as\s+of|made|entered\s+into|executed|day\s+of|effective|signed)\b|\bdate\s*:)[^.;]{0,60}$")
});
static EFFECTIVE: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\beffective\b|\bcommenc\w*|\bbegin(s|ning)?\b|\bstart\b|\bcome\s+into\s+force\b"));
/// The effective date is the date the agreement bears: "effective as of the date first written above".
static EFFECTIVE_IS_DATED: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\beffective\b[^.;]{0,80}\b((day|date)(\s+and\s+year)?\s+(first\s+)?(above\s+)?(set\s+forth|written|stated|mentioned|listed|above)|date\s+hereof|date\s+of\s+(this|the)\s+agreement|execution\s+date|date\s+of\s+execution|signed\s+by\s+(both|all|the\s+last))",
    )
});

/// A label for a date: "Date:".
static DATE_LABEL: LazyLock<Regex> = LazyLock::new(|| ci(r"\bdate\s*:"));

/// The first date in the lines of `zones` (in document order, running lines and signature pages never among them),
/// with the index of the page and the byte range; `cue` keeps only dates preceded by such words.
fn date_in_zones(
    index: &ContractIndex,
    zones: &[Zone],
    cue: Option<&Regex>,
) -> Option<(usize, std::ops::Range<usize>, chrono::NaiveDate)> {
    date_in_zones_but(index, zones, cue, false)
}

/// [`date_in_zones`], leaving out the dates another document bears when `skip_other_documents` ("the Supply
/// Agreement dated").
fn date_in_zones_but(
    index: &ContractIndex,
    zones: &[Zone],
    cue: Option<&Regex>,
    skip_other_documents: bool,
) -> Option<(usize, std::ops::Range<usize>, chrono::NaiveDate)> {
    let structure = index.structure();
    let pages = index.pages();
    let mut i = 0;
    let lines = &structure.lines;
    while i < lines.len() {
        if !zones.contains(&lines[i].zone) {
            i += 1;
            continue;
        }
        // A run of lines of these zones on one page: dates may break across its lines.
        let (page_number, start) = (lines[i].page, lines[i].start as usize);
        let mut end = lines[i].end as usize;
        let mut j = i + 1;
        while j < lines.len() && lines[j].page == page_number && zones.contains(&lines[j].zone) {
            end = lines[j].end as usize;
            j += 1;
        }
        if let Some(page) = pages.iter().position(|p| p.number == page_number) {
            let text = &pages[page].text[start..end];
            let mut cued = values::dates(text).into_iter().filter(|(r, _)| {
                cue.is_none_or(|c| c.is_match(&text[floor_boundary(text, r.start.saturating_sub(120))..r.start]))
                    && !(skip_other_documents && another_documents_date(&text[..r.start]))
            });
            let mut found = cued.next();
            // Parties signing on different days: the agreement is made when the last of them signs (a later date of
            // the same block, within a season of the first).
            let signing = |at: usize| {
                lines[i].zone == Zone::SignatureBlock
                    || SIGNING.is_match(&text[floor_boundary(text, at.saturating_sub(600))..at])
            };
            if let Some((first_range, first)) = found.clone()
                && signing(first_range.start)
            {
                for (r, date) in cued {
                    let latest = found.as_ref().map_or(first, |(_, d)| *d);
                    if date > latest && (date - first).num_days() <= 92 {
                        found = Some((r, date));
                    }
                }
            }
            if let Some((r, date)) = found {
                return Some((page, start + r.start..start + r.end, date));
            }
        }
        i = j;
    }
    None
}

/// A date found at `range` of page `page`, quoted with the sentence that holds it (when the sentence is quotable).
fn dated(index: &ContractIndex, page: usize, range: std::ops::Range<usize>, date: chrono::NaiveDate) -> Extracted {
    let value = iso(date);
    match index.sentence_at(page, range.start) {
        Some(s) => extracted(index, value.display(), Some(value), &index.sentences()[s]),
        None => Extracted {
            value: value.display(),
            normalized: Some(value),
            quote: Some(Quote { text: index.pages()[page].text[range].to_owned(), page: index.pages()[page].number }),
            confidence: CONFIDENCE,
        },
    }
}

/// The date the agreement is dated or made: the first date of the preamble; else a date the cover gives as the
/// agreement's ("dated as of", "Date:"); else the first dated sentence of the opening text; else the date the
/// parties say they sign on ("executed this 14th day of"). Never a running line (filing stamps, fax headers) nor
/// any other date of a signature page.
fn agreement_date(index: &ContractIndex) -> Option<Extracted> {
    letter_dated(index)
        .or_else(|| {
            // The preamble's date after the words that make or date the agreement ("is made and entered into this
            // 10th day of January, 2020" after "shall be effective as of May 1, 2020"), else its first date.
            date_in_zones_but(index, &[Zone::Preamble], Some(&MADE_ON), true)
                .or_else(|| date_in_zones_but(index, &[Zone::Preamble], None, true))
                .or_else(|| date_in_zones_but(index, &[Zone::Cover], Some(&DATED), true))
                .map(|(page, range, date)| dated(index, page, range, date))
        })
        .or_else(|| this_agreement_dated(index))
        .or_else(|| first_dated_sentence(index, 4_000, |text| DATED.is_match(text) || text.contains("dated")))
        .or_else(|| {
            // Short agreements date themselves where they are signed: "executed this 14th day of February 2020"
            // (never a date another document bears: "save the Nondisclosure Agreement of the parties dated ...").
            date_in_zones_but(index, &[Zone::SignatureBlock, Zone::Operative], Some(&SIGNED_ON), true)
                .map(|(page, range, date)| dated(index, page, range, date))
        })
        .or_else(|| dated_as_of_the_effective_date(index))
        .or_else(|| {
            // Else the date the parties wrote where they sign ("Rome, 2 April 2020", "Date: 5/17/12"): running lines
            // (filing stamps, fax headers) are never in the signature block.
            date_in_zones(index, &[Zone::SignatureBlock], None)
                .map(|(page, range, date)| dated(index, page, range, date))
        })
        .or_else(|| signature_line_dated(index))
}

/// The words that make or date an agreement, right before its date: "dated as of", "is made and entered into this".
static MADE_ON: LazyLock<Regex> = LazyLock::new(|| ci(r"\b(dated|made|entered\s+into|executed|signed)\b[^.;]{0,40}$"));

/// The date another document bears, not this agreement's: "the Development Agreement (\"Development Agreement\")
/// entered into on", "that certain fully executed Content License Agreement Number 100 dated as of", "a Collateral
/// Assignment And Split Dollar Agreement, dated as of", "the Phase 2 Document dated", "the Design, Supply and Installation
/// Agreement dated" (joining words and "&" may stand among the name's capitals), "that certain Supply Agreement dated as
/// of June 2, 2010, as amended May 5, 2011 and" (each date of its amendments too).
static ANOTHER_DOCUMENT: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(the|that\s+certain|an?|said|such|its|their|prior|previous|existing)\s+((?-i:[a-z]+)\s+){0,2}((?-i:[A-Z0-9][\w&'.-]*|and|of|&),?\s+){0,8}(agreement|contract|document|memorandum(\s+of\s+understanding)?|lease|licen[cs]e|plan|note|indenture|policy|amendment)\b[^.;]{0,160}?\b(?P<verb>dated|entered\s+into|executed|made|amended)\b[^.;]{0,40}$",
    )
});
/// "is made", "was entered into": the verb of the sentence (this document's), not a participle naming another's.
static AUXILIARY: LazyLock<Regex> = LazyLock::new(|| ci(r"\b(is|was|are|were|be|been|being|hereby)\s+$"));

/// Is the date after `before` one another document bears ("the Supply Agreement dated", "that certain Agreement
/// entered into on"), not this one's ("This amendment to the Supply Agreement is made effective")?
fn another_documents_date(before: &str) -> bool {
    let before = &before[floor_boundary(before, before.len().saturating_sub(240))..];
    ANOTHER_DOCUMENT
        .captures(before)
        .and_then(|c| c.name("verb"))
        .is_some_and(|verb| !AUXILIARY.is_match(&before[..verb.start()]))
}

/// A signature: "/s/ Name", "By:".
static SIGNATURE_MARK: LazyLock<Regex> = LazyLock::new(|| ci(r"/s/|\bby\s*:"));
/// A rule to sign on: "______".
static SIGNING_RULE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"_{6,}").expect("valid"));

/// Failing all else, the date written on or just above the lines the parties sign on ("Columbus, 9 October 2017" /
/// "/s/ A. Person"; "10/09/17   ________"), wherever the structure placed them: a short line in the second half of
/// the document with a date, with a rule to sign on beside it, or a signature on it or on one of the next three
/// lines.
fn signature_line_dated(index: &ContractIndex) -> Option<Extracted> {
    let structure = index.structure();
    let pages = index.pages();
    let lines: Vec<_> = structure.lines.iter().filter(|l| !l.zone.is_running()).collect();
    lines.iter().enumerate().skip(lines.len() / 2).find_map(|(n, line)| {
        let text = structure.line_text(pages, line);
        if text.trim().len() > 200 {
            return None;
        }
        let (r, date) = values::dates(text).into_iter().next()?;
        let signed = SIGNING_RULE.is_match(text)
            || lines[n..].iter().take(4).any(|l| SIGNATURE_MARK.is_match(structure.line_text(pages, l)));
        if !signed {
            return None;
        }
        let page = pages.iter().position(|p| p.number == line.page)?;
        Some(dated(index, page, line.start as usize + r.start..line.start as usize + r.end, date))
    })
}

/// The salutation that opens a letter: "Ladies and Gentlemen:", "Dear Ms. Smith,", "Gentlemen:".
static SALUTATION: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"^\s*(dear\s+[^\n]{1,60}|ladies\s+and\s+gentlemen|gentlemen|to\s+whom\s+it\s+may\s+concern)\s*[:,]?\s*$")
});

/// A letter agreement is dated by the line above its salutation that holds only a date ("March 14, 2019" / the
/// addressee / "Ladies and Gentlemen:").
fn letter_dated(index: &ContractIndex) -> Option<Extracted> {
    let structure = index.structure();
    let pages = index.pages();
    let lines: Vec<_> = structure.lines.iter().filter(|l| !l.zone.is_running()).take(60).collect();
    let salutation = lines.iter().position(|l| SALUTATION.is_match(structure.line_text(pages, l)))?;
    lines[..salutation].iter().find_map(|line| {
        let text = structure.line_text(pages, line);
        let (r, date) = values::dates(text).into_iter().next()?;
        let rest = format!("{}{}", &text[..r.start], &text[r.end..]);
        if rest.trim_matches(|c: char| c.is_whitespace() || c == ',' || c == '.').is_empty() {
            let page = pages.iter().position(|p| p.number == line.page)?;
            let start = line.start as usize + r.start;
            Some(dated(index, page, start..line.start as usize + r.end, date))
        } else {
            None
        }
    })
}

/// The agreement is made "as of the Effective Date" ...
static AS_OF_THE_EFFECTIVE_DATE: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"\b(made|entered\s+into|executed|dated|signed)\b[^.;]{0,40}\bas\s+of\s+the\s+effective\s+date\b")
});
/// ... and the Effective Date is defined as a date: "\"Effective Date\" shall mean December 5, 2014".
static EFFECTIVE_DATE_MEANS: LazyLock<Regex> =
    LazyLock::new(|| ci(r#"["“]?\beffective\s+date\b["”]?\s+(shall\s+)?(means?|is|shall\s+be)\s+[^.;]{0,20}$"#));

/// An agreement made or signed "as of the Effective Date" bears the date the contract defines as its Effective Date.
fn dated_as_of_the_effective_date(index: &ContractIndex) -> Option<Extracted> {
    let texts = || index.sentences().iter().enumerate().filter(|(i, _)| index.place(*i).is_quotable());
    texts().find(|(_, s)| AS_OF_THE_EFFECTIVE_DATE.is_match(index.sentence_text(s)))?;
    texts().find_map(|(_, sentence)| {
        let text = index.sentence_text(sentence);
        let (_, date) = values::dates(text)
            .into_iter()
            .find(|(r, _)| EFFECTIVE_DATE_MEANS.is_match(&text[..floor_boundary(text, r.start)]))?;
        Some(extracted(index, iso(date).display(), Some(iso(date)), sentence))
    })
}

/// A sentence that dates this agreement itself: "THIS CONTENT LICENSE AGREEMENT (the \"Agreement\") is made as of
/// this 3rd day of November, 2005", wherever the structure placed it (a preamble read as a recital).
static THIS_AGREEMENT_DATED: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"^\W*((?-i:[A-Z][A-Z0-9&,-]*)\s+){0,8}this\s+([\w,&-]+\s+){0,8}(agreement|contract|amendment)\b[^;]{0,120}?\b(is\s+|was\s+)?(made|entered\s+into|dated|executed)\b[^.;]{0,30}$",
    )
});

/// The first of the opening sentences (running lines, the contents and signature pages aside) that dates this
/// agreement itself, with the date right after the dating words.
fn this_agreement_dated(index: &ContractIndex) -> Option<Extracted> {
    let mut seen = 0usize;
    for (i, sentence) in index.sentences().iter().enumerate() {
        let text = index.sentence_text(sentence);
        seen += text.len();
        if seen > 6_000 {
            break;
        }
        let place = index.place(i);
        if !matches!(place.zone, Zone::Cover | Zone::Preamble | Zone::Recitals | Zone::Operative) {
            continue;
        }
        if let Some((_, date)) = values::dates(text)
            .into_iter()
            .find(|(r, _)| THIS_AGREEMENT_DATED.is_match(&text[..r.start]) && !another_documents_date(&text[..r.start]))
        {
            return Some(extracted(index, iso(date).display(), Some(iso(date)), sentence));
        }
    }
    None
}

/// Signature lines: "In witness whereof", "/s/", "By:".
static SIGNING: LazyLock<Regex> = LazyLock::new(|| ci(r"\bin\s+witness\b|/s/|\bby\s*:"));
static SIGNED_ON: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(execute[ds]?|sign(ed|s)?|dated|entered\s+into|effective|date\s*:)\s+((and|as)\s+\w+\s+)?(this|as\s+of|on)?[^.;]{0,20}$|\bdate\s*:\s*$",
    )
});

/// A date the contract names its effective date where it writes it: "dated March 3, 2000 (the "Effective Date")", also
/// where a text layer lost the space in the name ("(\"EffectiveDate\")").
static DEFINED_AS_EFFECTIVE: LazyLock<Regex> =
    LazyLock::new(|| ci(r#"^\s*,?\s*\(\s*(the\s+|this\s+|hereinafter\s+(the\s+)?)?["“]effective\s*date["”]\s*\)"#));

/// The effective date: the date the contract defines as its effective date, wherever it does; else a date the
/// contract calls effective (the preamble's "effective as of", a sentence that speaks of effectiveness); else the
/// agreement date: quoted where the contract says it is effective on the date it bears, else (an agreement takes
/// effect when it is made) with the agreement date's quote and a value that says no other effective date is stated.
fn effective_date(index: &ContractIndex, agreement: Option<&Extracted>) -> Option<Extracted> {
    // The date defined as the effective date, wherever the contract defines it, is the effective date.
    for (i, sentence) in index.sentences().iter().enumerate() {
        let place = index.place(i);
        if !place.is_quotable() || place.zone == Zone::SignatureBlock {
            continue;
        }
        let text = index.sentence_text(sentence);
        if let Some((_, date)) =
            values::dates(text).into_iter().find(|(r, _)| DEFINED_AS_EFFECTIVE.is_match(&text[r.end..]))
        {
            return Some(extracted(index, iso(date).display(), Some(iso(date)), sentence));
        }
    }
    // "\"Effective Date\" shall mean the date of installation, i.e. December 10, 1993": the date the contract's
    // definition of its Effective Date names.
    for (i, sentence) in index.sentences().iter().enumerate() {
        if index.defined_term(i).is_none_or(|term| !term.trim().eq_ignore_ascii_case("effective date")) {
            continue;
        }
        let text = index.sentence_text(sentence);
        if let Some((_, date)) = values::dates(text).into_iter().find(|(r, _)| r.start <= 160) {
            return Some(extracted(index, iso(date).display(), Some(iso(date)), sentence));
        }
    }
    let near_effective = ci(r"\b(effective|commenc\w*)\b[^.;]{0,80}$");
    if let Some((page, range, date)) = date_in_zones(index, &[Zone::Preamble, Zone::Cover], Some(&near_effective)) {
        return Some(dated(index, page, range, date));
    }
    // A sentence that starts something on a date: "shall commence on 1 January 1998", "effective as of", "Contract
    // start:"; never the date a period runs until.
    let mut seen = 0usize;
    for (i, sentence) in index.sentences().iter().enumerate() {
        let text = index.sentence_text(sentence);
        seen += text.len();
        if seen > 20_000 {
            break;
        }
        let place = index.place(i);
        if !place.is_quotable() || place.zone == Zone::SignatureBlock || !EFFECTIVE.is_match(text) {
            continue;
        }
        // What starts must be the agreement or its term: "the second project phase will commence on", "the
        // discount period begins on" start something else.
        if !THIS_AGREEMENT.is_match(text) && !OWN_TERM_OR_EFFECTIVE_DATE.is_match(text) {
            continue;
        }
        // "from the Effective Date until December 31, 2018": the date after an end word is where it ends.
        let starts = values::dates(text).into_iter().find(|(r, _)| {
            let before = &text[floor_boundary(text, r.start.saturating_sub(60))..r.start];
            STARTS_ON.is_match(before) && !END_CUE.is_match(before)
        });
        if let Some((_, date)) = starts {
            return Some(extracted(index, iso(date).display(), Some(iso(date)), sentence));
        }
    }
    // "\"Effective Date\" means the date set out in the Schedule": that schedule's label ("Effective Date: 1 June
    // 2007"); not otherwise, since a label may be an attached document's own.
    let in_schedule = index.sentences().iter().any(|s| EFFECTIVE_DATE_IN_SCHEDULE.is_match(index.sentence_text(s)));
    for (i, sentence) in index.sentences().iter().enumerate().filter(|_| in_schedule) {
        let place = index.place(i);
        if !place.is_quotable() || place.zone == Zone::SignatureBlock {
            continue;
        }
        let text = index.sentence_text(sentence);
        if let Some((_, date)) =
            values::dates(text).into_iter().find(|(r, _)| EFFECTIVE_DATE_LABEL.is_match(&text[..r.start]))
        {
            return Some(extracted(index, iso(date).display(), Some(iso(date)), sentence));
        }
    }
    // Effective when the parties sign ("effective on the date of signed acceptance", "upon execution by both
    // parties"): the day the last of them signs, where they sign.
    if let Some(said) =
        index.sentences().iter().take(400).find(|s| EFFECTIVE_ON_SIGNING.is_match(index.sentence_text(s)))
        && let Some(date) = signing_date(index)
    {
        return Some(extracted(index, iso(date).display(), Some(iso(date)), said));
    }
    // Effective on the date the agreement bears: said so, or an "Effective Date" the contract uses but dates nowhere.
    let says_dated = index
        .sentences()
        .iter()
        .take(400)
        .find(|s| EFFECTIVE_IS_DATED.is_match(index.sentence_text(s)))
        .or_else(|| index.sentences().iter().find(|s| index.sentence_text(s).contains("Effective Date")));
    match (says_dated, agreement) {
        (Some(s), Some(a)) => Some(extracted(index, a.value.clone(), a.normalized.clone(), s)),
        // Said nowhere: an agreement takes effect when it is made, and the value says that is why.
        (None, Some(a)) => Some(Extracted {
            value: format!("{} (the date the agreement bears; no other effective date is stated)", a.value),
            ..a.clone()
        }),
        _ => None,
    }
}

/// The agreement takes effect when the parties sign it: "effective on the date of signed acceptance", "effective upon
/// execution by both parties", "effective on the date it is last signed", "effective as of the latest date set forth
/// below" (where the parties sign).
static EFFECTIVE_ON_SIGNING: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\beffective\b[^.;]{0,60}\b(date\s+of\s+(signed\s+acceptance|(the\s+)?last\s+signature)|(up)?on\s+(its\s+)?(execution|signature|signing)\s+by\s+(both|all|the\s+last|each)|signed\s+by\s+(both|all|the\s+last|each)|date\s+(on\s+which\s+)?(it|this\s+agreement)\s+is\s+(last\s+)?signed|as\s+of\s+the\s+(latest|last|later)\s+(date|day)\s+(\w+\s+){1,2}(below|on\s+the\s+signature\s+pages?))\b",
    )
});

/// The day the last party signs: the latest date of the signature block (within a season of its first), else of a
/// line in the second half of the document with two "Date:" labels ("Date: March 4, 1998   Date: 3-5-98"), else the
/// date on the line the parties sign on, wherever the structure placed it ([`signature_line_dated`]).
fn signing_date(index: &ContractIndex) -> Option<chrono::NaiveDate> {
    if let Some((_, _, date)) = date_in_zones(index, &[Zone::SignatureBlock], None) {
        return Some(date);
    }
    let sentences = index.sentences();
    sentences
        .iter()
        .enumerate()
        .skip(sentences.len() / 2)
        .filter(|(i, _)| !index.place(*i).zone.is_running())
        .find_map(|(_, s)| last_signing_day(index.sentence_text(s)))
        .or_else(|| match signature_line_dated(index)?.normalized? {
            Value::Date { iso } => chrono::NaiveDate::parse_from_str(&iso, "%Y-%m-%d").ok(),
            _ => None,
        })
}

/// The day the last party signs, in text with two "Date:" labels ("Date: 1/19/07   Date: January 22, 2007"): its
/// latest date within a season of its first.
fn last_signing_day(text: &str) -> Option<chrono::NaiveDate> {
    if DATE_LABEL.find_iter(text).count() < 2 {
        return None;
    }
    let dates: Vec<chrono::NaiveDate> = values::dates(text).into_iter().map(|(_, d)| d).collect();
    let first = *dates.first()?;
    dates.into_iter().filter(|d| (*d - first).num_days() <= 92).max()
}

/// The agreement's own term or effective date, or the undertaking it sets up, named in a sentence: "the Initial Term
/// shall commence on", "the Effective Date shall be", "Contract start:", "the Venture shall commence on".
static OWN_TERM_OR_EFFECTIVE_DATE: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(term|effective\s+date|commencement\s+date|contract|venture|partnership|engagement|collaboration|appointment)\b|(?-i:\b[Tt]he\s+Agreement\b)",
    )
});
static STARTS_ON: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"\b(effective|commenc\w*|begin\w*|start\w*|as\s+of|come\s+into\s+force|take\s+effect)\b[^.;]{0,40}$")
});

fn first_dated_sentence(index: &ContractIndex, within: usize, keep: impl Fn(&str) -> bool) -> Option<Extracted> {
    let mut seen = 0usize;
    for (i, sentence) in index.sentences().iter().enumerate() {
        let text = index.sentence_text(sentence);
        seen += text.len();
        if seen > within {
            break;
        }
        let place = index.place(i);
        if !place.is_quotable() || place.zone == Zone::SignatureBlock {
            continue;
        }
        // Never the date another document bears ("WHEREAS, the parties entered into a Supply Agreement, dated as of
        // December 5, 1995").
        let own = |(r, _): &(std::ops::Range<usize>, chrono::NaiveDate)| !another_documents_date(&text[..r.start]);
        if keep(text)
            && let Some((_, first)) = values::dates(text).into_iter().find(own)
        {
            // Two "Date:" labels are the days the parties sign on: the agreement is made when the last of them signs.
            let date = last_signing_day(text).unwrap_or(first);
            return Some(extracted(index, iso(date).display(), Some(iso(date)), sentence));
        }
    }
    None
}

static TERM_CLAUSE: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r#"["“](term|initial\s+term|contract\s+period|agreement\s+period)["”]\s+(shall\s+)?means?\b|\b(initial\s+term|the\s+term\b|term\s+of\s+this\s+agreement|duration\s+of\s+this|for\s+a\s+(term|period)\s+of|(shall|will|is\s+to)\s+(commence|begin|come\s+into\s+(force|effect)|take\s+effect|become\s+effective|be\s+(valid|effective|in\s+(force|effect))|remain\s+(valid|effective|in\s+(full\s+)?(force|effect))|continue\s+(in\s+(full\s+)?(force|effect)|for|until))|(this\s+(\w+\s+){0,2}(agreement|contract|licen[cs]e|lease|addendum|amendment|memorandum|arrangement)|(?-i:\b[Tt]he\s+(Agreement|Contract)))\s+((shall|will|is\s+to)\s+(\w+\s+){0,3}(commence|begin|continue|remain|expire|terminate|end|conclude|run|last)|(commences|begins|continues|remains|expires|terminates|ends|runs|lasts)\b|(is|remains)\s+(valid|effective|in\s+(full\s+)?(force|effect))\s+(for|until|through)\b|(shall|will)\s+have\s+a\s+(term|duration)\s+of)|(?-i:\b[Tt]his\s+[A-Z]{2,5})\s+(shall|will)\s+(\w+\s+){0,3}(commence|begin|continue|remain|expire|terminate|end|conclude)|\b(beginning|commencing|starting)\s+(on\s+)?[^.;]{0,40}\d{4}\s*,?\s+and\s+(ending|expiring|terminating)\b|\b(entered\s+into|concluded|made)\s+for\s+(an?\s+)?(\w+\s+){0,3}(period|term|duration)\b|\bagreement\b[^.;]{0,60}\b(shall|will)\s+(automatically\s+)?(terminate|expire|end)\s+on\b|\bfor\s+a\s+(term|period)\s+\([^)]{0,40}\)\s+of\b)"#,
    )
});
static TERM_HEADING: LazyLock<Regex> = LazyLock::new(|| ci(r"\b(term|duration)\b"));
/// Sentences that speak of the term without setting it: "during the Term and for one year thereafter", "the term
/// "Credit Data" means".
static NOT_THE_TERM: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r#"\b(during|throughout|after|following|beyond|within|expiration\s+of|end\s+of)\s+(the\s+)?(initial\s+)?term\b|\bthe\s+terms?\s+["“]|\bwarrant|\bconfidential|\bsurviv|\b(after|following)\s+(the\s+)?(\w+\s+)?(termination|expiration)|\b(if|in\s+the\s+event|in\s+case|upon|when|once)\s+(that\s+)?(this|the)\s+(\w+\s+){0,2}(agreement|contract)\s+(is|has\s+been|shall\s+be)\s+(\w+\s+)?(terminated|cancell?ed|rescinded)\b|\b(keep|kept|maintain\w*|retain\w*|preserve\w*|audit\w*)\s+(\w+\s+){0,4}records\b|\brecords\s+(\w+\s+){0,3}(kept|maintained|retained|preserved)\b|\bcommissions?\b|\bnon-?\s?compet|\bsolicit"#,
    )
});
/// A sentence whose subject is the agreement or its term: "This Agreement shall continue ...", "The Initial Term
/// of this Agreement is ...", "The term of the Services shall ...". Such sentences are read first.
static TERM_SUBJECT: LazyLock<Regex> = LazyLock::new(|| ci(&format!(r"\b{TERM_SUBJECT_WORDS}")));
/// The same subject where the sentence opens (after its number and an opening "Unless earlier terminated, "): the
/// sentence is about the term, not a clause that mentions the agreement in passing ("In the event this Agreement is
/// terminated, the Party in default shall not ...").
static OPENS_WITH_TERM_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
    ci(&format!(r"^\W*(\(?[a-z0-9.]{{1,8}}\)?\s+)?((unless|except|subject)[^,.;]{{0,80}},\s*)?{TERM_SUBJECT_WORDS}"))
});
/// The words of [`TERM_SUBJECT`]: the agreement or its term, then a verb of its running.
const TERM_SUBJECT_WORDS: &str = r"(this\s+(\w+\s+){0,2}(agreement|contract|licen[cs]e|lease|addendum|amendment|memorandum|arrangement)|(?-i:[Tt]his\s+[A-Z]{2,5})|(?-i:[Tt]he\s+(Agreement|Contract))|the\s+(initial\s+|original\s+)?term(\s+of\s+(this|the)\s+(\w+\s+){0,2}(agreement|contract|services?))?|initial\s+term|(the\s+)?duration\s+of\s+(this|the))\b(\s+\([^)]{0,40}\))?(\s*,[^,.;]{1,60},)?\s+(shall|will|is|commences?|continues?|expires?|begins?|becomes?|ends?|remains?|runs?|lasts?|terminates?)\b";
/// A date named as the start right after it: "(such date, the \"Effective Date\")", "(the \"Commencement Date\")".
static NAMED_EFFECTIVE: LazyLock<Regex> = LazyLock::new(|| {
    ci(r#"^\s*,?\s*\((such\s+date,?\s+)?(the\s+)?["“](effective|commencement|start)\s+date["”]\s*\)"#)
});
/// A defined name that is the term or its period: "Term", "Initial Term", "Contract Period", "Expiration Date".
static DEFINED_TERM: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(term|period|duration|expiration\s+date|expiry\s+date|termination\s+date|end\s+date)\b"));
/// The words that put an end date after them: "until", "expire on", "terminating on".
static END_CUE: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(until|through(\s+and\s+including)?|thru|to\s+and\s+including|expir\w*|terminat\w*|conclud\w*|end(s|ing)?|(in\s+no\s+event\s+|not\s+|no\s+)later\s+than|hereby\s+extended\s+(up\s+)?(to|until|through))\s+(on\s+|at\s+)?(the\s+)?((earlier|later|sooner|first)\s+(of|to\s+occur\s+of)\s*:?\s*(\(?[a-z0-9]{1,3}\)\s*)?)?$",
    )
});
/// A period that measures the term: "for five (5) years", "a period of one year", "three (3) years from", "shall last
/// two years".
static TERM_PERIOD_CUE: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b((for|until)\s+the\s+((entire|full|whole|initial)\s+)?|(for|of|be|is|last|run|ending|end|expire|terminate|date|until)\s+(an?\s+)?((initial|fixed|further)\s+)?((term|period)\s+of\s+)?)$",
    )
});
/// A term of at least a period: "shall remain in full force and effect for at least one year thereafter".
static TERM_MINIMUM: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"\b(remain|continue|be)\b[^.;]{0,40}\bfor\s+(at\s+least|a\s+minimum\s+of|not\s+less\s+than)\s+$")
});
/// An end date a renewal or an extension reaches, not the initial term's: "if the parties renew, the term shall be
/// extended by one further year, up to and including 28 February 2001".
static EXTENDED_TO: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b((shall|will|may|is|are)\s+(be\s+)?(renewed|extended)|(exercises?|exercised)\s+(\w+\s+){0,3}(right|option)\s+to\s+(renew|extend)|renewal\s+(term|period)\s+(shall|will))\b",
    )
});
/// A renewal or extension before a period: "renewal or extension for one year" is not the initial term. The term
/// itself may "extend for a period of five years" ("shall commence ... and shall extend for"), which is its length.
static RENEWAL_BEFORE: LazyLock<Regex> = LazyLock::new(|| ci(r"\b(renew\w*|extend\w*|extension)\b[^.;]{0,40}$"));
static TERM_EXTENDS_FOR: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(shall|will)\s+extend\s+for\s+(an?\s+)?((term|period)\s+of\s+)?$"));
/// A period to cure a breach: "such breach remains uncured for a period of thirty (30) days".
static CURE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(uncured|not\s+(been\s+)?(cured|remedied)|fail\w*\s+to\s+(cure|remedy)|cure\s+period|to\s+(cure|remedy))\b[^.;]{0,40}$",
    )
});
/// The term measured from the date the agreement bears: "from the date first above written", "of the date hereof",
/// "the date of its execution".
static FROM_SIGNING: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(from|of|after|following)\s+the\s+(date\s+(and\s+year\s+)?(first\s+)?(above\s+|set\s+forth\s+above\s+|written\s+above\s+)?(written|set\s+forth|stated)(\s+above)?|date\s+hereof|date\s+of\s+(this\s+(\w+\s+)?agreement|its\s+execution|execution)|execution\s+date|signing\s+date)|\b(of|from)\s+this\s+(\w+\s+){0,2}agreement\s*([;,.)]|$|\s+(and|or|unless)\b)",
    )
});
/// An ordinal count, as a pattern with two groups (the word, else the digits): "fifth", "twentieth (20th)", "3rd".
static ORDINAL_COUNT: LazyLock<String> = LazyLock::new(|| {
    format!(r"(?:({})(?:\s*\(\s*\d+\s*(?:st|nd|rd|th|t\s?h)\s*\))?|(\d+)\s*(?:st|nd|rd|th))", values::ORDINAL_WORD)
});
static ANNIVERSARY: LazyLock<Regex> = LazyLock::new(|| ci(&format!(r"\b{}\s+anniversary\b", *ORDINAL_COUNT)));
/// A day counted from the term's start: "the 30th day after the Effective Date", "the ninetieth (90th) day following
/// the Commencement Date".
static DAY_AFTER_START: LazyLock<Regex> = LazyLock::new(|| {
    ci(&format!(r"\b{}\s+day\s+(?:after|following)\s+the\s+(?:effective|commencement)\s+date\b", *ORDINAL_COUNT))
});
/// An end said before such a day, in the same clause: "shall automatically terminate at and as of (the first to occur
/// of): (a) midnight on".
static ENDS_BEFORE: LazyLock<Regex> = LazyLock::new(|| ci(r"\b(terminat\w*|expir\w*|end|ends|until)\b[^.;]*$"));

/// The number an [`ORDINAL_COUNT`] match gives.
fn ordinal_count(c: &regex::Captures<'_>) -> Option<u32> {
    match c.get(2) {
        Some(d) => d.as_str().parse().ok(),
        None => values::ordinal(c.get(1)?.as_str()),
    }
}

/// The day an end falls on, counted in days from the term's start, with where its words start and end: "shall
/// terminate on the 30th day after the Effective Date". Only after an end word, never where something starts on it.
fn day_after_start(text: &str) -> Option<(usize, usize, u32)> {
    let c = DAY_AFTER_START.captures(text)?;
    let whole = c.get(0)?;
    let before = &text[..whole.start()];
    (ENDS_BEFORE.is_match(before) && !START_CUE.is_match(before))
        .then(|| Some((whole.start(), whole.end(), ordinal_count(&c)?)))
        .flatten()
}
/// An anniversary counted in years: "the four-year anniversary", "the five (5) year anniversary".
static YEARS_ANNIVERSARY: LazyLock<Regex> = LazyLock::new(|| ci(r"^[\s-]*anniversary\b"));

/// The anniversary a sentence names, in years, with where its words start and end: "the fifth anniversary", "the twentieth
/// (20th) anniversary", "the 3rd anniversary", "the four-year anniversary", "the five (5) year anniversary".
fn anniversary(text: &str) -> Option<(usize, usize, u32)> {
    let ordinal =
        ANNIVERSARY.captures(text).and_then(|c| Some((c.get(0)?.start(), c.get(0)?.end(), ordinal_count(&c)?)));
    let in_years = values::durations(text).into_iter().find_map(|(r, n, unit)| {
        let m = YEARS_ANNIVERSARY.find(&text[r.end..]).filter(|_| unit == pactwise_domain::DurationUnit::Year)?;
        Some((r.start, r.end + m.end(), n))
    });
    [ordinal, in_years].into_iter().flatten().min_by_key(|(start, _, _)| *start)
}
/// What a thing is or lasts, right before a period: "is for a period of", "shall be", "has a duration of".
static LASTS_FOR: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b((is|are|be|been)\s+(for\s+)?(an?\s+)?((initial|fixed)\s+)?((term|period)\s+of\s+)?|(duration|term)\s+of\s+)$",
    )
});
/// An end on an anniversary: "until the third anniversary", "expire on the fifth anniversary".
static ENDS_ON: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(until|through|expire[sd]?|end[sd]?|terminate[sd]?)\s+(on\s+)?(the\s+)?$"));
static UNTIL_TERMINATED: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(until|unless\s+and\s+until)\s+(\w+\s+){0,3}terminated\b|\b(end|expire|continue)s?\s+(only\s+)?when\s+(\w+\s+){0,2}terminated\b|\bend\s+(up)?on\s+the\s+termination\s+(or\s+expiration\s+)?of\s+(this|the)\s+agreement\b|\bfor\s+an?\s+unlimited\s+(period|term|duration)\b|\bperpetu\w*|\bindefinite\w*|\b(continue|remain)\s+(\w+\s+){0,4}(in\s+(full\s+)?(force|effect)|effective)\s+(\w+\s+){0,2}for\s+so\s+long\s+as\b|\buntil\s+(such\s+time\s+as\s+)?(either|one|a|the)\s+part(y|ies)\s+terminat",
    )
});
/// A term that lasts until an event rather than a date or a period: "shall remain in effect until the last patent
/// expires", "will not end until the campaign is delivered", "shall expire if the adviser ceases to act", "shall
/// terminate: (a) automatically if ...; (b) ...", "shall continue thereafter, unless terminated". It has no
/// fixed end (CUAD's answers call it perpetual). Read only where the agreement or its term is the subject, and only
/// when the sentence names no end date or period.
static UNTIL_EVENT: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(continue|remain)\s+(\w+\s+){0,4}(in\s+(full\s+)?(force|effect)|effective|in\s+operation)\b[^.;]{0,120}?\buntil\b|\b(shall|will)\s+(continue|remain|extend|last|run)\s+until\s+the\s+(\w+\s+){0,3}(termination|expiration|expiry|end|last|completion)\b|\b(shall|will)\s+not\s+(end|expire|terminate)\s+until\b|\b(shall|will)\s+(automatically\s+)?expire\s+(if|when|at\s+such\s+time\s+as)\b|\b(shall|will)\s+(automatically\s+)?(terminate|expire)\s*(:|\(\s*(i|a|1)\s*\)|\b[^.;:]{0,150}?\b(up)?on\s+the\s+(earliest|earlier|first)\s+(of|to\s+occur))|\bthereafter,?\s+unless\s+(\w+\s+){0,3}terminated\b",
    )
});
static UNTIL: LazyLock<Regex> = LazyLock::new(|| ci(r"\buntil\b"));
/// "until the expiration of the Term": the term's own end, which says nothing about when that is.
static UNTIL_OWN_TERM: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\buntil\s+(the\s+)?(expiration|expiry|end|termination)\s+of\s+(the|this|such)\s+((initial|then[\s-]current|renewal|original)\s+)?term\b",
    )
});
/// An item of a list: "(a) ", "(ii) ", "b. ".
static LIST_ITEM: LazyLock<Regex> =
    LazyLock::new(|| ci(r"^\s*(\(?([a-h]|i{1,3}|iv|v|vi|\d{1,2})\)|([a-h]|\d{1,2})\.)\s"));
static END_OF_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"\b(?:until|through|expir\w*\s+at)\s+the\s+end\s+of\s+(?:(?:the\s+)?(?:calendar|fiscal)\s+year\s+)?(\d{4})\b")
});
/// The start of the term when it is not the effective date: "commence on March 1, 2020", "begin on".
static START_CUE: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(commenc\w*|begin\w*|start\w*|effective|from|as\s+of)\s+(on\s+|as\s+of\s+)?(the\s+)?$"));

fn iso(date: chrono::NaiveDate) -> Value {
    Value::Date { iso: date.format("%Y-%m-%d").to_string() }
}

/// When the initial term ends, read from the term clause (operative text only): the end date it names; else the
/// start of the term (a date the clause names, else the effective date, else the agreement date) plus the period
/// it names, said to be computed; else no end ("until terminated", "perpetual"). A term in years ends on the same
/// day of the month, as CUAD's answers count.
fn expiration(
    index: &ContractIndex,
    effective: Option<&Extracted>,
    agreement: Option<&Extracted>,
) -> Option<Extracted> {
    let date_of = |e: Option<&Extracted>| match e.and_then(|e| e.normalized.as_ref()) {
        Some(Value::Date { iso }) => chrono::NaiveDate::parse_from_str(iso, "%Y-%m-%d").ok(),
        _ => None,
    };
    let mut perpetual: Option<&Sentence> = None;
    // An end computed from a period, kept while sentences of the same standing may still state the end itself.
    let mut computed: Option<((bool, bool), Extracted)> = None;
    // The term clause's home first (a section headed "Term", "Duration"), then anywhere it may be quoted from.
    // Sentences whose subject is the agreement or its term first, those in the term's home section before others.
    let in_home = |i: usize| TERM_HEADING.is_match(&index.headings_of(i));
    let subject = |i: usize| TERM_SUBJECT.is_match(index.sentence_text(&index.sentences()[i]));
    let standing = |i: usize| (!subject(i), !in_home(i));
    let mut order: Vec<usize> = (0..index.sentences().len()).collect();
    order.sort_by_key(|&i| standing(i));
    // The term starts on a date the contract names and states elsewhere ("The start of the Term will be from the
    // Launch Date" / "the launch date of the site shall be September 1st, 1999").
    let named_start = order.iter().take_while(|&&i| standing(i) != (true, true)).find_map(|&i| {
        let text = index.sentence_text(&index.sentences()[i]);
        let c = STARTS_FROM_NAMED.captures(text).filter(|_| TERM_STARTS.is_match(text))?;
        let name = c[2].split_whitespace().collect::<Vec<_>>().join(" ");
        named_date(index, &name).map(|d| (d, format!("the {name}")))
    });
    for i in order {
        // A term that runs until it is terminated, said where the agreement or its term is the subject, is not
        // overruled by a period some other sentence names.
        if perpetual.is_some() && !subject(i) {
            break;
        }
        // "This Agreement shall have an Initial Term of three (3) years. The Term shall commence on July 23, 2013
        // and shall expire on July 22, 2016": the end the contract states beats the one computed beside it.
        if computed.as_ref().is_some_and(|(rank, _)| *rank != standing(i)) {
            break;
        }
        let sentence = &index.sentences()[i];
        let place = index.place(i);
        if !place.is_quotable() || place.zone == Zone::SignatureBlock {
            continue;
        }
        // A definition of something else ("\"Calendar Quarter\" means ... the first Calendar Quarter of the Term
        // shall commence on the Effective Date and end on June 30") does not set the term.
        if index.defined_term(i).is_some_and(|term| !DEFINED_TERM.is_match(term)) {
            continue;
        }
        let text = &*whole_text(index, i);
        // A clause that ends in a colon continues in the list after it: "shall remain in effect until the earlier
        // of the following:" / "(a) the fifth anniversary of this Agreement; and" / "(b) ...".
        let listed = text.trim_end().ends_with(':').then(|| {
            let items: Vec<&str> = index.sentences()[i + 1..]
                .iter()
                .take(4)
                .map(|s| index.sentence_text(s))
                .take_while(|t| LIST_ITEM.is_match(t))
                .collect();
            format!("{} {}", text.trim_end(), items.join(" "))
        });
        let text = listed.as_deref().unwrap_or(text);
        let Some(clause) = TERM_CLAUSE.find(text) else { continue };
        // What the sentence says up to a value decides whether it is about the term: "during the Term and for one
        // year thereafter" is not, "the initial term shall be five years ... prior to the expiration of the term"
        // is.
        let about_the_term = |upto: usize| !NOT_THE_TERM.is_match(&text[..floor_boundary(text, upto.min(text.len()))]);
        let dates = values::dates(text);
        // A date the sentence names its effective date ("no later than September 2, 2019 (such date, the
        // \"Effective Date\")") is where the term starts, not where it ends.
        let defined_start = |r: &std::ops::Range<usize>| NAMED_EFFECTIVE.is_match(&text[r.end..]);
        if let Some((r, end)) = dates.iter().find(|(r, _)| END_CUE.is_match(&text[..r.start]) && !defined_start(r))
            && about_the_term(r.end)
            && !EXTENDED_TO.is_match(&text[..r.start])
        {
            return Some(extracted(index, iso(*end).display(), Some(iso(*end)), sentence));
        }
        let start = |from_signing: bool| {
            dates
                .iter()
                .find(|(r, _)| START_CUE.is_match(&text[..r.start]))
                .map(|(_, d)| (*d, "the start the clause names".to_owned()))
                .filter(|_| !from_signing || date_of(agreement).is_none())
                .or_else(|| {
                    date_of(agreement).filter(|_| from_signing).map(|d| (d, "the date the agreement bears".to_owned()))
                })
                .or_else(|| named_start.clone())
                .or_else(|| date_of(effective).map(|d| (d, "the effective date".to_owned())))
                .or_else(|| date_of(agreement).map(|d| (d, "the agreement date".to_owned())))
        };
        let tail = &text[clause.start()..];
        // A sentence neither about the agreement or its term nor in the term's section gives a period only where it
        // says what something lasts ("The maintenance is for a period of one (1) year", "shall have a duration of
        // two years"), not for how long a party acts ("shall not issue a press release ... for a period of three (3)
        // months", "will provide support ... for a period of 30 days").
        let aside = standing(i) == (true, true);
        let period = values::durations(tail)
            .into_iter()
            .find(|(r, _, _)| {
                let minimum = TERM_MINIMUM.is_match(&tail[..r.start]);
                (TERM_PERIOD_CUE.is_match(&tail[..r.start]) || minimum)
                    && (!aside || LASTS_FOR.is_match(&text[..clause.start() + r.start]))
                    && (!RENEWAL_BEFORE.is_match(&tail[..r.start]) || TERM_EXTENDS_FOR.is_match(&tail[..r.start]))
                    && !CURE_BEFORE.is_match(&tail[..r.start])
                    && (minimum || !is_notice_period(tail, r))
            })
            .map(|(r, n, u)| (clause.start() + r.end, n, u))
            .or_else(|| {
                anniversary(text)
                    .filter(|(start, _, _)| !aside || ENDS_ON.is_match(&text[..*start]))
                    .map(|(_, end, n)| (end, n, pactwise_domain::DurationUnit::Year))
            })
            .or_else(|| day_after_start(text).map(|(_, end, n)| (end, n, pactwise_domain::DurationUnit::Day)))
            .filter(|(at, _, _)| about_the_term(*at + 40));
        // The period counts from the date the agreement bears when it says so right after it: "one (1) year from
        // the date first above written", "the first anniversary of the date of this Agreement".
        // "until the end of 2006": the last day of that year.
        if let Some(c) = END_OF_YEAR.captures(text)
            && let Some(end) = c[1].parse().ok().and_then(|y| chrono::NaiveDate::from_ymd_opt(y, 12, 31))
            && about_the_term(c.get(0).map_or(0, |m| m.end()))
        {
            return Some(extracted(index, iso(end).display(), Some(iso(end)), sentence));
        }
        let from_signing = period.is_some_and(|(at, _, _)| {
            let after = &text[at..];
            FROM_SIGNING.find(after).is_some_and(|m| m.start() <= 20)
        });
        if let (Some((from, from_name)), Some((at, number, unit))) = (start(from_signing), period)
            && let Some(end) = values::add_period(from, number, unit)
        {
            let end = month_end_if_said(&text[..at], end);
            let period = Value::Duration { number, unit }.display();
            let value =
                format!("{} (computed: {from_name}, {}, plus {period})", iso(end).display(), iso(from).display());
            if computed.is_none() {
                computed = Some((standing(i), extracted(index, value, Some(iso(end)), sentence)));
            }
            continue;
        }
        // "shall expire on the Expiration Date": the date the contract defines by that name.
        if subject(i)
            && let Some(c) = ON_DEFINED_DATE.captures(text)
            && let Some(end) = defined_date(index, &c[4])
        {
            return Some(extracted(index, iso(end).display(), Some(iso(end)), sentence));
        }
        // "shall continue in effect for the Service Period": the end of the period the contract defines by dates.
        if subject(i)
            && let Some(c) = FOR_DEFINED_PERIOD.captures(text)
            && let Some(end) = defined_period_end(index, &c[2])
        {
            return Some(extracted(index, iso(end).display(), Some(iso(end)), sentence));
        }
        // No fixed end: what the sentence says up to there decides ("shall continue until the termination of the
        // Alliance Agreement; provided that ... shall terminate 36 months after such election"), and a term that first
        // runs until an end and only "thereafter until terminated" has that first end, not none.
        let until_event = (subject(i) && !UNTIL_OWN_TERM.is_match(text)).then(|| UNTIL_EVENT.find(text)).flatten();
        let no_end = [UNTIL_TERMINATED.find(text), until_event].into_iter().flatten().min_by_key(|m| m.start());
        if let Some(m) = no_end
            && period.is_none()
            && perpetual.is_none()
            && about_the_term(m.end())
            && !UNTIL.is_match(&text[..m.start()])
        {
            perpetual = Some(sentence);
        }
    }
    if let Some((_, value)) = computed {
        return Some(value);
    }
    perpetual.map(|s| extracted(index, Value::Perpetual.display(), Some(Value::Perpetual), s)).or_else(|| {
        let start = date_of(effective)
            .map(|d| (d, "the effective date"))
            .or_else(|| date_of(agreement).map(|d| (d, "the agreement date")));
        end_date_label(index, start)
    })
}

/// The term runs for a period the contract names and defines elsewhere: "shall continue in effect for the Service
/// Period", "during the Engagement Period". Not the term itself ("for the Initial Term").
static FOR_DEFINED_PERIOD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(for|during|throughout|until\s+the\s+end\s+of)\s+the\s+(?:entire\s+)?((?:[A-Z][\w-]*\s+){1,3}(?:Period|Term))\b",
    )
    .expect("valid")
});

/// The end of a period the contract defines by its dates: "\"Service Period\" means 1 April 2019 through 31 March
/// 2020", "the period from 1 April 2019 to 31 March 2020 (the \"Service Period\")": the date after an end word, else
/// the later of two dates. Never the term's own name.
fn defined_period_end(index: &ContractIndex, name: &str) -> Option<chrono::NaiveDate> {
    if TERM_ITSELF.is_match(&name.split_whitespace().collect::<Vec<_>>().join(" ")) {
        return None;
    }
    definition_of(index, name).and_then(|window| {
        let dates = values::dates(window);
        let ends = dates.iter().find(|(r, _)| END_CUE.is_match(&window[..r.start])).map(|(_, d)| *d);
        ends.or_else(|| (dates.len() == 2 && dates[1].1 > dates[0].1).then(|| dates[1].1))
    })
}

/// The date the contract defines by a name: "\"Expiration Date\" means March 31, 2020".
fn defined_date(index: &ContractIndex, name: &str) -> Option<chrono::NaiveDate> {
    definition_of(index, name).and_then(|window| values::dates(window).into_iter().next()).map(|(_, d)| d)
}

/// A sentence about when the term starts: "the start of the Term", "The Term shall commence".
static TERM_STARTS: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(term|agreement)\b[^.;]{0,60}\b(commenc\w*|begin\w*|start\w*)\b|\b(commenc\w*|begin\w*|start)\s+of\s+the\s+term\b",
    )
});
/// The named date the term starts from: "from the Launch Date", "on the Commencement Date". Not the effective date,
/// nor the date of signing, which are read as such.
static STARTS_FROM_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:\b(from|on|upon|as\s+of)\s+)the\s+((?:[A-Z][\w-]*\s+){0,2}Date)\b").expect("valid")
});
static NOT_NAMED_START: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(effective|execution|signing|signature|termination|expiration|expiry|end)\s+date$"));
/// "the launch date of the site shall be September 1st, 1999", "\"Launch Date\" means June 1, 2000".
static NAME_IS: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"^[^.;]{0,60}?\b(shall\s+be|will\s+be|is|means|shall\s+mean|shall\s+occur\s+on|occurs\s+on)\s+[^.;]{0,12}$")
});

/// The date the contract gives a named date ("Launch Date"): its definition, or a sentence saying what it is.
fn named_date(index: &ContractIndex, name: &str) -> Option<chrono::NaiveDate> {
    if NOT_NAMED_START.is_match(name) {
        return None;
    }
    defined_date(index, name).or_else(|| {
        let named = ci(&format!(r"\b{}\b", regex::escape(name)));
        index.sentences().iter().find_map(|s| {
            let text = index.sentence_text(s);
            let rest = &text[named.find(text)?.end()..];
            values::dates(rest).into_iter().find(|(r, _)| NAME_IS.is_match(&rest[..r.start])).map(|(_, d)| d)
        })
    })
}

/// The words that define a quoted name, wherever the contract defines it: the text after "\"Service Period\" means"
/// (to the end of its clause), or the text before the name in brackets ("1 April 2019 to 31 March 2020 (the \"Service
/// Period\")"). Read on the page, not by sentence: a definition's dates may be cut by an abbreviation's full stop.
fn definition_of<'a>(index: &'a ContractIndex, name: &str) -> Option<&'a str> {
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    let quoted = [format!("\"{name}\""), format!("\u{201c}{name}\u{201d}")];
    index.pages().iter().find_map(|page| {
        let text = page.text.as_str();
        let (at, end) = quoted.iter().find_map(|q| text.find(q.as_str()).map(|at| (at, at + q.len())))?;
        // The definition: the name followed by "means" / "shall mean" / "is", or the name in brackets after the dates.
        let before = text[..at].trim_end();
        if DEFINES.is_match(&text[end..]) {
            let window = &text[end..floor_boundary(text, (end + 160).min(text.len()))];
            window.split([';', '\n']).next()
        } else if before.ends_with('(') || before.ends_with("(the") {
            Some(&text[floor_boundary(text, at.saturating_sub(160))..at])
        } else {
            None
        }
    })
}

/// The term ends on a date the contract names and defines elsewhere: "shall expire on the Expiration Date".
static ON_DEFINED_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i:\b(expire|terminate|end|conclude)s?\s+(on\s+)?|\b(until|through)\s+)the\s+((?:[A-Z][\w-]*\s+){0,2}(?:Expiration|Expiry|Termination|End)\s+Date)\b",
    )
    .expect("valid")
});

/// The term's own name, which is not a period defined apart from it.
static TERM_ITSELF: LazyLock<Regex> =
    LazyLock::new(|| ci(r"^((initial|renewal|original|current|then[\s-]current|extension|extended)\s+)?term$"));
/// A definition after a quoted name: "\"Service Period\" means", "shall mean", "is", "refers to".
static DEFINES: LazyLock<Regex> = LazyLock::new(|| ci(r"^[^\w]{0,4}(shall\s+)?(means?|is|refers?\s+to|shall\s+be)\b"));

/// Where a form's label starts: it opens a line or follows the run of spaces that parts a form's fields.
const FORM_LABEL_START: &str = r"(^|\n|\s{3})\s*";
/// A form's label for the end with the date after it: "Termination Date:   1 June 2010", "Expiration Date: June 30,
/// 2012", "End Date: 12/31/15".
static END_DATE_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    ci(&format!(r"{FORM_LABEL_START}(scheduled\s+)?(termination|expiration|expiry|end)\s+date\s*:?\s*$"))
});
/// The same label with a period counted from the start after it: "End Date: at noon on the last day of the month
/// twelve (12) years from the Effective Date".
static END_PERIOD_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    ci(&format!(r"{FORM_LABEL_START}(scheduled\s+)?(termination|expiration|expiry|end)\s+date\s*:[^:.;]{{0,80}}$"))
});
/// The effective date left to a schedule: "\"Effective Date\" means the date set out in the Schedule", "the Effective
/// Date stated in the Data Sheet".
static EFFECTIVE_DATE_IN_SCHEDULE: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r#"\beffective\s+date["”]?\s+((shall\s+)?(means?|is)\s+the\s+date\s+)?(set\s+(out|forth)|specified|stated|shown|identified)\s+(in|on)\s+(the\s+|an?\s+)?(addendum|schedule|exhibit|appendix|annex|cover\s+page|summary|data\s+sheet)\b"#,
    )
});
/// A form's label for the start with the date after it: "Effective Date:   1 June 2007".
static EFFECTIVE_DATE_LABEL: LazyLock<Regex> =
    LazyLock::new(|| ci(&format!(r"{FORM_LABEL_START}effective\s+date\s*:\s*$")));
/// A period counted from the effective date, right after it: "from the Effective Date", "after the Effective Date".
static FROM_EFFECTIVE: LazyLock<Regex> =
    LazyLock::new(|| ci(r"^\s*(\([^)]{0,20}\)\s*)?(from|after|following)\s+the\s+effective\s+date\b"));
/// The end falls at the close of a month: "on the last day of the month five (5) years after".
static LAST_DAY_OF_THE_MONTH: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\blast\s+day\s+of\s+the\s+(calendar\s+)?month\b[^.;:]{0,60}$"));

/// `date`, moved to the last day of its month when the words before the period say so ([`LAST_DAY_OF_THE_MONTH`]).
fn month_end_if_said(before: &str, date: chrono::NaiveDate) -> chrono::NaiveDate {
    use chrono::Datelike;
    if LAST_DAY_OF_THE_MONTH.is_match(before) {
        date.with_day(u32::from(date.num_days_in_month())).unwrap_or(date)
    } else {
        date
    }
}

/// Failing a term clause, the end a form's end-date label gives: a date, or a period from the effective date (`start`,
/// with the name of where it comes from).
fn end_date_label(index: &ContractIndex, start: Option<(chrono::NaiveDate, &str)>) -> Option<Extracted> {
    index.sentences().iter().enumerate().find_map(|(i, sentence)| {
        let place = index.place(i);
        if !place.is_quotable() || place.zone == Zone::SignatureBlock {
            return None;
        }
        let text = index.sentence_text(sentence);
        if let Some((_, date)) =
            values::dates(text).into_iter().find(|(r, _)| END_DATE_LABEL.is_match(&text[..r.start]))
        {
            return Some(extracted(index, iso(date).display(), Some(iso(date)), sentence));
        }
        let (r, number, unit) = values::durations(text)
            .into_iter()
            .find(|(r, _, _)| END_PERIOD_LABEL.is_match(&text[..r.start]) && FROM_EFFECTIVE.is_match(&text[r.end..]))?;
        let (from, from_name) = start?;
        let end = month_end_if_said(&text[..r.start], values::add_period(from, number, unit)?);
        let period = Value::Duration { number, unit }.display();
        let value = format!("{} (computed: {from_name}, {}, plus {period})", iso(end).display(), iso(from).display());
        Some(extracted(index, value, Some(iso(end)), sentence))
    })
}

/// Sentence `i` read whole when a page break cuts it: the two halves the index joins across the break, or the text
/// that goes on after the page's running lines ("... shall continue for twelve (12)" / "Page 4" / "months from ...":
/// the sentence ends without a full stop and the next one, running lines aside, opens in small letters).
fn whole_text(index: &ContractIndex, i: usize) -> std::borrow::Cow<'_, str> {
    let sentences = index.sentences();
    let text = index.sentence_text(&sentences[i]);
    if let Some((_, _, joined)) = index.joined_sentences().iter().find(|(before, _, _)| *before == i) {
        return joined.as_str().into();
    }
    if text.trim_end().ends_with(['.', '!', '?', ':', ';']) {
        return text.into();
    }
    let next = (i + 1..sentences.len().min(i + 6))
        .find(|&j| !matches!(index.place(j).zone, Zone::RunningHeader | Zone::RunningFooter | Zone::PageNumber));
    match next {
        Some(j) if j > i + 1 && index.sentence_text(&sentences[j]).starts_with(char::is_lowercase) => {
            format!("{} {}", text.trim_end(), index.sentence_text(&sentences[j])).into()
        }
        _ => text.into(),
    }
}

static RENEWAL_EXTRA: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(renew\w*|extend\w*|extension)\b[^.;]{0,80}\b(additional|successive|further|consecutive|subsequent|another|each|one)\b|\b(year|month)[\s-]+to[\s-]+(year|month)\b|\b(option|right)\s+to\s+continue\b[^.;]{0,80}\b(additional|successive|further)\b",
    )
});
/// A period that is a notice, not a term: "at least ninety (90) days prior to".
static NOTICE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"((at\s+least|not\s+less\s+than|no\s+less\s+than|no\s+later\s+than|minimum\s+of|upon|with|giving|within(\s+a\s+period\s+of)?)\s*|\bnotice\b[^.;]{0,80}:\s*)$",
    )
});
static NOTICE_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"^[\s)]*'?\s*((written|advance|formal|express|calendar|business|days'?|months'?)\s+)?(prior|before|in\s+advance|preceding|notice|written\s+notice|notification|ahead)",
    )
});
static EVERY: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(year[\s-]+to[\s-]+year|each\s+year|annual(ly)?|yearly|every\s+year)\b|\b(month[\s-]+to[\s-]+month|each\s+month|monthly|every\s+month)\b",
    )
});

fn is_notice_period(text: &str, range: &std::ops::Range<usize>) -> bool {
    NOTICE_BEFORE.is_match(&text[..range.start]) || NOTICE_AFTER.is_match(&text[range.end..])
}

/// The renewal clause (operative text only): the length of each renewal when it names one ("successive one (1)
/// year periods", "from year to year"), else that the term renews. Periods of notice in the clause are not the
/// renewal's length. Also the sentence the renewal clause was found in (where its notice is looked for), even when
/// that sentence does not show that the term renews.
fn renewal(index: &ContractIndex) -> (Option<usize>, Option<Extracted>) {
    // The usual wording anywhere, then looser wording ("renewable", "extended by") in a section headed Term; in each
    // pass the first sentence that names the renewal's length wins, else the first that says the term renews.
    let in_term_section = |i: usize| TERM_HEADING.is_match(&index.headings_of(i));
    let passes: [(&Regex, bool); 3] = [(&RENEWAL, false), (&RENEWAL_EXTRA, false), (&RENEW_LOOSE, true)];
    let mut loose_at: Option<usize> = None;
    // A renewal of unknown length, kept while the looser passes may still name the length ("the right to renew ...
    // for two (2) additional terms of five (5) years" after "shall automatically be extended for the Renewal Period").
    let mut unknown: Option<(Option<usize>, Extracted)> = None;
    for (pattern, term_section_only) in passes {
        let mut first: Option<Extracted> = None;
        let mut first_at: Option<usize> = None;
        for (i, sentence) in index.sentences().iter().enumerate() {
            if !agrees(index, i) || (term_section_only && !in_term_section(i)) {
                continue;
            }
            // The sentence is read whole across a page break, but only when it is itself about renewing (the next
            // page's half is the next sentence's to show).
            let text = &*whole_text(index, i);
            let own = index.sentence_text(sentence).len();
            let Some(m) = pattern.find(text).filter(|m| m.start() < own) else { continue };
            // A period to cure a failure that is extended ("if the party is diligently curing the failure, that
            // period shall be extended by a further thirty (30) days") is not the term renewing.
            if CURING_BEFORE.is_match(&text[..m.start()]) {
                continue;
            }
            // The renewal's length follows the first word of renewing ("shall renew for a further two (2) years
            // (the \"Renewal Term\")"), which may come before what the pattern matched.
            let from = RENEW_LOOSE.find(text).map_or(m.start(), |r| r.start().min(m.start()));
            let after = &text[from..];
            if UNLIMITED_RENEWAL.is_match(after) {
                let value = "renews without end (for an unlimited period)".to_owned();
                return (Some(i), Some(extracted(index, value, Some(Value::Perpetual), sentence)));
            }
            // The length: the first period that is no notice, unless the renewal is said to run year by year or
            // month by month before it ("shall be effective month to month, until terminated ... sixty (60) days",
            // "may be extended on a yearly basis up to ten (10) years").
            let length = values::durations(after)
                .into_iter()
                .find(|(r, _, _)| !is_notice_period(after, r) && !INITIAL_TERM_BEFORE.is_match(&after[..r.start]));
            let every = EVERY
                .captures(after)
                .filter(|c| length.as_ref().is_none_or(|(r, _, _)| c.get(0).is_some_and(|m| m.start() < r.start)));
            let normalized = match every {
                Some(c) => Some(Value::Duration {
                    number: 1,
                    unit: if c.get(1).is_some() {
                        pactwise_domain::DurationUnit::Year
                    } else {
                        pactwise_domain::DurationUnit::Month
                    },
                }),
                None => length.map(|(_, number, unit)| Value::Duration { number, unit }),
            };
            if let Some(v) = normalized {
                let value = format!("renews for {}", v.display());
                return (Some(i), Some(extracted(index, value, Some(v), sentence)));
            }
            first_at.get_or_insert(i);
            // Without a length, only a sentence that says the agreement or its term renews (automatically or at a
            // party's option) says that it renews: never a cure period "extended", confidentiality "during the Term
            // and any renewals", nor an extension the parties may agree on.
            if first.is_none() && TERM_RENEWS.is_match(text) && !NOT_A_RENEWAL.is_match(text) {
                first = Some(extracted(index, RENEWS_UNKNOWN_LENGTH.to_owned(), None, sentence));
            }
        }
        if let Some(first) = first {
            unknown.get_or_insert((first_at, first));
            continue;
        }
        if first_at.is_some() && unknown.is_none() {
            loose_at = first_at;
            break;
        }
    }
    if let Some((at, first)) = unknown {
        return (at, Some(first));
    }
    // No sentence says the term renews: a term that runs on after its fixed period until a party ends it ("shall
    // continue in full force and effect thereafter until terminated by either party") renews without end.
    for (i, sentence) in index.sentences().iter().enumerate() {
        let text = &*whole_text(index, i);
        if agrees(index, i) && TERM_SUBJECT.is_match(text) && CONTINUES_THEREAFTER.is_match(text) {
            let value = "continues after its term until terminated (no end)".to_owned();
            return (Some(i), Some(extracted(index, value, Some(Value::Perpetual), sentence)));
        }
    }
    (loose_at, None)
}

/// Does sentence `i` agree something: operative text, or a sentence the structure placed among the definitions that
/// defines nothing ("This Agreement will automatically renew for up to two (2) renewal terms ..." under a heading the
/// structure took for the definitions)?
fn agrees(index: &ContractIndex, i: usize) -> bool {
    let place = index.place(i);
    place.is_operative()
        || (place.zone == Zone::Definitions
            && !place.definition
            && !place.heading_only
            && !place.cross_reference
            && index.defined_term(i).is_none())
}

/// The initial term's length, not a renewal's: "remain effective for an initial term of 10 years".
static INITIAL_TERM_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(initial|original|first)\s+(term|period)\s+(of\s+|shall\s+be\s+|is\s+)?$"));

/// A cure period just before: "is diligently curing the failure, that period shall be".
static CURING_BEFORE: LazyLock<Regex> = LazyLock::new(|| ci(r"\b(cure|cured|curing|remedy|remedied)\b[^.]{0,200}$"));

/// A renewal with no end: "then renews for an unlimited period", "renews indefinitely". Not "an unlimited number
/// of one-year terms", which renew for a year each.
static UNLIMITED_RENEWAL: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(renew|extend)\w*\s+((\w+\s+){0,3}?for\s+an?\s+(unlimited|indefinite)\s+(period|term|duration)|indefinitely)\b",
    )
});

/// After its fixed period the term runs on until a party ends it: "and shall continue thereafter until terminated",
/// "shall remain in effect thereafter unless and until either party terminates it".
static CONTINUES_THEREAFTER: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(continue|remain)\s+(in\s+(full\s+)?(force|effect)(\s+and\s+effect)?\s+)?thereafter\s+(unless\s+and\s+)?until\s+(\w+\s+){0,3}terminat\w*|\bthereafter,?\s+(it|this\s+(\w+\s+)?(agreement|contract))\s+(shall|will)\s+(automatically\s+)?(continue|remain)\b[^.;]{0,40}?\buntil\s+(\w+\s+){0,3}terminat\w*",
    )
});

/// What the renewal field says when the term renews but the contract does not say for how long.
pub const RENEWS_UNKNOWN_LENGTH: &str = "renews; the length is not stated";
/// A sentence about the term renewing: "this Agreement shall automatically renew", "the Term will be extended",
/// "renews automatically", "successive renewal terms".
static TERM_RENEWS: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(this\s+(\w+\s+){0,2}(agreement|contract)|the\s+(initial\s+|original\s+|then[- ]current\s+)?term|it)\b[^.;]{0,120}\b(shall|will|may|is)\s+(\w+\s+){0,2}(renew|extend)\w*|\b(automatic(ally)?|tacit(ly)?)\s+(be\s+)?(renew|extend)\w*|\b(renew|extend)\w*\s+(automatically|tacitly)|\bsuccessive\s+(\w+\s+){0,2}(renewal|extension)\s+(terms?|periods?)|\boption\s+to\s+(renew|extend)\s+(this|the)\s+(\w+\s+){0,2}(agreement|term)",
    )
});
/// Renewals that are not the term's: an extension the parties may agree on, a refusal to renew, confidentiality
/// "during the Term and any renewals".
static NOT_A_RENEWAL: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\bmutual(ly)?\b[^.;]{0,60}\b(renew|extend|extension)|\b(renew|extend)\w*\s+(\w+\s+){0,2}(on|upon|by)\s+(the\s+)?(mutual|written|further)\s+(\w+\s+)?(agreement|consent)|\bagree\w*\s+(in\s+writing\s+)?(to|upon|on)\s+(an?\s+)?(renew|extend|extension)|\bnegotiat\w*[^.;]{0,60}(renew|extension)|\b(renew|extend)\w*[^.;]{0,100}\bmutual(ly)?\s+agree|\bno\s+renewal|\bunless\s+(\w+\s+){0,3}(renewed|extended)|\bconfidential|\bcure\b|\bbreach",
    )
});
static RENEW_LOOSE: LazyLock<Regex> = LazyLock::new(|| ci(r"\b(renew\w*|extended|extension|extend)\b"));

static NOTICE_WORD: LazyLock<Regex> = LazyLock::new(|| ci(r"\bnotic\w*|\bnotif\w*"));
static RENEW_WORD: LazyLock<Regex> = LazyLock::new(|| {
    ci(r"\b(renew\w*|extend\w*|extension|expir\w*|(end|conclusion)\s+of\s+the|intent(ion)?\s+to\s+terminate)")
});
/// A renewal clause that says how it is stopped without the word notice: "shall automatically renew ..., unless
/// terminated by Reseller within sixty (60) days prior to the expiration".
static UNLESS_ENDED: LazyLock<Regex> = LazyLock::new(|| ci(r"\bunless\s+(\w+\s+){0,3}(terminated|cancell?ed)\b"));
/// A notice that a party wants to renew (an option exercised), not one that stops a renewal: "written notice of your
/// desire to renew at least six (6) months before the end of the term".
static NOTICE_TO_RENEW: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\bnotice\s+of\s+(\w+\s+){0,2}(desire|intention|intent|election|wish|decision|choice)\s+to\s+(renew|extend|exercise)",
    )
});

/// The notice that stops the term renewing: a period of notice in the renewal clause or the two sentences after it
/// ("unless either party gives notice at least sixty (60) days before the end of the then-current term").
fn renewal_notice(index: &ContractIndex, renewal_at: Option<usize>) -> Option<Extracted> {
    renewal_at
        .and_then(|at| notice_near(index, at))
        .or_else(|| non_renewal_notice(index))
        .or_else(|| open_ended_notice(index))
        .or_else(|| after_the_initial_term_notice(index))
}

/// A party's wish not to renew, said without the word "notice": "unless a party asks in writing, no later than
/// sixty (60) days before the renewal, that the term not be renewed".
static NOT_RENEWING: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\bnot\s+(to\s+)?(be\s+)?(renew|extend)\w*|\bnon-?\s?renewal\b|\belects?\s+not\s+to\b"));

/// After its first term the agreement runs on until a party ends it on notice: "After the Initial Term, either party
/// may terminate this Agreement for convenience on written notice of at least two months".
static AFTER_THE_INITIAL_TERM: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(following|after|upon\s+(the\s+)?(expiration|expiry|end)\s+of|at\s+any\s+time\s+after)\s+(the\s+)?(initial|original|first|minimum)\s+(term|period)\b[^.;]{0,40}\b(either|any|each)\s+part(y|ies)\s+may\s+terminate\b",
    )
});

fn after_the_initial_term_notice(index: &ContractIndex) -> Option<Extracted> {
    index.sentences().iter().enumerate().find_map(|(i, sentence)| {
        let text = &*whole_text(index, i);
        if !agrees(index, i) || !AFTER_THE_INITIAL_TERM.is_match(text) || !NOTICE_WORD.is_match(text) {
            return None;
        }
        let (_, number, unit) = values::durations(text).into_iter().find(|(r, _, _)| is_notice_period(text, r))?;
        let v = Value::Duration { number, unit };
        Some(extracted(index, v.display(), Some(v), sentence))
    })
}

/// A term that runs until a party ends it on notice: "the term shall remain in effect until terminated by either
/// party upon thirty (30) days' prior written notice". That notice is what stops the agreement going on.
static UNTIL_ENDED_ON_NOTICE: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(continue|remain)\b[^.;]{0,80}\buntil\s+(\w+\s+){0,3}terminat\w*[^.;]{0,80}\bnotice\b"));

fn open_ended_notice(index: &ContractIndex) -> Option<Extracted> {
    index.sentences().iter().enumerate().find_map(|(i, sentence)| {
        let text = &*whole_text(index, i);
        if !agrees(index, i) || !TERM_SUBJECT.is_match(text) || !UNTIL_ENDED_ON_NOTICE.is_match(text) {
            return None;
        }
        let (_, number, unit) = values::durations(text).into_iter().find(|(r, _, _)| is_notice_period(text, r))?;
        let v = Value::Duration { number, unit };
        Some(extracted(index, v.display(), Some(v), sentence))
    })
}

/// A sentence that says how a renewal is stopped: "notice of its intention not to renew", "notice of non-renewal",
/// "prior to the expiration of the then current term", "prior to the anniversary date".
static NON_RENEWAL: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\bnot\s+(to\s+)?(be\s+)?(renew|extend)\w*|\bnon-?\s?renewal\b|\b(prior\s+to|before|preceding)\s+(the\s+)?(end|expiration|expiry|anniversary)\s+(date\s+)?(of\s+)?(the\s+|such\s+|any\s+|each\s+)?(then[- ]?current|initial|renewal|current|applicable|relevant)\b|\b(cancel|terminate)\w*\s+(this\s+(\w+\s+)?(agreement|contract)\s+)?(at|as\s+of|effective\s+(at|as\s+of|upon))\s+the\s+(end|expiration|expiry)\s+of\s+the\s+((then[- ]?current|initial|original|renewal)\s+)?term\b",
    )
});

/// Failing a notice beside the renewal clause: the first operative sentence about stopping a renewal that names a
/// period of notice.
fn non_renewal_notice(index: &ContractIndex) -> Option<Extracted> {
    for (i, sentence) in index.sentences().iter().enumerate() {
        let text = &*whole_text(index, i);
        let says_notice = NOTICE_WORD.is_match(text) || NOT_RENEWING.is_match(text);
        if !agrees(index, i) || !NON_RENEWAL.is_match(text) || !says_notice || NOTICE_TO_RENEW.is_match(text) {
            continue;
        }
        if let Some((_, number, unit)) = values::durations(text).into_iter().find(|(r, _, _)| is_notice_period(text, r))
        {
            let v = Value::Duration { number, unit };
            return Some(extracted(index, v.display(), Some(v), sentence));
        }
    }
    None
}

/// A period of notice in the renewal clause at `at` or the two sentences after it.
fn notice_near(index: &ContractIndex, at: usize) -> Option<Extracted> {
    let sentences = index.sentences();
    for (i, sentence) in sentences.iter().enumerate().skip(at).take(3) {
        if !agrees(index, i) {
            continue;
        }
        let text = &*whole_text(index, i);
        let says_notice =
            NOTICE_WORD.is_match(text) || (i == at && (NOT_RENEWING.is_match(text) || UNLESS_ENDED.is_match(text)));
        if !says_notice || (i != at && !RENEW_WORD.is_match(text)) || NOTICE_TO_RENEW.is_match(text) {
            continue;
        }
        if let Some((_, number, unit)) = values::durations(text).into_iter().find(|(r, _, _)| is_notice_period(text, r))
        {
            let v = Value::Duration { number, unit };
            return Some(extracted(index, v.display(), Some(v), sentence));
        }
    }
    None
}
