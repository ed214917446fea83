"""Makes the embedding model the app runs from the one its package ships (`make setup` calls this once).

The packaged all-MiniLM-L6-v2 stores its weights as int8 but turns them back into float32 inside the graph, so every
matrix product runs in float32. Here the graph's constants are folded (ONNX Runtime's basic, hardware-independent
optimisations) and its weight products are quantized dynamically (int8 weights per output channel, activations
quantized per pass), so ONNX Runtime runs them with its integer kernels. The result is byte-for-byte the same for the
same input and package versions; the Makefile checks its SHA-256 against crates/embed's MODEL_FILES.

usage: quantize_model.py SOURCE_MODEL OUTPUT_MODEL
"""
import os
import sys
import tempfile

import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: quantize_model.py SOURCE_MODEL OUTPUT_MODEL", file=sys.stderr)
        return 2
    source, output = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        folded = os.path.join(work, "folded.onnx")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = folded
        ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        quantize_dynamic(folded, output, weight_type=QuantType.QInt8, per_channel=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
