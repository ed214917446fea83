"""The file inspector's peer: pdfid's keyword triage over the same PDFs, one at a time on one core.

For each PDF, pdfid (the PyPI package `pdfid`, Didier Stevens' scanner as a library) counts the names that mark
active content; a file counts as refused when any of /Encrypt, /JS, /JavaScript, /AA, /OpenAction, /Launch,
/EmbeddedFile, /XFA or /RichMedia occurs, as the usual pdfid triage does. It reads bytes and counts names; it does
not parse objects, so it is less work than our inspection, not more.

usage: inspect_peer.py [--json] PATH...   (folders are walked; only files ending in .pdf are read)
"""
import json
import os
import sys
import time
import xml.dom.minidom  # noqa: F401  (pdfid returns a minidom document)

from pdfid import pdfid

ACTIVE = ["/Encrypt", "/JS", "/JavaScript", "/AA", "/OpenAction", "/Launch", "/EmbeddedFile", "/XFA", "/RichMedia"]


def files(paths):
    for path in paths:
        if os.path.isdir(path):
            for root, _, names in os.walk(path):
                for name in sorted(names):
                    if name.lower().endswith(".pdf"):
                        yield os.path.join(root, name)
        elif path.lower().endswith(".pdf"):
            yield path


def main():
    as_json = "--json" in sys.argv
    paths = [a for a in sys.argv[1:] if a != "--json"]
    count = refused = errors = 0
    size = 0
    seconds = 0.0
    for path in files(paths):
        size += os.path.getsize(path)
        started = time.perf_counter()
        try:
            document = pdfid.PDFiD(path)
            counts = {
                k.getAttribute("Name"): int(k.getAttribute("Count")) + int(k.getAttribute("HexcodeCount"))
                for k in document.getElementsByTagName("Keyword")
            }
            flagged = any(counts.get(name, 0) > 0 for name in ACTIVE)
            failed = document.documentElement.getAttribute("ErrorOccured") == "True"
        except Exception:  # the peer's own failure counts as a refusal, as ours would
            flagged, failed = True, True
        seconds += time.perf_counter() - started
        count += 1
        refused += int(flagged or failed)
        errors += int(failed)
    report = {
        "files": count,
        "megabytes": size / 1e6,
        "seconds": seconds,
        "mb_per_s": size / 1e6 / max(seconds, 1e-9),
        "refused": refused,
        "errors": errors,
    }
    if as_json:
        print(json.dumps(report))
    else:
        print(f"pdfid: {count} files, {size / 1e6:.1f} MB in {seconds:.2f} s: {report['mb_per_s']:.1f} MB/s; "
              f"{refused} flagged ({errors} errors)")


if __name__ == "__main__":
    main()
