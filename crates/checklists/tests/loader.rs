//! The loader's behaviour on a small fixture library (tests/fixtures/mini) and on broken copies of it.

use pactwise_checklists::{Catalog, CatalogError, Problem};
use pactwise_domain::{CuadCategory, CuadType, RiskLevel};
use std::fs;
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mini")
}

fn fixture_text() -> String {
    fs::read_to_string(fixture_dir().join("types/widget_supply.toml")).unwrap()
}

/// A copy of the fixture library in a temporary directory, with the type file replaced by `text` and any extra files.
fn library_with(text: &str, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("types")).unwrap();
    fs::copy(fixture_dir().join("catalog.toml"), dir.path().join("catalog.toml")).unwrap();
    fs::write(dir.path().join("types/widget_supply.toml"), text).unwrap();
    for (name, body) in extra {
        fs::write(dir.path().join("types").join(name), body).unwrap();
    }
    dir
}

fn edited(from: &str, to: &str) -> String {
    let text = fixture_text();
    assert!(text.contains(from), "fixture no longer contains {from:?}");
    text.replacen(from, to, 1)
}

fn problems_of(result: Result<Catalog, CatalogError>) -> Vec<Problem> {
    match result {
        Err(CatalogError::Invalid { problems }) => problems,
        Err(other) => panic!("expected validation problems, got {other}"),
        Ok(_) => panic!("expected the library to be rejected"),
    }
}

fn assert_one_problem(problems: &[Problem], location: &str, message_part: &str) {
    assert!(
        problems.iter().any(|p| p.location.contains(location) && p.message.contains(message_part)),
        "no problem at {location:?} mentioning {message_part:?} in {problems:#?}"
    );
}

#[test]
fn fixture_library_loads_and_looks_up_by_type_section_and_item() {
    let catalog = Catalog::from_dir(fixture_dir()).unwrap();
    assert_eq!(catalog.types().len(), 1);
    assert_eq!(catalog.item_count(), 5);
    let widget = catalog.contract_type("widget_supply").unwrap();
    assert_eq!(widget.cuad_type, Some(CuadType::Supply));
    assert_eq!(catalog.section("widget_supply", "liability").unwrap().name, "Liability");
    let term_items: Vec<&str> =
        catalog.section_items("widget_supply", "term").unwrap().iter().map(|i| i.id.as_str()).collect();
    assert_eq!(term_items, ["widget_supply.term.expiry", "widget_supply.term.renewal"]);
    let cap = catalog.item("widget_supply.liability.cap").unwrap();
    assert_eq!(cap.risk, RiskLevel::Critical);
    assert_eq!(cap.cuad_category, Some(CuadCategory::CapOnLiability));
    assert_eq!(cap.regulatory[0].citation, "UCC 2-719");
    assert!(catalog.contract_type("nda").is_none());
    assert!(catalog.section_items("widget_supply", "nowhere").is_none());
    assert!(catalog.item("widget_supply.term.nothing").is_none());
}

#[test]
fn items_take_their_type_from_the_file_they_are_in() {
    let catalog = Catalog::from_dir(fixture_dir()).unwrap();
    assert!(catalog.items().all(|item| item.type_id == "widget_supply"));
}

#[test]
fn an_item_claiming_another_type_is_rejected() {
    let text = edited("section = \"law\"", "type = \"nda\"\nsection = \"law\"");
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert_one_problem(&problems, "widget_supply.law.choice", "says type \"nda\"");
}

#[test]
fn compiled_item_patterns_match_regardless_of_case() {
    let catalog = Catalog::from_dir(fixture_dir()).unwrap();
    let law = catalog.item_signals("widget_supply.law.choice").unwrap();
    let text = "THIS AGREEMENT SHALL BE GOVERNED BY AND CONSTRUED IN ACCORDANCE WITH THE LAWS OF THE STATE OF DELAWARE";
    assert!(law.present.iter().any(|re| re.is_match(text)));
    let cap = catalog.item_signals("widget_supply.liability.cap").unwrap();
    assert_eq!((cap.present.len(), cap.partial.len(), cap.absent.len()), (1, 0, 1));
    let title = &catalog.type_signals("widget_supply").unwrap().title_patterns;
    assert!(title[0].is_match("Widget Supply Agreement"));
}

#[test]
fn a_pattern_the_regex_crate_rejects_is_reported_with_its_item_and_field() {
    let text = edited(r"present = ['automatically\s+renew']", r"present = ['automatically(?=\s+renew)']");
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert_one_problem(&problems, "widget_supply.term.renewal signals.present[0]", "does not compile");
}

#[test]
fn a_pattern_that_matches_empty_text_is_rejected() {
    let text = edited(r"partial = ['until\s+terminated']", r"partial = ['(until\s+terminated)?']");
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert_one_problem(&problems, "widget_supply.term.expiry signals.partial[0]", "matches empty text");
}

#[test]
fn an_item_in_a_section_the_type_does_not_have_is_rejected() {
    let text = edited("section = \"law\"", "section = \"jurisdiction\"");
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert_one_problem(&problems, "widget_supply.law.choice", "not one of this type's sections");
    assert_one_problem(&problems, "sections.law", "no items");
}

#[test]
fn a_misspelt_cuad_category_is_rejected_when_parsing() {
    let text = edited("cuad_category = \"Governing Law\"", "cuad_category = \"Governing law\"");
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert!(problems[0].message.contains("not a valid checklist file"), "{problems:#?}");
    assert!(problems[0].message.contains("Governing law"), "{problems:#?}");
}

#[test]
fn an_unknown_field_is_rejected_so_typos_do_not_vanish_silently() {
    let text = edited("red_flags = [\"The supplier", "red_flag = [\"The supplier");
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert!(problems[0].message.contains("red_flag"), "{problems:#?}");
}

#[test]
fn a_critical_item_without_a_red_flag_is_rejected() {
    let text = edited("red_flags = [\"No cap on the supplier's liability for defective widgets\"]", "");
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert_one_problem(&problems, "widget_supply.liability.cap", "critical item needs at least one red flag");
}

#[test]
fn an_item_id_that_does_not_follow_type_section_slug_is_rejected() {
    let text = edited("id = \"widget_supply.law.choice\"", "id = \"widget_supply.term.choice\"");
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert_one_problem(&problems, "widget_supply.term.choice", "widget_supply.law.<slug>");
}

#[test]
fn an_item_id_used_in_two_files_is_rejected() {
    let other = fixture_text()
        .replace("id = \"widget_supply\"", "id = \"gadget_supply\"")
        .replace("cuad_type = \"Supply\"", "cuad_type = \"Manufacturing\"");
    // gadget_supply.toml keeps one widget_supply item id and renames the others to its own type.
    let other = other
        .replace("id = \"widget_supply.term", "id = \"gadget_supply.term")
        .replace("id = \"widget_supply.law", "id = \"gadget_supply.law");
    let other = other.replace("id = \"widget_supply.assignment", "id = \"gadget_supply.assignment");
    let dir = library_with(&fixture_text(), &[("gadget_supply.toml", &other)]);
    let problems = problems_of(Catalog::from_dir(dir.path()));
    assert_one_problem(&problems, "widget_supply.liability.cap", "used twice");
}

#[test]
fn a_file_whose_name_differs_from_its_type_id_is_rejected() {
    let dir = library_with(&fixture_text(), &[]);
    fs::rename(dir.path().join("types/widget_supply.toml"), dir.path().join("types/widgets.toml")).unwrap();
    let problems = problems_of(Catalog::from_dir(dir.path()));
    assert_one_problem(&problems, "id", "does not match the file name");
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = edited("section = \"law\"", "section = \"jurisdiction\"").replacen(
        r"present = ['automatically\s+renew']",
        r"present = ['automatically\1']",
        1,
    );
    let problems = problems_of(Catalog::from_dir(library_with(&text, &[]).path()));
    assert_one_problem(&problems, "widget_supply.law.choice", "not one of this type's sections");
    assert_one_problem(&problems, "widget_supply.term.renewal", "does not compile");
}

#[test]
fn a_missing_directory_is_a_read_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let error = Catalog::from_dir(dir.path().join("nowhere")).unwrap_err();
    assert!(matches!(error, CatalogError::Read { .. }));
    assert_eq!(error.code(), pactwise_domain::ErrorCode::FileUnreadable);
    assert!(error.to_string().contains("nowhere"), "{error}");
}

#[test]
fn a_malformed_catalog_version_is_rejected() {
    let dir = library_with(&fixture_text(), &[]);
    fs::write(dir.path().join("catalog.toml"), "version = \"v2\"\n").unwrap();
    let problems = problems_of(Catalog::from_dir(dir.path()));
    assert_one_problem(&problems, "version", "YEAR.MONTH.RELEASE");
}

#[test]
fn content_hash_ignores_comments_and_layout_but_changes_with_any_content() {
    let original = Catalog::from_dir(fixture_dir()).unwrap();
    assert_eq!(original.version().version, "2000.1.1");
    assert_eq!(original.version().hash.len(), 64);
    assert!(original.version().hash.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));

    let reformatted = format!("# a new comment\n\n{}", fixture_text().replace("risk = \"low\"", "risk    =    'low'"));
    let same = Catalog::from_dir(library_with(&reformatted, &[]).path()).unwrap();
    assert_eq!(same.version().hash, original.version().hash);

    let reworded = edited("Which state's law governs", "Which jurisdiction's law governs");
    let changed = Catalog::from_dir(library_with(&reworded, &[]).path()).unwrap();
    assert_ne!(changed.version().hash, original.version().hash);
}

#[test]
fn export_carries_every_item_with_all_its_fields_and_the_version() {
    let catalog = Catalog::from_dir(fixture_dir()).unwrap();
    let export = serde_json::to_value(catalog.export()).unwrap();
    assert_eq!(export["catalog"]["version"], "2000.1.1");
    assert_eq!(export["catalog"]["hash"], catalog.version().hash.as_str());
    assert_eq!(export["item_count"], 5);
    let items = export["types"][0]["items"].as_array().unwrap();
    assert_eq!(items.len(), 5);
    for item in items {
        for field in [
            "id",
            "type",
            "section",
            "question",
            "risk",
            "guidance",
            "cuad_category",
            "benchmark",
            "red_flags",
            "preferred_position",
            "fallback_position",
            "regulatory",
            "signals",
        ] {
            assert!(item.get(field).is_some(), "{field} missing from {item}");
        }
    }
    assert_eq!(items[2]["red_flags"][0], "No cap on the supplier's liability for defective widgets");
    assert_eq!(items[1]["benchmark"], serde_json::Value::Null);
}

#[test]
fn stats_count_risks_sections_and_optional_fields() {
    let catalog = Catalog::from_dir(fixture_dir()).unwrap();
    let stats = catalog.stats();
    assert_eq!((stats.type_count, stats.section_count, stats.item_count), (1, 4, 5));
    assert_eq!((stats.by_risk.critical, stats.by_risk.high, stats.by_risk.medium, stats.by_risk.low), (1, 1, 1, 2));
    assert_eq!(stats.fields.benchmark.items, 2);
    assert_eq!(stats.fields.benchmark.percent, 40.0);
    assert_eq!(stats.fields.red_flags.items, 2);
    assert_eq!(stats.fields.regulatory.items, 1);
    assert_eq!(stats.fields.cuad_category.percent, 100.0);
    assert_eq!((stats.fields.partial_signals.items, stats.fields.absent_signals.items), (1, 1));
    let term = stats.per_section.iter().find(|s| s.section_id == "term").unwrap();
    assert_eq!(term.items, 2);
    assert_eq!(stats.per_cuad_category.len(), 41);
    let cap = stats.per_cuad_category.iter().find(|c| c.category == CuadCategory::CapOnLiability).unwrap();
    assert_eq!((cap.items, cap.types), (1, 1));
}
