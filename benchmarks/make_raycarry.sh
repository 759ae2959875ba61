#!/usr/bin/env bash
# Build DEST/site.tar.xz (default DEST=.raycarry): Ray and what the tuner needs beyond the device
# machine's own environment (Python 3.12, numpy, scipy, pygments, rich, msgpack, protobuf, ...), as
# CPython 3.12 manylinux wheels installed into a folder, without Ray's Java jars, its libraries
# we do not use (rllib, data, serve, train, tune, llm), the dashboard's web client and tests.
# About 30 MB, so it fits what the device tool carries (64 MiB). Needs the network (pip).
#   bash benchmarks/make_raycarry.sh /work/main/.raycarry
set -euo pipefail
DEST=${1:-.raycarry}
PIP=${PIP:-/work/venv/bin/pip}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$PIP" install --quiet --target "$WORK/site" --no-deps --python-version 3.12 --only-binary=:all: \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    --implementation cp 'ray==2.60.0' 'lark>=1.1' 'xgboost-cpu>=2.1' jsonschema \
    jsonschema-specifications referencing rpds-py
mkdir -p "$DEST"
tar -C "$WORK/site" --exclude='ray/jars' --exclude='ray/rllib' --exclude='ray/data' --exclude='ray/serve' \
    --exclude='ray/train' --exclude='ray/tune' --exclude='ray/llm' --exclude='ray/dashboard/client' \
    --exclude='*/tests' --exclude='__pycache__' -cf - . | xz -6 -T0 > "$DEST/site.tar.xz"
ls -l "$DEST/site.tar.xz"
