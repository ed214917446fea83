//! The golden drafting runs replayed through the fake server: each converges (or not) as written, stays within its
//! cost ceiling, and the store, reading what it stored, refuses exactly what the pre-check shows.

mod support;

use support::golden::{load_all, replay};

#[tokio::test]
async fn every_golden_run_replays_with_the_expected_figures() {
    let fixtures = load_all().unwrap();
    assert!(fixtures.len() >= 3);
    for f in &fixtures {
        let r = replay(f).await.unwrap();
        assert!(r.store_agrees, "{}: the store's refusal is not the pre-check's: {:?}", r.name, r.gate_violations);
        assert!(r.all_traces_stamped, "{}", r.name);
        assert!(r.cost_micros <= r.ceiling_micros, "{}: {} > {}", r.name, r.cost_micros, r.ceiling_micros);
        assert_eq!(r.measurable, r.scored, "{}", r.name);
        match r.name.as_str() {
            "fleet-telematics" => {
                assert!(r.published, "{:?}", r.gate_violations);
                assert_eq!(r.converged_at_cycle, Some(2));
                assert_eq!(r.needs_covered, r.needs);
            }
            "office-cleaning" => {
                assert!(r.published, "{:?}", r.gate_violations);
                assert_eq!(r.converged_at_cycle, Some(1));
            }
            "it-service-desk" => {
                assert!(!r.published);
                assert_eq!(r.converged_at_cycle, None);
                let rules: Vec<&str> = r.gate_violations.iter().map(|v| v.rule.as_str()).collect();
                assert!(
                    rules.contains(&"weights_not_hundred") && rules.contains(&"pricing_line_not_priceable"),
                    "{rules:?}"
                );
                assert_eq!(r.needs_covered, 3, "N4 (accessibility) is not covered");
            }
            other => panic!("unexpected fixture {other}"),
        }
    }
}

/// The RFPs of the golden runs the gate publishes, exported as a vendor reads them: no identifier, no empty heading,
/// the forms filled with every requirement and pricing line. Prints each PDF's size in pages (`pdfinfo`, when
/// installed) and writes the files to `PACTWISE_RFP_OUT` when set.
#[tokio::test]
async fn the_published_golden_packages_export_as_rfps_a_vendor_can_answer() {
    use pactwise_prep::export::{self, Part};
    for f in &load_all().unwrap() {
        let r = replay(f).await.unwrap();
        if !r.published {
            assert!(export::document(&r.package).is_err(), "{}: an unpublishable package does not export", r.name);
            continue;
        }
        let parts = export::document(&r.package).unwrap();
        let mut text = String::new();
        for (i, part) in parts.iter().enumerate() {
            let heading = matches!(part, Part::Heading(_) | Part::Subheading(_));
            let next = parts[i + 1..].iter().find(|p| !matches!(p, Part::PageBreak));
            if heading {
                assert!(next.is_some_and(|n| !matches!(n, Part::Heading(_))), "{}: {part:?} is empty", r.name);
            }
            match part {
                Part::Table(t) => {
                    text.push_str(&t.header.join(" "));
                    for row in &t.rows {
                        text.push(' ');
                        text.push_str(&row.join(" "));
                    }
                }
                Part::Field(a, b) => text.push_str(&format!("{a} {b}")),
                Part::Title(t) | Part::Heading(t) | Part::Subheading(t) | Part::Text(t) | Part::Bullet(t) => {
                    text.push_str(t)
                }
                Part::PageBreak => {}
            }
            text.push('\n');
        }
        for word in text.split_whitespace() {
            assert_eq!(pactwise_rules::prep::identifier_in(word), None, "{}: an identifier in\n{text}", r.name);
        }
        let requirements = r.package.artifacts.requirements.content.as_ref().unwrap().items.len();
        let form_a = parts.iter().skip_while(|p| !matches!(p, Part::Heading(h) if h.starts_with("Form A"))).find_map(
            |p| match p {
                Part::Table(t) => Some(t.rows.len()),
                _ => None,
            },
        );
        assert_eq!(form_a, Some(requirements), "{}", r.name);
        let pdf = export::pdf(&r.package).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("{}.pdf", r.name));
        std::fs::write(&path, &pdf).unwrap();
        if let Ok(out) = std::env::var("PACTWISE_RFP_OUT") {
            std::fs::write(std::path::Path::new(&out).join(format!("{}.pdf", r.name)), &pdf).unwrap();
        }
        if let Ok(info) = std::process::Command::new("pdfinfo").arg(&path).output() {
            let info = String::from_utf8_lossy(&info.stdout);
            let pages = info.lines().find_map(|l| l.strip_prefix("Pages:")).map(str::trim).unwrap_or("?");
            eprintln!("{}: the exported RFP has {pages} pages ({} bytes)", r.name, pdf.len());
        }
    }
}
