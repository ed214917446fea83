//! Values read from contract text and normalised: dates (ISO), periods (a number and a unit), amounts of money (a
//! decimal amount and an ISO currency), percentages. Each reader returns where in the text the value stands, so the
//! value always comes with the words it was read from. Pure: the same text gives the same values.

use chrono::NaiveDate;
use pactwise_checklists::Catalog;
use pactwise_domain::{CuadCategory, DurationUnit, ItemFinding, ItemStatus, Value};
use regex::{Regex, RegexBuilder};
use std::ops::Range;
use std::sync::LazyLock;

fn ci(pattern: &str) -> Regex {
    RegexBuilder::new(pattern).case_insensitive(true).build().expect("value patterns are valid")
}

const MONTHS: [(&str, u32); 23] = [
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sept", 9),
    ("sep", 9),
    ("oct", 10),
    ("nov", 11),
];
const MONTH_PATTERN: &str = "january|february|march|april|may|june|july|august|september|october|november|december|jan\\.?|feb\\.?|mar\\.?|apr\\.?|jun\\.?|jul\\.?|aug\\.?|sept?\\.?|oct\\.?|nov\\.?|dec\\.?";

/// A day of the week, which a date may name beside its month ("the 9th day of Tuesday, June 2020", a slip of drafting).
const WEEKDAY_PATTERN: &str = "(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)";
/// An ordinal suffix, also as text layers break it ("14t h", "1s t", "15 th").
const ORDINAL_SUFFIX: &str = r"(?:\s?(?:st|nd|rd|th)|s\s?t|n\s?d|r\s?d|t\s?h)?";
/// An ordinal word up to thirty-first, as a pattern: "first", "twentieth", "twenty-third", "Thirty First".
pub(crate) const ORDINAL_WORD: &str = r"(?:twenty|thirty)?-?\s?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth)";
/// The day written as an ordinal word: "the first day of July, 2017", "this twenty-third day of".
const DAY_WORDS: [&str; 31] = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twenty-first",
    "twenty-second",
    "twenty-third",
    "twenty-fourth",
    "twenty-fifth",
    "twenty-sixth",
    "twenty-seventh",
    "twenty-eighth",
    "twenty-ninth",
    "thirtieth",
    "thirty-first",
];

static DATE: LazyLock<Regex> = LazyLock::new(|| {
    ci(&format!(
        r"\b(?:(?P<m1>{MONTH_PATTERN})\.?\s*(?P<d1>\d{{1,2}}){ORDINAL_SUFFIX}(?:\s*,\s*|\s+)(?P<y1>\d{{4}})|(?P<glue>of|on)?(?P<d2>\d{{1,2}}){ORDINAL_SUFFIX}\s+(?:(?:day\s+)?of[\s_-]+)?(?:{WEEKDAY_PATTERN},?\s+)?(?P<m2>{MONTH_PATTERN})(?:\s*,\s*|\s+)(?:A\.D\.\s+)?(?P<y2>\d{{4}})|(?P<dw>{ORDINAL_WORD})\s+day\s+of[\s_-]+(?P<m7>{MONTH_PATTERN})(?:\s*,\s*|\s+)(?:A\.D\.\s+)?(?P<y7>\d{{4}})|(?P<mo3>\d{{1,2}})/(?P<d3>\d{{1,2}})/(?P<y3>\d{{2,4}})|(?P<mo5>\d{{1,2}})-(?P<d5>\d{{1,2}})-(?P<y5>\d{{2,4}})|(?P<y4>\d{{4}})-(?P<mo4>\d{{2}})-(?P<d4>\d{{2}})|(?P<d6>\d{{1,2}})\.(?P<mo6>\d{{1,2}})\.(?P<y6>\d{{4}}))\b"
    ))
});

/// Every date in `text` with where it stands.
pub fn dates(text: &str) -> Vec<(Range<usize>, NaiveDate)> {
    DATE.captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let month_of = |name: &str| {
                let name = name.trim_end_matches('.').to_lowercase();
                MONTHS.iter().find(|(m, _)| *m == name).map(|(_, n)| *n).or(if name == "dec" { Some(12) } else { None })
            };
            let num = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<i64>().ok());
            let (year, month, day) = if let Some(m) = c.name("m1") {
                (num("y1")?, month_of(m.as_str())?, num("d1")?)
            } else if let Some(m) = c.name("m2") {
                (num("y2")?, month_of(m.as_str())?, num("d2")?)
            } else if let Some(m) = c.name("m7") {
                (num("y7")?, month_of(m.as_str())?, i64::from(ordinal(c.name("dw")?.as_str())?))
            } else if c.name("mo3").is_some() || c.name("mo5").is_some() {
                let slash = c.name("mo3").is_some();
                let y = num(if slash { "y3" } else { "y5" })?;
                let y = if y < 100 { if y >= 50 { 1900 + y } else { 2000 + y } } else { y };
                let (first, second) = (num(if slash { "mo3" } else { "mo5" })?, num(if slash { "d3" } else { "d5" })?);
                // Month first, as American contracts write it, unless the first number cannot be a month
                // ("20/12/2018" is the twentieth of December).
                let (month, day) = if first > 12 && second <= 12 { (second, first) } else { (first, second) };
                (y, u32::try_from(month).ok()?, day)
            } else if c.name("d6").is_some() {
                // Dotted dates are written day first ("1.4.2011" is the first of April) unless the second number
                // cannot be a month ("04.18.2018").
                let (first, second) = (num("d6")?, num("mo6")?);
                let (month, day) = if second > 12 && first <= 12 { (first, second) } else { (second, first) };
                (num("y6")?, u32::try_from(month).ok()?, day)
            } else {
                (num("y4")?, u32::try_from(num("mo4")?).ok()?, num("d4")?)
            };
            let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, u32::try_from(day).ok()?)?;
            // "as of1 August 2019": a text layer that lost the space glued the word before to the date.
            let start = c.name("glue").map_or(whole.start(), |g| g.end());
            Some((start..whole.end(), date))
        })
        .collect()
}

const NUMBER_WORDS: [(&str, u32); 28] = [
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("thirteen", 13),
    ("fourteen", 14),
    ("fifteen", 15),
    ("sixteen", 16),
    ("seventeen", 17),
    ("eighteen", 18),
    ("nineteen", 19),
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("forty-five", 45),
    ("fifty", 50),
    ("sixty", 60),
    ("seventy", 70),
    ("eighty", 80),
    ("ninety", 90),
];

static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"\b(?:(?P<words>(?:(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|a|an)[\s-]*)+)\s*)?(?:\(\s*(?P<paren>\d{1,4})\s*\)|(?P<digits>\d{1,4}))?[\s-]*(?:(?:full|contract|agreement|additional|further|extra)\s+)?(?P<kind>calendar\s+|business\s+|working\s+)?(?P<unit>days?|weeks?|months?|years?)\b",
    )
});

/// The number a run of number words says ("one hundred twenty" → 120, "a" → 1). An article before other number
/// words is only an article ("a thirty-day notice" is thirty days).
fn number_from_words(words: &str) -> Option<u32> {
    let mut total = 0u32;
    let mut current = 0u32;
    let mut any = false;
    let pieces: Vec<String> =
        words.split(|c: char| c.is_whitespace() || c == '-').filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    let only_articles = pieces.iter().all(|w| w == "a" || w == "an");
    for w in pieces {
        if w == "hundred" {
            current = current.max(1) * 100;
        } else if w == "a" || w == "an" {
            if only_articles {
                current += 1;
            }
        } else if let Some((_, n)) = NUMBER_WORDS.iter().find(|(name, _)| *name == w) {
            current += n;
        } else {
            return None;
        }
        any = true;
    }
    total += current;
    any.then_some(total)
}

/// Every period in `text` ("thirty (30) days", "one year", "12-month") with where it stands.
pub fn durations(text: &str) -> Vec<(Range<usize>, u32, DurationUnit)> {
    DURATION
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let number = c
                .name("paren")
                .or(c.name("digits"))
                .and_then(|m| m.as_str().parse().ok())
                .or_else(|| c.name("words").and_then(|w| number_from_words(w.as_str().trim())))?;
            if number == 0 {
                return None;
            }
            let unit_word = c.name("unit")?.as_str().to_lowercase();
            let business = c.name("kind").is_some_and(|k| !k.as_str().to_lowercase().starts_with("calendar"));
            let unit = match unit_word.trim_end_matches('s') {
                "day" if business => DurationUnit::BusinessDay,
                "day" => DurationUnit::Day,
                "week" => DurationUnit::Week,
                "month" => DurationUnit::Month,
                _ => DurationUnit::Year,
            };
            Some((whole.range(), number, unit))
        })
        .collect()
}

/// The number an ordinal word says ("third" → 3, "twentieth" → 20, "twenty-fifth" → 25).
pub fn ordinal(word: &str) -> Option<u32> {
    let word = word.to_lowercase();
    let word = word.split(|c: char| c == '-' || c.is_whitespace()).filter(|w| !w.is_empty()).collect::<Vec<_>>();
    let word = word.join("-");
    DAY_WORDS.iter().position(|o| *o == word).and_then(|i| u32::try_from(i + 1).ok())
}

/// The date a period after `from` ends: the same day of the month for months and years (the last day of a shorter
/// month), `number` days (business days count as calendar days here) or weeks later.
pub fn add_period(from: NaiveDate, number: u32, unit: DurationUnit) -> Option<NaiveDate> {
    match unit {
        DurationUnit::Year => from.checked_add_months(chrono::Months::new(number.checked_mul(12)?)),
        DurationUnit::Month => from.checked_add_months(chrono::Months::new(number)),
        DurationUnit::Week => from.checked_add_days(chrono::Days::new(u64::from(number) * 7)),
        DurationUnit::Day | DurationUnit::BusinessDay => from.checked_add_days(chrono::Days::new(u64::from(number))),
    }
}

static PERPETUAL: LazyLock<Regex> =
    LazyLock::new(|| ci(r"\b(perpetu(al|ity)|indefinite(ly)?|no\s+(fixed\s+)?(expiration|end)\s+date)\b"));

/// Does the text say there is no end ("perpetual", "in perpetuity", "indefinitely")?
pub fn says_perpetual(text: &str) -> Option<Range<usize>> {
    PERPETUAL.find(text).map(|m| m.range())
}

static MONEY: LazyLock<Regex> = LazyLock::new(|| {
    ci(
        r"(?P<cur>US\s?\$|U\.S\.\s?\$|C\$|CDN\$|A\$|AU\$|HK\$|S\$|\$|€|£|¥|USD|EUR|GBP|CAD|AUD|JPY|CHF|CNY|RMB|INR|HKD|SGD|SEK|NOK|DKK)\s?(?P<amount>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<cents>\d{1,2}))?(?:\s*(?P<scale>million|billion|thousand|m\b|bn\b|k\b))?|(?P<amount2>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<cents2>\d{1,2}))?\s*(?P<scale2>million|billion|thousand)?\s*(?P<cur2>U\.S\.\s+dollars|US\s+dollars|dollars|euros?|pounds\s+sterling|pounds|yen|swiss\s+francs)\b",
    )
});

fn currency_code(symbol: &str) -> &'static str {
    let s = symbol.to_lowercase().replace(' ', "");
    match s.as_str() {
        "€" | "eur" | "euro" | "euros" => "EUR",
        "£" | "gbp" | "pounds" | "poundssterling" => "GBP",
        "¥" | "jpy" | "yen" => "JPY",
        "c$" | "cdn$" | "cad" => "CAD",
        "a$" | "au$" | "aud" => "AUD",
        "hk$" | "hkd" => "HKD",
        "s$" | "sgd" => "SGD",
        "chf" | "swissfrancs" => "CHF",
        "cny" | "rmb" => "CNY",
        "inr" => "INR",
        "sek" => "SEK",
        "nok" => "NOK",
        "dkk" => "DKK",
        // "$" and "dollars" alone: US dollars, the currency of the filings this product reads most; a person sees
        // the quote beside the value and corrects it where the contract means another dollar.
        _ => "USD",
    }
}

/// Every amount of money in `text` with where it stands: the amount as a decimal string and the ISO currency.
pub fn money(text: &str) -> Vec<(Range<usize>, String, &'static str)> {
    MONEY
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let (amount, cents, scale, cur) = match c.name("amount") {
                Some(a) => (a.as_str(), c.name("cents"), c.name("scale"), c.name("cur")?),
                None => (c.name("amount2")?.as_str(), c.name("cents2"), c.name("scale2"), c.name("cur2")?),
            };
            let digits: String = amount.chars().filter(|c| c.is_ascii_digit()).collect();
            let mut whole_part: u128 = digits.parse().ok()?;
            let mut fraction = cents.map(|m| format!("{:0<2}", m.as_str())).unwrap_or_default();
            if let Some(scale) = scale {
                let factor: u128 = match scale.as_str().to_lowercase().as_str() {
                    "million" | "m" => 1_000_000,
                    "billion" | "bn" => 1_000_000_000,
                    _ => 1_000,
                };
                // "1.5 million": the cents group holds tenths of the scale.
                let frac: u128 = if fraction.is_empty() { 0 } else { fraction.parse().ok()? };
                whole_part = whole_part * factor + frac * factor / 100;
                fraction.clear();
            }
            let amount = if fraction.is_empty() { whole_part.to_string() } else { format!("{whole_part}.{fraction}") };
            Some((whole.range(), amount, currency_code(cur.as_str())))
        })
        .collect()
}

static PERCENT: LazyLock<Regex> = LazyLock::new(|| ci(r"(?P<n>\d{1,3}(?:\.\d{1,4})?)\s*(?:%|percent\b|per\s+cent\b)"));

/// Every percentage in `text` with where it stands, as a decimal string.
pub fn percentages(text: &str) -> Vec<(Range<usize>, String)> {
    PERCENT.captures_iter(text).filter_map(|c| Some((c.get(0)?.range(), c.name("n")?.as_str().to_owned()))).collect()
}

/// The value an item of `category` carries, read from its verified quote: a date, a period, an amount or a
/// percentage, where the category has one and the quote states it. Governing law is read by the fields' own rule
/// (a jurisdiction list), through `jurisdiction`.
pub fn value_for(category: CuadCategory, quote: &str, jurisdiction: impl Fn(&str) -> Option<String>) -> Option<Value> {
    let duration =
        |text: &str| durations(text).into_iter().next().map(|(_, number, unit)| Value::Duration { number, unit });
    let amount = |text: &str| {
        money(text)
            .into_iter()
            .next()
            .map(|(_, amount, currency)| Value::Money { amount, currency: currency.to_owned() })
    };
    let percent = |text: &str| percentages(text).into_iter().next().map(|(_, value)| Value::Percentage { value });
    match category {
        CuadCategory::ExpirationDate => dates(quote)
            .into_iter()
            .next()
            .map(|(_, d)| Value::Date { iso: d.format("%Y-%m-%d").to_string() })
            .or_else(|| says_perpetual(quote).map(|_| Value::Perpetual))
            .or_else(|| duration(quote)),
        CuadCategory::RenewalTerm => duration(quote).or_else(|| says_perpetual(quote).map(|_| Value::Perpetual)),
        CuadCategory::NoticePeriodToTerminateRenewal
        | CuadCategory::WarrantyDuration
        | CuadCategory::NonCompete
        | CuadCategory::NoSolicitOfCustomers
        | CuadCategory::NoSolicitOfEmployees
        | CuadCategory::TerminationForConvenience => duration(quote),
        CuadCategory::GoverningLaw => jurisdiction(quote).map(|name| Value::Jurisdiction { name }),
        CuadCategory::CapOnLiability
        | CuadCategory::MinimumCommitment
        | CuadCategory::Insurance
        | CuadCategory::LiquidatedDamages => amount(quote).or_else(|| percent(quote)),
        CuadCategory::RevenueProfitSharing | CuadCategory::MostFavoredNation => {
            percent(quote).or_else(|| amount(quote))
        }
        _ => None,
    }
}

/// Gives every present or partial finding with a verified quote the value its category carries, read from that
/// quote (the same for the model's findings and the rules'); a value a person set is kept.
pub fn attach(catalog: &Catalog, findings: &mut [ItemFinding]) {
    for finding in findings.iter_mut() {
        if finding.value.is_some() || !matches!(finding.status, ItemStatus::Present | ItemStatus::Partial) {
            continue;
        }
        let (Some(quote), Some(category)) =
            (&finding.quote, catalog.item(&finding.item_id).and_then(|i| i.cuad_category))
        else {
            continue;
        };
        finding.value = value_for(category, &quote.text, crate::offline::jurisdiction_in);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(text: &str) -> Vec<String> {
        dates(text).into_iter().map(|(_, d)| d.format("%Y-%m-%d").to_string()).collect()
    }

    #[test]
    fn dates_are_read_in_their_usual_forms() {
        assert_eq!(iso("entered into as of March 18, 2019 (the"), ["2019-03-18"]);
        assert_eq!(iso("made this 18th day of March, 2019 by"), ["2019-03-18"]);
        assert_eq!(iso("dated 1 June 2020 and 2020-07-01"), ["2020-06-01", "2020-07-01"]);
        assert_eq!(iso("signed 5/9/19 and 12/31/1999"), ["2019-05-09", "1999-12-31"]);
        assert_eq!(iso("Sept. 3, 2001"), ["2001-09-03"]);
        assert!(iso("February 30, 2019").is_empty(), "no such day");
    }

    #[test]
    fn dates_survive_broken_ordinals_and_hyphens() {
        assert_eq!(iso("executed this 14t h day of October 2022"), ["2022-10-14"]);
        assert_eq!(iso("on the 1s t day of July, 2017"), ["2017-07-01"]);
        assert_eq!(iso("signed 4-30-21 at noon"), ["2021-04-30"]);
        assert_eq!(iso("Nov. 07, 2011"), ["2011-11-07"]);
        assert_eq!(iso("shall commence on the 2nd of   May, 2009, and"), ["2009-05-02"]);
        assert!(iso("call 555-12-3456").is_empty(), "not a month and day");
        assert_eq!(iso("made this 15 th day of July, 2010 by"), ["2010-07-15"]);
        assert_eq!(iso("dated March 12,1999 between"), ["1999-03-12"]);
        assert_eq!(iso("made and effective as of1 August 2019, by"), ["2019-08-01"]);
        assert_eq!(dates("as of1 August 2019")[0].0, 5..18, "the date starts at its day");
        assert!(iso("section 4.1 of10 the agreement").is_empty());
        assert_eq!(iso("entered into this 9th day of Tuesday, June 2020 (the"), ["2020-06-09"]);
    }

    #[test]
    fn a_day_written_as_an_ordinal_word_is_read() {
        assert_eq!(iso("made as of the first day of July, 2017 ("), ["2017-07-01"]);
        assert_eq!(iso("this twenty-third day of March 2004"), ["2004-03-23"]);
        assert_eq!(iso("on this Thirty First day of December, 1999"), ["1999-12-31"]);
        assert!(iso("the first of the parties, 2017").is_empty());
    }

    #[test]
    fn numeric_dates_are_month_first_unless_the_first_number_cannot_be_a_month_and_dotted_ones_day_first() {
        assert_eq!(iso("signed 20/12/2018"), ["2018-12-20"]);
        assert_eq!(iso("signed 03/04/2018"), ["2018-03-04"]);
        assert_eq!(iso("effective as of the 1.4.2011 (the"), ["2011-04-01"]);
        assert_eq!(iso("dated 04.18.2018 and 25.12.2019"), ["2018-04-18", "2019-12-25"]);
        assert!(iso("see section 31.13.2019").is_empty(), "no month in either place");
    }

    #[test]
    fn a_period_after_a_date_ends_on_the_same_day_of_the_month() {
        let from = NaiveDate::from_ymd_opt(2016, 2, 29).unwrap();
        let at = |n, u| add_period(from, n, u).map(|d| d.format("%Y-%m-%d").to_string());
        assert_eq!(at(3, DurationUnit::Year).as_deref(), Some("2019-02-28"), "no 29 February in 2019");
        assert_eq!(at(6, DurationUnit::Month).as_deref(), Some("2016-08-29"));
        assert_eq!(at(2, DurationUnit::Week).as_deref(), Some("2016-03-14"));
        assert_eq!(at(30, DurationUnit::Day).as_deref(), Some("2016-03-30"));
        assert_eq!(ordinal("Third"), Some(3));
        assert_eq!(ordinal("twentieth"), Some(20));
        assert_eq!(ordinal("Twenty Fifth"), Some(25));
        assert_eq!(ordinal("umpteenth"), None);
    }

    #[test]
    fn periods_are_read_with_their_number_and_unit() {
        let got: Vec<(u32, DurationUnit)> =
            durations("within thirty (30) days, for one year, a 12-month term, ninety days, two (2) business days")
                .into_iter()
                .map(|(_, n, u)| (n, u))
                .collect();
        assert_eq!(
            got,
            [
                (30, DurationUnit::Day),
                (1, DurationUnit::Year),
                (12, DurationUnit::Month),
                (90, DurationUnit::Day),
                (2, DurationUnit::BusinessDay)
            ]
        );
        assert_eq!(durations("one hundred twenty (120) days")[0].1, 120);
        assert_eq!(durations("provides a thirty-day notice")[0].1, 30, "an article before a number is no number");
        assert_eq!(durations("extend for an additional month")[0].1, 1);
        assert_eq!(durations("for two (2) additional years")[0].1, 2);
        assert_eq!(durations("one hundred twenty days")[0].1, 120);
        assert!(durations("the days of the week are listed").is_empty());
    }

    #[test]
    fn money_is_read_as_a_decimal_amount_and_an_iso_currency() {
        let got: Vec<(String, &str)> =
            money("up to $1,000,000, EUR 2.5 million, £500.50 and five (5) U.S. dollars, 300 euros")
                .into_iter()
                .map(|(_, a, c)| (a, c))
                .collect();
        assert_eq!(
            got,
            [("1000000".into(), "USD"), ("2500000".into(), "EUR"), ("500.50".into(), "GBP"), ("300".into(), "EUR")]
        );
    }

    #[test]
    fn percentages_and_perpetuity_are_read() {
        assert_eq!(percentages("fifty percent (50%) or 5.5 per cent")[0].1, "50");
        assert_eq!(percentages("fifty percent (50%) or 5.5 per cent")[1].1, "5.5");
        assert!(says_perpetual("shall continue in perpetuity").is_some());
        assert!(says_perpetual("for five years").is_none());
    }

    #[test]
    fn an_items_value_follows_its_category() {
        let none = |_: &str| None;
        assert_eq!(
            value_for(CuadCategory::NoticePeriodToTerminateRenewal, "at least ninety (90) days prior to the end", none),
            Some(Value::Duration { number: 90, unit: DurationUnit::Day })
        );
        assert_eq!(
            value_for(CuadCategory::ExpirationDate, "shall continue until December 31, 2020", none),
            Some(Value::Date { iso: "2020-12-31".into() })
        );
        assert_eq!(
            value_for(CuadCategory::CapOnLiability, "shall not exceed $500,000 in the aggregate", none),
            Some(Value::Money { amount: "500000".into(), currency: "USD".into() })
        );
        assert_eq!(value_for(CuadCategory::AuditRights, "may audit the books once a year", none), None);
    }
}
