"""Op-database entries of the spatial nn records (ops/records/spatial.py), loaded by opdb.py."""

from __future__ import annotations

import numpy as np

from opdb import A, S, _i64, op, vals


def _f(name):
    """``m.nn.functional.<name>`` for m = retrograd and m = torch."""
    return lambda m, *a, **k: getattr(m.nn.functional, name)(*a, **k)


op("nn.functional.pixel_shuffle", _f("pixel_shuffle"),
   lambda rng: [S(A(vals(rng, (2, 8, 2, 3))), 2), S(A(vals(rng, (9, 1, 2))), 3),
                S(A(vals(rng, (1, 2, 4, 1, 1))), 2)], ("pixel_shuffle",))
op("nn.functional.pixel_unshuffle", _f("pixel_unshuffle"),
   lambda rng: [S(A(vals(rng, (2, 2, 4, 6))), 2), S(A(vals(rng, (1, 3, 3))), 3)],
   ("pixel_unshuffle",))
op("nn.functional.channel_shuffle", _f("channel_shuffle"),
   lambda rng: [S(A(vals(rng, (2, 6, 2))), 3), S(A(vals(rng, (1, 4, 2, 2))), 2)],
   ("channel_shuffle",))
op("nn.functional.unfold", _f("unfold"),
   lambda rng: [S(A(vals(rng, (2, 2, 4, 5))), (2, 3), dilation=(1, 2), padding=1,
                  stride=(2, 1)), S(A(vals(rng, (2, 3, 3))), 2)], ("im2col",))
op("nn.functional.fold", _f("fold"),
   lambda rng: [S(A(vals(rng, (2, 8, 6))), (3, 4), 2), S(A(vals(rng, (4, 9))), (4, 4), 2,
                                                          padding=1, stride=2)], ("col2im",))
op("nn.functional.adaptive_max_pool2d", _f("adaptive_max_pool2d"),
   lambda rng: [S(A(vals(rng, (2, 3, 5, 4))), (2, 3)), S(A(vals(rng, (2, 3, 5))), 4)],
   ("adaptive_max_pool2d",))
op("nn.functional.adaptive_max_pool3d", _f("adaptive_max_pool3d"),
   lambda rng: [S(A(vals(rng, (1, 2, 3, 4, 3))), (2, 2, 2)), S(A(vals(rng, (2, 3, 3, 2))), 2)],
   ("adaptive_max_pool3d",))
op("nn.functional.max_pool3d", _f("max_pool3d"),
   lambda rng: [S(A(vals(rng, (1, 2, 3, 3, 3))), 2, stride=1), S(A(vals(rng, (2, 4, 4, 2))), 2)],
   ("max_pool3d",))
op("nn.functional.max_unpool2d", _f("max_unpool2d"),
   lambda rng: [S(A(vals(rng, (1, 2, 2, 2))), _i64(np.array([[[[0, 3], [9, 14]]] * 2])), 2),
                S(A(vals(rng, (2, 1, 2))), _i64(np.array([[[1, 6]]] * 2)), 2)],
   ("max_unpool2d",))
op("nn.functional.max_unpool3d", _f("max_unpool3d"),
   lambda rng: [S(A(vals(rng, (1, 1, 1, 1, 2))), _i64(np.array([[[[[5, 14]]]]])), 2)],
   ("max_unpool3d",))
