"""Makes the embedding model the app runs from the one its package ships (`make setup` calls this once).

The packaged all-MiniLM-L6-v2 stores its weights as int8 but turns them back into float32 inside the graph, so every
matrix product runs in float32; and its exporter spelled attention out as some twenty small operators a layer
(reshapes, transposes, a mask built with `Where`, a `Softmax` guarded by `IsNaN`). Here, with ONNX Runtime's and
ONNX's own tools:

1. the graph's constants are folded (ONNX Runtime's basic, hardware-independent optimisations);
2. each layer's attention (its three projections, the scaled product, the mask, the softmax, the heads merged back)
   becomes ONNX Runtime's fused `Attention` operator, and each feed-forward activation (`x * 0.5 * (1 + erf(x/√2))`
   after a bias) its fused `BiasGelu`;
3. the weight products are quantized dynamically (int8 weights per output channel, activations quantized per pass),
   so ONNX Runtime runs them with its integer kernels (`Attention` becomes `QAttention`).

Each rewrite checks the shape of what it replaces and stops with an error on anything else, so a different export is
refused rather than half rewritten. The result is byte-for-byte the same for the same input and package versions; the
Makefile checks its SHA-256 against crates/embed's MODEL_FILES.

usage: quantize_model.py SOURCE_MODEL OUTPUT_MODEL
"""
import math
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

HEADS = 12
HEAD_SIZE = 32
MASK = "attention_mask_int32"


class Graph:
    """The model's nodes with their producers, consumers and constants, for the rewrites below."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.graph = model.graph
        self.constants = {t.name: t for t in self.graph.initializer}
        self.producer = {out: node for node in self.graph.node for out in node.output}
        self.consumers: dict[str, list] = {}
        for node in self.graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        # The node that replaces another takes its place (its inputs are all computed before it).
        self.replacements: dict[str, onnx.NodeProto] = {}

    def constant(self, name: str) -> np.ndarray:
        return numpy_helper.to_array(self.constants[name])

    def scalar(self, name: str) -> float | None:
        if name not in self.constants:
            return None
        value = self.constant(name)
        return float(value.reshape(-1)[0]) if value.size == 1 else None

    def sole_consumer(self, tensor: str, op_type: str) -> onnx.NodeProto:
        found = [n for n in self.consumers.get(tensor, []) if n.op_type == op_type]
        if len(found) != 1:
            raise ValueError(f"{tensor}: expected one {op_type} after it, found {len(found)}")
        return found[0]

    def projection(self, tensor: str) -> tuple[str, str, str]:
        """(input, weight, bias) of the `MatMul` + bias `Add` that `tensor` reshapes, transposes or scales."""
        node = self.producer[tensor]
        while node.op_type in ("Mul", "Transpose", "Reshape"):
            node = self.producer[node.input[0]]
        if node.op_type != "Add" or node.input[1] not in self.constants:
            raise ValueError(f"{tensor}: expected a projection's bias Add, found {node.op_type} {node.name}")
        matmul = self.producer[node.input[0]]
        if matmul.op_type != "MatMul" or matmul.input[1] not in self.constants:
            raise ValueError(f"{node.name}: expected a MatMul by a weight before the bias")
        return matmul.input[0], matmul.input[1], node.input[1]

    def replace(self, last: onnx.NodeProto, node: onnx.NodeProto) -> None:
        self.replacements[last.output[0]] = node

    def commit(self) -> None:
        """Puts each replacement in its node's place, then drops every node nothing reads any more."""
        nodes = [self.replacements.get(n.output[0], n) if n.output else n for n in self.graph.node]
        needed = {o.name for o in self.graph.output}
        alive = []
        for node in reversed(nodes):
            if needed.intersection(node.output):
                alive.append(node)
                needed.update(i for i in node.input if i)
        alive.reverse()
        del self.graph.node[:]
        self.graph.node.extend(alive)
        read = {i for n in alive for i in n.input}
        constants = [t for t in self.graph.initializer if t.name in read]
        del self.graph.initializer[:]
        self.graph.initializer.extend(constants)


def fuse_attention(g: Graph) -> int:
    """Each layer's attention, from its three projections to its heads merged back, as one `Attention` node."""
    layers = 0
    for softmax in [n for n in g.graph.node if n.op_type == "Softmax"]:
        masked = g.producer[softmax.input[0]]
        if masked.op_type != "Add":
            raise ValueError(f"{softmax.name}: expected the mask added before the softmax")
        scores = g.producer[masked.input[0]]
        if scores.op_type != "MatMul":
            raise ValueError(f"{masked.name}: expected the scores' MatMul")
        # Query and key are each scaled by head_size^-1/4 before their product (1/sqrt(head_size) in all).
        for side in scores.input:
            scale = g.producer[side]
            if scale.op_type != "Mul" or not math.isclose(g.scalar(scale.input[1]) or 0, HEAD_SIZE**-0.25, rel_tol=1e-5):
                raise ValueError(f"{scores.name}: expected each side scaled by head_size^-1/4")
        g.sole_consumer(softmax.output[0], "IsNaN")
        guarded = g.sole_consumer(softmax.output[0], "Where")
        weighted = g.sole_consumer(guarded.output[0], "MatMul")
        merged = g.sole_consumer(g.sole_consumer(weighted.output[0], "Transpose").output[0], "Reshape")
        projections = [g.projection(scores.input[0]), g.projection(scores.input[1]), g.projection(weighted.input[1])]
        hidden = {p[0] for p in projections}
        if len(hidden) != 1:
            raise ValueError(f"{softmax.name}: query, key and value do not project the same input")
        weight = np.concatenate([g.constant(p[1]) for p in projections], axis=1).astype(np.float32)
        bias = np.concatenate([g.constant(p[2]) for p in projections]).astype(np.float32)
        if weight.shape != (HEADS * HEAD_SIZE, 3 * HEADS * HEAD_SIZE):
            raise ValueError(f"{softmax.name}: projections of shape {weight.shape}")
        names = (f"attention_{layers}_qkv_weight", f"attention_{layers}_qkv_bias")
        g.graph.initializer.extend([numpy_helper.from_array(weight, names[0]), numpy_helper.from_array(bias, names[1])])
        node = helper.make_node(
            "Attention", [hidden.pop(), *names, MASK], [merged.output[0]], name=f"attention_{layers}",
            domain="com.microsoft", num_heads=HEADS,
        )
        g.replace(merged, node)
        layers += 1
    if layers == 0:
        raise ValueError("no attention found")
    # The mask as the fused operator reads it: 1 where a token is real, as int32.
    g.graph.node.insert(0, helper.make_node("Cast", ["attention_mask"], [MASK], name="attention_mask_to_int32",
                                            to=TensorProto.INT32))
    return layers


def fuse_bias_gelu(g: Graph) -> int:
    """Each `(x + b) * 0.5 * (1 + erf((x + b)/√2))` as one `BiasGelu(x, b)` node."""
    count = 0
    for erf in [n for n in g.graph.node if n.op_type == "Erf"]:
        divide = g.producer[erf.input[0]]
        if divide.op_type != "Div" or not math.isclose(g.scalar(divide.input[1]) or 0, math.sqrt(2), rel_tol=1e-6):
            raise ValueError(f"{erf.name}: expected x/√2 before it")
        biased = g.producer[divide.input[0]]
        if biased.op_type != "Add" or biased.input[1] not in g.constants:
            raise ValueError(f"{divide.name}: expected a bias Add before it")
        plus_one = g.sole_consumer(erf.output[0], "Add")
        half = g.sole_consumer(plus_one.output[0], "Mul")
        product = g.sole_consumer(half.output[0], "Mul")
        ones = [g.scalar(i) for i in plus_one.input if i in g.constants]
        halves = [g.scalar(i) for i in half.input if i in g.constants]
        if ones != [1.0] or halves != [0.5] or divide.input[0] not in product.input:
            raise ValueError(f"{erf.name}: not the exact gelu")
        if len(g.consumers[divide.input[0]]) != 2:
            raise ValueError(f"{biased.name}: its output is read elsewhere too")
        node = helper.make_node("BiasGelu", list(biased.input), [product.output[0]], name=f"bias_gelu_{count}",
                                domain="com.microsoft")
        g.replace(product, node)
        count += 1
    return count


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: quantize_model.py SOURCE_MODEL OUTPUT_MODEL", file=sys.stderr)
        return 2
    source, output = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        folded, fused = os.path.join(work, "folded.onnx"), os.path.join(work, "fused.onnx")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = folded
        ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        model = onnx.load(folded)
        graph = Graph(model)
        try:
            layers, gelus = fuse_attention(graph), fuse_bias_gelu(graph)
        except ValueError as e:
            print(f"quantize_model.py: {source} is not the export this script rewrites: {e}", file=sys.stderr)
            return 1
        if layers != gelus:
            print(f"quantize_model.py: {layers} attention layers but {gelus} activations", file=sys.stderr)
            return 1
        graph.commit()
        if not any(o.domain == "com.microsoft" for o in model.opset_import):
            model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        onnx.checker.check_model(model)
        onnx.save(model, fused)
        quantize_dynamic(fused, output, weight_type=QuantType.QInt8, per_channel=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
