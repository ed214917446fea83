//! DOCX automatic numbering: the labels Word draws before numbered paragraphs ("10.5", "(a)", "Article 3"), which
//! `word/document.xml` does not hold as text. Read from `word/numbering.xml` (abstract definitions, their levels'
//! start, format and label text, and the numbering instances with their start overrides) and from
//! `word/styles.xml` (paragraph styles that carry numbering, as headings often do). Counters follow Word: each
//! abstract definition counts on, a level starts again after a higher level is used.

use quick_xml::events::{BytesStart, Event};
use std::collections::HashMap;

const LEVELS: usize = 9;

#[derive(Debug, Clone, Default)]
struct Level {
    start: u32,
    format: String,
    text: String,
}

/// What numbering a paragraph asks for, directly or through its style.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NumberingRef {
    pub num_id: Option<String>,
    pub level: Option<usize>,
}

#[derive(Debug, Default)]
pub(crate) struct Numbering {
    /// Abstract definition id → its levels.
    abstracts: HashMap<String, Vec<Level>>,
    /// Instance id → (abstract definition id, start overrides by level).
    instances: HashMap<String, (String, HashMap<usize, u32>)>,
    /// Paragraph style id → its numbering.
    styles: HashMap<String, NumberingRef>,
    /// Counters by abstract definition id; 0 means the level has not been used since it was last reset.
    counters: HashMap<String, [u32; LEVELS]>,
}

fn val(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
}

fn level_index(value: Option<String>) -> Option<usize> {
    value.and_then(|v| v.trim().parse::<usize>().ok()).filter(|l| *l < LEVELS)
}

impl Numbering {
    /// Reads `numbering.xml` and `styles.xml` (either may be missing). Malformed XML ends the reading of that part:
    /// numbering is a help to the reader, never a reason to refuse the document.
    pub(crate) fn read(numbering_xml: Option<&str>, styles_xml: Option<&str>) -> Numbering {
        let mut n = Numbering::default();
        if let Some(xml) = numbering_xml {
            n.read_numbering(xml);
        }
        if let Some(xml) = styles_xml {
            n.read_styles(xml);
        }
        n
    }

    fn read_numbering(&mut self, xml: &str) {
        let mut reader = quick_xml::Reader::from_str(xml);
        let mut abstract_id: Option<String> = None;
        let mut level: Option<usize> = None;
        let mut instance: Option<String> = None;
        let mut override_level: Option<usize> = None;
        while let Ok(event) = reader.read_event() {
            match event {
                Event::Start(ref e) | Event::Empty(ref e) => match e.local_name().as_ref() {
                    b"abstractNum" => {
                        abstract_id = val(e, b"abstractNumId");
                        if let Some(id) = &abstract_id {
                            self.abstracts.insert(id.clone(), vec![Level::default(); LEVELS]);
                        }
                    }
                    b"lvl" if abstract_id.is_some() => level = level_index(val(e, b"ilvl")),
                    b"start" | b"numFmt" | b"lvlText" => {
                        let (Some(id), Some(l)) = (&abstract_id, level) else { continue };
                        let Some(levels) = self.abstracts.get_mut(id) else { continue };
                        let value = val(e, b"val").unwrap_or_default();
                        match e.local_name().as_ref() {
                            b"start" => levels[l].start = value.trim().parse().unwrap_or(1),
                            b"numFmt" => levels[l].format = value,
                            _ => levels[l].text = value,
                        }
                    }
                    b"num" => instance = val(e, b"numId"),
                    b"abstractNumId" => {
                        if let (Some(id), Some(target)) = (&instance, val(e, b"val")) {
                            self.instances.entry(id.clone()).or_default().0 = target;
                        }
                    }
                    b"lvlOverride" => override_level = level_index(val(e, b"ilvl")),
                    b"startOverride" => {
                        if let (Some(id), Some(l), Some(start)) =
                            (&instance, override_level, val(e, b"val").and_then(|v| v.trim().parse().ok()))
                        {
                            self.instances.entry(id.clone()).or_default().1.insert(l, start);
                        }
                    }
                    _ => {}
                },
                Event::End(ref e) => match e.local_name().as_ref() {
                    b"abstractNum" => abstract_id = None,
                    b"lvl" => level = None,
                    b"num" => instance = None,
                    b"lvlOverride" => override_level = None,
                    _ => {}
                },
                Event::Eof => break,
                _ => {}
            }
        }
        for levels in self.abstracts.values_mut() {
            for l in levels.iter_mut().filter(|l| l.start == 0 && l.format.is_empty()) {
                l.start = 1;
            }
        }
    }

    fn read_styles(&mut self, xml: &str) {
        let mut reader = quick_xml::Reader::from_str(xml);
        let mut style: Option<String> = None;
        while let Ok(event) = reader.read_event() {
            match event {
                Event::Start(ref e) | Event::Empty(ref e) => match e.local_name().as_ref() {
                    b"style" => style = val(e, b"styleId"),
                    b"numId" => {
                        if let Some(id) = &style {
                            self.styles.entry(id.clone()).or_default().num_id = val(e, b"val");
                        }
                    }
                    b"ilvl" => {
                        if let Some(id) = &style {
                            self.styles.entry(id.clone()).or_default().level = level_index(val(e, b"val"));
                        }
                    }
                    _ => {}
                },
                Event::End(ref e) if e.local_name().as_ref() == b"style" => style = None,
                Event::Eof => break,
                _ => {}
            }
        }
    }

    /// The label of the next paragraph numbered by `direct` (its own `numPr`) or by its style, counting it; `None`
    /// when the paragraph is not numbered (or numbered by an instance this document does not define).
    pub(crate) fn next_label(&mut self, direct: &NumberingRef, style: Option<&str>) -> Option<String> {
        let styled = style.and_then(|s| self.styles.get(s)).cloned().unwrap_or_default();
        let num_id = direct.num_id.clone().or(styled.num_id)?;
        if num_id.trim() == "0" {
            return None;
        }
        let level = direct.level.or(styled.level).unwrap_or(0);
        let (abstract_id, overrides) = self.instances.get(&num_id)?.clone();
        let levels = self.abstracts.get(&abstract_id)?.clone();
        let counters = self.counters.entry(abstract_id).or_insert([0; LEVELS]);
        let start = |l: usize| overrides.get(&l).copied().unwrap_or(levels[l].start);
        counters[level] = if counters[level] == 0 { start(level) } else { counters[level].saturating_add(1) };
        for deeper in counters.iter_mut().skip(level + 1) {
            *deeper = 0;
        }
        let definition = &levels[level];
        if definition.format == "bullet" || definition.format == "none" {
            return None;
        }
        let mut label = definition.text.clone();
        for (l, defined) in levels.iter().enumerate().take(level + 1) {
            let placeholder = format!("%{}", l + 1);
            if label.contains(&placeholder) {
                let n = if counters[l] == 0 { start(l) } else { counters[l] };
                label = label.replace(&placeholder, &format_number(n, &defined.format));
            }
        }
        let label = label.trim().to_owned();
        (!label.is_empty()).then_some(label)
    }
}

fn format_number(n: u32, format: &str) -> String {
    match format {
        "lowerLetter" => letters(n).to_lowercase(),
        "upperLetter" => letters(n),
        "lowerRoman" => roman(n).to_lowercase(),
        "upperRoman" => roman(n),
        "decimalZero" => format!("{n:02}"),
        _ => n.to_string(),
    }
}

/// Word's letters: A … Z, then AA … ZZ, then AAA ….
fn letters(n: u32) -> String {
    if n == 0 {
        return "0".to_owned();
    }
    let letter = char::from(b'A' + ((n - 1) % 26) as u8);
    std::iter::repeat_n(letter, ((n - 1) / 26 + 1) as usize).collect()
}

fn roman(mut n: u32) -> String {
    if n == 0 || n >= 4000 {
        return n.to_string();
    }
    let table = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut out = String::new();
    for (value, digits) in table {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NUMBERING: &str = r#"<w:numbering xmlns:w="w">
      <w:abstractNum w:abstractNumId="7">
        <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="Article %1"/></w:lvl>
        <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
        <w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="(%3)"/></w:lvl>
        <w:lvl w:ilvl="3"><w:start w:val="1"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="(%4)"/></w:lvl>
      </w:abstractNum>
      <w:abstractNum w:abstractNumId="8">
        <w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="o"/></w:lvl>
      </w:abstractNum>
      <w:num w:numId="1"><w:abstractNumId w:val="7"/></w:num>
      <w:num w:numId="2"><w:abstractNumId w:val="8"/></w:num>
      <w:num w:numId="3"><w:abstractNumId w:val="7"/>
        <w:lvlOverride w:ilvl="0"><w:startOverride w:val="10"/></w:lvlOverride></w:num>
    </w:numbering>"#;

    const STYLES: &str = r#"<w:styles xmlns:w="w">
      <w:style w:type="paragraph" w:styleId="ClauseHeading"><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>
      <w:style w:type="paragraph" w:styleId="Plain"><w:pPr/></w:style>
    </w:styles>"#;

    fn at(level: usize) -> NumberingRef {
        NumberingRef { num_id: Some("1".into()), level: Some(level) }
    }

    #[test]
    fn nested_levels_count_on_and_restart_under_a_new_parent() {
        let mut n = Numbering::read(Some(NUMBERING), Some(STYLES));
        let labels: Vec<Option<String>> =
            [0, 1, 2, 2, 3, 1, 2, 0, 1].into_iter().map(|l| n.next_label(&at(l), None)).collect();
        let expected = ["Article 1", "1.1", "(a)", "(b)", "(i)", "1.2", "(a)", "Article 2", "2.1"];
        assert_eq!(labels, expected.map(|s| Some(s.to_owned())));
    }

    #[test]
    fn a_style_numbers_its_paragraphs_and_direct_numbering_wins() {
        let mut n = Numbering::read(Some(NUMBERING), Some(STYLES));
        assert_eq!(n.next_label(&NumberingRef::default(), Some("ClauseHeading")).as_deref(), Some("Article 1"));
        assert_eq!(n.next_label(&at(1), Some("ClauseHeading")).as_deref(), Some("1.1"));
        assert_eq!(n.next_label(&NumberingRef::default(), Some("Plain")), None);
        let off = NumberingRef { num_id: Some("0".into()), level: None };
        assert_eq!(n.next_label(&off, Some("ClauseHeading")), None, "numId 0 switches numbering off");
    }

    #[test]
    fn bullets_unknown_instances_and_missing_parts_give_no_label() {
        let mut n = Numbering::read(Some(NUMBERING), None);
        let bullet = NumberingRef { num_id: Some("2".into()), level: Some(0) };
        assert_eq!(n.next_label(&bullet, None), None);
        let unknown = NumberingRef { num_id: Some("99".into()), level: Some(0) };
        assert_eq!(n.next_label(&unknown, None), None);
        assert_eq!(Numbering::read(None, None).next_label(&at(0), None), None);
        assert_eq!(Numbering::read(Some("<w:numbering><w:abstractNum"), None).next_label(&at(0), None), None);
    }

    #[test]
    fn a_start_override_begins_the_instance_where_it_says() {
        let mut n = Numbering::read(Some(NUMBERING), None);
        let overridden = NumberingRef { num_id: Some("3".into()), level: Some(0) };
        assert_eq!(n.next_label(&overridden, None).as_deref(), Some("Article 10"));
    }

    #[test]
    fn letters_and_roman_numerals_as_word_writes_them() {
        assert_eq!([1, 26, 27, 53].map(letters), ["A", "Z", "AA", "AAA"].map(String::from));
        assert_eq!([4, 9, 14, 1999].map(roman), ["IV", "IX", "XIV", "MCMXCIX"].map(String::from));
        assert_eq!(format_number(3, "decimalZero"), "03");
    }
}
