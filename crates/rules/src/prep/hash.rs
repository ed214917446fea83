//! The content hash an approval is bound to: SHA-256 of the content's canonical JSON (object keys sorted at every
//! level, no whitespace). Approving, re-validating and the publish gate all hash with this one function.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The hash of a JSON value's canonical form (lower-case hex, 64 characters).
pub fn content_hash(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The hash of typed content, through its JSON form.
pub fn hash_content<T: Serialize>(content: &T) -> String {
    content_hash(&serde_json::to_value(content).unwrap_or(Value::Null))
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_content_hash_ignores_key_order_and_sees_every_change() {
        let a = json!({"b": 1, "a": [1, {"y": "x", "x": null}]});
        let b = json!({"a": [1, {"x": null, "y": "x"}], "b": 1});
        assert_eq!(content_hash(&a), content_hash(&b));
        assert_ne!(content_hash(&a), content_hash(&json!({"b": 2, "a": [1, {"y": "x", "x": null}]})));
        assert_ne!(content_hash(&json!(["a", "b"])), content_hash(&json!(["b", "a"])));
        assert_eq!(content_hash(&a).len(), 64);
    }

    #[test]
    fn typed_content_hashes_as_its_json() {
        #[derive(Serialize)]
        struct Line {
            code: String,
            quantity: Option<u32>,
        }
        let line = Line { code: "P-1".into(), quantity: None };
        assert_eq!(hash_content(&line), content_hash(&json!({"quantity": null, "code": "P-1"})));
    }
}
