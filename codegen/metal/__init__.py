"""Apple Metal target: the MSL printer and runtime, and the host simulator (``codegen.metal.sim``)."""
