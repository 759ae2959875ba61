"""The CUDA target: NVIDIA GPUs (printer, CuPy/NVRTC runtime, and nvcc for compile-only checks)."""
