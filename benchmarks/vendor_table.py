"""Every built-in workload tuned from an empty database, side by side with PyTorch (and Triton for matmul).

    python benchmarks/vendor_table.py                          # H200: all workloads, 64 trials each, + 4096^3
    python benchmarks/vendor_table.py --workloads matmul,softmax --trials 32 --out part1.jsonl
    python benchmarks/vendor_table.py --table part1.jsonl part2.jsonl   # one table from several runs
    python benchmarks/vendor_table.py --target c --small --trials 4     # CPU smoke run: the script works
    python benchmarks/vendor_table.py --dtype float16 --workloads batch_matmul,conv2d_nhwc \
        --trials 32 --matmul-sizes ''                      # tensor cores (benchmarks/tc_workloads_gpu.sh)

Issue 14's item 6. Each workload, at the tuner's default shape (``--small``: the
small shapes below), is tuned with ``tune`` from an empty database in a temporary
folder; the best record is rebuilt with ``apply_best``, checked against the
workload's float64 numpy reference and timed (``Module.benchmark``: CUDA events,
median of 7). Its PyTorch equivalent (eager, cuBLAS / cuDNN with TF32 off) is
checked against the same reference and timed with CUDA events (median of 20 x 10
calls). ``--matmul-sizes`` adds fp32 matmul rows at other sizes (default 4096^3);
every matmul row also times the Triton fp32 kernel of benchmarks/triton_matmul.py.
``--dtype float16`` or ``bfloat16`` tunes and times the workloads in that dtype (the
tuner puts their GEMMs on tensor cores) against PyTorch in the same dtype (Triton
only for float32 matmul), checked within a tolerance that fits the dtype. The
table's ratio is anchor time / our time (above 1: ours is faster); its last line is
the geometric mean over the rows. ``--out`` appends one JSON line per row, so a run
too long for one device command can be split by ``--workloads`` and the parts
joined with ``--table``. On the CPU (``--target c``) the anchor is the float64 numpy
reference, so that run only shows that the script works. The runtime estimate
printed first assumes the H200's ~0.75 s per trial at 1024^3 (issue 13) and ~2.5 s
per trial at 4096^3.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gemm import cuda_event_seconds, median_seconds  # noqa: E402
from codegen import build  # noqa: E402
from tir.bfloat16 import from_bfloat16_bits, to_bfloat16_bits  # noqa: E402
from tuner import apply_best, tune, workloads  # noqa: E402

# Shapes for a quick run on the CPU (--small); the GPU table uses each workload's default shape.
SMALL_SHAPES = {
    "matmul": "64,64,64",
    "matmul_bias_relu": "64,64,64",
    "batch_matmul": "2,32,32,32",
    "conv2d_nhwc": "1,8,8,8,8,3,3,1,1",
    "depthwise_conv2d": "1,8,8,8,3,3,1,1",
    "conv_layer": "1,6,6,8,8",
    "softmax": "32,128",
    "reduction_sum": "32,128",
    "layer_norm": "32,128",
    "elementwise_chain": "4096",
    "window_sum": "1024",
}
# max relative error of a result against the float64 reference, by the workload's dtype (half
# precision accumulates in half, and PyTorch's bfloat16 results are rounded to bfloat16)
TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}
SECONDS_PER_TRIAL = 0.75
SECONDS_PER_TRIAL_4096 = 2.5


# ---------------------------------------------------------------- PyTorch equivalents


def torch_equivalent(name: str, sizes: dict[str, int]):
    """``(prepare, call)``: ``prepare`` turns the workload's input tensors (its own layouts) into the
    layouts PyTorch's kernels take, once and untimed (convolution weights into channels-last OIHW, so
    cuDNN does not copy them on every call); ``call`` computes the output from those (timed)."""
    import torch
    import torch.nn.functional as F

    stride, padding = sizes.get("stride", 1), sizes.get("padding", 0)

    def nchw(x):  # NHWC data viewed as NCHW in channels-last memory: no copy, cuDNN's NHWC kernels
        return x.permute(0, 3, 1, 2)

    def weights(w):  # OIHW weights stored channels-last, as cuDNN's NHWC kernels read them
        return w.contiguous(memory_format=torch.channels_last)

    same = lambda *xs: xs  # noqa: E731
    conv = {
        "conv2d_nhwc": (
            lambda x, w: (nchw(x), weights(w.permute(3, 2, 0, 1))),
            lambda x, w: F.conv2d(x, w, None, stride, padding).permute(0, 2, 3, 1),
        ),
        "depthwise_conv2d": (
            lambda x, w: (nchw(x), weights(w.permute(2, 0, 1).unsqueeze(1))),
            lambda x, w: F.conv2d(x, w, None, stride, padding, groups=x.shape[1]).permute(0, 2, 3, 1),
        ),
        "conv_layer": (
            lambda x, f, bias: (nchw(x), weights(f.permute(3, 0, 1, 2)), bias),
            lambda x, f, bias: torch.relu(F.conv2d(x, f, bias)).permute(0, 2, 3, 1),
        ),
    }
    calls = {
        "matmul": lambda a, b: a @ b,
        "matmul_bias_relu": lambda a, b, bias: torch.relu(torch.addmm(bias, a, b)),
        "batch_matmul": lambda a, b: torch.bmm(a, b),
        "softmax": lambda a: torch.softmax(a, 1),
        "reduction_sum": lambda a: a.sum(1),
        "layer_norm": lambda x, gamma, beta: F.layer_norm(x, (x.shape[1],), gamma, beta, eps=1e-5),
        "elementwise_chain": lambda a, b: torch.relu(a + b) * b,
        "window_sum": lambda a: a[:-2] + a[1:-1] + a[2:],
    }
    return conv[name] if name in conv else (same, calls[name])


def _relative_error(result: np.ndarray, expected: np.ndarray) -> float:
    return float(np.abs(result - expected).max() / max(float(np.abs(expected).max()), 1e-30))


def _check(result: np.ndarray, expected: np.ndarray, what: str, dtype: str = "float32") -> None:
    error = _relative_error(np.asarray(result, dtype=np.float64), expected)
    if error > TOLERANCE[dtype]:
        raise SystemExit(f"{what}: wrong result (max relative error {error:.2e})")


def anchor_seconds(
    target: str, name: str, sizes: dict[str, int], inputs, expected, dtype: str = "float32"
) -> dict[str, float]:
    """Seconds per call of the anchors: PyTorch (GPU), Triton for float32 matmul (GPU); numpy's
    reference (CPU)."""
    reference = workloads.get_workload(name).reference
    if target == "c":
        wide = [_widened(x, dtype) for x in inputs]
        return {"numpy": median_seconds(lambda: reference(*wide, **sizes))}
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tensors = [_torch_tensor(x, dtype) for x in inputs]
    prepare, call = torch_equivalent(name, sizes)
    prepared = prepare(*tensors)
    _check(call(*prepared).float().cpu().numpy(), expected, f"PyTorch {name}", dtype)
    found = {"PyTorch": cuda_event_seconds(lambda: call(*prepared))}
    if name == "matmul" and dtype == "float32":
        from benchmarks.triton_matmul import triton_matmul

        _check(triton_matmul(*tensors).cpu().numpy(), expected, "Triton matmul")
        found["Triton"] = cuda_event_seconds(lambda: triton_matmul(*tensors))
    return found


def _torch_tensor(array: np.ndarray, dtype: str):
    """A CUDA tensor of ``array`` (bfloat16: the uint16 bit patterns the tuner's arrays hold)."""
    import torch

    if dtype == "bfloat16":
        return torch.from_numpy(array.view(np.int16)).cuda().view(torch.bfloat16).contiguous()
    return torch.from_numpy(array).cuda().contiguous()


def _widened(array: np.ndarray, dtype: str) -> np.ndarray:
    """``array`` in float64 (bfloat16 bit patterns decoded)."""
    return from_bfloat16_bits(array).astype(np.float64) if dtype == "bfloat16" else array.astype(np.float64)


# ---------------------------------------------------------------- one row


def random_inputs(mod, seed: int = 0) -> list[np.ndarray]:
    """Random inputs for every buffer parameter but the last (the output), and the output (zeros);
    bfloat16 buffers as uint16 bit patterns."""
    rng = np.random.default_rng(seed)
    func = mod.main_function()
    arrays = []
    for param in func.buffer_params:
        shape = tuple(int(d.value) for d in param.shape)
        values = rng.standard_normal(shape)
        arrays.append(to_bfloat16_bits(values) if param.dtype == "bfloat16" else values.astype(param.dtype))
    arrays[-1][...] = 0
    return arrays


def run_row(
    name: str, shape: str | None, target: str, trials: int, folder: Path, dtype: str = "float32"
) -> dict:
    workload = workloads.get_workload(name)
    sizes = workload.sizes(shape)
    shape_text = ",".join(str(sizes[p]) for p in workload.params)
    mod = workloads.make(name, shape_text, dtype)
    db = folder / f"{name}_{shape_text.replace(',', 'x')}_{dtype}.db"
    started = time.perf_counter()
    reference = workloads.reference_for(name, shape_text, dtype)
    result = tune(mod, target, trials, db, reference=reference, progress=False)
    tune_seconds = time.perf_counter() - started
    arrays = random_inputs(mod)
    inputs = arrays[:-1]
    expected = workload.reference(*[_widened(x, dtype) for x in inputs], **sizes)[0]
    module = build(apply_best(mod, target, db).mod, target)
    module["main"](*arrays)
    _check(arrays[-1], expected, f"tuned {name}", dtype)
    ours = module.benchmark("main", *arrays, repeat=7).seconds
    anchors = anchor_seconds(target, name, sizes, inputs, expected, dtype)
    return {
        "workload": name,
        "shape": shape_text,
        "dtype": dtype,
        "target": target,
        "device": module.device_name,
        "trials": result.trials,
        "failed": result.errors,
        "tune_seconds": round(tune_seconds, 1),
        "ours_seconds": ours,
        "anchors": anchors,
    }


# ---------------------------------------------------------------- the table


def table(rows: list[dict]) -> str:
    """The markdown table, with ratios (anchor time / ours) and their geometric mean."""
    if not rows:
        return "no rows"
    anchor_names = sorted({a for row in rows for a in row["anchors"]}, key=lambda a: (a != "PyTorch", a))
    primary = anchor_names[0]
    head = ["workload", "shape", "trials", "ours (us)"]
    for anchor in anchor_names:
        head += [f"{anchor} (us)", f"{anchor} / ours"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios = []
    for row in rows:
        dtype = row.get("dtype", "float32")
        workload = row["workload"] if dtype == "float32" else f"{row['workload']} ({dtype})"
        cells = [workload, row["shape"], str(row["trials"]), f"{row['ours_seconds'] * 1e6:.1f}"]
        for anchor in anchor_names:
            seconds = row["anchors"].get(anchor)
            if seconds is None:
                cells += ["", ""]
                continue
            cells += [f"{seconds * 1e6:.1f}", f"{seconds / row['ours_seconds']:.2f}x"]
        if primary in row["anchors"]:
            ratios.append(row["anchors"][primary] / row["ours_seconds"])
        lines.append("| " + " | ".join(cells) + " |")
    if ratios:
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        lines.append(f"| geometric mean of {len(ratios)} rows ({primary} / ours) | | | | {mean:.2f}x |")
    devices = sorted({row["device"] for row in rows})
    return "\n".join(lines) + f"\n\ndevice: {', '.join(devices)}"


def estimate_seconds(plan: list[tuple[str, str | None]], trials: int) -> float:
    total = 0.0
    for name, shape in plan:
        big = shape is not None and name == "matmul" and int(shape.split(",")[0]) >= 4096
        total += trials * (SECONDS_PER_TRIAL_4096 if big else SECONDS_PER_TRIAL) + 10
    return total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", default="cuda", help="cuda (default) or c (smoke run with numpy anchors)")
    parser.add_argument("--workloads", default=",".join(workloads.WORKLOADS), help="comma-separated names")
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--dtype", default="float32", choices=workloads.DTYPES, help="the workloads' dtype")
    parser.add_argument("--matmul-sizes", default="4096", help="extra n^3 matmul rows ('' for none)")
    parser.add_argument("--small", action="store_true", help="the small shapes (a quick run)")
    parser.add_argument("--out", default=None, help="append one JSON line per row to this file")
    parser.add_argument("--folder", default=None, help="where the databases go (default: a temporary folder)")
    parser.add_argument("--table", nargs="+", default=None, help="print one table from JSON-lines files")
    args = parser.parse_args()
    if args.table:
        lines = [line for path in args.table for line in Path(path).read_text().splitlines()]
        rows = [json.loads(line) for line in lines if line]
        print(table(rows))
        return
    names = [n for n in args.workloads.split(",") if n]
    plan = [(n, SMALL_SHAPES.get(n) if args.small else None) for n in names]
    plan += [("matmul", f"{n},{n},{n}") for n in args.matmul_sizes.split(",") if n]
    minutes = estimate_seconds(plan, args.trials) / 60
    print(f"{len(plan)} rows, {args.trials} trials each: about {minutes:.0f} min on an H200", flush=True)
    folder = Path(args.folder) if args.folder else Path(tempfile.mkdtemp(prefix="vendor_table_"))
    folder.mkdir(parents=True, exist_ok=True)
    rows, started = [], time.perf_counter()
    for number, (name, shape) in enumerate(plan, 1):
        row = run_row(name, shape, args.target, args.trials, folder, args.dtype)
        rows.append(row)
        anchors = ", ".join(f"{a} {s * 1e6:.1f} us" for a, s in row["anchors"].items())
        print(
            f"[{number}/{len(plan)} {time.perf_counter() - started:.0f} s] {name} {row['shape']}: ours "
            f"{row['ours_seconds'] * 1e6:.1f} us after {row['trials']} trials in {row['tune_seconds']} s; "
            f"{anchors}",
            flush=True,
        )
        if args.out:
            with open(args.out, "a") as out:
                out.write(json.dumps(row) + "\n")
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
