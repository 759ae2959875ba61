"""Counts in the hottest basic block of a gcc assembly file: the one with the most vector multiply-adds.

    python benchmarks/hot_loop_asm.py kernel.s [label]

For reading what the C target's generated loops turn into (``gcc -O3 -S`` of a
printed kernel): one line with the block's instructions, FMAs, loads (memory
operands that are read: vmovups/vbroadcastss loads and FMAs with a memory
operand), broadcasts, stack accesses (``%rsp``/``%rbp``: spilled registers), register to
register vector moves and software prefetches. Used by ``benchmarks/seed003_device.sh``.
"""

from __future__ import annotations

import re
import sys


def basic_blocks(lines: list[str]) -> list[list[str]]:
    """Instructions of the assembly split at labels and jumps."""
    blocks: list[list[str]] = [[]]
    for line in lines:
        text = line.split("#")[0].strip()
        if re.match(r"^[\w.$]+:$", text):
            blocks.append([])
            continue
        if not text or text.startswith("."):
            continue
        blocks[-1].append(text)
        if text.startswith("j"):
            blocks.append([])
    return [block for block in blocks if block]


def counts(block: list[str]) -> dict[str, int]:
    """What one basic block does, by instruction kind."""
    fmas = [i for i in block if i.startswith("vfmadd") or i.startswith("vfnmadd")]

    def reads_memory(instruction: str) -> bool:
        operands = instruction.split(None, 1)[1] if " " in instruction else ""
        first = operands.split(",")[0] if operands else ""
        return "(" in first and not instruction.startswith(("lea", "prefetch"))

    return {
        "instructions": len(block),
        "fma": len(fmas),
        "loads": sum(reads_memory(i) for i in block),
        "broadcasts": sum(i.startswith("vbroadcast") for i in block),
        "stack": sum("(%rsp)" in i or "(%rbp)" in i for i in block),
        "moves": sum(i.startswith("vmovaps") and "(" not in i for i in block),
        "prefetch": sum(i.startswith("prefetch") for i in block),
    }


def main() -> None:
    path, label = sys.argv[1], " ".join(sys.argv[2:])
    with open(path) as f:
        blocks = basic_blocks(f.readlines())
    hot = max(blocks, key=lambda b: counts(b)["fma"])
    summary = ", ".join(f"{value} {key}" for key, value in counts(hot).items())
    print(f"{label or path}: {summary}")


if __name__ == "__main__":
    main()
