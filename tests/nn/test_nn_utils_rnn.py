"""retrograd.nn.utils.rnn (packing, padding, PackedSequence through RNN/LSTM/GRU) against
torch: values, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as TU

import retrograd as R
from retrograd.nn.utils import rnn as RU


def _pair(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return torch.tensor(x, requires_grad=True), R.tensor(x, requires_grad=True)


def _close(r, t, atol=1e-6):
    assert repr(r.dtype) == repr(t.dtype)
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=atol)


def _same_packed(rp, tp):
    _close(rp.data, tp.data)
    _close(rp.batch_sizes, tp.batch_sizes)
    for a, b in ((rp.sorted_indices, tp.sorted_indices),
                 (rp.unsorted_indices, tp.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [5, 3, 3, 1]),
                                                    (False, [3, 5, 1, 3]),
                                                    (False, (2, 2, 2, 2))])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_pad_roundtrip_values_and_grads(batch_first, enforce_sorted, lengths, as_tensor):
    shape = (4, 5, 2) if batch_first else (5, 4, 2)
    tx, rx = _pair(shape)
    tl = torch.tensor(lengths) if as_tensor else lengths
    rl = R.tensor(list(lengths)) if as_tensor else lengths
    tp = TU.pack_padded_sequence(tx, tl, batch_first, enforce_sorted)
    rp = RU.pack_padded_sequence(rx, rl, batch_first, enforce_sorted)
    assert type(rp).__name__ == "PackedSequence" and isinstance(rp, tuple)
    _same_packed(rp, tp)
    for total in (None, 7):
        tpad, tlen = TU.pad_packed_sequence(tp, batch_first, -1.5, total)
        rpad, rlen = RU.pad_packed_sequence(rp, batch_first, -1.5, total)
        _close(rpad, tpad)
        _close(rlen, tlen)
    w = np.random.default_rng(1).standard_normal(tuple(tpad.shape)).astype(np.float32)
    (tpad * torch.tensor(w)).sum().backward()
    (rpad * R.tensor(w)).sum().backward()
    _close(rx.grad, tx.grad)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_and_unpad(side, batch_first):
    shapes = [(3, 2), (5, 2), (1, 2)]
    pairs = [_pair(s, i) for i, s in enumerate(shapes)]
    t = TU.pad_sequence([p[0] for p in pairs], batch_first, 2.5, side)
    r = RU.pad_sequence([p[1] for p in pairs], batch_first, 2.5, side)
    _close(r, t)
    (t * t).sum().backward()
    (r * r).sum().backward()
    for tp, rp in pairs:
        _close(rp.grad, tp.grad)
    if side == "right":
        lengths = torch.tensor([3, 5, 1])
        tu = TU.unpad_sequence(t, lengths, batch_first)
        ru = RU.unpad_sequence(r, R.tensor([3, 5, 1]), batch_first)
        assert len(ru) == len(tu)
        for a, b in zip(ru, tu):
            _close(a, b)


def test_pad_sequence_dtype_is_the_first_sequences():
    for seqs in ([np.ones(2, np.float32), np.ones(3, np.float64)],
                 [np.ones(2, np.int64), np.ones(3, np.float32)]):
        t = TU.pad_sequence([torch.tensor(s) for s in seqs], padding_value=1.5)
        r = RU.pad_sequence([R.tensor(s) for s in seqs], padding_value=1.5)
        _close(r, t)
    # a 2-D tensor is an iterable of sequences
    _close(RU.pad_sequence(R.ones(2, 3)), TU.pad_sequence(torch.ones(2, 3)))


def test_pack_sequence_and_unpack_sequence():
    pairs = [_pair((n, 3), n) for n in (2, 4, 1)]
    tp = TU.pack_sequence([p[0] for p in pairs], enforce_sorted=False)
    rp = RU.pack_sequence([p[1] for p in pairs], enforce_sorted=False)
    _same_packed(rp, tp)
    for a, b in zip(RU.unpack_sequence(rp), TU.unpack_sequence(tp)):
        _close(a, b)


def test_packed_sequence_tuple_api_and_conversions():
    tp = TU.pack_sequence([torch.ones(3), torch.ones(2)])
    rp = RU.pack_sequence([R.ones(3), R.ones(2)])
    data, sizes, si, ui = rp
    assert si is None and ui is None and rp._fields == tp._fields
    assert repr(rp) == repr(tp)
    for conv in ("double", "float", "half", "long", "int", "short", "char", "byte"):
        assert repr(getattr(rp, conv)()) == repr(getattr(tp, conv)())
    assert rp.to(R.float32) is rp
    assert repr(rp.to(R.float64)) == repr(tp.to(torch.float64))
    assert rp.is_cuda is False and rp.cpu() is rp and not rp.is_pinned()
    legacy = RU.PackedSequence((R.ones(3), R.tensor([2, 1])))
    assert repr(legacy) == repr(TU.PackedSequence((torch.ones(3), torch.tensor([2, 1]))))
    perm = RU.PackedSequence(R.ones(3), R.tensor([2, 1]), R.tensor([1, 0]))
    _close(perm.unsorted_indices, torch.tensor([1, 0]))


def _err(fn_r, fn_t, exc=RuntimeError):
    with pytest.raises(exc) as te:
        fn_t()
    with pytest.raises(exc) as re_:
        fn_r()
    assert str(te.value) in str(re_.value)


def test_errors_match_torch():
    x, tx = R.zeros(4, 3, 2), torch.zeros(4, 3, 2)
    for lens in ([2, 3, 1], [3, 2, 0], [3, 2]):
        _err(lambda lens=lens: RU.pack_padded_sequence(x, lens),
             lambda lens=lens: TU.pack_padded_sequence(tx, lens))
    _err(lambda: RU.pack_padded_sequence(x, R.tensor([[3, 2, 1]])),
         lambda: TU.pack_padded_sequence(tx, torch.tensor([[3, 2, 1]])))
    _err(lambda: RU.pack_padded_sequence(R.zeros(4, 0, 2), []),
         lambda: TU.pack_padded_sequence(torch.zeros(4, 0, 2), []))
    with pytest.raises(RuntimeError, match="exceeds the padded sequence length 4"):
        RU.pack_padded_sequence(x, [5, 2, 1])  # torch reads past the end here
    _err(lambda: RU.pad_sequence([]), lambda: TU.pad_sequence([]))
    _err(lambda: RU.pad_sequence(5), lambda: TU.pad_sequence(5))
    _err(lambda: RU.pad_sequence([R.ones(2, 3), R.ones(1, 2)]),
         lambda: TU.pad_sequence([torch.ones(2, 3), torch.ones(1, 2)]))
    _err(lambda: RU.pad_sequence([R.ones(2)], padding_side="middle"),
         lambda: TU.pad_sequence([torch.ones(2)], padding_side="middle"))
    rp, tp = RU.pack_sequence([R.ones(3), R.ones(2)]), TU.pack_sequence([torch.ones(3),
                                                                        torch.ones(2)])
    _err(lambda: RU.pad_packed_sequence(rp, total_length=2),
         lambda: TU.pad_packed_sequence(tp, total_length=2), ValueError)


def _rnn_pair(cls, **kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(3, 4, **kw)
    rm = getattr(R.nn, cls)(3, 4, **kw)
    rm.load_state_dict({k: R.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, rm


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional,num_layers", [(False, 1), (True, 2)])
@pytest.mark.parametrize("enforce_sorted,with_h0", [(True, False), (False, True)])
def test_recurrent_layers_take_packed_sequences(cls, bidirectional, num_layers,
                                                enforce_sorted, with_h0):
    tm, rm = _rnn_pair(cls, num_layers=num_layers, bidirectional=bidirectional,
                       batch_first=True)
    lens = [5, 4, 3, 1] if enforce_sorted else [3, 5, 1, 4]
    tx, rx = _pair((4, 5, 3))
    tp = TU.pack_padded_sequence(tx, lens, True, enforce_sorted)
    rp = RU.pack_padded_sequence(rx, lens, True, enforce_sorted)
    dirs = 2 if bidirectional else 1
    th, rh = _pair((num_layers * dirs, 4, 4), 7)
    targs, rargs = (), ()
    if with_h0:
        targs = ((th, th * 0.5),) if cls == "LSTM" else (th,)
        rargs = ((rh, rh * 0.5),) if cls == "LSTM" else (rh,)
    to, ts = tm(tp, *targs)
    ro, rs = rm(rp, *rargs)
    assert isinstance(ro, RU.PackedSequence)
    _same_packed(ro, to)
    ts, rs = (ts if cls == "LSTM" else (ts,)), (rs if cls == "LSTM" else (rs,))
    for a, b in zip(rs, ts):
        _close(a, b)
    tpad, _ = TU.pad_packed_sequence(to, batch_first=True)
    rpad, _ = RU.pad_packed_sequence(ro, batch_first=True)
    w = np.random.default_rng(3).standard_normal(tuple(tpad.shape)).astype(np.float32)
    tloss = (tpad * torch.tensor(w)).sum() + sum((s ** 2).sum() for s in ts)
    rloss = (rpad * R.tensor(w)).sum() + sum((s ** 2).sum() for s in rs)
    tloss.backward()
    rloss.backward()
    _close(rx.grad, tx.grad, 1e-5)
    if with_h0:
        _close(rh.grad, th.grad, 1e-5)
    for (name, a), (_, b) in zip(tm.named_parameters(), rm.named_parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=1e-5, err_msg=name)


def test_recurrent_packed_errors_match_torch():
    tm, rm = _rnn_pair("GRU")
    rp = RU.pack_sequence([R.ones(3, 3), R.ones(2, 3)])
    tp = TU.pack_sequence([torch.ones(3, 3), torch.ones(2, 3)])
    _err(lambda: rm(rp, R.zeros(1, 3, 4)), lambda: tm(tp, torch.zeros(1, 3, 4)))
    _err(lambda: rm(RU.PackedSequence(R.ones(3, 2, 3), R.tensor([2, 1]))),
         lambda: tm(TU.PackedSequence(torch.ones(3, 2, 3), torch.tensor([2, 1]))))


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_packed_recurrence_gradcheck_float64(cls):
    R.manual_seed(0)
    m = getattr(R.nn, cls)(2, 2, bidirectional=True, dtype=R.float64)
    x = R.randn(3, 3, 2, dtype=R.float64, requires_grad=True)
    h0 = R.randn(2, 3, 2, dtype=R.float64, requires_grad=True)

    def f(x, h0):
        p = RU.pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False)
        out, h = m(p, (h0, h0 * 0.5) if cls == "LSTM" else h0)
        h = h[0] if cls == "LSTM" else h
        return RU.pad_packed_sequence(out, padding_value=0.25)[0], h

    assert R.autograd.gradcheck(f, (x, h0))
    assert R.autograd.gradgradcheck(f, (x, h0))
