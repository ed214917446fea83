//! PDF: read by lopdf with a decompression bound; every object the file declares must load, and no object may hold
//! active content. A byte scan outside streams (what `pdfid` does) backs the parsed check up, so a name the parser
//! skipped is still seen.

use std::collections::{BTreeMap, BTreeSet};

use lopdf::{Dictionary, Document, LoadOptions, Object};

use crate::{Kind, Limits, Refusal};

const KIND: Kind = Kind::Pdf;

/// What a refused PDF holds, with the finding code and the remedy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Finding {
    JavaScript,
    AutomaticAction,
    Action,
    EmbeddedFile,
    Xfa,
    RichMedia,
    Link,
}

impl Finding {
    fn refusal(self) -> Refusal {
        let (finding, what, remedy) = match self {
            Finding::JavaScript => (
                "pdf_javascript",
                "contains JavaScript",
                "Export or print it to a new PDF without scripts and upload that.",
            ),
            Finding::AutomaticAction => (
                "pdf_automatic_action",
                "runs an action by itself (when it opens, or when a page or field is shown)",
                "Export or print it to a new PDF and upload that.",
            ),
            Finding::Action => (
                "pdf_action",
                "has a link or button that does more than go to a page or open a web address (such as starting a \
                 program, opening another file or sending a form)",
                "Remove those buttons or links, or print it to a new PDF, and upload that.",
            ),
            Finding::EmbeddedFile => (
                "pdf_embedded_file",
                "has files attached inside it",
                "Upload the attached files separately, and the PDF without them.",
            ),
            Finding::Xfa => ("pdf_xfa", "is a dynamic (XFA) form", "Print it to a standard PDF and upload that."),
            Finding::RichMedia => (
                "pdf_rich_media",
                "contains multimedia, 3D or other embedded content",
                "Export it without that content, or print it to a new PDF, and upload that.",
            ),
            Finding::Link => (
                "pdf_link",
                "has a link that is not a web or e-mail address",
                "Remove that link, or print it to a new PDF, and upload that.",
            ),
        };
        Refusal::ActiveContent { kind: KIND, finding, what: what.to_owned(), remedy }
    }
}

/// Keys whose mere presence is refused.
fn denied_key(key: &[u8]) -> Option<Finding> {
    match key {
        b"JS" | b"JavaScript" => Some(Finding::JavaScript),
        b"AA" => Some(Finding::AutomaticAction),
        b"EmbeddedFile" | b"EmbeddedFiles" | b"EF" => Some(Finding::EmbeddedFile),
        b"XFA" => Some(Finding::Xfa),
        b"RichMediaContent" | b"RichMediaSettings" | b"3DD" | b"Movie" | b"Sound" => Some(Finding::RichMedia),
        _ => None,
    }
}

/// Name values refused wherever they appear: names with no meaning but an action or an attachment. (Annotation
/// kinds such as `/Screen` or `/Sound` are also blend modes or other harmless names; the annotation allowlist and
/// the action allowlist cover them.)
fn denied_name(name: &[u8]) -> Option<Finding> {
    match name {
        b"JavaScript" => Some(Finding::JavaScript),
        b"Launch" | b"SubmitForm" | b"ImportData" | b"GoToR" | b"GoToE" => Some(Finding::Action),
        b"EmbeddedFile" | b"FileAttachment" => Some(Finding::EmbeddedFile),
        b"RichMedia" | b"RichMediaExecute" | b"Rendition" => Some(Finding::RichMedia),
        _ => None,
    }
}

/// The only actions accepted: go to a page of this file, open a web or e-mail address, a page-turning named
/// action, follow an article thread.
const ALLOWED_ACTIONS: &[&[u8]] = &[b"GoTo", b"URI", b"Named", b"Thread"];
const ALLOWED_NAMED: &[&[u8]] = &[b"NextPage", b"PrevPage", b"FirstPage", b"LastPage"];
/// Annotations that only show something.
const ALLOWED_ANNOTATIONS: &[&[u8]] = &[
    b"Link",
    b"Text",
    b"FreeText",
    b"Line",
    b"Square",
    b"Circle",
    b"Polygon",
    b"PolyLine",
    b"Highlight",
    b"Underline",
    b"Squiggly",
    b"StrikeOut",
    b"Stamp",
    b"Caret",
    b"Ink",
    b"Popup",
    b"Widget",
    b"Redact",
    b"Watermark",
    b"PrinterMark",
];
const ALLOWED_FILTERS: &[&[u8]] = &[
    b"FlateDecode",
    b"Fl",
    b"LZWDecode",
    b"LZW",
    b"ASCIIHexDecode",
    b"AHx",
    b"ASCII85Decode",
    b"A85",
    b"RunLengthDecode",
    b"RL",
    b"DCTDecode",
    b"DCT",
    b"CCITTFaxDecode",
    b"CCF",
    b"JBIG2Decode",
    b"JPXDecode",
    b"Crypt",
];

pub(crate) fn inspect(bytes: &[u8], limits: &Limits) -> Result<String, Refusal> {
    refuse_data_after_end(bytes)?;
    let declared = scan_outside_streams(bytes)?;
    if declared.len() > limits.max_pdf_objects {
        return Err(Refusal::over(
            KIND,
            format!("declares {} objects", declared.len()),
            limits.max_pdf_objects.to_string(),
        ));
    }
    let document = load(bytes, limits, false)?;
    if document.xref_recovery.is_some() {
        // The file's index of its parts is wrong: readers repair it each their own way.
        return Err(Refusal::unreadable(KIND, "its index of parts is damaged"));
    }
    check_loaded(&document, declared.keys(), limits)?;
    // As written, a reader follows the cross-reference data; a reader that rebuilds it (as many do with a damaged
    // or updated file) takes the last copy of each object in the file. When those can differ, both are checked.
    let updated = crate::sniff::find(&bytes[..bytes.len().saturating_sub(8)], b"%%EOF")
        .is_some_and(|first| crate::sniff::rfind(bytes, b"%%EOF").is_some_and(|last| last != first));
    if updated || declared.values().any(|copies| *copies > 1) {
        let rebuilt = load(bytes, limits, true)?;
        check_loaded(&rebuilt, std::iter::empty(), limits)?;
    }
    let pages = document.get_pages().len();
    if pages == 0 {
        return Err(Refusal::unreadable(KIND, "it has no pages"));
    }
    if pages > limits.max_pdf_pages {
        return Err(Refusal::over(KIND, format!("has {pages} pages"), limits.max_pdf_pages.to_string()));
    }
    Ok(if pages == 1 { "1 page".to_owned() } else { format!("{pages} pages") })
}

fn load(bytes: &[u8], limits: &Limits, rebuild: bool) -> Result<Document, Refusal> {
    let options = LoadOptions {
        max_decompressed_size: Some(limits.max_pdf_stream_bytes),
        force_reconstruct: rebuild,
        ..LoadOptions::default()
    };
    Document::load_mem_with_options(bytes, options).map_err(|error| match error {
        lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. }) => Refusal::over(
            KIND,
            "has a part that expands too far when decompressed",
            megabytes(limits.max_pdf_stream_bytes),
        ),
        other => Refusal::unreadable(KIND, short(&other.to_string())),
    })
}

/// Every object the file declares and every object its cross-reference data lists is loaded, and none holds
/// active content; object streams are read whole.
fn check_loaded<'a>(
    document: &Document,
    declared: impl Iterator<Item = &'a (u32, u16)>,
    limits: &Limits,
) -> Result<(), Refusal> {
    if document.trailer.has(b"Encrypt") || document.is_encrypted() {
        return Err(Refusal::Encrypted { kind: KIND });
    }
    if document.objects.len() > limits.max_pdf_objects {
        return Err(Refusal::over(
            KIND,
            format!("has {} objects", document.objects.len()),
            limits.max_pdf_objects.to_string(),
        ));
    }
    let loaded_ids: BTreeSet<u32> = document.objects.keys().map(|(id, _)| *id).collect();
    let mut missing = declared.filter(|id| !document.objects.contains_key(id)).count();
    missing += document
        .reference_table
        .entries
        .iter()
        .filter(|(id, entry)| {
            matches!(entry, lopdf::xref::XrefEntry::Normal { .. } | lopdf::xref::XrefEntry::Compressed { .. })
                && **id != 0
                && !loaded_ids.contains(id)
        })
        .count();
    if missing > 0 {
        return Err(Refusal::unreadable(KIND, format!("{missing} of its parts could not be read")));
    }
    let walk = Walk { document, max_depth: limits.max_nesting };
    walk.dictionary(&document.trailer, 0)?;
    for object in document.objects.values() {
        walk.object(object, 0)?;
        // Every member of an object stream is read, also those the cross-reference data does not adopt (stale
        // copies): another reader might.
        if let Object::Stream(stream) = object
            && stream.dict.has_type(b"ObjStm")
        {
            let members =
                lopdf::ObjectStream::new_with_limit(stream, Some(limits.max_pdf_stream_bytes)).map_err(|error| {
                    Refusal::unreadable(KIND, format!("an object stream does not read: {}", short(&error.to_string())))
                })?;
            for member in members.objects.values() {
                walk.object(member, 0)?;
            }
        }
    }
    Ok(())
}

struct Walk<'a> {
    document: &'a Document,
    max_depth: usize,
}

impl Walk<'_> {
    fn object(&self, object: &Object, depth: usize) -> Result<(), Refusal> {
        if depth > self.max_depth {
            return Err(Refusal::unreadable(KIND, "its objects are nested too deeply"));
        }
        match object {
            Object::Name(name) => denied_name(name).map_or(Ok(()), |finding| Err(finding.refusal())),
            Object::Array(items) => items.iter().try_for_each(|item| self.object(item, depth + 1)),
            Object::Dictionary(dictionary) => self.dictionary(dictionary, depth + 1),
            Object::Stream(stream) => self.dictionary(&stream.dict, depth + 1),
            _ => Ok(()),
        }
    }

    fn dictionary(&self, dictionary: &Dictionary, depth: usize) -> Result<(), Refusal> {
        if dictionary.has(b"Rect")
            && let Ok(subtype) = dictionary.get(b"Subtype").and_then(Object::as_name)
            && !ALLOWED_ANNOTATIONS.contains(&subtype)
        {
            return Err(denied_name(subtype).unwrap_or(Finding::RichMedia).refusal());
        }
        if dictionary.get(b"Type").and_then(Object::as_name).is_ok_and(|t| t == b"Action") {
            self.action(dictionary)?;
        }
        for (key, value) in dictionary.iter() {
            if let Some(finding) = denied_key(key) {
                return Err(finding.refusal());
            }
            match key.as_slice() {
                b"A" | b"Next" => self.actions(value)?,
                b"OpenAction" => self.open_action(value)?,
                b"URI" => uri(self.resolve(value))?,
                b"Filter" => filters(self.resolve(value))?,
                _ => {}
            }
            self.object(value, depth + 1)?;
        }
        Ok(())
    }

    fn resolve<'o>(&'o self, object: &'o Object) -> &'o Object {
        self.document.dereference(object).map(|(_, object)| object).unwrap_or(object)
    }

    /// `/A` and `/Next`: an action or a list of them.
    fn actions(&self, value: &Object) -> Result<(), Refusal> {
        match self.resolve(value) {
            Object::Dictionary(action) => self.action(action),
            Object::Array(items) => items.iter().try_for_each(|item| self.actions(item)),
            _ => Ok(()),
        }
    }

    /// An `/OpenAction` may only say which page to open at (a destination, or a go-to action).
    fn open_action(&self, value: &Object) -> Result<(), Refusal> {
        match self.resolve(value) {
            Object::Array(_) | Object::Name(_) | Object::String(..) => Ok(()),
            Object::Dictionary(action) => {
                // What the action does is reported first (JavaScript, a launch); any action but go-to is refused.
                self.action(action)?;
                if action.get(b"S").and_then(Object::as_name).is_ok_and(|kind| kind == b"GoTo") {
                    Ok(())
                } else {
                    Err(Finding::AutomaticAction.refusal())
                }
            }
            _ => Err(Finding::AutomaticAction.refusal()),
        }
    }

    fn action(&self, action: &Dictionary) -> Result<(), Refusal> {
        let Ok(kind) = action.get(b"S").and_then(Object::as_name) else {
            return Err(Finding::Action.refusal());
        };
        if !ALLOWED_ACTIONS.contains(&kind) {
            return Err(denied_name(kind).unwrap_or(Finding::Action).refusal());
        }
        if kind == b"Named" {
            let named = action.get(b"N").and_then(Object::as_name).unwrap_or(b"");
            if !ALLOWED_NAMED.contains(&named) {
                return Err(Finding::Action.refusal());
            }
        }
        if kind == b"URI" {
            uri(self.resolve(action.get(b"URI").unwrap_or(&Object::Null)))?;
        }
        Ok(())
    }
}

/// A link target must be a web or e-mail address or a place in this document.
fn uri(value: &Object) -> Result<(), Refusal> {
    let Object::String(text, _) = value else {
        return Err(Finding::Link.refusal());
    };
    let text: String = String::from_utf8_lossy(text).trim().to_ascii_lowercase();
    // A web or e-mail address, or a place in this document (`#name`, as converted web pages link).
    if ["http://", "https://", "mailto:", "#"].iter().any(|scheme| text.starts_with(scheme)) {
        Ok(())
    } else {
        Err(Finding::Link.refusal())
    }
}

fn filters(value: &Object) -> Result<(), Refusal> {
    let unknown = |name: &[u8]| !ALLOWED_FILTERS.contains(&name);
    let bad = match value {
        Object::Name(name) => unknown(name),
        Object::Array(items) => items.iter().any(|item| item.as_name().map_or(true, unknown)),
        _ => true,
    };
    if bad { Err(Refusal::unreadable(KIND, "it uses a compression that is not recognised")) } else { Ok(()) }
}

/// After the last `%%EOF` only white space may follow: anything else is another file hiding behind the PDF.
fn refuse_data_after_end(bytes: &[u8]) -> Result<(), Refusal> {
    let Some(end) = crate::sniff::rfind(bytes, b"%%EOF") else {
        return Err(Refusal::unreadable(KIND, "it has no end marker, so it may be cut short"));
    };
    let rest = &bytes[end + 5..];
    let extra = rest.iter().filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0C' | 0)).count();
    if extra > 0 {
        return Err(Refusal::Polyglot { kind: KIND, other: format!("{} bytes after the end of the PDF", rest.len()) });
    }
    Ok(())
}

/// Reads the file's bytes outside stream data, as `pdfid` does: every name (with `#xx` escapes decoded) is checked
/// against the refused keys and values, and every `N G obj` header is counted, so the parsed document can be
/// checked to hold each object the file declares.
fn scan_outside_streams(bytes: &[u8]) -> Result<BTreeMap<(u32, u16), usize>, Refusal> {
    let mut declared = BTreeMap::new();
    let mut at = 0usize;
    while at < bytes.len() {
        match bytes[at] {
            b'/' => {
                let (name, next) = read_name(bytes, at + 1);
                if name == b"Encrypt" {
                    return Err(Refusal::Encrypted { kind: KIND });
                }
                if let Some(finding) = denied_key(&name).or_else(|| denied_name(&name)) {
                    return Err(finding.refusal());
                }
                at = next;
            }
            b's' if bytes[at..].starts_with(b"stream")
                && !is_regular(bytes.get(at + 6).copied())
                && at > 0
                && !is_regular(bytes.get(at - 1).copied()) =>
            {
                // Stream data is binary: skip to its end.
                match crate::sniff::find(&bytes[at + 6..], b"endstream") {
                    Some(offset) => at += 6 + offset + 9,
                    None => return Err(Refusal::unreadable(KIND, "a stream has no end")),
                }
            }
            b'o' if bytes[at..].starts_with(b"obj") && !is_regular(bytes.get(at + 3).copied()) => {
                if let Some(id) = object_header_before(bytes, at) {
                    *declared.entry(id).or_insert(0) += 1;
                }
                at += 3;
            }
            b'%' => {
                // A comment runs to the end of the line.
                at += bytes[at..].iter().position(|b| matches!(b, b'\r' | b'\n')).unwrap_or(bytes.len() - at);
            }
            _ => at += 1,
        }
    }
    Ok(declared)
}

/// `12 0 obj`: the two numbers before `obj`, separated and preceded by white space.
fn object_header_before(bytes: &[u8], obj_at: usize) -> Option<(u32, u16)> {
    let mut end = obj_at;
    let mut numbers = [0u64; 2];
    for slot in (0..2).rev() {
        let gap = bytes[..end].iter().rev().take_while(|b| b.is_ascii_whitespace()).count();
        if gap == 0 {
            return None;
        }
        end -= gap;
        let digits = bytes[..end].iter().rev().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 10 {
            return None;
        }
        numbers[slot] = std::str::from_utf8(&bytes[end - digits..end]).ok()?.parse().ok()?;
        end -= digits;
    }
    if end > 0 && is_regular(Some(bytes[end - 1])) {
        return None;
    }
    Some((u32::try_from(numbers[0]).ok()?, u16::try_from(numbers[1]).ok()?))
}

fn read_name(bytes: &[u8], mut at: usize) -> (Vec<u8>, usize) {
    let mut name = Vec::new();
    while let Some(&byte) = bytes.get(at) {
        if !is_regular(Some(byte)) {
            break;
        }
        if byte == b'#' {
            let hex = bytes.get(at + 1..at + 3).and_then(|h| std::str::from_utf8(h).ok());
            if let Some(value) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                name.push(value);
                at += 3;
                continue;
            }
        }
        name.push(byte);
        at += 1;
    }
    (name, at)
}

fn is_regular(byte: Option<u8>) -> bool {
    byte.is_some_and(|b| {
        !b.is_ascii_whitespace()
            && b != 0
            && !matches!(b, b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%')
    })
}

fn short(message: &str) -> String {
    message.chars().take(160).collect()
}

fn megabytes(bytes: usize) -> String {
    format!("{} MB", bytes / (1024 * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::PdfBuilder;

    fn check(bytes: &[u8]) -> Result<String, Refusal> {
        inspect(bytes, &Limits::default())
    }

    #[test]
    fn a_plain_pdf_is_accepted_with_its_pages() {
        assert_eq!(check(&PdfBuilder::new(3).build()).unwrap(), "3 pages");
    }

    #[test]
    fn javascript_in_any_spelling_or_place_is_refused() {
        let open = PdfBuilder::new(1).catalog_entry("/OpenAction << /S /JavaScript /JS (app.alert(1)) >>").build();
        assert_eq!(check(&open).unwrap_err().finding(), "pdf_javascript");
        let escaped = PdfBuilder::new(1).catalog_entry("/OpenAction << /S /J#61vaScript /J#53 (x) >>").build();
        assert_eq!(check(&escaped).unwrap_err().finding(), "pdf_javascript");
        let compressed = PdfBuilder::new(1).compressed_open_action("<< /S /JavaScript /JS (x) >>").build();
        assert_eq!(check(&compressed).unwrap_err().finding(), "pdf_javascript");
    }

    #[test]
    fn a_destination_to_open_at_and_web_links_are_accepted() {
        let pdf = PdfBuilder::new(2)
            .catalog_entry("/OpenAction [3 0 R /Fit]")
            .annotation(
                "<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /A << /S /URI /URI (https://example.org) >> >>",
            )
            .build();
        assert_eq!(check(&pdf).unwrap(), "2 pages");
    }

    #[test]
    fn launch_links_to_files_and_attachments_are_refused() {
        let launch = PdfBuilder::new(1)
            .annotation("<< /Subtype /Link /Rect [0 0 1 1] /A << /S /Launch /F (cmd.exe) >> >>")
            .build();
        assert_eq!(check(&launch).unwrap_err().finding(), "pdf_action");
        let file_link = PdfBuilder::new(1)
            .annotation("<< /Subtype /Link /Rect [0 0 1 1] /A << /S /URI /URI (file:///etc/passwd) >> >>")
            .build();
        assert_eq!(check(&file_link).unwrap_err().finding(), "pdf_link");
        let attached =
            PdfBuilder::new(1).catalog_entry("/Names << /EmbeddedFiles << /Names [(a.exe) 9 0 R] >> >>").build();
        assert_eq!(check(&attached).unwrap_err().finding(), "pdf_embedded_file");
    }

    #[test]
    fn encryption_truncation_and_trailing_data_are_refused() {
        let encrypted = PdfBuilder::new(1).trailer_entry("/Encrypt << /Filter /Standard /V 1 >>").build();
        assert_eq!(check(&encrypted).unwrap_err().code(), "encrypted");
        let whole = PdfBuilder::new(2).build();
        assert_eq!(check(&whole[..whole.len() - 40]).unwrap_err().code(), "unreadable");
        let mut trailing = whole.clone();
        trailing.extend_from_slice(b"PK\x03\x04 hidden archive");
        assert_eq!(check(&trailing).unwrap_err().code(), "polyglot");
    }

    #[test]
    fn an_object_the_parser_cannot_read_is_refused() {
        // The font object's string never closes: the object does not parse, whatever else the file holds.
        let mut pdf = PdfBuilder::new(1).build();
        let font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
        let broken = b"<< /Type /Font /Subtype /Type1 /BaseFont (Helvetica >>";
        let at = pdf.windows(font.len()).position(|w| w == font).unwrap();
        pdf[at..at + font.len()].copy_from_slice(broken);
        let refused = check(&pdf).unwrap_err();
        assert_eq!(refused.code(), "unreadable", "{refused}");
    }

    #[test]
    fn a_stream_that_expands_past_the_limit_is_refused_as_over_the_limit() {
        let pdf = PdfBuilder::new(1).compressed_open_action("<< /S /GoTo /D [3 0 R /Fit] >>").build();
        assert!(check(&pdf).is_ok());
        let tight = Limits { max_pdf_stream_bytes: 8, ..Limits::default() };
        assert_eq!(inspect(&pdf, &tight).unwrap_err().code(), "over_limit");
    }

    #[test]
    fn object_headers_are_read_from_the_bytes() {
        assert_eq!(object_header_before(b"\n12 0 obj", 6), Some((12, 0)));
        assert_eq!(object_header_before(b"x12 0 obj", 6), None);
        assert_eq!(object_header_before(b"\n0obj", 2), None);
    }
}
