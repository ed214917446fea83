//! Quote verification: a quote is shown only if it is found on the page it cites. Both sides are compared after the
//! same normalisation: typographic quotes and dashes to their plain forms, soft hyphens dropped, words hyphenated
//! across a line break joined, and every run of whitespace made one space. The text kept is the page's own span, so
//! what a person sees is exactly what the page says (never the model's or a rule's rendering of it).

use pactwise_domain::{ItemFinding, ItemStatus, Page, Quote, RejectedExtraction};
use std::ops::Range;

/// The reason recorded on an item whose quote was not found on its page.
pub const QUOTE_NOT_FOUND: &str = "quote_not_found";

/// Normalised text with, for each of its bytes, the byte offset in the original it came from.
pub struct Normalized {
    pub text: String,
    origin: Vec<usize>,
    original_len: usize,
}

impl Normalized {
    /// Normalises `text`, remembering where each normalised byte came from.
    pub fn new(text: &str) -> Normalized {
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let mut out = String::with_capacity(text.len());
        let mut origin = Vec::with_capacity(text.len());
        let mut i = 0;
        let mut pending_space: Option<usize> = None;
        while i < chars.len() {
            let (at, c) = chars[i];
            if c == '\u{00AD}' {
                i += 1;
                continue;
            }
            // A hyphen that ends a line between two letters joins the word: "termi-\n  nation" -> "termination".
            if is_hyphen(c) && i > 0 && chars[i - 1].1.is_alphabetic() {
                let mut j = i + 1;
                let mut saw_newline = false;
                while j < chars.len() && chars[j].1.is_whitespace() {
                    saw_newline |= chars[j].1 == '\n' || chars[j].1 == '\r';
                    j += 1;
                }
                if saw_newline && j < chars.len() && chars[j].1.is_lowercase() {
                    i = j;
                    continue;
                }
            }
            if c.is_whitespace() {
                if pending_space.is_none() && !out.is_empty() {
                    pending_space = Some(at);
                }
                i += 1;
                continue;
            }
            if let Some(space_at) = pending_space.take() {
                out.push(' ');
                origin.push(space_at);
            }
            let mapped = match c {
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{00AB}' | '\u{00BB}' => '"',
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
                '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
                '\u{00A0}' => ' ',
                other => other,
            };
            let start = out.len();
            out.push(mapped);
            origin.extend(std::iter::repeat_n(at, out.len() - start));
            i += 1;
        }
        Normalized { text: out, origin, original_len: text.len() }
    }

    /// The original byte range that the normalised byte range `range` came from.
    pub fn original_range(&self, range: Range<usize>, original: &str) -> Range<usize> {
        let start = self.origin.get(range.start).copied().unwrap_or(self.original_len);
        let last = range.end.checked_sub(1).and_then(|i| self.origin.get(i)).copied().unwrap_or(start);
        let end = original[last..].chars().next().map_or(self.original_len, |c| last + c.len_utf8());
        start..end.max(start)
    }
}

fn is_hyphen(c: char) -> bool {
    matches!(c, '-' | '\u{2010}' | '\u{2011}')
}

/// Where `quote` occurs in `page_text`, as a byte range of the page's own text; `None` when it does not (or when the
/// quote is empty after normalisation).
pub fn locate(page_text: &str, quote: &str) -> Option<Range<usize>> {
    let needle = Normalized::new(quote);
    if needle.text.is_empty() {
        return None;
    }
    let hay = Normalized::new(page_text);
    let found = hay.text.find(&needle.text)?;
    Some(hay.original_range(found..found + needle.text.len(), page_text))
}

/// Checks every finding's quote against the page it cites. A quote found is replaced by the page's own text of that
/// span; one not found (or citing a page that does not exist) is removed, its item becomes `not_evaluated` with reason
/// [`QUOTE_NOT_FOUND`], and the extraction is returned in the rejected list.
pub fn verify_findings(pages: &[Page], findings: &mut [ItemFinding]) -> Vec<RejectedExtraction> {
    let mut rejected = Vec::new();
    for finding in findings.iter_mut() {
        let Some(quote) = finding.quote.take() else { continue };
        match verify_quote(pages, &quote) {
            Some(verified) => finding.quote = Some(verified),
            None => {
                rejected.push(RejectedExtraction {
                    item_id: finding.item_id.clone(),
                    quote: quote.text,
                    page: quote.page,
                    reason: QUOTE_NOT_FOUND.to_owned(),
                    method: finding.method,
                });
                finding.status = ItemStatus::NotEvaluated;
                finding.reason = Some(QUOTE_NOT_FOUND.to_owned());
            }
        }
    }
    rejected
}

/// The quote as the page has it, if it is on the page it cites.
pub fn verify_quote(pages: &[Page], quote: &Quote) -> Option<Quote> {
    let page = pages.iter().find(|p| p.number == quote.page)?;
    let range = locate(&page.text, &quote.text)?;
    Some(Quote { text: page.text[range].to_owned(), page: quote.page })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_quotes_dashes_and_hyphenation_are_normalised() {
        let page = "This Agreement shall be governed by the laws\n  of the State of New York. The “Licensee” may termi-\nnate it \u{2014} at will.";
        for quote in [
            "governed by the laws of the State of New York",
            "The \"Licensee\" may terminate it - at will.",
            "governed   by\tthe laws",
        ] {
            let range = locate(page, quote).unwrap_or_else(|| panic!("{quote:?} not found"));
            assert!(!page[range].is_empty());
        }
        let range = locate(page, "may terminate").unwrap();
        assert_eq!(&page[range], "may termi-\nnate");
    }

    #[test]
    fn text_that_is_not_on_the_page_is_not_found() {
        let page = "The Supplier shall indemnify the Customer.";
        assert_eq!(locate(page, "The Customer shall indemnify the Supplier."), None);
        assert_eq!(locate(page, "   "), None);
        assert_eq!(locate(page, "indemnify the customer"), None, "case is kept: the quote must be the page's words");
    }

    #[test]
    fn a_quote_on_another_page_is_rejected_and_its_item_is_not_evaluated() {
        let pages = vec![Page::plain(1, "Payment is due in 30 days."), Page::plain(2, "Either party may terminate.")];
        let mut findings = vec![
            finding("a", "Payment is due in 30 days", 1),
            finding("b", "Payment is due in 30 days", 2),
            finding("c", "Either party may terminate", 9),
        ];
        let rejected = verify_findings(&pages, &mut findings);
        assert_eq!(findings[0].quote.as_ref().unwrap().text, "Payment is due in 30 days");
        assert_eq!(findings[0].status, ItemStatus::Present);
        for f in &findings[1..] {
            assert_eq!(f.quote, None);
            assert_eq!(f.status, ItemStatus::NotEvaluated);
            assert_eq!(f.reason.as_deref(), Some(QUOTE_NOT_FOUND));
        }
        assert_eq!(rejected.iter().map(|r| r.item_id.as_str()).collect::<Vec<_>>(), ["b", "c"]);
    }

    fn finding(id: &str, quote: &str, page: u32) -> ItemFinding {
        ItemFinding {
            item_id: id.into(),
            value: None,
            status: ItemStatus::Present,
            confidence: 0.9,
            quote: Some(Quote { text: quote.into(), page }),
            method: pactwise_domain::Method::Model,
            reason: None,
            red_flags: Vec::new(),
        }
    }
}
