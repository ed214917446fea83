//! JSON Schemas for structured output and tool inputs: generated from Rust types with `schemars`, and replies are
//! validated against them with `jsonschema` before anything is parsed.

use crate::error::ModelError;
use schemars::JsonSchema;
use serde_json::Value;

/// The input schema of a tool whose input is `T`. Tool inputs must be JSON objects, so `T` must be a struct (or
/// another type whose schema is an object).
pub fn object_schema<T: JsonSchema>() -> Result<Value, ModelError> {
    let schema = schemars::schema_for!(T);
    let mut value =
        serde_json::to_value(&schema).map_err(|e| ModelError::Internal(format!("schema of a type: {e}")))?;
    let Some(object) = value.as_object_mut() else {
        return Err(ModelError::Internal("a schema is not a JSON object".into()));
    };
    object.remove("$schema");
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err(ModelError::Internal(format!(
            "the output type {} must be a struct: tool input schemas are JSON objects",
            std::any::type_name::<T>()
        )));
    }
    Ok(value)
}

/// A compiled schema.
pub struct SchemaCheck {
    validator: jsonschema::Validator,
}

impl SchemaCheck {
    pub fn new(schema: &Value) -> Result<Self, ModelError> {
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| ModelError::Internal(format!("an invalid JSON Schema: {e}")))?;
        Ok(Self { validator })
    }

    /// Every way `instance` breaks the schema, each as "at PATH: what is wrong"; empty when it is valid.
    pub fn errors(&self, instance: &Value) -> Vec<String> {
        self.validator
            .iter_errors(instance)
            .map(|error| {
                let path = error.instance_path().as_str().to_string();
                let path = if path.is_empty() { "/".to_string() } else { path };
                format!("at {path}: {error}")
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Party {
        name: String,
        share_percent: u8,
    }

    #[test]
    fn a_struct_schema_is_an_object_without_a_dialect_marker_and_reports_each_error_with_its_path() {
        let schema = object_schema::<Party>().unwrap();
        assert!(schema.get("$schema").is_none());
        let check = SchemaCheck::new(&schema).unwrap();
        assert!(check.errors(&serde_json::json!({"name": "Acme", "share_percent": 40})).is_empty());
        let errors = check.errors(&serde_json::json!({"name": 5, "share_percent": 400}));
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("at /name:")), "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("at /share_percent:")), "{errors:?}");
    }

    #[test]
    fn a_non_object_output_type_is_refused() {
        assert!(object_schema::<Vec<String>>().is_err());
    }
}
