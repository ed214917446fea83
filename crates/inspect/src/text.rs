//! Text and CSV: UTF-8 without control characters; CSV cells that a spreadsheet would run as a formula are refused.

use crate::{Kind, Refusal};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// UTF-8 (a byte-order mark allowed) with no control characters but tab, line breaks and form feed.
pub(crate) fn looks_like_text(bytes: &[u8]) -> bool {
    let body = bytes.strip_prefix(BOM).unwrap_or(bytes);
    match std::str::from_utf8(body) {
        Ok(text) => text.chars().all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r' | '\x0C')),
        Err(_) => false,
    }
}

pub(crate) fn inspect(kind: Kind, bytes: &[u8]) -> Result<String, Refusal> {
    let body = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let text = std::str::from_utf8(body).map_err(|_| Refusal::unreadable(kind, "it is not UTF-8 text"))?;
    let lines = text.lines().count();
    if kind == Kind::Text {
        return Ok(format!("{lines} lines of text"));
    }
    let delimiter = guess_delimiter(text);
    let mut reader =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).delimiter(delimiter).from_reader(text.as_bytes());
    let mut rows = 0usize;
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(error) => return Err(Refusal::unreadable(kind, format!("row {} does not read: {error}", rows + 1))),
        }
        rows += 1;
        if let Some((column, _)) = record.iter().enumerate().find(|(_, cell)| runs_as_formula(cell)) {
            return Err(Refusal::ActiveContent {
                kind,
                finding: "csv_formula",
                what: format!(
                    "has a cell that a spreadsheet would run as a formula (row {rows}, column {})",
                    column + 1
                ),
                remedy: "Put a quote mark (') before cells that start with =, +, - or @ and are not numbers, or \
                         remove the formula, then upload it again.",
            });
        }
    }
    Ok(format!("{rows} rows"))
}

/// The separator the first line uses most: comma, semicolon or tab.
fn guess_delimiter(text: &str) -> u8 {
    let first = text.lines().next().unwrap_or("");
    [b',', b';', b'\t']
        .into_iter()
        .max_by_key(|d| (first.bytes().filter(|b| b == d).count(), *d == b','))
        .unwrap_or(b',')
}

/// A cell starting with `=` or `@`, or with `+` or `-` not followed by a number, possibly after spaces, tabs or line
/// breaks: what spreadsheets evaluate ("CSV injection").
fn runs_as_formula(cell: &str) -> bool {
    let cell = cell.trim_start_matches([' ', '\t', '\r', '\n']);
    let mut chars = cell.chars();
    match chars.next() {
        Some('=' | '@') => true,
        Some('+' | '-') => {
            let rest = chars.as_str().trim();
            !rest.is_empty() && rest.replace([',', '.', ' ', '%'], "").parse::<f64>().is_err()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_not_text() {
        assert!(looks_like_text("Prices\tin EUR\r\n".as_bytes()));
        assert!(looks_like_text("\u{FEFF}Überschrift — Preis".as_bytes()));
        assert!(!looks_like_text(b"abc\x00def"));
        assert!(!looks_like_text(b"abc\x1b[31m"));
        assert!(!looks_like_text(b"\xFF\xFEa\x00"));
    }

    #[test]
    fn formulas_are_refused_and_signed_numbers_are_not() {
        for cell in ["=SUM(A1:A2)", "@cmd", " =1+1", "+cmd|' /C calc'!A0", "-2+3+cmd|x", "\t=HYPERLINK(x)"] {
            assert!(runs_as_formula(cell), "{cell}");
        }
        for cell in ["-12.50", "+1 000,25", "-5%", "Price", "-", "e-mail", "a=b"] {
            assert!(!runs_as_formula(cell), "{cell}");
        }
    }

    #[test]
    fn a_price_list_reads_and_a_formula_is_refused_with_its_place() {
        let ok = inspect(Kind::Csv, b"item;qty;price\nDesk;2;-10,50\nChair;\"4\";99\n").unwrap();
        assert_eq!(ok, "3 rows");
        let refused = inspect(Kind::Csv, b"item,price\nDesk,\"=cmd|' /C calc'!A0\"\n").unwrap_err();
        assert_eq!(refused.finding(), "csv_formula");
        assert!(refused.to_string().contains("row 2, column 2"), "{refused}");
    }
}
