#!/usr/bin/env bash
# Issue 13 on the GPU machine: the tuner's inner loop and a 64-trial H200 run, with the wall
# time split (cost model loop / waiting for builds and measurements / building).
#
#     bash benchmarks/tuner_speed_gpu.sh            # from the repository root, python3 with CuPy
#
# Runs, in order: the per-candidate costs (replay, sample, mutate, features; no GPU needed),
# the CPU time of a whole 64-trial run with a fake runner split into sample / replay / limit
# check / planning / lower / features / model (tuner_loop_split.py; no GPU either), then
# matmul 1024^3 for 64 trials with the default overlap (the run the issue's 45 s target is
# about) and once more without overlap (what the faster cost model loop alone gives).
# The same tune_matmul command on main (before issue 13) prints "64 trials in X s (Y s cost
# model)"; compare the wall time and the re-timed "tuned" TFLOPS (today's: 29.8-31.5).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
$PY benchmarks/replay_speed.py --rounds 5
$PY benchmarks/tuner_loop_split.py            # the same 64-trial CUDA run's CPU side, no GPU, split by phase
$PY benchmarks/tune_matmul.py --target cuda --sizes 1024 --trials 64 --seeds 0
$PY benchmarks/tune_matmul.py --target cuda --sizes 1024 --trials 64 --seeds 0 --overlap none
