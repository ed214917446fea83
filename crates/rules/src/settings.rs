//! The organization's settings that sync between its desktops, and the one check of their values. The desktop
//! store runs it on a local write and on a value that arrives by sync alike (a value it refuses is logged and the
//! old one kept), and on what it reads back (a bad stored value is ignored, so it can be repaired).
//!
//! The review gate's thresholds have bounds no member can set past: a minimum confidence below
//! [`MIN_CONFIDENCE_FLOOR`] or a share of unanswered items above [`MAX_NOT_EVALUATED_CEILING`] would let the gate
//! send documents on without a person that it exists to stop.
//!
//! The task queue's health check ([`QUEUE_HEALTH`]) flags an agent type at a number of failures in the past hour
//! and a queue at a number of pending tasks; both are whole numbers within [`HEALTH_BOUNDS`].

use serde_json::Value;

pub const THRESHOLDS: &str = "review.thresholds";
pub const ALIASES: &str = "organization.aliases";
pub const QUEUE_HEALTH: &str = "queue.health";

/// The settings that sync (last writer wins per key). Others stay on the desktop.
pub const SYNCED_SETTINGS: &[&str] = &[THRESHOLDS, ALIASES, QUEUE_HEALTH];

/// The health check's thresholds: name, default and bounds (inclusive). A threshold of 0 would flag every queue.
pub const HEALTH_BOUNDS: [(&str, u32, u32, u32); 2] =
    [("failures_per_hour", 10, 1, 10_000), ("backlog", 100, 1, 1_000_000)];

/// The default of the health threshold `name` (the store's `HealthThresholds::default` reads it).
pub fn health_default(name: &str) -> Option<u32> {
    HEALTH_BOUNDS.iter().find(|(n, ..)| *n == name).map(|(_, default, ..)| *default)
}

/// The lowest a minimum confidence threshold may be set.
pub const MIN_CONFIDENCE_FLOOR: f64 = 0.5;
/// The highest share of items not evaluated that may be let through.
pub const MAX_NOT_EVALUATED_CEILING: f64 = 0.5;

/// Each threshold's name, default and bounds (inclusive).
pub const THRESHOLD_BOUNDS: [(&str, f64, f64, f64); 4] = [
    ("ocr_min_confidence", 0.85, MIN_CONFIDENCE_FLOOR, 1.0),
    ("classification_min_confidence", 0.75, MIN_CONFIDENCE_FLOOR, 1.0),
    ("critical_min_confidence", 0.70, MIN_CONFIDENCE_FLOOR, 1.0),
    ("max_not_evaluated_share", 0.20, 0.0, MAX_NOT_EVALUATED_CEILING),
];

/// The most names an organization may list as its own.
pub const MAX_ALIASES: usize = 100;
/// The longest name, in characters.
pub const MAX_ALIAS_CHARS: usize = 200;

/// The default of the threshold `name` (the one table above; the review gate's defaults read it).
pub fn threshold_default(name: &str) -> Option<f64> {
    THRESHOLD_BOUNDS.iter().find(|(n, ..)| *n == name).map(|(_, default, ..)| *default)
}

/// Is `value` within its threshold's bounds? The error says the bounds.
pub fn check_threshold(name: &str, value: f64) -> Result<(), String> {
    let Some((_, _, low, high)) = THRESHOLD_BOUNDS.iter().find(|(n, ..)| *n == name) else {
        let known: Vec<&str> = THRESHOLD_BOUNDS.iter().map(|(n, ..)| *n).collect();
        return Err(format!("unknown threshold {name:?}; known: {}", known.join(", ")));
    };
    if value.is_nan() || value < *low || value > *high {
        return Err(format!("{name} must be a number from {low} to {high}, not {value}"));
    }
    Ok(())
}

/// Is this a well-formed value for the synced setting `key`? Keys that do not sync are refused too.
pub fn check_synced_setting(key: &str, value: &Value) -> Result<(), String> {
    match key {
        THRESHOLDS => {
            let Value::Object(map) = value else {
                return Err(format!("{THRESHOLDS} must be an object of named thresholds, not {}", kind(value)));
            };
            for (name, v) in map {
                let Some(number) = v.as_f64() else {
                    return Err(format!("{name} must be a number, not {}", kind(v)));
                };
                check_threshold(name, number)?;
            }
            Ok(())
        }
        ALIASES => {
            let Value::Array(names) = value else {
                return Err(format!("{ALIASES} must be a list of names, not {}", kind(value)));
            };
            if names.len() > MAX_ALIASES {
                return Err(format!("at most {MAX_ALIASES} names, not {}", names.len()));
            }
            for name in names {
                match name.as_str() {
                    Some(n) if !n.trim().is_empty() && n.chars().count() <= MAX_ALIAS_CHARS => {}
                    Some(_) => return Err(format!("each name must be 1 to {MAX_ALIAS_CHARS} characters")),
                    None => return Err(format!("each name must be text, not {}", kind(name))),
                }
            }
            Ok(())
        }
        QUEUE_HEALTH => {
            let Value::Object(map) = value else {
                return Err(format!("{QUEUE_HEALTH} must be an object of named thresholds, not {}", kind(value)));
            };
            for (name, v) in map {
                let Some((_, _, low, high)) = HEALTH_BOUNDS.iter().find(|(n, ..)| n == name) else {
                    let known: Vec<&str> = HEALTH_BOUNDS.iter().map(|(n, ..)| *n).collect();
                    return Err(format!("unknown health threshold {name:?}; known: {}", known.join(", ")));
                };
                match v.as_u64() {
                    Some(n) if n >= u64::from(*low) && n <= u64::from(*high) => {}
                    _ => return Err(format!("{name} must be a whole number from {low} to {high}, not {v}")),
                }
            }
            Ok(())
        }
        other => Err(format!("the setting {other:?} does not sync")),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn malformed_synced_values_are_refused_with_what_was_wrong() {
        let e = check_synced_setting(THRESHOLDS, &json!(1)).unwrap_err();
        assert!(e.contains("must be an object"), "{e}");
        let e = check_synced_setting(ALIASES, &json!({"not": "a list"})).unwrap_err();
        assert!(e.contains("must be a list of names"), "{e}");
        assert!(check_synced_setting(ALIASES, &json!(["Acme", 7])).is_err());
        assert!(check_synced_setting(ALIASES, &json!(["  "])).is_err());
        assert!(check_synced_setting(THRESHOLDS, &json!({"ocr_min_confidence": "high"})).is_err());
        assert!(check_synced_setting(THRESHOLDS, &json!({"tenant": 0.9})).is_err());
        assert!(check_synced_setting("sync.account", &json!({})).is_err());
    }

    #[test]
    fn thresholds_that_would_let_everything_past_review_are_refused() {
        for (name, value) in [
            ("ocr_min_confidence", 0.0),
            ("classification_min_confidence", 0.1),
            ("critical_min_confidence", 0.49),
            ("max_not_evaluated_share", 1.0),
            ("max_not_evaluated_share", 0.51),
            ("critical_min_confidence", f64::NAN),
            ("ocr_min_confidence", 1.5),
        ] {
            assert!(check_threshold(name, value).is_err(), "{name}={value}");
            assert!(check_synced_setting(THRESHOLDS, &json!({ name: value })).is_err(), "{name}={value}");
        }
    }

    #[test]
    fn health_thresholds_are_whole_numbers_within_their_bounds() {
        for bad in [
            json!(5),
            json!({"failures_per_hour": 0}),
            json!({"failures_per_hour": 2.5}),
            json!({"backlog": -1}),
            json!({"backlog": 1_000_001}),
            json!({"backlog": "many"}),
            json!({"pending": 10}),
        ] {
            assert!(check_synced_setting(QUEUE_HEALTH, &bad).is_err(), "{bad}");
        }
        let e = check_synced_setting(QUEUE_HEALTH, &json!({"failures_per_hour": 0})).unwrap_err();
        assert!(e.contains("from 1 to 10000"), "{e}");
        for (name, default, low, high) in HEALTH_BOUNDS {
            for v in [default, low, high] {
                assert!(check_synced_setting(QUEUE_HEALTH, &json!({ name: v })).is_ok(), "{name}={v}");
            }
        }
        assert!(check_synced_setting(QUEUE_HEALTH, &json!({})).is_ok(), "missing thresholds take their defaults");
    }

    #[test]
    fn the_defaults_and_ordinary_values_pass() {
        for (name, default, low, high) in THRESHOLD_BOUNDS {
            for v in [default, low, high] {
                assert!(check_threshold(name, v).is_ok(), "{name}={v}");
            }
        }
        assert!(check_synced_setting(THRESHOLDS, &json!({"ocr_min_confidence": 0.9})).is_ok());
        assert!(check_synced_setting(THRESHOLDS, &json!({})).is_ok(), "missing thresholds take their defaults");
        assert!(check_synced_setting(ALIASES, &json!(["Acme Corp", "ACME"])).is_ok());
        assert!(check_synced_setting(ALIASES, &json!([])).is_ok());
    }
}
