//! Loads a checklist library directory and prints its problems, or its statistics and the closest question pair of
//! each type. `cargo run -p pactwise-checklists --example check_library -- checklists`

use pactwise_checklists::{Catalog, closest_question_pair};

fn main() -> anyhow::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "checklists".to_owned());
    let catalog = match Catalog::from_dir(&dir) {
        Ok(catalog) => catalog,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(1);
        }
    };
    let stats = catalog.stats();
    println!("{}", serde_json::to_string_pretty(&stats)?);
    for t in catalog.types() {
        if let Some(pair) = closest_question_pair(t) {
            eprintln!("{:<24} {:.2} {} ~ {}", t.id, pair.similarity, pair.first, pair.second);
        }
    }
    Ok(())
}
