#!/usr/bin/env python3
"""Writes tiny.json + tiny.bin: a 5-node TF.js graph model for the engine tests (allocation-failure
sweep, loader fuzz corpus). src [1,H,W,3] -> _FusedConv2D 3x3x3x4 (uint8-quantized weights,
float16 bias, BiasAdd+Relu) -> Conv2D 1x1x4x1 (float32) -> Sigmoid -> Identity = pha.
Deterministic: running it again gives the same bytes."""
import json, os, struct

here = os.path.dirname(os.path.abspath(__file__))
b64 = {'SAME': 'U0FNRQ==', 'VALID': 'VkFMSUQ=', 'NHWC': 'TkhXQw==', 'BiasAdd': 'Qmlhc0FkZA==', 'Relu': 'UmVsdQ=='}
dim4 = {'dim': [{'size': '-1'}, {'size': '-1'}, {'size': '-1'}, {'size': '3'}]}
ints = lambda v: {'list': {'i': [str(x) for x in v]}}

def const(name, shape):
    return {'name': name, 'op': 'Const', 'attr': {'dtype': {'type': 'DT_FLOAT'}, 'value': {'tensor': {
        'dtype': 'DT_FLOAT', 'tensorShape': {'dim': [{'size': str(d)} for d in shape]}}}}}

conv_attr = lambda pad: {'T': {'type': 'DT_FLOAT'}, 'strides': ints([1, 1, 1, 1]), 'dilations': ints([1, 1, 1, 1]),
                         'padding': {'s': b64[pad]}, 'data_format': {'s': b64['NHWC']}}
fused = conv_attr('SAME')
fused.update({'fused_ops': {'list': {'s': [b64['BiasAdd'], b64['Relu']]}}, 'num_args': {'i': '1'}, 'epsilon': {'f': 0}})
nodes = [
    {'name': 'src', 'op': 'Placeholder', 'attr': {'dtype': {'type': 'DT_FLOAT'}, 'shape': {'shape': dim4}}},
    const('conv1/weights', [3, 3, 3, 4]), const('conv1/bias', [4]), const('conv2/weights', [1, 1, 4, 1]),
    {'name': 'conv1', 'op': '_FusedConv2D', 'input': ['src', 'conv1/weights', 'conv1/bias'], 'attr': fused},
    {'name': 'conv2', 'op': 'Conv2D', 'input': ['conv1', 'conv2/weights'], 'attr': conv_attr('VALID')},
    {'name': 'Sigmoid', 'op': 'Sigmoid', 'input': ['conv2'], 'attr': {'T': {'type': 'DT_FLOAT'}}},
    {'name': 'Identity', 'op': 'Identity', 'input': ['Sigmoid'], 'attr': {'T': {'type': 'DT_FLOAT'}}},
]
model = {
    'format': 'graph-model', 'generatedBy': 'tests/data/engine/make_tiny.py', 'convertedBy': None,
    'signature': {'inputs': {'src': {'name': 'src:0', 'dtype': 'DT_FLOAT', 'tensorShape': dim4}},
                  'outputs': {'pha': {'name': 'Identity:0', 'dtype': 'DT_FLOAT'}}},
    'modelTopology': {'node': nodes, 'library': {}, 'versions': {}},
    'weightsManifest': [{'paths': ['tiny.bin'], 'weights': [
        {'name': 'conv1/weights', 'shape': [3, 3, 3, 4], 'dtype': 'float32',
         'quantization': {'dtype': 'uint8', 'min': -1.0, 'scale': 1 / 128, 'original_dtype': 'float32'}},
        {'name': 'conv1/bias', 'shape': [4], 'dtype': 'float32',
         'quantization': {'dtype': 'float16', 'original_dtype': 'float32'}},
        {'name': 'conv2/weights', 'shape': [1, 1, 4, 1], 'dtype': 'float32'}]}],
}
w1 = bytes((i * 37 + 11) % 256 for i in range(3 * 3 * 3 * 4))          # uint8, dequantised to [-1, 1)
b1 = b''.join(struct.pack('<e', v) for v in (0.1, -0.2, 0.05, 0.0))     # float16
w2 = b''.join(struct.pack('<f', v) for v in (0.5, -0.75, 1.25, -0.25))  # float32
open(os.path.join(here, 'tiny.bin'), 'wb').write(w1 + b1 + w2)
open(os.path.join(here, 'tiny.json'), 'w').write(json.dumps(model, indent=1) + '\n')
