//! OCR workers: one thread per core, each with its own Tesseract engine created once and reused for every page it
//! gets. Pages are queued by the caller (who renders them) and come back with text, boxes and a measured confidence.

use crate::IntakeError;
use image::GrayImage;
use leptess::LepTess;
use pactwise_domain::CharBox;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A page image to recognise. `scale` is image pixels per page point (e.g. 300/72 for a 300 dpi render).
pub(crate) struct OcrImage {
    pub key: usize,
    pub scale: f32,
    pub image: GrayImage,
}

/// What OCR made of a page: text (words by spaces, lines by `\n`, paragraphs by a blank line), a box per character
/// in page points, and the word-confidence mean weighted by word length (0..=1).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OcrResult {
    pub text: String,
    pub boxes: Vec<CharBox>,
    pub confidence: f32,
}

impl OcrResult {
    pub fn empty() -> Self {
        OcrResult { text: String::new(), boxes: Vec::new(), confidence: 0.0 }
    }
}

struct Job {
    page: OcrImage,
    reply: Sender<(usize, Result<OcrResult, String>)>,
}

pub(crate) struct OcrPool {
    queue: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
    size: usize,
}

impl OcrPool {
    pub fn start(size: usize, tessdata: Option<PathBuf>, language: String) -> OcrPool {
        let size = size.max(1);
        if std::env::var("OMP_THREAD_LIMIT").as_deref() != Ok("1") {
            tracing::warn!(
                "OMP_THREAD_LIMIT=1 is not set in this process's environment: Tesseract's OpenMP threads will \
                 compete with the OCR workers; start the process with OMP_THREAD_LIMIT=1"
            );
        }
        let (queue, jobs) = mpsc::channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        let workers: Vec<_> = (0..size)
            .filter_map(|n| {
                let jobs = Arc::clone(&jobs);
                let tessdata = tessdata.clone();
                let language = language.clone();
                std::thread::Builder::new()
                    .name(format!("ocr-{n}"))
                    .spawn(move || work(&jobs, tessdata, &language))
                    .map_err(|e| tracing::error!(worker = n, error = %e, "could not start an OCR worker thread"))
                    .ok()
            })
            .collect();
        // With no worker at all, OCR reports itself unavailable instead of waiting forever.
        let size = workers.len();
        let queue = (size > 0).then_some(queue);
        OcrPool { queue, workers, size }
    }

    /// Recognises every page the iterator yields (an `Err` is a page that could not be rendered), calling `progress`
    /// with the number finished so far. Pages are handed out as they are produced, at most two per worker ahead.
    pub fn recognize_all(
        &self,
        pages: impl Iterator<Item = Result<OcrImage, String>>,
        progress: impl Fn(u32),
    ) -> Result<Vec<(usize, OcrResult)>, IntakeError> {
        let queue = self
            .queue
            .as_ref()
            .ok_or_else(|| IntakeError::OcrUnavailable { detail: "no OCR worker thread could be started".into() })?;
        let (reply, replies) = mpsc::channel();
        let mut results = Vec::new();
        let mut in_flight = 0usize;
        let mut done = 0u32;
        let mut first_error: Option<IntakeError> = None;
        let mut receive = |in_flight: &mut usize,
                           blocking: bool,
                           results: &mut Vec<(usize, OcrResult)>,
                           first_error: &mut Option<IntakeError>|
         -> bool {
            let got = if blocking { replies.recv().ok() } else { replies.try_recv().ok() };
            match got {
                Some((key, outcome)) => {
                    *in_flight -= 1;
                    done += 1;
                    match outcome {
                        Ok(r) => results.push((key, r)),
                        Err(detail) => {
                            first_error.get_or_insert(IntakeError::OcrUnavailable { detail });
                        }
                    }
                    progress(done);
                    true
                }
                None => false,
            }
        };
        for page in pages {
            match page {
                Ok(page) => {
                    if queue.send(Job { page, reply: reply.clone() }).is_err() {
                        return Err(IntakeError::OcrUnavailable { detail: "OCR workers stopped".into() });
                    }
                    in_flight += 1;
                }
                Err(detail) => {
                    first_error.get_or_insert(IntakeError::Render { detail });
                }
            }
            while receive(&mut in_flight, false, &mut results, &mut first_error) {}
            while in_flight >= 2 * self.size {
                if !receive(&mut in_flight, true, &mut results, &mut first_error) {
                    break;
                }
            }
        }
        while in_flight > 0 {
            if !receive(&mut in_flight, true, &mut results, &mut first_error) {
                break;
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(results),
        }
    }
}

impl Drop for OcrPool {
    fn drop(&mut self) {
        self.queue = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

fn work(jobs: &Mutex<Receiver<Job>>, tessdata: Option<PathBuf>, language: &str) {
    let mut engine: Option<Result<LepTess, String>> = None;
    loop {
        let job = {
            let jobs = jobs.lock().unwrap_or_else(|e| e.into_inner());
            jobs.recv()
        };
        let Ok(job) = job else { return };
        let engine = engine.get_or_insert_with(|| {
            let data = tessdata.as_ref().map(|p| p.to_string_lossy().into_owned());
            LepTess::new(data.as_deref(), language).map_err(|e| e.to_string())
        });
        let outcome = match engine {
            Ok(engine) => recognize(engine, &job.page),
            Err(e) => Err(format!("Tesseract could not start: {e}")),
        };
        let _ = job.reply.send((job.page.key, outcome));
    }
}

fn recognize(engine: &mut LepTess, page: &OcrImage) -> Result<OcrResult, String> {
    let pgm = to_pgm(&page.image);
    engine.set_image_from_mem(&pgm).map_err(|e| format!("Leptonica could not read the page image: {e}"))?;
    engine.set_source_resolution((page.scale * 72.0).round() as i32);
    let tsv = engine.get_tsv_text(0).map_err(|e| format!("Tesseract output was not UTF-8: {e}"))?;
    Ok(assemble(&tsv, page.scale))
}

/// Netpbm greyscale: the cheapest format Leptonica reads from memory (no compression).
fn to_pgm(image: &GrayImage) -> Vec<u8> {
    let mut out = format!("P5\n{} {}\n255\n", image.width(), image.height()).into_bytes();
    out.extend_from_slice(image.as_raw());
    out
}

/// Builds page text, character boxes (each word's box shared evenly by its letters) and the confidence from
/// Tesseract's TSV: `level page block par line word left top width height conf text`.
pub(crate) fn assemble(tsv: &str, scale: f32) -> OcrResult {
    let mut text = String::new();
    let mut boxes = Vec::new();
    let mut index: u32 = 0;
    let mut last_line: Option<(u32, u32, u32)> = None;
    let (mut weighted, mut weight) = (0.0f64, 0.0f64);
    for row in tsv.lines() {
        let cols: Vec<&str> = row.splitn(12, '\t').collect();
        if cols.len() < 12 || cols[0] != "5" {
            continue;
        }
        let word = cols[11].trim();
        let num = |i: usize| cols[i].trim().parse::<f32>().ok();
        let (Some(left), Some(top), Some(w), Some(h), Some(conf)) = (num(6), num(7), num(8), num(9), num(10)) else {
            continue;
        };
        if word.is_empty() || conf < 0.0 {
            continue;
        }
        let int = |i: usize| cols[i].trim().parse::<u32>().unwrap_or(0);
        let line = (int(2), int(3), int(4));
        if let Some(prev) = last_line {
            if (prev.0, prev.1) != (line.0, line.1) {
                text.push_str("\n\n");
                index += 2;
            } else if prev != line {
                text.push('\n');
                index += 1;
            } else {
                text.push(' ');
                index += 1;
            }
        }
        last_line = Some(line);
        let letters = word.chars().count() as f32;
        let piece = w / letters / scale;
        for (k, c) in word.chars().enumerate() {
            boxes.push(CharBox {
                index,
                x: left / scale + piece * k as f32,
                y: top / scale,
                width: piece,
                height: h / scale,
            });
            text.push(c);
            index += 1;
        }
        weighted += conf as f64 * letters as f64;
        weight += letters as f64;
    }
    let confidence = if weight > 0.0 { (weighted / weight / 100.0) as f32 } else { 0.0 };
    OcrResult { text, boxes, confidence }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tesseract_tsv_becomes_lines_paragraphs_boxes_and_a_weighted_confidence() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   1\t1\t0\t0\t0\t0\t0\t0\t2550\t3300\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t300\t300\t120\t40\t90\tThe\n\
                   5\t1\t1\t1\t1\t2\t450\t300\t300\t40\t60\tSeller\n\
                   5\t1\t1\t1\t2\t1\t300\t360\t90\t40\t100\tshall\n\
                   5\t1\t1\t2\t1\t1\t300\t500\t90\t40\t100\tpay\n";
        let r = assemble(tsv, 300.0 / 72.0);
        assert_eq!(r.text, "The Seller\nshall\n\npay");
        assert_eq!(r.boxes.len(), 3 + 6 + 5 + 3);
        let s = &r.boxes[3];
        assert_eq!(r.text.chars().nth(s.index as usize), Some('S'));
        assert!((s.x - 450.0 * 72.0 / 300.0).abs() < 1e-3);
        let expected = (90.0 * 3.0 + 60.0 * 6.0 + 100.0 * 5.0 + 100.0 * 3.0) / 17.0 / 100.0;
        assert!((r.confidence - expected).abs() < 1e-4);
    }
}
