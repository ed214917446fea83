//! `checklists/schema.json` is generated from the Rust types; this test fails when it is stale.
//! Regenerate it with `UPDATE_SCHEMA=1 cargo test -p pactwise-checklists --test schema`.

use pactwise_domain::ContractType;
use std::path::Path;

fn generated_schema() -> String {
    let schema = schemars::schema_for!(ContractType);
    let mut text = serde_json::to_string_pretty(&schema).expect("the schema serializes");
    text.push('\n');
    text
}

#[test]
fn checked_in_schema_matches_the_rust_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../checklists/schema.json");
    let generated = generated_schema();
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write checklists/schema.json");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "checklists/schema.json is stale or missing; regenerate it with \
         `UPDATE_SCHEMA=1 cargo test -p pactwise-checklists --test schema` and commit it"
    );
}

#[test]
fn schema_describes_every_cuad_category_and_rejects_unknown_fields() {
    let schema: serde_json::Value = serde_json::from_str(&generated_schema()).unwrap();
    let categories = &schema["$defs"]["CuadCategory"];
    let names: Vec<&str> = categories["oneOf"]
        .as_array()
        .or(categories["enum"].as_array())
        .map(|v| v.iter().filter_map(|c| c.as_str().or(c["const"].as_str())).collect())
        .unwrap_or_default();
    assert_eq!(names.len(), 41, "{categories}");
    assert!(names.contains(&"Rofr/Rofo/Rofn"));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["$defs"]["ChecklistItem"]["additionalProperties"], false);
}
