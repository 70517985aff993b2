#!/usr/bin/env python3
"""Writes tests/data/digits.safetensors from the handwritten-digits data that Debian's
python3-sklearn ships (sklearn/datasets/data/digits.csv.gz): "images" uint8 [1797, 64]
(8x8 pixels, 0..16) and "labels" uint8 [1797]. Standard library only.

Run: python3 tests/data/make_digits.py [path/to/digits.csv.gz]
(default: the file of an installed python3-sklearn)."""
import csv
import gzip
import json
import struct
import sys

DEFAULT = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    images, labels = bytearray(), bytearray()
    with gzip.open(source, "rt") as f:
        for row in csv.reader(f):
            values = [int(float(v)) for v in row]
            assert len(values) == 65 and all(0 <= v <= 16 for v in values[:64]) and 0 <= values[64] <= 9
            images += bytes(values[:64])
            labels.append(values[64])
    n = len(labels)
    header = {
        "__metadata__": {"source": "UCI optdigits test set via scikit-learn's digits.csv.gz"},
        "images": {"dtype": "U8", "shape": [n, 64], "data_offsets": [0, len(images)]},
        "labels": {"dtype": "U8", "shape": [n], "data_offsets": [len(images), len(images) + n]},
    }
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open("tests/data/digits.safetensors", "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text + images + labels)
    print(f"{n} digits written")


main()
