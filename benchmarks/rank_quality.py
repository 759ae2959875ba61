"""How well the cost model ranks candidates it has not seen, from measured records.

    python benchmarks/rank_quality.py benchmarks/data/h200_matmul1024_random.jsonl.gz --shape 1024,1024,1024

Reads a records export (`tir db export`, optionally gzipped) of one matmul
workload, computes every record's features for its target, and over many random
splits trains ``CostModel`` on ``--train`` records and scores the rest: the
Spearman rank correlation with the measured GFLOPS, and the best measured GFLOPS
among the model's top 8 against 8 random picks (what one guided batch gains).
The committed file holds 320 random candidates of matmul 1024^3 measured on the
lent H200 (`tir tune ... --target cuda --trials 320 --random --seed 5`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tir  # noqa: E402
from schedule import Schedule, Trace  # noqa: E402
from tuner import workloads  # noqa: E402
from tuner.cost_model import CostModel  # noqa: E402
from tuner.features import extract_features  # noqa: E402


def load(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as lines:
        return [r for r in map(json.loads, lines) if r.get("type") == "record"]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    rank_a, rank_b = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(rank_a, rank_b)[0, 1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("records", type=Path)
    parser.add_argument("--shape", required=True, help="the matmul's M,N,K")
    parser.add_argument("--train", default="32,64,128", help="training set sizes")
    parser.add_argument("--splits", type=int, default=30)
    args = parser.parse_args()
    records = load(args.records)
    mod = workloads.make("matmul", args.shape)
    flops = tir.flop_count(mod["main"])
    features, gflops = [], []
    for record in records:
        sch = Schedule(mod)
        Trace.apply_json_to_schedule(record["trace"], sch)
        features.append(extract_features(sch.mod, record["target"], flops))
        gflops.append(record["gflops"] or 0.0)
    x, y = np.stack(features), np.asarray(gflops)
    print(f"{len(y)} records ({records[0]['target']}, {records[0]['device']}), best {y.max():.1f} GFLOPS")
    rng = np.random.default_rng(1)
    for size in (int(s) for s in args.train.split(",")):
        correlations, top, picks = [], [], []
        for split in range(args.splits):
            order = rng.permutation(len(y))
            train, test = order[:size], order[size:]
            model = CostModel(seed=split)
            model.update(x[train], y[train])
            scores = model.predict(x[test])
            correlations.append(spearman(scores, y[test]))
            top.append(y[test][np.argsort(-scores)[:8]].max())
            picks.append(y[test][rng.choice(len(test), 8, replace=False)].max())
        print(
            f"  trained on {size:4d}: Spearman {np.mean(correlations):.2f}; best of the model's top 8 "
            f"{np.mean(top):.1f} GFLOPS, of 8 random picks {np.mean(picks):.1f} "
            f"(means of {args.splits} splits)"
        )


if __name__ == "__main__":
    main()
