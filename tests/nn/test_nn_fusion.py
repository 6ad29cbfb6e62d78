"""nn.utils fusion (conv/linear + batch norm), skip_init and the conv weight memory-format
converters against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as R


def _load(rm, tm):
    rm.load_state_dict({k: R.tensor(v.numpy()) for k, v in tm.state_dict().items()})


def _bn_pair(cls, n):
    torch.manual_seed(1)
    tb = getattr(torch.nn, cls)(n)
    with torch.no_grad():  # non-trivial statistics and affine parameters
        tb.running_mean.uniform_(-1, 1)
        tb.running_var.uniform_(0.5, 2)
        tb.weight.uniform_(0.5, 1.5)
        tb.bias.uniform_(-1, 1)
    rb = getattr(R.nn, cls)(n)
    _load(rb, tb)
    return tb.eval(), rb.eval()


@pytest.mark.parametrize("conv,bn,args,xshape,transpose", [
    ("Conv2d", "BatchNorm2d", (3, 4, 3), (2, 3, 6, 6), False),
    ("Conv1d", "BatchNorm1d", (3, 4, 2), (2, 3, 5), False),
    ("ConvTranspose2d", "BatchNorm2d", (3, 4, 3), (2, 3, 4, 4), True),
])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval(conv, bn, args, xshape, transpose, bias):
    torch.manual_seed(0)
    tc = getattr(torch.nn, conv)(*args, bias=bias).eval()
    rc = getattr(R.nn, conv)(*args, bias=bias).eval()
    _load(rc, tc)
    tb, rb = _bn_pair(bn, args[1])
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose=transpose)
    rf = R.nn.utils.fuse_conv_bn_eval(rc, rb, transpose=transpose)
    assert rf is not rc and type(rf) is type(rc)
    assert isinstance(rf.weight, R.nn.Parameter) and rf.weight.requires_grad
    for k, v in tf.state_dict().items():
        np.testing.assert_allclose(rf.state_dict()[k].numpy(), v.numpy(), rtol=1e-6,
                                   atol=1e-7, err_msg=k)
    x = np.random.default_rng(0).standard_normal(xshape).astype(np.float32)
    np.testing.assert_allclose(rf(R.tensor(x)).detach().numpy(),
                               rb(rc(R.tensor(x))).detach().numpy(), atol=1e-5)


@pytest.mark.parametrize("features", [3, 1])
def test_fuse_linear_bn_eval(features):
    torch.manual_seed(0)
    tl, rl = torch.nn.Linear(4, 3).eval(), R.nn.Linear(4, 3).eval()
    _load(rl, tl)
    tb, rb = _bn_pair("BatchNorm1d", features)
    tf = torch.nn.utils.fuse_linear_bn_eval(tl, tb)
    rf = R.nn.utils.fuse_linear_bn_eval(rl, rb)
    for k, v in tf.state_dict().items():
        np.testing.assert_allclose(rf.state_dict()[k].numpy(), v.numpy(), rtol=1e-6,
                                   atol=1e-7, err_msg=k)


def test_fuse_weights_functions_and_errors():
    w, rm, rv = np.ones((2, 3, 1), np.float32), np.array([1., 2.], np.float32), \
        np.array([4., 1.], np.float32)
    tw, tb = torch.nn.utils.fuse_conv_bn_weights(torch.tensor(w), None, torch.tensor(rm),
                                                 torch.tensor(rv), 0.0, None, None)
    rw, rb = R.nn.utils.fuse_conv_bn_weights(R.tensor(w), None, R.tensor(rm), R.tensor(rv),
                                             0.0, None, None)
    assert repr(rw) == repr(tw) and repr(rb) == repr(tb)
    tl, rl = torch.nn.Linear(2, 3), R.nn.Linear(2, 3)
    tbn, rbn = torch.nn.BatchNorm1d(2).eval(), R.nn.BatchNorm1d(2).eval()
    for fn_t, fn_r in ((lambda: torch.nn.utils.fuse_linear_bn_eval(tl, tbn),
                        lambda: R.nn.utils.fuse_linear_bn_eval(rl, rbn)),
                       (lambda: torch.nn.utils.fuse_linear_bn_eval(tl.eval(), tbn),
                        lambda: R.nn.utils.fuse_linear_bn_eval(rl.eval(), rbn))):
        with pytest.raises(AssertionError) as te:
            fn_t()
        with pytest.raises(AssertionError) as re_:
            fn_r()
        assert str(re_.value) == str(te.value)


def test_skip_init_keeps_the_random_stream():
    R.manual_seed(0)
    expected = R.rand(3)
    R.manual_seed(0)
    m = R.nn.utils.skip_init(R.nn.Linear, 4, 2, bias=True)
    assert R.equal(R.rand(3), expected)
    assert m.weight.shape == (2, 4) and isinstance(m.weight, R.nn.Parameter)
    assert m.weight.requires_grad and m.bias.shape == (2,)
    for bad_t, bad_r in ((int, int), (torch.nn.Identity, R.nn.Identity)):
        with pytest.raises(RuntimeError) as te:
            torch.nn.utils.skip_init(bad_t)
        with pytest.raises(RuntimeError) as re_:
            R.nn.utils.skip_init(bad_r)
        assert str(re_.value) == str(te.value).replace("torch.nn.", "retrograd.nn.")


def test_convert_conv_weight_memory_format_keeps_values():
    net = R.nn.Sequential(R.nn.Conv2d(2, 3, 3), R.nn.Sequential(R.nn.ConvTranspose2d(3, 2, 2)),
                          R.nn.Conv3d(1, 1, 1))
    before = [p.detach().clone() for p in net.parameters()]
    ids = [id(p) for p in net.parameters()]
    out = R.nn.utils.convert_conv2d_weight_memory_format(net, R.channels_last)
    out = R.nn.utils.convert_conv3d_weight_memory_format(out, R.contiguous_format)
    assert out is net and [id(p) for p in net.parameters()] == ids
    for a, b in zip(before, net.parameters()):
        assert R.equal(a, b.detach())
