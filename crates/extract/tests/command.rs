//! `pactwise-extract`: its help says the page limit that applies, and a limit of 0 is refused with exit code 2 and
//! the same message as `pactwise extract`.

use std::process::Command;

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pactwise-extract")).args(args).output().expect("runs")
}

#[test]
fn the_help_says_the_page_limit_that_applies() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert_eq!(pactwise_extract::DEFAULT_MAX_PAGES, 5_000);
    assert!(help.contains("[default: 5,000]"), "{help}");
    assert!(help.contains(&pactwise_extract::max_pages_help()), "{help}");
}

#[test]
fn a_page_limit_of_zero_or_not_a_number_is_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "one page").unwrap();
    let file = file.to_str().unwrap();
    for (value, expected) in [("0", "--max-pages 0 would refuse every document"), ("many", "takes a whole number")] {
        let out = run(&["extract", file, "--max-pages", value, "--quiet"]);
        assert_eq!(out.status.code(), Some(2), "--max-pages {value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected) && stderr.contains("5,000"), "{stderr}");
        assert_eq!(stderr.trim(), format!("error: {}", pactwise_extract::parse_max_pages(value).unwrap_err()));
    }
    let ok = run(&["extract", file, "--max-pages", "1", "--quiet"]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}
