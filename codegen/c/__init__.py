"""The C target: the CPU through the system C compiler (printer, compiler driver and ctypes runtime)."""
