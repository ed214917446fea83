//! Synthetic pages for texts that have no page breaks of their own: about `target` characters each, cut at
//! paragraph boundaries (a blank line, or for DOCX every paragraph end), at a line end when a text has no such
//! boundary for twice the target, and at a space inside a single overlong line.

/// Splits `text` (lines separated by `\n`) into pages. `every_line_is_a_paragraph` is true for DOCX.
pub(crate) fn synthetic_pages(text: &str, target: usize, every_line_is_a_paragraph: bool) -> Vec<String> {
    let target = target.max(100);
    let mut pages = Vec::new();
    let mut page = String::new();
    let mut page_chars = 0usize;
    let mut may_break = false;
    for (line, cut) in split_long_lines(text, target) {
        let line_chars = line.chars().count();
        // Rather end the page at the last boundary than run far past the target.
        if may_break && page_chars > 0 && page_chars + line_chars > target + target / 5 {
            pages.push(std::mem::take(&mut page));
            page_chars = 0;
        }
        if !page.is_empty() {
            page.push('\n');
            page_chars += 1;
        }
        page.push_str(line);
        page_chars += line_chars;
        may_break = every_line_is_a_paragraph || cut || line.trim().is_empty();
        if page_chars >= target && (may_break || page_chars >= 2 * target) {
            pages.push(std::mem::take(&mut page));
            page_chars = 0;
        }
    }
    if !page.trim().is_empty() || pages.is_empty() {
        pages.push(page);
    }
    pages.into_iter().map(|p| p.trim_matches('\n').to_owned()).collect()
}

/// Lines, with any line longer than `max` characters cut at spaces into pieces of at most `max`; the flag says a
/// piece was cut from a longer line (so a page may end after it).
fn split_long_lines(text: &str, max: usize) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        let mut rest = line;
        while rest.chars().count() > max {
            let byte_max = rest.char_indices().nth(max).map(|(i, _)| i).unwrap_or(rest.len());
            let cut = rest[..byte_max].rfind(' ').filter(|&i| i > 0).unwrap_or(byte_max);
            out.push((&rest[..cut], true));
            rest = rest[cut..].trim_start_matches(' ');
        }
        out.push((rest, false));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_near_the_target_at_blank_lines() {
        let paragraph = "word ".repeat(100); // 500 chars
        let text = vec![paragraph.trim_end(); 20].join("\n\n");
        let pages = synthetic_pages(&text, 3000, false);
        assert!(pages.len() >= 3, "{} pages", pages.len());
        for page in &pages[..pages.len() - 1] {
            let n = page.chars().count();
            assert!((3000..4000).contains(&n), "page of {n} chars");
            assert!(page.ends_with("word"));
        }
        let rejoined: String = pages.join("").split_whitespace().collect();
        let original: String = text.split_whitespace().collect();
        assert_eq!(rejoined, original);
    }

    #[test]
    fn a_single_huge_line_is_cut_at_spaces() {
        let text = "abc ".repeat(5000);
        let pages = synthetic_pages(&text, 3000, false);
        assert!(pages.len() >= 3);
        assert!(pages.iter().all(|p| p.chars().count() <= 3600));
    }

    #[test]
    fn a_short_text_is_one_page() {
        assert_eq!(synthetic_pages("Hello.\n\nBye.", 3000, false), vec!["Hello.\n\nBye.".to_owned()]);
    }
}
