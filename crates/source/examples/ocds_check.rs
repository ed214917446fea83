//! `ocds_check FILE`: validates an exported OCDS release package against the schema in `../shared/data/ocds/schema/`
//! (the end-to-end test of PactWise Source runs it on the file the desktop saved). Prints `valid`, or each problem
//! and exits 1.

#[path = "../tests/support/ocds_schema.rs"]
mod ocds_schema;

fn main() -> Result<(), String> {
    let file = std::env::args().nth(1).ok_or("usage: ocds_check FILE")?;
    let folder = pactwise_testkit::shared_data("ocds/schema").ok_or("../shared/data/ocds/schema is missing")?;
    let validator = ocds_schema::release_package_validator(&folder)?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
    let package: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{file} is not JSON: {e}"))?;
    let problems = ocds_schema::problems(&validator, &package);
    if problems.is_empty() {
        println!("valid");
        Ok(())
    } else {
        Err(format!("{file} breaks the OCDS release package schema:\n{}", problems.join("\n")))
    }
}
