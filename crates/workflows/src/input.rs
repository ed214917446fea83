//! A run's input checked against its graph's declared form (`GraphDef::input`) before the run starts: the one
//! home of that check, used by `Api::start_run` (the Runs area and `pactwise runs start`). Amounts use the same
//! reading as the steps (`money::cents`), so what passes here is what a step can read.

use crate::money::cents;
use pactwise_engine::{FieldKind, GraphDef, InputField};
use serde_json::Value;

/// The first field of an input that does not fit its graph's form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{label}: {message}")]
pub struct InputProblem {
    /// Where it is in the input: the field's key, with a table's row number (from 1) and column
    /// (`vendors.2.price`).
    pub field: String,
    /// The field as the form names it ("Vendors, row 2: Price").
    pub label: String,
    /// What is wrong and what to do.
    pub message: String,
}

/// Longest text a field takes.
const MAX_TEXT: usize = 4_000;
/// Most rows a table takes.
const MAX_ROWS: usize = 500;

/// Checks `input` against `graph`'s declared fields (a graph that declares none takes any object).
pub fn check_input(graph: &GraphDef, input: &Value) -> Result<(), InputProblem> {
    if !input.is_object() {
        return Err(InputProblem {
            field: String::new(),
            label: "The form".into(),
            message: "the input must be a set of named fields (a JSON object)".into(),
        });
    }
    check_fields(&graph.input, input, "", "")
}

fn lookup<'v>(input: &'v Value, key: &str) -> &'v Value {
    key.split('.').fold(input, |v, part| v.get(part).unwrap_or(&Value::Null))
}

fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn check_fields(fields: &[InputField], input: &Value, path: &str, label_prefix: &str) -> Result<(), InputProblem> {
    for f in fields {
        let problem = |message: String| InputProblem {
            field: format!("{path}{}", f.key),
            label: format!("{label_prefix}{}", f.label),
            message,
        };
        let value = lookup(input, &f.key);
        if is_blank(value) {
            if f.required {
                return Err(problem(format!("{} is required", article(f))));
            }
            continue;
        }
        check_value(f, value).map_err(problem)?;
        if f.kind == FieldKind::Table {
            for (i, row) in value.as_array().into_iter().flatten().enumerate() {
                let row_path = format!("{path}{}.{}.", f.key, i + 1);
                let row_label = format!("{label_prefix}{}, row {}: ", f.label, i + 1);
                check_fields(&f.columns, row, &row_path, &row_label)?;
            }
        }
    }
    Ok(())
}

fn article(f: &InputField) -> String {
    match f.kind {
        FieldKind::Table => "at least one row".into(),
        FieldKind::Tags => "at least one entry".into(),
        _ => "a value".into(),
    }
}

fn shown(v: &Value) -> String {
    let text = match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    if text.chars().count() > 40 { format!("{}…", text.chars().take(40).collect::<String>()) } else { text }
}

fn check_value(f: &InputField, v: &Value) -> Result<(), String> {
    match f.kind {
        FieldKind::Text | FieldKind::LongText => match v {
            Value::String(s) if s.chars().count() > MAX_TEXT => Err(format!("at most {MAX_TEXT} characters")),
            Value::String(_) => Ok(()),
            other => Err(format!("must be text, not {}", shown(other))),
        },
        FieldKind::Money => match cents(v) {
            Some(c) if c >= 0 => Ok(()),
            Some(_) => Err("must not be negative".into()),
            None => Err(format!("must be an amount like 12500 or 12500.50 (got {})", shown(v))),
        },
        FieldKind::WholeNumber => {
            let n = match v {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.trim().parse::<i64>().ok(),
                _ => None,
            }
            .ok_or_else(|| format!("must be a whole number (got {})", shown(v)))?;
            if let Some(min) = f.min
                && n < min
            {
                return Err(format!("must be at least {min} (got {n})"));
            }
            if let Some(max) = f.max
                && n > max
            {
                return Err(format!("must be at most {max} (got {n})"));
            }
            Ok(())
        }
        FieldKind::Date => v
            .as_str()
            .and_then(|s| s.trim().parse::<chrono::NaiveDate>().ok())
            .map(|_| ())
            .ok_or_else(|| format!("must be a date like 2027-03-31 (got {})", shown(v))),
        FieldKind::Flag => v.as_bool().map(|_| ()).ok_or_else(|| format!("must be yes or no (got {})", shown(v))),
        FieldKind::Choice => match v.as_str() {
            Some(s) if f.options.iter().any(|o| o == s) => Ok(()),
            _ => Err(format!("must be one of {} (got {})", f.options.join(", "), shown(v))),
        },
        FieldKind::Tags => {
            let list = v.as_array().ok_or_else(|| format!("must be a list of words (got {})", shown(v)))?;
            for item in list {
                let word = item.as_str().ok_or_else(|| format!("each entry must be a word (got {})", shown(item)))?;
                if word.chars().count() > 200 {
                    return Err("an entry is longer than 200 characters".into());
                }
                if !f.options.is_empty() && !f.options.iter().any(|o| o == word.trim()) {
                    return Err(format!("{:?} is not one of {}", word, f.options.join(", ")));
                }
            }
            Ok(())
        }
        FieldKind::Document => v
            .as_str()
            .and_then(|s| s.parse::<pactwise_domain::DocumentId>().ok())
            .map(|_| ())
            .ok_or_else(|| "must be a document of this organization; pick one from the list".to_string()),
        FieldKind::Vendor => v
            .as_str()
            .filter(|s| !s.trim().is_empty() && s.len() <= 64)
            .map(|_| ())
            .ok_or_else(|| "must be a vendor of this organization; pick one from the list".to_string()),
        FieldKind::Table => {
            let rows = v.as_array().ok_or_else(|| format!("must be a list of rows (got {})", shown(v)))?;
            if rows.len() > MAX_ROWS {
                return Err(format!("at most {MAX_ROWS} rows"));
            }
            match rows.iter().position(|r| !r.is_object()) {
                Some(i) => Err(format!("row {} is not a set of named fields", i + 1)),
                None => Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn procurement() -> GraphDef {
        crate::registry().unwrap().graph("procurement").unwrap().clone()
    }

    #[test]
    fn a_good_procurement_form_passes() {
        let input = json!({"request": "standing desks", "budget": "10,000.50", "capabilities": ["delivery"],
                           "vendors": [{"name": "Acme", "price": 9000, "lead_days": 10, "capabilities": ["delivery"]}]});
        assert_eq!(check_input(&procurement(), &input), Ok(()));
    }

    #[test]
    fn each_bad_field_is_named_with_what_to_do() {
        let cases = [
            (json!({"budget": 100}), "request", "Request: a value is required"),
            (json!({"request": "desks", "budget": "lots"}), "budget", "must be an amount"),
            (json!({"request": "desks", "budget": -3}), "budget", "must not be negative"),
            (json!({"request": "desks", "budget": 10, "capabilities": "delivery"}), "capabilities", "list of words"),
            (
                json!({"request": "desks", "budget": 10, "vendors": [{"name": "Acme", "price": 5}, {"name": "Initech"}]}),
                "vendors.2.price",
                "Vendors, row 2: Price: a value is required",
            ),
            (
                json!({"request": "desks", "budget": 10, "vendors": [{"name": "Acme", "price": 5, "lead_days": -1}]}),
                "vendors.1.lead_days",
                "must be at least 0",
            ),
        ];
        for (input, field, words) in cases {
            let problem = check_input(&procurement(), &input).expect_err(&input.to_string());
            assert_eq!(problem.field, field, "{input}");
            assert!(problem.to_string().contains(words), "{problem} / {words}");
        }
    }

    #[test]
    fn every_declared_form_of_the_built_in_graphs_accepts_a_filled_example() {
        let examples = [
            (
                "contract_lifecycle",
                json!({"contract": {"title": "MSA", "value": 1000, "risk_flags": ["ip_assignment"]}}),
            ),
            (
                "vendor_onboarding",
                json!({"vendor": {"name": "Acme", "tax_id": "12-3", "documents": ["w9"], "sanctions_hit": false}}),
            ),
            (
                "invoice_processing",
                json!({"po": {"lines": [{"sku": "A", "qty": 2, "unit_price": 5}]},
                       "receipt": {"lines": [{"sku": "A", "qty": 2}]},
                       "invoice": {"number": "INV-1", "lines": [{"sku": "A", "qty": 2, "unit_price": 5}], "total": 10}}),
            ),
            ("budget_planning", json!({"year": 2027, "lines": [{"department": "IT", "amount": 100}], "cap": 500})),
            ("renewal_notice", json!({"contract": "MSA", "notice_by": "2027-03-31"})),
        ];
        let registry = crate::registry().unwrap();
        for (name, input) in examples {
            let graph = registry.graph(name).unwrap();
            assert!(!graph.input.is_empty(), "{name} declares its form");
            assert_eq!(check_input(graph, &input), Ok(()), "{name}");
        }
    }
}
