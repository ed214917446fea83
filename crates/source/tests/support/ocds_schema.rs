//! The OCDS 1.1 release package schema from `../shared/data/ocds/schema/`, compiled with its `$ref` to the release
//! schema resolved from the same folder (never fetched). One home for the test (`tests/ocds.rs`) and the example the
//! end-to-end test runs on an exported file (`examples/ocds_check.rs`).

use serde_json::Value;
use std::path::Path;

struct LocalSchemas(Value);

impl jsonschema::Retrieve for LocalSchemas {
    fn retrieve(&self, uri: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        if uri.as_str().ends_with("/release-schema.json") {
            Ok(self.0.clone())
        } else {
            Err(format!("{uri} is not in the shared OCDS folder").into())
        }
    }
}

/// The validator of a release package, from the schema folder `folder`.
pub fn release_package_validator(folder: &Path) -> Result<jsonschema::Validator, String> {
    let read = |name: &str| -> Result<Value, String> {
        let text = std::fs::read_to_string(folder.join(name)).map_err(|e| format!("{name}: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))
    };
    jsonschema::options()
        .with_retriever(LocalSchemas(read("release-schema.json")?))
        .build(&read("release-package-schema.json")?)
        .map_err(|e| format!("the package schema does not compile: {e}"))
}

/// Every way `package` breaks the schema, as `path: problem` lines (empty when it validates).
pub fn problems(validator: &jsonschema::Validator, package: &Value) -> Vec<String> {
    validator.iter_errors(package).map(|e| format!("{}: {e}", e.instance_path())).collect()
}
