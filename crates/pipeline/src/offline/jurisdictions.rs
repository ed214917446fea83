//! Jurisdictions a governing-law clause can name: every country (ISO 3166-1), every US state and the District of
//! Columbia, every Canadian province and territory, every Australian state and territory, and the four nations of the
//! United Kingdom (ISO 3166-2), with the names, common names and official names ISO gives them. The table
//! (`jurisdictions.tsv`) is generated from Debian's `iso-codes` by `crates/pipeline/tests/jurisdictions.rs`, never
//! written by hand; no name in it comes from a contract. Output names are neutral: a country by its short name
//! ("South Africa", "China"), a subdivision with its country ("Ontario, Canada", "New York, United States").

use std::sync::LazyLock;

/// One name of one jurisdiction: `key` is the lowercased name as written in text (with and without accents).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jurisdiction {
    pub key: String,
    /// ISO 3166-1 alpha-2 for a country, ISO 3166-2 for a subdivision (`US-NY`, `GB-ENG`).
    pub code: String,
    /// The jurisdiction's own name ("Ontario", "South Africa").
    pub name: String,
    /// The country's name for a subdivision; empty for a country.
    pub country: String,
}

impl Jurisdiction {
    fn is_subdivision(&self) -> bool {
        !self.country.is_empty()
    }

    /// The name shown: a country alone, a subdivision with its country.
    pub fn display(&self) -> String {
        if self.is_subdivision() { format!("{}, {}", self.name, self.country) } else { self.name.clone() }
    }
}

/// The generated table, as committed (`key<TAB>code<TAB>name<TAB>country`; `#` lines are comments).
pub const TABLE_TSV: &str = include_str!("jurisdictions.tsv");

/// Adjectives lawyers use for a legal system ("English law", "Swiss law"), counted only when "law" follows. They
/// cover the OECD members and the G20 countries whose adjective differs from their name, and the UK's nations
/// ("English law" is the law of England; there is no "British law"); each names a code of the generated table.
pub const LEGAL_ADJECTIVES: &[(&str, &str)] = &[
    ("american", "US"),
    ("argentine", "AR"),
    ("argentinian", "AR"),
    ("australian", "AU"),
    ("austrian", "AT"),
    ("belgian", "BE"),
    ("brazilian", "BR"),
    ("canadian", "CA"),
    ("chilean", "CL"),
    ("chinese", "CN"),
    ("colombian", "CO"),
    ("costa rican", "CR"),
    ("czech", "CZ"),
    ("danish", "DK"),
    ("dutch", "NL"),
    ("english", "GB-ENG"),
    ("estonian", "EE"),
    ("finnish", "FI"),
    ("french", "FR"),
    ("german", "DE"),
    ("greek", "GR"),
    ("hungarian", "HU"),
    ("icelandic", "IS"),
    ("indian", "IN"),
    ("indonesian", "ID"),
    ("irish", "IE"),
    ("israeli", "IL"),
    ("italian", "IT"),
    ("japanese", "JP"),
    ("korean", "KR"),
    ("latvian", "LV"),
    ("lithuanian", "LT"),
    ("mexican", "MX"),
    ("northern irish", "GB-NIR"),
    ("norwegian", "NO"),
    ("polish", "PL"),
    ("portuguese", "PT"),
    ("russian", "RU"),
    ("saudi", "SA"),
    ("scots", "GB-SCT"),
    ("scottish", "GB-SCT"),
    ("slovak", "SK"),
    ("slovenian", "SI"),
    ("south african", "ZA"),
    ("spanish", "ES"),
    ("swedish", "SE"),
    ("swiss", "CH"),
    ("turkish", "TR"),
    ("welsh", "GB-WLS"),
];

/// Abbreviations of country names that contracts use in place of the name.
pub const ABBREVIATIONS: &[(&str, &str)] =
    &[("prc", "CN"), ("p.r.c.", "CN"), ("uk", "GB"), ("u.k.", "GB"), ("usa", "US"), ("u.s.a.", "US")];

/// Words before a name that say it is a subdivision ("the State of Georgia", not the country).
const SUBDIVISION_WORDS: &[&str] = &["state of ", "commonwealth of ", "province of ", "territory of "];

/// Parses the table (generated, and checked by `tests/jurisdictions.rs`; a line without key, code or name is left out).
pub fn parse_table(tsv: &str) -> Vec<Jurisdiction> {
    tsv.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split('\t').map(str::to_owned);
            let (key, code, name) = (fields.next()?, fields.next()?, fields.next()?);
            let country = fields.next().unwrap_or_default();
            (!key.is_empty() && !code.is_empty() && !name.is_empty()).then_some(Jurisdiction {
                key,
                code,
                name,
                country,
            })
        })
        .collect()
}

/// Every name the matcher looks for: the table, then the adjectives and abbreviations resolved to their entries.
fn names() -> &'static [(Jurisdiction, Kind)] {
    static NAMES: LazyLock<Vec<(Jurisdiction, Kind)>> = LazyLock::new(|| {
        let table = parse_table(TABLE_TSV);
        let by_code = |code: &str| table.iter().find(|j| j.code == code).cloned();
        let mut names: Vec<(Jurisdiction, Kind)> = table.iter().cloned().map(|j| (j, Kind::Name)).collect();
        for (list, kind) in [(LEGAL_ADJECTIVES, Kind::Adjective), (ABBREVIATIONS, Kind::Name)] {
            for (word, code) in list {
                if let Some(j) = by_code(code) {
                    names.push((Jurisdiction { key: (*word).to_owned(), ..j }, kind));
                }
            }
        }
        names
    });
    &NAMES
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A name: counts wherever it stands.
    Name,
    /// An adjective: counts only before "law" ("Swiss law", "English substantive law").
    Adjective,
}

/// The jurisdiction named first in `text` (the longest name where two start at the same place), shown neutrally.
/// Two subdivisions of one country joined by "and" are named together ("England and Wales, United Kingdom").
pub fn jurisdiction_in(text: &str) -> Option<String> {
    let lower = text.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'");
    let lower = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    let names = names();
    let (_, end, first) = first_name(&lower, 0, names)?;
    let Some(second) = name_after_and(&lower, end, names).filter(|second| second.is_subdivision()) else {
        return Some(first.display());
    };
    // "the laws of the United States of America and of the State of Texas": a country's federal law beside one of
    // its states' laws; the state's is the law the contract chooses.
    if !first.is_subdivision() && second.country == first.name {
        return Some(second.display());
    }
    // "England and Wales", "the Province of Ontario and the Province of Quebec".
    if first.is_subdivision() && second.country == first.country && second.code != first.code {
        return Some(format!("{} and {}, {}", first.name, second.name, first.country));
    }
    Some(first.display())
}

/// The name that follows right after " and " at `end` ("and Wales", "and the Province of Quebec", "and of the State
/// of Texas", "and the laws of the State of New York").
fn name_after_and<'a>(lower: &str, end: usize, names: &'a [(Jurisdiction, Kind)]) -> Option<&'a Jurisdiction> {
    let rest = lower[end..].strip_prefix(" and ")?;
    let rest = ["of ", "the ", "laws of ", "the "].iter().fold(rest, |r, w| r.strip_prefix(w).unwrap_or(r));
    let skip = SUBDIVISION_WORDS.iter().find_map(|w| rest.strip_prefix(w)).unwrap_or(rest);
    let at = lower.len() - skip.len();
    first_name(lower, at, names).filter(|(s, _, _)| *s == at).map(|(_, _, j)| j)
}

/// The earliest name in `lower` at or after `from`: (start, end, entry).
fn first_name<'a>(
    lower: &str,
    from: usize,
    names: &'a [(Jurisdiction, Kind)],
) -> Option<(usize, usize, &'a Jurisdiction)> {
    let mut best: Option<(usize, usize, &Jurisdiction)> = None;
    for (j, kind) in names {
        let Some(at) = find_word(lower, from, &j.key, *kind) else { continue };
        let end = at + j.key.len();
        let better = match best {
            None => true,
            Some((s, e, b)) => {
                at < s
                    || (at == s && end > e)
                    || (at == s && end == e && j.is_subdivision() != b.is_subdivision() && prefers(lower, at, j))
            }
        };
        if better {
            best = Some((at, end, j));
        }
    }
    best
}

/// Of a country and a subdivision with the same name ("Georgia"), the subdivision when the text calls it one.
fn prefers(lower: &str, at: usize, candidate: &Jurisdiction) -> bool {
    let called_subdivision = SUBDIVISION_WORDS.iter().any(|w| lower[..at].ends_with(w));
    candidate.is_subdivision() == called_subdivision
}

/// The first place at or after `from` where `key` stands as whole words (an adjective: followed by "law").
fn find_word(lower: &str, from: usize, key: &str, kind: Kind) -> Option<usize> {
    let mut search = from;
    while let Some(at) = lower.get(search..)?.find(key).map(|i| search + i) {
        let end = at + key.len();
        let before_ok = lower[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after_ok = lower[end..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        if before_ok && after_ok && (kind == Kind::Name || law_follows(&lower[end..])) {
            return Some(at);
        }
        search = end;
    }
    None
}

/// "law" or "laws" as the next word or the one after ("Swiss law", "English substantive law").
fn law_follows(rest: &str) -> bool {
    rest.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).take(2).any(|w| w == "law" || w == "laws")
}
