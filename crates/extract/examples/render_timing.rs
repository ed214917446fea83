//! Times rendering one page to PNG as the review view asks for it (no cache), several times:
//! `cargo run --release -p pactwise-extract --example render_timing -- FILE.pdf PAGE SCALE [RUNS]`.

use pactwise_extract::{ExtractConfig, Extractor};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, page, scale, rest @ ..] = args.as_slice() else {
        return Err("usage: render_timing FILE.pdf PAGE SCALE [RUNS]".into());
    };
    let runs: usize = rest.first().map_or(Ok(7), |r| r.parse())?;
    let bytes = std::fs::read(file)?;
    let extractor = Extractor::new(ExtractConfig::from_env());
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let png = extractor.render_page(&bytes, page.parse()?, scale.parse()?, None, None)?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        size = png.len();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "page {page} at scale {scale}: median {:.0} ms, min {:.0} ms, {} KiB",
        times[runs / 2],
        times[0],
        size / 1024
    );
    Ok(())
}
