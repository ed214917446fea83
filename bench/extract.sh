#!/usr/bin/env bash
# Extraction benchmarks beside their peers, in one go. Prints one JSON line per figure (median and spread of
# REPEAT runs, whole process against whole process, and the ratio):
#   text_layer_long_pdf   our extractor vs `pdftotext` on long text PDFs: two real CUAD contracts joined with
#                         `pdfunite` (269 pages), and a 240-page PDF we generate from CUAD texts (pdfium writes
#                         one font object per page there, so every page parses its font again)
#   ocr_pages_per_second  our extractor (one process, one Tesseract per core) vs the `tesseract` command on the same
#                         scanned pages (a multi-page TIFF of the page PNGs for ours; also our run on the scanned PDF,
#                         rendered at 300 dpi). The headline peer uses every core as ours does: one `tesseract`
#                         process per page, as many at once as there are cores (`xargs -P $(nproc)`); the same
#                         processes run one after another are printed too (ratio_vs_sequential_peer)
#   ocr_word_accuracy     both recognisers on those pages against the text that was printed
# Needs ../shared/data (or PACTWISE_SHARED_DATA), pdftotext, tesseract, python3. OMP_THREAD_LIMIT=1 is set here,
# before any OCR process starts, for ours and the peers alike.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${PACTWISE_SHARED_DATA:-$ROOT/../shared/data}
REPEAT=${REPEAT:-5}
OCR_PAGES=${OCR_PAGES:-8}
export OMP_THREAD_LIMIT=1
if [ ! -d "$DATA/cuad/contracts" ]; then
  echo "bench/extract.sh: $DATA/cuad/contracts is absent; set PACTWISE_SHARED_DATA" >&2
  exit 2
fi
# Build outputs live outside the clone, as the Makefile keeps them.
TARGET=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
export CARGO_TARGET_DIR=$TARGET
cargo build --quiet --release -p pactwise-extract --bin pactwise-extract
BIN=$TARGET/release/pactwise-extract
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
pdfunite "$DATA/cuad/pdfs/ceres-inc-01-25-2012-ex-10-20-collaboration-agreement.pdf" \
  "$DATA/cuad/pdfs/gooseheadinsurance-inc-04-02-2018-ex-10-6-franchise-agreement.pdf" "$WORK/real-long.pdf"
"$BIN" long-pdf "$WORK/long.pdf" --from "$DATA/cuad/contracts" --pages 240 2>/dev/null
"$BIN" scans "$WORK/scans" --from "$DATA/cuad/contracts" --pages "$OCR_PAGES" 2>/dev/null

python3 - "$BIN" "$WORK" "$REPEAT" <<'PY'
import json, os, statistics, subprocess, sys, time
bin_, work, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
scans = os.path.join(work, "scans")
pngs = sorted(os.path.join(scans, f) for f in os.listdir(scans) if f.endswith(".png"))
cores = len(os.sched_getaffinity(0))  # what `nproc` says
# Other work on the machine takes cores from both sides; the load is printed so figures can be read against it.
print(json.dumps({"figure": "machine", "cores": cores, "load_average_1m": os.getloadavg()[0]}))

def run(cmds):
    """Wall time of running the commands one after another (each a whole process)."""
    start = time.perf_counter()
    for cmd in cmds:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start

def xargs_parallel(files, width):
    """Wall time of `xargs -P width` running one `tesseract FILE -` per file, as many at once as there are cores."""
    start = time.perf_counter()
    subprocess.run(["xargs", "-0", "-n", "1", "-P", str(width), "sh", "-c", 'exec tesseract "$0" - 2>/dev/null'],
                   input="\0".join(files).encode(), check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start

def measure(fn):
    fn()  # warm the page cache
    times = [fn() for _ in range(repeat)]
    return {"median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4), "max_s": round(max(times), 4)}

for name, label, pages in [("real-long.pdf", "cuad_joined", 269), ("long.pdf", "generated", 240)]:
    pdf = os.path.join(work, name)
    ours = measure(lambda: run([[bin_, "extract", pdf, "--quiet"]]))
    peer = measure(lambda: run([["pdftotext", pdf, "-"]]))
    print(json.dumps({"figure": "text_layer_long_pdf", "input": label, "pages": pages, "repeat": repeat,
                      "ours": ours, "pdftotext": peer,
                      "speedup_vs_peer": round(peer["median_s"] / ours["median_s"], 3)}))
    sys.stdout.flush()

# The same page images as one multi-page TIFF (written by `scans`) for our extractor.
tiff = os.path.join(scans, "scans.tiff")
n = len(pngs)
ours = measure(lambda: run([[bin_, "extract", tiff, "--quiet"]]))
ours_pdf = measure(lambda: run([[bin_, "extract", os.path.join(scans, "scanned.pdf"), "--quiet"]]))
peer_par = measure(lambda: xargs_parallel(pngs, cores))
peer = measure(lambda: run([["tesseract", p, "-"] for p in pngs]))
pps = lambda m: round(n / m["median_s"], 3)
print(json.dumps({"figure": "ocr_pages_per_second", "pages": n, "cores": cores, "repeat": repeat,
                  "ours_tiff": {**ours, "pages_per_s": pps(ours)},
                  "ours_scanned_pdf_300dpi": {**ours_pdf, "pages_per_s": pps(ours_pdf)},
                  "tesseract_parallel_xargs_P_cores": {**peer_par, "pages_per_s": pps(peer_par)},
                  "tesseract_sequential": {**peer, "pages_per_s": pps(peer)},
                  "ratio_vs_parallel_peer": round(pps(ours) / pps(peer_par), 3),
                  "ratio_pdf_vs_parallel_peer": round(pps(ours_pdf) / pps(peer_par), 3),
                  "ratio_vs_sequential_peer": round(pps(ours) / pps(peer), 3),
                  "ratio_pdf_vs_sequential_peer": round(pps(ours_pdf) / pps(peer), 3)}))
print(json.dumps({"figure": "ocr_headline", "vs": f"tesseract, one process per page, {cores} at once (xargs -P {cores})",
                  "ours_pages_per_s": pps(ours), "peer_pages_per_s": pps(peer_par),
                  "ratio": round(pps(ours) / pps(peer_par), 3),
                  "ratio_vs_one_process_at_a_time": round(pps(ours) / pps(peer), 3)}))
sys.stdout.flush()
subprocess.run([bin_, "eval-ocr", scans], check=True)
PY
