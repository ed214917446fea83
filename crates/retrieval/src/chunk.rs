//! Cutting text into short passages for retrieval: about 500 characters, ending at a sentence or line end where one
//! is near, never longer than 900. Offsets are character (Unicode scalar) offsets, as the UI's text layer uses.

use pactwise_domain::Page;
use pactwise_store::NewPassage;

const TARGET: usize = 500;
const MAX: usize = 900;

/// Passages of one text, as (start, end) character ranges with their text.
pub fn chunk_text(text: &str) -> Vec<(u32, u32, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        // Skip leading whitespace.
        while start < chars.len() && chars[start].is_whitespace() {
            start += 1;
        }
        if start >= chars.len() {
            break;
        }
        let hard_end = (start + MAX).min(chars.len());
        let mut end = hard_end;
        if hard_end < chars.len() {
            // The first sentence or line end after the target, else the last space before the hard end.
            let boundary = (start + TARGET..hard_end).find(|&i| {
                let c = chars[i];
                c == '\n' || ((c == '.' || c == ';' || c == ':') && chars.get(i + 1).is_none_or(|n| n.is_whitespace()))
            });
            end = match boundary {
                Some(i) => i + 1,
                None => (start + TARGET..hard_end).rev().find(|&i| chars[i].is_whitespace()).unwrap_or(hard_end),
            };
        }
        let piece: String = chars[start..end].iter().collect();
        let trimmed_end = start + piece.trim_end().chars().count();
        if trimmed_end > start {
            out.push((start as u32, trimmed_end as u32, chars[start..trimmed_end].iter().collect()));
        }
        start = end;
    }
    out
}

/// The passages of a document's pages.
pub fn chunk_pages(pages: &[Page]) -> Vec<NewPassage> {
    pages
        .iter()
        .flat_map(|p| {
            chunk_text(&p.text).into_iter().map(move |(start, end, text)| NewPassage {
                page: p.number,
                start,
                end,
                text,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_cover_the_text_end_at_sentences_and_keep_exact_offsets() {
        let sentence = "The Supplier shall deliver the goods within thirty days of the order. ";
        let text = sentence.repeat(40);
        let passages = chunk_text(&text);
        assert!(passages.len() > 3);
        let chars: Vec<char> = text.chars().collect();
        for (start, end, piece) in &passages {
            assert!(piece.chars().count() <= MAX);
            assert_eq!(&chars[*start as usize..*end as usize].iter().collect::<String>(), piece);
            assert!(piece.ends_with('.'), "{piece:?}");
        }
        let covered: usize = passages.iter().map(|(s, e, _)| (e - s) as usize).sum();
        assert!(covered >= text.trim().chars().count() - passages.len(), "only whitespace is left out");
    }

    #[test]
    fn text_without_boundaries_is_cut_at_spaces_or_at_the_maximum() {
        let text = "word ".repeat(400);
        assert!(chunk_text(&text).iter().all(|(_, _, p)| p.chars().count() <= MAX && !p.ends_with(' ')));
        let long = "x".repeat(2_000);
        assert_eq!(chunk_text(&long).len(), 3);
        assert!(chunk_text("   ").is_empty());
    }
}
