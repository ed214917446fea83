//! The offline path over the labelled CUAD dev split (every contract of `shared/data/cuad` beside the repository, or
//! of `PACTWISE_CUAD_DIR`): every item of the predicted type is answered, no quote is invented, and the scores stay
//! above a floor (type accuracy, presence macro-F1, quote precision, missed-present rate, the values table), so a
//! regression of the rules fails CI. Under CI a missing folder fails the test; elsewhere it skips, saying so.

use pactwise_checklists::Catalog;
use pactwise_pipeline::eval;
use std::path::PathBuf;

/// Floors on the dev split, a little below the measured figures (bench/README.md, "Offline pre-fill quality").
const MIN_TYPE_ACCURACY: f64 = 0.96;
const MIN_PRESENCE_MACRO_F1: f64 = 0.715;
/// Quotes of present items that lie on a labelled span of their category (issue 18's quote precision).
const MIN_EVIDENCE_QUOTE_PRECISION: f64 = 0.79;
/// Labelled clauses called absent.
const MAX_MISSED_PRESENT: f64 = 0.03;
/// The values table: (field, lowest accuracy).
const MIN_VALUE_ACCURACY: [(&str, f64); 7] = [
    ("Agreement Date", 0.92),
    ("Effective Date", 0.93),
    ("Expiration Date", 0.90),
    ("Renewal Term", 0.91),
    ("Notice Period To Terminate Renewal", 0.94),
    ("Governing Law", 0.97),
    ("Parties", 0.88),
];

fn cuad_dir() -> Option<PathBuf> {
    match std::env::var_os("PACTWISE_CUAD_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            pactwise_testkit::require(dir.join("labels.jsonl").is_file(), || {
                format!("PACTWISE_CUAD_DIR={} holds no labels.jsonl", dir.display())
            })
            .then_some(dir)
        }
        None => pactwise_testkit::shared_data("cuad/labels.jsonl").and_then(|p| p.parent().map(PathBuf::from)),
    }
}

#[test]
fn offline_reviews_of_the_cuad_dev_split_keep_their_floors_and_invent_no_quote() {
    let Some(dir) = cuad_dir() else { return };
    let catalog = Catalog::load().expect("the embedded library loads");
    let labelled = eval::read_labels(&dir).expect("the labels read").len();
    let report = eval::cuad(&catalog, &dir, None).expect("the CUAD folder reads");
    eprintln!(
        "{} contracts in {:.1} s: type accuracy {:.3}, presence macro-F1 {:.3}, quote precision {:.3} of {}, \
         invented {}, governing law {:.3}, parties recall {:.3}",
        report.contracts,
        report.total_seconds,
        report.type_accuracy,
        report.presence_macro_f1,
        report.quote_precision,
        report.quotes,
        report.invented_quotes,
        report.governing_law_accuracy,
        report.parties_recall
    );
    assert_eq!((report.contracts, report.errors), (labelled, 0), "every labelled contract is reviewed");
    assert_eq!(report.missing_items, 0, "every item of the predicted type has a finding");
    assert!(report.quotes > 0, "the rules quote the clauses they find");
    assert_eq!(report.invented_quotes, 0);
    assert_eq!(report.rejected_quotes, 0, "rule quotes are cut from their page, so verification keeps them all");
    assert!(
        report.type_accuracy >= MIN_TYPE_ACCURACY,
        "type accuracy {:.3} fell below {MIN_TYPE_ACCURACY}; misclassified: {:?}",
        report.type_accuracy,
        report.misclassified.iter().map(|m| (&m.contract, &m.expected, &m.predicted)).collect::<Vec<_>>()
    );
    assert!(
        report.presence_macro_f1 >= MIN_PRESENCE_MACRO_F1,
        "presence macro-F1 {:.3} fell below {MIN_PRESENCE_MACRO_F1}",
        report.presence_macro_f1
    );
    assert!(
        report.evidence_quote_precision >= MIN_EVIDENCE_QUOTE_PRECISION,
        "evidence quote precision {:.3} fell below {MIN_EVIDENCE_QUOTE_PRECISION}",
        report.evidence_quote_precision
    );
    assert!(
        report.missed_present_rate <= MAX_MISSED_PRESENT,
        "{:.3} of labelled clauses were called absent (at most {MAX_MISSED_PRESENT})",
        report.missed_present_rate
    );
    for (field, floor) in MIN_VALUE_ACCURACY {
        let row = report.values.iter().find(|v| v.field == field).expect("every value field is scored");
        assert!(row.accuracy >= floor, "{field}: accuracy {:.3} fell below {floor}", row.accuracy);
    }
}
