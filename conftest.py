"""Test-suite setup shared by every test module.

Note [One BLAS thread in tests]
torch (imported by most tests as the oracle) starts its own OpenMP threads; with
NumPy's OpenBLAS also starting one thread per core, the two pools fight over this
machine's 2 cores and a small NumPy matmul can take ~1000x longer. Pinning BLAS to
one thread before NumPy loads keeps test times honest. (pytest-xdist's workers
inherit it; the benchmark sets the same variables for its own runs.)
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import torch  # noqa: E402

torch.set_num_threads(1)


def pytest_addoption(parser):
    """Options of the differential fuzzer (tests/fuzz/test_fuzz.py, docs/compatibility.md)."""
    group = parser.getgroup("fuzz", "differential fuzzer (tests/fuzz/test_fuzz.py)")
    group.addoption("--fuzz-programs", type=int, default=None,
                    help="how many random programs to compare with torch (default: the "
                         "bounded CI count in tests/fuzz/test_fuzz.py)")
    group.addoption("--fuzz-seed", type=int, default=0,
                    help="seed of the first program (program i is built from seed i)")


# Note [Optional extras in doctest collection]
# ``--doctest-modules`` imports every module under src/retrograd. The TensorBoard
# writer needs the tensorboard package (in the ``test`` extra, so CI has it); in an
# environment installed before it joined that extra, its modules are left out of
# collection instead of failing it (tests/utils/test_tensorboard.py skips with the reason).
try:
    import tensorboard  # noqa: F401
except ImportError:
    collect_ignore_glob = ["src/retrograd/utils/tensorboard/*"]
