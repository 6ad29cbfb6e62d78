"""Op-database entries of the resize records (ops/records/resize.py, Note [Resize
records]): interpolate in every mode PyTorch records as one upsample node, and adaptive
average pooling (loaded by tests/support/opdb.py)."""

from __future__ import annotations

from opdb import A, S, op, vals


def _interp(m, x, **k):
    return m.nn.functional.interpolate(x, **k)


def _samples(nsp, modes):
    def gen(rng):
        shape = (2, 3) + (4, 5, 3)[:nsp]
        out = []
        for mode, extra in modes:
            out.append(S(A(vals(rng, shape)), scale_factor=2, mode=mode, **extra))
            out.append(S(A(vals(rng, shape)), size=(3, 7, 2)[:nsp], mode=mode, **extra))
            out.append(S(A(vals(rng, shape)), scale_factor=1.5, mode=mode, **extra))
        return out
    return gen


_LIN = {"align_corners": False}
_AC = {"align_corners": True}
op("nn.functional.interpolate_1d", _interp,
   _samples(1, [("nearest", {}), ("nearest-exact", {}), ("linear", _LIN), ("linear", _AC)]),
   ("upsample_nearest1d", "upsample_nearest1d_backward", "upsample_nearest_exact1d",
    "upsample_nearest_exact1d_backward", "upsample_linear1d", "upsample_linear1d_backward"))
op("nn.functional.interpolate_2d", _interp,
   _samples(2, [("nearest", {}), ("nearest-exact", {}), ("bilinear", _LIN), ("bilinear", _AC),
                ("bicubic", _LIN), ("bicubic", _AC), ("area", {}),
                ("bilinear", {"antialias": True}), ("bicubic", {"antialias": True}),
                ("lanczos", {"antialias": True})]),
   ("upsample_nearest2d", "upsample_nearest2d_backward", "upsample_nearest_exact2d",
    "upsample_nearest_exact2d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
    "upsample_bicubic2d", "upsample_bicubic2d_backward", "upsample_bilinear2d_aa",
    "upsample_bilinear2d_aa_backward", "upsample_bicubic2d_aa",
    "upsample_bicubic2d_aa_backward", "upsample_lanczos2d_aa", "upsample_lanczos2d_aa_backward"),
   # bicubic with align_corners=True: float32 weights that differ from ATen's in the last
   # bits (a few float32 ulps of the output, where the taps nearly cancel)
   f32_tol=(3e-5, 3e-6))
op("nn.functional.interpolate_3d", _interp,
   _samples(3, [("nearest", {}), ("nearest-exact", {}), ("trilinear", _LIN),
                ("trilinear", _AC)]),
   ("upsample_nearest3d", "upsample_nearest3d_backward", "upsample_nearest_exact3d",
    "upsample_nearest_exact3d_backward", "upsample_trilinear3d",
    "upsample_trilinear3d_backward"))


def _adaptive_samples(nsp):
    def gen(rng):
        shape = (2, 3) + (7, 5, 4)[:nsp]
        return [S(A(vals(rng, shape)), (3, 2, 3)[:nsp]), S(A(vals(rng, shape)), 1),
                S(A(vals(rng, shape[1:])), (4, 5, 2)[:nsp], desc="no batch dim")]
    return gen


for _n in (1, 2, 3):  # (1-D pools through the 2-D record, as ATen)
    op(f"nn.functional.adaptive_avg_pool{_n}d",
       lambda m, x, o, _n=_n: getattr(m.nn.functional, f"adaptive_avg_pool{_n}d")(x, o),
       _adaptive_samples(_n), () if _n == 1 else (f"adaptive_avg_pool{_n}d",
                                                  f"adaptive_avg_pool{_n}d_backward"))
