"""Floor 1, the core types: dtypes, device, ``Size``, layouts, meta arrays, grad mode,
deterministic and runtime switches, the CPU's capability. Nothing here imports another
part of retrograd."""
