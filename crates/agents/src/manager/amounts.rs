//! Amounts with their currency: `€1.2m`, `USD 30,000`, `3.400,00 EUR`, `50k`, `2.5 million dollars`,
//! `INR 2,50,00,000`. A number is an amount only with a currency or a multiplier (`k`, `m`, `million`), so counts,
//! percentages, durations, dates and references are never read as money. An amount without a currency takes the
//! request's only other currency, else the organization's default. Values are exact (integer minor units).

use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// An amount of money in its currency's minor units (cents; yen have none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Money {
    /// ISO 4217 code.
    pub currency: String,
    /// The value in minor units (EUR 50,000.00 is 5,000,000).
    pub minor: i64,
    /// The words it was read from.
    pub text: String,
}

/// Digits after the decimal point in a currency.
pub fn minor_digits(currency: &str) -> u32 {
    match currency {
        "JPY" => 0,
        _ => 2,
    }
}

impl Money {
    /// `EUR 50000.00`, `JPY 820000`: the form the routing set labels amounts in.
    pub fn canonical(&self) -> String {
        let d = minor_digits(&self.currency);
        if d == 0 {
            return format!("{} {}", self.currency, self.minor);
        }
        let unit = 10i64.pow(d);
        format!("{} {}.{:0w$}", self.currency, self.minor / unit, self.minor % unit, w = d as usize)
    }
}

const CODES: &str = "EUR|USD|GBP|CHF|JPY|SEK|NOK|DKK|CAD|AUD|INR|CNY|PLN|CZK|NZD|SGD";
const NUM: &str = r"\d+(?:[.,\x{a0} ]\d+)*";
const MULT: &str = r"(?:(?i:k|m|mn|bn)\b|\s?(?i:million|billion|thousand)\b)";

static AMOUNT: LazyLock<Regex> = LazyLock::new(|| {
    let pre = format!(r"(?P<pre>US\$|A\$|C\$|€|\$|£|¥|₹|\b(?:{CODES}))");
    let post = format!(r"(?P<post>€|\$|£|¥|₹|\b(?:{CODES})\b|\b(?i:euros?|dollars?|pounds?)\b)");
    Regex::new(&format!(
        r"{pre}\s?(?P<n1>{NUM})(?P<m1>{MULT})?|(?P<n2>{NUM})(?P<m2>{MULT})?\s?{post}|\b(?P<n3>\d+(?:[.,]\d{{1,2}})?)(?P<m3>{MULT})"
    ))
    .expect("amount pattern")
});

fn currency_of(symbol: &str) -> Option<&'static str> {
    let s = symbol.trim();
    Some(match s.to_ascii_lowercase().as_str() {
        "€" | "eur" | "euro" | "euros" => "EUR",
        "$" | "us$" | "usd" | "dollar" | "dollars" => "USD",
        "£" | "gbp" | "pound" | "pounds" => "GBP",
        "¥" | "jpy" => "JPY",
        "₹" | "inr" => "INR",
        "a$" | "aud" => "AUD",
        "c$" | "cad" => "CAD",
        "chf" => "CHF",
        "sek" => "SEK",
        "nok" => "NOK",
        "dkk" => "DKK",
        "cny" => "CNY",
        "pln" => "PLN",
        "czk" => "CZK",
        "nzd" => "NZD",
        "sgd" => "SGD",
        _ => return None,
    })
}

/// A decimal as digits and a count of decimals.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Decimal {
    digits: u128,
    scale: u32,
}

/// Reads `30,000`, `3.400,00`, `4,500.50`, `1.2`, `30 000`, `2,50,00,000`. None when it cannot be read as one number.
fn parse_number(raw: &str, has_multiplier: bool) -> Option<Decimal> {
    // Spaces group thousands only in threes.
    let mut parts = raw.split([' ', '\u{a0}']);
    let first = parts.next()?;
    let mut s = first.to_string();
    for p in parts {
        if p.len() != 3 || !p.bytes().all(|b| b.is_ascii_digit()) || first.contains([',', '.']) {
            return None;
        }
        s.push_str(p);
    }
    let seps: Vec<(usize, char)> = s.char_indices().filter(|(_, c)| *c == ',' || *c == '.').collect();
    let (int_part, frac_part): (String, String) = match seps.as_slice() {
        [] => (s.clone(), String::new()),
        _ => {
            let kinds: std::collections::BTreeSet<char> = seps.iter().map(|(_, c)| *c).collect();
            let (last_at, _) = *seps.last()?;
            let after_last = &s[last_at + 1..];
            let one_decimal_point =
                seps.len() == 1 && (after_last.len() <= 2 || (has_multiplier && after_last.len() != 3));
            let decimal_at = if kinds.len() == 2 || one_decimal_point {
                Some(last_at)
            } else if after_last.len() == 3 {
                None
            } else {
                return None;
            };
            match decimal_at {
                Some(at) => (s[..at].replace([',', '.'], ""), s[at + 1..].to_string()),
                None => (s.replace([',', '.'], ""), String::new()),
            }
        }
    };
    if int_part.is_empty() || int_part.len() > 15 || frac_part.len() > 4 {
        return None;
    }
    let digits: u128 = format!("{int_part}{frac_part}").parse().ok()?;
    Some(Decimal { digits, scale: frac_part.len() as u32 })
}

fn multiplier(raw: Option<&str>) -> u128 {
    match raw.map(|m| m.trim().to_ascii_lowercase()) {
        Some(m) if m == "k" || m == "thousand" => 1_000,
        Some(m) if m == "m" || m == "mn" || m == "million" => 1_000_000,
        Some(m) if m == "bn" || m == "billion" => 1_000_000_000,
        _ => 1,
    }
}

fn to_minor(value: Decimal, mult: u128, currency: &str) -> Option<i64> {
    let d = minor_digits(currency);
    let scaled = value.digits.checked_mul(mult)?.checked_mul(10u128.pow(d))?;
    let unit = 10u128.pow(value.scale);
    let minor = (scaled + unit / 2) / unit;
    i64::try_from(minor).ok()
}

struct Found {
    currency: Option<&'static str>,
    value: Decimal,
    mult: u128,
    text: String,
}

fn found(c: &Captures<'_>) -> Option<Found> {
    let (n, m, cur) = if let Some(n) = c.name("n1") {
        (n, c.name("m1"), c.name("pre").and_then(|p| currency_of(p.as_str())))
    } else if let Some(n) = c.name("n2") {
        (n, c.name("m2"), c.name("post").and_then(|p| currency_of(p.as_str())))
    } else {
        (c.name("n3")?, c.name("m3"), None)
    };
    let value = parse_number(n.as_str(), m.is_some())?;
    Some(Found { currency: cur, value, mult: multiplier(m.map(|m| m.as_str())), text: c[0].trim().to_string() })
}

/// The amounts in a text, each once, in the order written.
pub(crate) fn amounts(text: &str, default_currency: &str) -> Vec<Money> {
    let all: Vec<Found> = AMOUNT.captures_iter(text).filter_map(|c| found(&c)).collect();
    let currencies: std::collections::BTreeSet<&str> = all.iter().filter_map(|f| f.currency).collect();
    let implied = match currencies.len() {
        1 => currencies.iter().next().copied().unwrap_or(default_currency),
        _ => default_currency,
    };
    let mut out: Vec<Money> = Vec::new();
    for f in all {
        let currency = f.currency.unwrap_or(implied).to_string();
        let Some(minor) = to_minor(f.value, f.mult, &currency) else { continue };
        if minor <= 0 {
            continue;
        }
        if !out.iter().any(|m| m.currency == currency && m.minor == minor) {
            out.push(Money { currency, minor, text: f.text });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<String> {
        amounts(text, "EUR").iter().map(Money::canonical).collect()
    }

    #[test]
    fn the_formats_people_write() {
        assert_eq!(read("budget 50k"), ["EUR 50000.00"]);
        assert_eq!(read("€1.2m"), ["EUR 1200000.00"]);
        assert_eq!(read("USD 30,000"), ["USD 30000.00"]);
        assert_eq!(read("$4,500.50 and USD1.5m"), ["USD 4500.50", "USD 1500000.00"]);
        assert_eq!(read("3.400,00 EUR vs 3.000,00 EUR"), ["EUR 3400.00", "EUR 3000.00"]);
        assert_eq!(read("2.300 € due"), ["EUR 2300.00"]);
        assert_eq!(read("CHF 300 000"), ["CHF 300000.00"]);
        assert_eq!(read("2.5 million dollars"), ["USD 2500000.00"]);
        assert_eq!(read("¥820,000"), ["JPY 820000"]);
        assert_eq!(read("INR 2,50,00,000"), ["INR 25000000.00"]);
        assert_eq!(read("GBP 45,300 against a 40k cap"), ["GBP 45300.00", "GBP 40000.00"]);
        assert_eq!(read("€7.9k incl. VAT"), ["EUR 7900.00"]);
        assert_eq!(read("CAD 8,740.25"), ["CAD 8740.25"]);
    }

    #[test]
    fn numbers_that_are_not_money() {
        assert!(
            read("in 3 weeks, 4% uplift, net 15, 12 months, 500 units, Q2 2027, MSA-2026-014, ISO 27001").is_empty()
        );
        assert!(read("2027-03-31 and 31/03/2027").is_empty());
        assert!(read("99999999999999999999999999 EUR").is_empty());
    }
}
