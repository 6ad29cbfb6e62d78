"""nn.SyncBatchNorm: real 2- and 3-rank jobs (in _dist_jobs.py) against one process on the
whole batch, and single-process behaviour (conversion, eval and no-group fallback)
against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as rg
from _mpi_launch import run_job


@pytest.mark.xdist_group("mpi")
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("job", ["syncbn", "syncbn_ddp"])
def test_sync_batchnorm_equals_batchnorm_on_the_whole_batch(n, job):
    # syncbn: a bare layer, 2D-5D input, unequal and empty slices, momentum None, no
    # affine, outputs, input/weight/bias grads, running stats, eval, a sub-group of ranks;
    # syncbn_ddp: a converted conv/linear model inside DDP, 3 SGD steps
    proc = run_job(n, job)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(f" ok {job}") == n


def _model(lib):
    torch_like = lib
    nn = torch_like.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 1)
            self.bn = nn.BatchNorm2d(3, affine=False)
            self.inner = nn.Sequential(nn.BatchNorm3d(3, momentum=None, bias=False))

    torch_like.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4, track_running_stats=False),
                          Block(), nn.BatchNorm1d(4, eps=1e-3))
    model[3].weight.requires_grad_(False)
    model[3].eval()
    return model


def _summary(model):
    out = []
    for name, m in model.named_modules():
        params = [(k, tuple(p.shape), p.requires_grad) for k, p in m.named_parameters(
            recurse=False)]
        buffers = [(k, None if b is None else tuple(b.shape)) for k, b in m._buffers.items()]
        out.append((name, type(m).__name__, m.training, repr(m) if not name.count(".")
                    and name else "", params, buffers, getattr(m, "process_group", "-")))
    return out


def test_convert_sync_batchnorm_matches_pytorch():
    ours, theirs = _model(rg), _model(torch)
    before = {n: (p, p.requires_grad) for n, p in ours.named_parameters()}
    buffers = dict(ours.named_buffers())
    group = object()  # any process group: stored, used only in training forward
    conv = rg.nn.SyncBatchNorm.convert_sync_batchnorm(ours, group)
    tconv = torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs, group)
    assert conv is ours  # a container is converted in place and returned
    assert _summary(conv) == _summary(tconv)
    assert list(conv.state_dict()) == list(tconv.state_dict())
    for name, p in conv.named_parameters():
        assert p is before[name][0] and p.requires_grad == before[name][1]
    for name, b in conv.named_buffers():
        assert b is buffers[name]  # shared, not copied
    bn = rg.nn.BatchNorm1d(3)
    sync = rg.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert type(sync) is rg.nn.SyncBatchNorm and sync is not bn
    assert sync.weight is bn.weight and sync.running_var is bn.running_var
    assert sync.process_group is None
    assert rg.nn.SyncBatchNorm.convert_sync_batchnorm(sync) is not sync  # as PyTorch
    lin = rg.nn.Linear(2, 2)
    assert rg.nn.SyncBatchNorm.convert_sync_batchnorm(lin) is lin


def _pair(shape, **kw):
    ours = rg.nn.SyncBatchNorm(shape[1], **kw).double()
    theirs = torch.nn.SyncBatchNorm(shape[1], **kw).double()
    rng = np.random.default_rng(len(shape))
    if ours.affine:
        w, b = rng.normal(size=shape[1]), rng.normal(size=shape[1])
        with rg.no_grad(), torch.no_grad():
            ours.weight.copy_(rg.tensor(w))
            ours.bias.copy_(rg.tensor(b))
            theirs.weight.copy_(torch.tensor(w))
            theirs.bias.copy_(torch.tensor(b))
    return ours, theirs, rng


def _run(module, lib, x, g):
    x = lib.tensor(x, requires_grad=True)
    y = module(x)
    (y * lib.tensor(g)).sum().backward()
    grads = [x.grad] + [p.grad for p in module.parameters()]
    stats = [module.running_mean, module.running_var] if module.track_running_stats else []
    return [np.asarray(t.detach().numpy()) for t in [y, *grads, *stats]]


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (3, 2, 2, 3), (2, 2, 2, 2, 2)])
@pytest.mark.parametrize("kw", [{}, {"momentum": None}, {"affine": False},
                                {"track_running_stats": False}])
def test_without_a_process_group_it_is_batch_norm_as_in_pytorch(shape, kw):
    # training without an initialized group, then eval with the running statistics
    ours, theirs, rng = _pair(shape, **kw)
    for _ in range(2):
        x, g = rng.normal(size=shape) * 2 + 1, rng.normal(size=shape)
        for a, b in zip(_run(ours, rg, x, g), _run(theirs, torch, x, g)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    ours.eval()
    theirs.eval()
    x, g = rng.normal(size=shape), rng.normal(size=shape)
    for a, b in zip(_run(ours, rg, x, g), _run(theirs, torch, x, g)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("shape", [(4,), (), (3, 0, 2)])
def test_input_errors_match_pytorch(shape):
    ours, theirs = rg.nn.SyncBatchNorm(4), torch.nn.SyncBatchNorm(4)
    with pytest.raises(ValueError) as want:
        theirs(torch.zeros(shape))
    with pytest.raises(ValueError) as got:
        ours(rg.zeros(shape))
    assert str(got.value) == str(want.value)


@pytest.mark.xdist_group("mpi")
def test_one_rank_and_plain_scripts_need_no_communication():
    proc = run_job(1, "syncbn_one")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " ok syncbn_one" in proc.stdout
