"""The GPU's mma.sync m16n8k16 throughput (float16 in, float32 accumulators), registers only.

    python benchmarks/mma_sync_peak.py        # GPU machine with CuPy

Each thread issues ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`` on ACC independent
accumulators, 2000 times, in 528 blocks of 4 to 16 warps; no memory traffic. It says how far a
kernel built on mma.sync (tuner/space/tensor_core.py) could go on this GPU: on the H200, 584-640
TFLOPS, where cuBLAS's wgmma kernels reach about 750 on a 4096^3 matmul.
"""

from __future__ import annotations

SOURCE = r"""
extern "C" __global__ void peak(float* out, int iters) {
  unsigned a[4] = {threadIdx.x, threadIdx.x + 1, threadIdx.x + 2, threadIdx.x + 3};
  unsigned b[2] = {threadIdx.x * 3u, threadIdx.x * 5u};
  float c[ACC][4];
  for (int i = 0; i < ACC; ++i) c[i][0] = c[i][1] = c[i][2] = c[i][3] = 0.f;
  for (int it = 0; it < iters; ++it) {
    #pragma unroll
    for (int i = 0; i < ACC; ++i)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                   "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[i][0]), "+f"(c[i][1]), "+f"(c[i][2]), "+f"(c[i][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float s = 0;
  for (int i = 0; i < ACC; ++i) s += c[i][0] + c[i][1] + c[i][2] + c[i][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps every mma live
}
"""
BLOCKS, ITERATIONS = 132 * 4, 2000


def main() -> None:
    import cupy as cp

    for acc in (8, 16, 32):
        module = cp.RawModule(code=SOURCE.replace("ACC", str(acc)), options=("-arch=sm_80",))
        kernel = module.get_function("peak")
        for warps in (4, 8, 16):
            out = cp.zeros(BLOCKS * warps * 32, cp.float32)
            args = ((BLOCKS,), (warps * 32,), (out, cp.int32(ITERATIONS)))
            try:
                kernel(*args)  # warm-up
            except cp.cuda.driver.CUDADriverError as error:  # too many registers for this many warps
                print(f"acc {acc:2d} warps/block {warps:2d}: not launched ({error})")
                continue
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            kernel(*args)
            stop.record()
            stop.synchronize()
            flops = BLOCKS * warps * ITERATIONS * acc * 2 * 16 * 8 * 16
            tflops = flops / cp.cuda.get_elapsed_time(start, stop) / 1e9
            print(f"acc {acc:2d} warps/block {warps:2d}: {tflops:7.1f} TFLOPS")


if __name__ == "__main__":
    main()
