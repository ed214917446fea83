//! Money and small input helpers. Amounts are integer cents; arithmetic never uses floats.

use pactwise_engine::NodeFailure;
use serde_json::Value;

/// An amount (a JSON number or numeric string, in currency units) as integer cents.
pub fn cents(v: &Value) -> Option<i64> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().replace(',', ""),
        _ => return None,
    };
    let negative = text.starts_with('-');
    let digits = text.trim_start_matches('-');
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let whole: i64 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let mut frac_digits: String = frac.chars().take(3).collect();
    if !frac_digits.chars().all(|c| c.is_ascii_digit()) || frac.chars().skip(3).any(|c| !c.is_ascii_digit()) {
        return None;
    }
    while frac_digits.len() < 3 {
        frac_digits.push('0');
    }
    let milli: i64 = frac_digits.parse().ok()?;
    let value = whole.checked_mul(100)?.checked_add((milli + 5) / 10)?;
    Some(if negative { -value } else { value })
}

/// Cents as a plain amount with two decimals.
pub fn format_cents(c: i64) -> String {
    let sign = if c < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", c.abs() / 100, c.abs() % 100)
}

pub fn required_cents(v: &Value, what: &str) -> Result<i64, NodeFailure> {
    cents(v).ok_or_else(|| NodeFailure::Fatal(format!("{what} is missing or not an amount (got {v})")))
}

pub fn text_list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter().filter_map(|x| x.as_str()).map(|s| s.trim().to_lowercase()).filter(|s| !s.is_empty()).collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn amounts_become_exact_cents() {
        assert_eq!(cents(&json!(9500)), Some(950_000));
        assert_eq!(cents(&json!(10000.5)), Some(1_000_050));
        assert_eq!(cents(&json!("1,234.56")), Some(123_456));
        assert_eq!(cents(&json!(0.1)), Some(10));
        assert_eq!(cents(&json!(-2.25)), Some(-225));
        assert_eq!(cents(&json!("lots")), None);
        assert_eq!(cents(&json!(null)), None);
        assert_eq!(format_cents(950_000), "9500.00");
        assert_eq!(format_cents(-5), "-0.05");
    }
}
