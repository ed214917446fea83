//! DOCX and XLSX: the ZIP archive read entry by entry (bytes counted while expanding), every XML part read to its
//! end, relationships and content types checked, and only known kinds of parts allowed.

use std::collections::BTreeSet;
use std::io::{Cursor, Read};

use quick_xml::events::{BytesStart, Event};
use zip::ZipArchive;

use crate::{Kind, Limits, Refusal};

/// Any part may expand to this much whatever its ratio (small XML parts compress very well).
const RATIO_FLOOR: u64 = 1024 * 1024;
/// The whole archive may expand to this much whatever its ratio.
const TOTAL_FLOOR: u64 = 64 * 1024 * 1024;
/// How deep XML elements may nest (tables in tables in Word go deep; a bomb goes deeper).
const MAX_XML_DEPTH: usize = 512;

fn active(kind: Kind, finding: &'static str, what: &str, remedy: &'static str) -> Refusal {
    Refusal::ActiveContent { kind, finding, what: what.to_owned(), remedy }
}

fn macros(kind: Kind) -> Refusal {
    active(
        kind,
        "ooxml_macros",
        "contains macros",
        "Save it as a document without macros (.docx or .xlsx) and upload that.",
    )
}

fn activex(kind: Kind) -> Refusal {
    active(kind, "ooxml_activex", "contains ActiveX controls", "Remove the controls, save it again and upload that.")
}

fn ole(kind: Kind) -> Refusal {
    active(
        kind,
        "ooxml_embedded_object",
        "contains an embedded object or file",
        "Upload the embedded files separately, and the document without them.",
    )
}

fn external(kind: Kind, what: &str) -> Refusal {
    active(
        kind,
        "ooxml_external",
        what,
        "Remove the link to the other file or address (web links in the text are fine), save it again and upload that.",
    )
}

fn dde(kind: Kind) -> Refusal {
    active(
        kind,
        "ooxml_field",
        "has a field that runs a program or pulls in another file (DDE, INCLUDETEXT, INCLUDEPICTURE or LINK)",
        "Convert the fields to plain text (in Word: select all, then Ctrl+Shift+F9), save and upload that.",
    )
}

pub(crate) fn inspect(kind: Kind, bytes: &[u8], limits: &Limits) -> Result<String, Refusal> {
    if !crate::sniff::zip_end_record_ends(bytes) {
        return Err(Refusal::Polyglot { kind, other: "data after the end of the archive".into() });
    }
    let mut archive =
        ZipArchive::new(Cursor::new(bytes)).map_err(|error| Refusal::unreadable(kind, short(&error.to_string())))?;
    if archive.len() > limits.max_archive_entries {
        return Err(Refusal::over(
            kind,
            format!("has {} parts", archive.len()),
            limits.max_archive_entries.to_string(),
        ));
    }
    check_layout(kind, &mut archive, bytes)?;
    let types = read_entry_named(kind, &mut archive, "[Content_Types].xml", limits)?;
    let main = check_content_types(kind, types.as_deref())?;
    // Expansion is bounded by the archive's own size: nothing legitimate expands hundreds of times over.
    let total_budget = limits
        .max_archive_expanded_bytes
        .min((bytes.len() as u64).saturating_mul(limits.max_archive_ratio).max(TOTAL_FLOOR));
    let mut seen = BTreeSet::new();
    let mut expanded = 0u64;
    let mut found_main = false;
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|error| zip_error(kind, error))?;
        if entry.encrypted() {
            return Err(Refusal::Encrypted { kind });
        }
        let name = entry.name().to_owned();
        check_part_name(kind, &name)?;
        if !seen.insert(name.to_ascii_lowercase()) {
            return Err(Refusal::unreadable(kind, format!("the part {name} appears twice")));
        }
        if entry.is_dir() {
            continue;
        }
        // Read no further than the smallest bound: what is left of the total, one part's share, its ratio.
        let by_ratio = entry.compressed_size().saturating_mul(limits.max_archive_ratio).max(RATIO_FLOOR);
        let bound = (total_budget - expanded).min(by_ratio);
        let mut content = Vec::new();
        (&mut entry).take(bound + 1).read_to_end(&mut content).map_err(|error| {
            Refusal::unreadable(kind, format!("the part {name} does not expand: {}", short(&error.to_string())))
        })?;
        let size = content.len() as u64;
        if size > bound {
            return Err(if bound == by_ratio {
                Refusal::over(
                    kind,
                    "has a part that expands too many times over",
                    format!("{} times", limits.max_archive_ratio),
                )
            } else {
                Refusal::over(
                    kind,
                    "expands to more than the accepted size",
                    format!("{} MB, or {} times the file", total_budget / (1024 * 1024), limits.max_archive_ratio),
                )
            });
        }
        if size != entry.size() {
            return Err(Refusal::unreadable(kind, format!("the part {name} is not the size the archive says")));
        }
        expanded += size;
        found_main |= name == main;
        check_part(kind, &name, &content, limits)?;
    }
    if !found_main {
        return Err(Refusal::unreadable(kind, "its main part is missing"));
    }
    Ok(format!("{} parts", seen.len()))
}

/// The archive is exactly its entries: nothing before the first, no gap between them where another file could
/// hide, no entry listed twice (the ZIP reader would keep one of them; another reader the other).
fn check_layout(kind: Kind, archive: &mut ZipArchive<Cursor<&[u8]>>, bytes: &[u8]) -> Result<(), Refusal> {
    let hidden = |what: &str| Refusal::Polyglot { kind, other: what.to_owned() };
    if archive.offset() != 0 {
        return Err(hidden("data before the start of the archive"));
    }
    let listed = crate::sniff::zip_end_record_count(bytes)
        .ok_or_else(|| Refusal::unreadable(kind, "its end record is damaged"))?;
    if listed != archive.len() {
        return Err(Refusal::unreadable(kind, "the archive lists a part twice"));
    }
    let mut spans = Vec::new();
    let mut directory = u64::MAX;
    for index in 0..archive.len() {
        let entry = archive.by_index_raw(index).map_err(|error| zip_error(kind, error))?;
        spans.push((entry.header_start(), entry.data_start() + entry.compressed_size()));
        directory = directory.min(entry.central_header_start());
    }
    spans.sort_unstable();
    let mut end = 0u64;
    for (start, stop) in spans {
        // A data descriptor (at most 16 bytes) may follow an entry's data.
        if start < end || start > end + 16 {
            return Err(hidden("data between the parts of the archive"));
        }
        end = stop;
    }
    if directory < end || directory > end + 16 {
        return Err(hidden("data between the parts of the archive"));
    }
    Ok(())
}

fn zip_error(kind: Kind, error: zip::result::ZipError) -> Refusal {
    match error {
        zip::result::ZipError::UnsupportedArchive(message) if message.contains("assword") => {
            Refusal::Encrypted { kind }
        }
        other => Refusal::unreadable(kind, short(&other.to_string())),
    }
}

/// One entry by name, read within the ratio bound; `None` when it is absent.
fn read_entry_named(
    kind: Kind,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    name: &str,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, Refusal> {
    let mut entry = match archive.by_name(name) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(error) => return Err(zip_error(kind, error)),
    };
    if entry.encrypted() {
        return Err(Refusal::Encrypted { kind });
    }
    let bound = entry.compressed_size().saturating_mul(limits.max_archive_ratio).max(RATIO_FLOOR);
    let mut content = Vec::new();
    (&mut entry).take(bound + 1).read_to_end(&mut content).map_err(|error| {
        Refusal::unreadable(kind, format!("the part {name} does not expand: {}", short(&error.to_string())))
    })?;
    if content.len() as u64 > bound {
        return Err(Refusal::over(
            kind,
            "has a part that expands too many times over",
            format!("{} times", limits.max_archive_ratio),
        ));
    }
    Ok(Some(content))
}

/// Part names stay inside the archive: no absolute paths, no `..`, no backslashes or drive letters.
fn check_part_name(kind: Kind, name: &str) -> Result<(), Refusal> {
    let bad = name.is_empty()
        || name.starts_with('/')
        || name.contains('\\')
        || name.contains(':')
        || name.split('/').any(|segment| segment == ".." || segment == ".")
        || name.chars().any(char::is_control);
    if bad { Err(Refusal::unreadable(kind, "a part has a name that points outside the file")) } else { Ok(()) }
}

/// The content types: no macro-enabled, ActiveX or OLE types; the main part is a Word document for a `.docx`, a
/// workbook for a `.xlsx`. Returns the main part's name.
fn check_content_types(kind: Kind, types: Option<&[u8]>) -> Result<String, Refusal> {
    let Some(types) = types else {
        return Err(Refusal::TypeMismatch {
            named: kind,
            found: "a ZIP archive that is not a Word or Excel file".into(),
        });
    };
    let mut main = None;
    let mut all = Vec::new();
    read_xml(kind, "[Content_Types].xml", types, |element| {
        let content_type = attribute(element, b"ContentType").unwrap_or_default();
        if element.local_name().as_ref() == b"Override" {
            let part = attribute(element, b"PartName").unwrap_or_default();
            if content_type.ends_with(".document.main+xml") || content_type.ends_with(".sheet.main+xml") {
                main = Some((part.trim_start_matches('/').to_owned(), content_type.clone()));
            }
        }
        all.push(content_type.to_ascii_lowercase());
        Ok(())
    })?;
    if all.iter().any(|t| t.contains("macroenabled") || t.contains("vbaproject") || t.contains("vbadata")) {
        return Err(macros(kind));
    }
    if all.iter().any(|t| t.contains("activex")) {
        return Err(activex(kind));
    }
    if all.iter().any(|t| t.contains("oleobject")) {
        return Err(ole(kind));
    }
    let Some((main, content_type)) = main else {
        return Err(Refusal::TypeMismatch {
            named: kind,
            found: "a ZIP archive that is not a Word or Excel file".into(),
        });
    };
    let is_word = content_type.ends_with("wordprocessingml.document.main+xml");
    let is_excel = content_type.ends_with("spreadsheetml.sheet.main+xml");
    match (kind, is_word, is_excel) {
        (Kind::Docx, true, _) | (Kind::Xlsx, _, true) => Ok(main),
        (_, true, _) => Err(Refusal::TypeMismatch { named: kind, found: "a Word document".into() }),
        (_, _, true) => Err(Refusal::TypeMismatch { named: kind, found: "an Excel workbook".into() }),
        _ => Err(Refusal::TypeMismatch { named: kind, found: "another kind of Office file".into() }),
    }
}

/// One part, by what its name says it is; anything not recognised is refused.
fn check_part(kind: Kind, name: &str, content: &[u8], limits: &Limits) -> Result<(), Refusal> {
    let lower = name.to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    let extension = file.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if file.starts_with("vbaproject") || file.starts_with("vbadata") || lower.contains("/vba") {
        return Err(macros(kind));
    }
    if lower.contains("/activex/") {
        return Err(activex(kind));
    }
    if lower.contains("/embeddings/") {
        return Err(ole(kind));
    }
    if lower.contains("/externallinks/") {
        return Err(external(kind, "links to data in other workbooks"));
    }
    match extension {
        "rels" => check_relationships(kind, name, content),
        "xml" | "vml" => check_xml_part(kind, name, content),
        "svg" => check_svg(kind, name, content),
        "png" => picture_part(kind, name, content, Kind::Png, limits),
        "jpeg" | "jpg" => picture_part(kind, name, content, Kind::Jpeg, limits),
        "gif" if content.starts_with(b"GIF87a") || content.starts_with(b"GIF89a") => Ok(()),
        "emf" if content.get(40..44) == Some(b" EMF") => Ok(()),
        "wmf" if content.starts_with(b"\xD7\xCD\xC6\x9A") || content.starts_with(b"\x01\x00\x09\x00") => Ok(()),
        "bin" if file.starts_with("printersettings") => Ok(()),
        "gif" | "emf" | "wmf" => {
            Err(Refusal::unreadable(kind, format!("the picture {name} is not what its name says")))
        }
        _ => Err(Refusal::unreadable(
            kind,
            format!(
                "it holds a part of a kind that is not accepted ({})",
                if extension.is_empty() { "no type" } else { extension }
            ),
        )),
    }
}

fn picture_part(kind: Kind, name: &str, content: &[u8], picture: Kind, limits: &Limits) -> Result<(), Refusal> {
    if crate::sniff::kind_of(content) != Some(picture.family()) {
        return Err(Refusal::unreadable(kind, format!("the picture {name} is not what its name says")));
    }
    crate::picture::decode(picture, content, limits).map(|_| ()).map_err(|refusal| match refusal {
        Refusal::OverLimit { what, limit, .. } => {
            Refusal::OverLimit { kind, what: format!("has a picture that {what}"), limit }
        }
        _ => Refusal::unreadable(kind, format!("the picture {name} does not decode")),
    })
}

/// Relationships: no macro, ActiveX, OLE, external-workbook, template, frame or alternative-content targets; an
/// external target only for a hyperlink to a web or e-mail address.
fn check_relationships(kind: Kind, name: &str, content: &[u8]) -> Result<(), Refusal> {
    read_xml(kind, name, content, |element| {
        if element.local_name().as_ref() != b"Relationship" {
            return Ok(());
        }
        let relation = attribute(element, b"Type").unwrap_or_default().to_ascii_lowercase();
        let relation = relation.rsplit('/').next().unwrap_or("").to_owned();
        let target = attribute(element, b"Target").unwrap_or_default();
        let is_external = attribute(element, b"TargetMode").is_some_and(|mode| mode.eq_ignore_ascii_case("External"));
        match relation.as_str() {
            "vbaproject" | "wordvbadata" | "vbaprojectsignature" => return Err(macros(kind)),
            "control" | "activexcontrol" | "activexcontrolbinary" => return Err(activex(kind)),
            "oleobject" | "package" | "afchunk" => return Err(ole(kind)),
            "attachedtemplate" => return Err(external(kind, "is attached to a template in another file")),
            "externallink" | "externallinkpath" | "frame" | "subdocument" => {
                return Err(external(kind, "pulls in content from another file"));
            }
            _ => {}
        }
        if is_external {
            let lower = target.trim().to_ascii_lowercase();
            let web = ["http://", "https://", "mailto:"].iter().any(|scheme| lower.starts_with(scheme));
            if relation != "hyperlink" || !web {
                return Err(external(kind, "loads something from outside the file when it is opened"));
            }
        }
        Ok(())
    })
}

/// Any XML part: read to the end, no document type declaration, and no OLE object, ActiveX control, DDE link or
/// file-fetching field in it.
fn check_xml_part(kind: Kind, name: &str, content: &[u8]) -> Result<(), Refusal> {
    let mut field = String::new();
    let mut in_instruction = false;
    let finish_field = |field: &mut String| -> Result<(), Refusal> {
        let refused = fetching_field(field);
        field.clear();
        if refused { Err(dde(kind)) } else { Ok(()) }
    };
    walk_xml(kind, name, content, |event| match event {
        XmlEvent::Open(element) => {
            match element.local_name().as_ref() {
                b"OLEObject" | b"oleObject" | b"oleObjects" | b"objectEmbed" | b"objectLink" => return Err(ole(kind)),
                b"control" | b"controls" | b"ocx" => return Err(activex(kind)),
                b"ddeLink" | b"oleLink" => return Err(dde(kind)),
                b"externalLink" | b"externalBook" => {
                    return Err(external(kind, "links to data in other workbooks"));
                }
                b"altChunk" => return Err(ole(kind)),
                b"instrText" => in_instruction = true,
                b"fldChar" => finish_field(&mut field)?,
                b"fldSimple" if attribute(element, b"instr").is_some_and(|i| fetching_field(&i)) => {
                    return Err(dde(kind));
                }
                _ => {}
            }
            Ok(())
        }
        XmlEvent::Close(local) => {
            if local == b"instrText" {
                in_instruction = false;
            }
            Ok(())
        }
        XmlEvent::Text(text) => {
            if in_instruction {
                field.push_str(text);
            }
            Ok(())
        }
    })?;
    finish_field(&mut field)
}

/// A field instruction whose first word fetches or runs something.
fn fetching_field(instruction: &str) -> bool {
    let word: String = instruction
        .trim_start_matches(|c: char| c.is_whitespace() || c == '"')
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    matches!(word.as_str(), "DDE" | "DDEAUTO" | "INCLUDETEXT" | "INCLUDEPICTURE" | "LINK" | "IMPORT" | "INCLUDE")
}

/// SVG pictures: no scripts, no event handlers, no references outside the picture.
fn check_svg(kind: Kind, name: &str, content: &[u8]) -> Result<(), Refusal> {
    let script = || {
        active(
            kind,
            "svg_script",
            "has a picture with a script or a link out",
            "Replace the picture with a PNG, save and upload that.",
        )
    };
    walk_xml(kind, name, content, |event| {
        let XmlEvent::Open(element) = event else { return Ok(()) };
        if matches!(element.local_name().as_ref(), b"script" | b"foreignObject") {
            return Err(script());
        }
        for attribute in element.attributes().flatten() {
            let key = attribute.key.local_name();
            let value = String::from_utf8_lossy(&attribute.value).trim().to_owned();
            if key.as_ref().len() > 2 && key.as_ref()[..2].eq_ignore_ascii_case(b"on") {
                return Err(script());
            }
            if key.as_ref() == b"href" && !value.starts_with('#') && !value.starts_with("data:image/") {
                return Err(script());
            }
        }
        Ok(())
    })
}

enum XmlEvent<'e> {
    Open(&'e BytesStart<'e>),
    Close(&'e [u8]),
    Text(&'e str),
}

/// Calls `each` on every element's start; the part must read to its end without a document type declaration.
fn read_xml(
    kind: Kind,
    name: &str,
    content: &[u8],
    mut each: impl FnMut(&BytesStart<'_>) -> Result<(), Refusal>,
) -> Result<(), Refusal> {
    walk_xml(kind, name, content, |event| match event {
        XmlEvent::Open(element) => each(element),
        _ => Ok(()),
    })
}

fn walk_xml(
    kind: Kind,
    name: &str,
    content: &[u8],
    mut each: impl FnMut(XmlEvent<'_>) -> Result<(), Refusal>,
) -> Result<(), Refusal> {
    let broken =
        |reason: String| Refusal::unreadable(kind, format!("the part {name} is not well-formed: {}", short(&reason)));
    let mut reader = quick_xml::Reader::from_reader(content);
    reader.config_mut().check_end_names = true;
    let mut depth = 0usize;
    let mut buffer = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buffer).map_err(|error| broken(error.to_string()))?;
        match &event {
            Event::DocType(_) => {
                return Err(active(
                    kind,
                    "xml_doctype",
                    "has a part with a document type declaration (which can pull in other files or expand without end)",
                    "Save it again from Word or Excel and upload that.",
                ));
            }
            Event::Start(element) => {
                depth += 1;
                if depth > MAX_XML_DEPTH {
                    return Err(broken("its elements are nested too deeply".into()));
                }
                each(XmlEvent::Open(element))?;
            }
            Event::Empty(element) => {
                each(XmlEvent::Open(element))?;
                each(XmlEvent::Close(element.local_name().as_ref()))?;
            }
            Event::End(element) => {
                depth = depth.saturating_sub(1);
                each(XmlEvent::Close(element.local_name().as_ref()))?;
            }
            Event::Text(text) => {
                let decoded = text.decode().map_err(|error| broken(error.to_string()))?;
                each(XmlEvent::Text(&decoded))?;
            }
            Event::Eof => break,
            _ => {}
        }
        buffer.clear();
    }
    if depth != 0 {
        return Err(broken("it ends before its elements close".into()));
    }
    Ok(())
}

fn attribute(element: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key)
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
}

fn short(message: &str) -> String {
    message.chars().take(160).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Ooxml;

    fn check(kind: Kind, bytes: &[u8]) -> Result<String, Refusal> {
        inspect(kind, bytes, &Limits::default())
    }

    #[test]
    fn plain_word_and_excel_files_are_accepted() {
        assert!(check(Kind::Docx, &Ooxml::docx().build()).is_ok());
        assert!(check(Kind::Xlsx, &Ooxml::xlsx().build()).is_ok());
        let linked = Ooxml::docx().relationship("hyperlink", "https://example.org/terms", true).build();
        assert!(check(Kind::Docx, &linked).is_ok());
    }

    #[test]
    fn macros_activex_and_embedded_objects_are_refused() {
        let docm = Ooxml::docx().macro_enabled().build();
        assert_eq!(check(Kind::Docx, &docm).unwrap_err().finding(), "ooxml_macros");
        let activex = Ooxml::docx().part("word/activeX/activeX1.xml", "<ax:ocx xmlns:ax=\"urn:x\"/>").build();
        assert_eq!(check(Kind::Docx, &activex).unwrap_err().finding(), "ooxml_activex");
        let embedded = Ooxml::xlsx().part_bytes("xl/embeddings/oleObject1.bin", b"\xD0\xCF\x11\xE0").build();
        assert_eq!(check(Kind::Xlsx, &embedded).unwrap_err().finding(), "ooxml_embedded_object");
    }

    #[test]
    fn external_templates_and_fetching_fields_are_refused() {
        let template = Ooxml::docx().relationship("attachedTemplate", "https://attacker.example/t.dotm", true).build();
        assert_eq!(check(Kind::Docx, &template).unwrap_err().finding(), "ooxml_external");
        let split = Ooxml::docx()
            .body(
                "<w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText> DD</w:instrText></w:r>\
                   <w:r><w:instrText>EAUTO c:\\\\windows\\\\system32\\\\cmd.exe</w:instrText></w:r>\
                   <w:r><w:fldChar w:fldCharType=\"end\"/></w:r>",
            )
            .build();
        assert_eq!(check(Kind::Docx, &split).unwrap_err().finding(), "ooxml_field");
        let page = Ooxml::docx().body("<w:fldSimple w:instr=\" PAGE \"><w:r><w:t>1</w:t></w:r></w:fldSimple>").build();
        assert!(check(Kind::Docx, &page).is_ok());
    }

    #[test]
    fn a_workbook_named_as_a_document_and_a_doctype_are_refused() {
        assert_eq!(check(Kind::Docx, &Ooxml::xlsx().build()).unwrap_err().code(), "type_mismatch");
        let entity = Ooxml::docx().part("customXml/item1.xml", "<!DOCTYPE x [<!ENTITY a \"aaaa\">]><x>&a;</x>").build();
        assert_eq!(check(Kind::Docx, &entity).unwrap_err().finding(), "xml_doctype");
    }

    #[test]
    fn names_outside_the_archive_and_unknown_parts_are_refused() {
        let traversal = Ooxml::docx().part_bytes("../../evil.sh", b"echo").build();
        assert_eq!(check(Kind::Docx, &traversal).unwrap_err().code(), "unreadable");
        let program = Ooxml::docx().part_bytes("word/media/setup.exe", b"MZ").build();
        assert_eq!(check(Kind::Docx, &program).unwrap_err().code(), "unreadable");
    }

    #[test]
    fn a_highly_compressed_part_is_refused_without_expanding_it_all() {
        let limits = Limits { max_archive_expanded_bytes: 4 * 1024 * 1024, ..Limits::default() };
        let bomb = Ooxml::docx().part_bytes("word/media/filler.png", &vec![0u8; 8 * 1024 * 1024]).build();
        assert_eq!(inspect(Kind::Docx, &bomb, &limits).unwrap_err().code(), "over_limit");
    }
}
