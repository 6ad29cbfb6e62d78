"""The 'meta' device against torch: tensors with a shape and a dtype and no data,
modules moved to it (the ensembling recipe), to_empty, and the errors."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import retrograd as R

MAKE = {
    "empty": lambda lib: lib.empty(2, 3, device="meta"),
    "empty_f64_rg": lambda lib: lib.empty(2, 3, dtype=lib.float64, device="meta",
                                          requires_grad=True),
    "zeros_int": lambda lib: lib.zeros(2, dtype=lib.int64, device="meta"),
    "ones_0d": lambda lib: lib.ones((), device="meta"),
    "full": lambda lib: lib.full((2,), 7, device="meta"),
    "tensor": lambda lib: lib.tensor([[1, 2]], device="meta"),
    "tensor_0d": lambda lib: lib.tensor(3.0, device="meta"),
    "rand": lambda lib: lib.rand(2, 2, device="meta"),
    "randn_f16": lambda lib: lib.randn(4, dtype=lib.float16, device="meta"),
    "arange": lambda lib: lib.arange(3, device="meta"),
    "ones_like": lambda lib: lib.ones_like(lib.empty(2, device="meta")),
    "zeros_like_cpu": lambda lib: lib.zeros_like(lib.empty(2, device="meta"), device="cpu"),
    "full_like_meta": lambda lib: lib.full_like(lib.ones(3), 2.0, device="meta"),
    "to_meta": lambda lib: lib.ones(2).to("meta"),
    "to_meta_dtype": lambda lib: lib.ones(2).to("meta", lib.float64),
    "to_meta_kw": lambda lib: lib.ones(2).to(device="meta"),
    "to_other_meta": lambda lib: lib.ones(2).to(lib.empty(1, dtype=lib.float16, device="meta")),
    "detach": lambda lib: lib.empty(2, device="meta", requires_grad=True).detach(),
}


@pytest.mark.parametrize("name", sorted(MAKE))
def test_meta_tensors_print_and_describe_themselves_as_torch(name):
    t, r = MAKE[name](torch), MAKE[name](R)
    assert repr(r) == repr(t)
    assert (str(r.device), r.is_meta, tuple(r.shape), str(r.dtype), r.requires_grad) == \
        (str(t.device), t.is_meta, tuple(t.shape), str(t.dtype), t.requires_grad)
    assert (r.numel(), r.dim(), r.stride(), r.is_contiguous(), r.nbytes, r.element_size()) == \
        (t.numel(), t.dim(), t.stride(), t.is_contiguous(), t.nbytes, t.element_size())


def test_meta_tensors_hold_no_data():
    r = R.empty(10**6, 10**6, device="meta")  # 4 TB on the CPU; nothing here
    assert r.shape == (10**6, 10**6) and isinstance(r._data, R._core.meta.MetaArray)
    assert R.device("meta") == R.empty(1, device="meta").device
    assert repr(R.device("meta", 0)) == repr(torch.device("meta", 0))
    assert not R.ones(1).is_meta and R.ones(1).device == R.device("cpu")


ERR = {
    "numpy": lambda lib: lib.empty(2, device="meta").numpy(),
    "item": lambda lib: lib.empty((), device="meta").item(),
    "float": lambda lib: float(lib.empty((), device="meta")),
    "bool": lambda lib: bool(lib.empty(1, device="meta")),
    "tolist": lambda lib: lib.empty(2, device="meta").tolist(),
    "cpu": lambda lib: lib.empty(2, device="meta").cpu(),
    "to_cpu": lambda lib: lib.empty(2, device="meta").to("cpu"),
    "module_to_cpu": lambda lib: lib.nn.Linear(2, 2).to("meta").to("cpu"),
    "module_cpu": lambda lib: lib.nn.Linear(2, 2).to("meta").cpu(),
}


@pytest.mark.parametrize("name", sorted(ERR))
def test_reading_the_data_of_a_meta_tensor_raises_as_torch(name):
    errs = []
    for lib in (torch, R):
        with pytest.raises(Exception) as info:
            ERR[name](lib)
        errs.append(info.value)
    t, r = errs
    assert isinstance(r, type(t)), (t, r)
    assert str(r) == str(t)


@pytest.mark.parametrize("op", [
    lambda m, c: m + 1, lambda m, c: m @ m.t(), lambda m, c: m.sum(), lambda m, c: m.exp(),
    lambda m, c: m.view(6), lambda m, c: m[0], lambda m, c: m + c, lambda m, c: c * m,
    lambda m, c: m.clone(), lambda m, c: R.cat([m, m]), lambda m, c: m.add_(1),
    lambda m, c: R.allclose(m, m), lambda m, c: R.nn.functional.linear(c, m),
])
def test_operations_on_meta_tensors_raise_a_clear_error(op):
    # PyTorch answers these with meta results; retrograd refuses (Note [Meta tensors])
    m, c = R.empty(2, 3, device="meta"), R.ones(2, 3)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data! "
                       "retrograd runs no operations on 'meta' tensors"):
        op(m, c)


def test_module_to_meta_and_to_empty_match_torch():
    res = []
    for lib in (torch, R):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
        base = copy.deepcopy(net).to("meta")
        own = base[0].weight
        row = [str(base), repr(base[0].weight), repr(base[1].running_mean),
               repr(base[1].num_batches_tracked), repr(copy.deepcopy(base)[2].bias),
               sorted((k, repr(v)) for k, v in base.state_dict().items()),
               [p.device.type for p in net.parameters()]]
        assert base[0].weight is own  # moved in place, as PyTorch does
        base.to_empty(device="cpu")
        row += [(type(p).__name__, p.device.type, tuple(p.shape), p.requires_grad)
                for p in base.parameters()]
        row += [(b.device.type, tuple(b.shape), str(b.dtype)) for b in base.buffers()]
        res.append(row)
    assert res[0] == res[1]


def test_module_to_meta_with_dtype_and_to_empty_meta():
    for lib in (torch, R):
        m = lib.nn.Linear(2, 2).to("meta", lib.float64)
        assert m.weight.dtype == lib.float64 and m.weight.is_meta
        m = lib.nn.Linear(2, 2).to_empty(device="meta")
        assert m.weight.is_meta and isinstance(m.weight, lib.nn.Parameter)


def test_load_state_dict_into_a_meta_module_warns_as_torch():
    msgs = []
    for lib in (torch, R):
        m = lib.nn.Linear(2, 3).to("meta")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.load_state_dict(lib.nn.Linear(2, 3).state_dict())
        msgs.append([str(x.message) for x in w])
        assert m.weight.is_meta
        m.load_state_dict(lib.nn.Linear(2, 3).state_dict(), assign=True)
        assert not m.weight.is_meta and isinstance(m.weight, lib.nn.Parameter)
    assert msgs[0] == msgs[1] and len(msgs[0]) == 2


def test_ensembling_recipe_functional_call_of_a_meta_copy():
    # the tutorial's recipe, with a loop over the models where it uses vmap
    R.manual_seed(0)
    models = [R.nn.Sequential(R.nn.Linear(3, 5), R.nn.ReLU(), R.nn.Linear(5, 2))
              for _ in range(4)]
    params, buffers = R.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    x = R.randn(6, 3)

    def fmodel(p, b, x):
        return R.func.functional_call(base, (p, b), (x,))

    for i, m in enumerate(models):
        out = fmodel({k: v[i] for k, v in params.items()}, {k: v[i] for k, v in buffers.items()},
                     x)
        np.testing.assert_allclose(out.detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert all(p.is_meta for p in base.parameters())  # the meta module keeps its own
    # gradients flow to the stacked leaves through the meta module
    fmodel({k: v[1] for k, v in params.items()}, {}, x).sum().backward()
    assert params["0.weight"].grad.shape == (4, 5, 3)
    assert float(params["0.weight"].grad[0].abs().sum()) == 0.0
    assert float(params["0.weight"].grad[1].abs().sum()) > 0.0


def test_meta_tensors_pickle_and_deepcopy():
    m = R.empty(2, 3, dtype=R.float64, device="meta", requires_grad=True)
    for back in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert back.is_meta and back.shape == (2, 3) and back.dtype == R.float64
        assert back.requires_grad


def test_other_calls_refuse_meta_clearly():
    with pytest.raises(NotImplementedError, match="does not take device='meta'"):
        R.as_tensor([1.0], device="meta")
    with pytest.raises(NotImplementedError, match="does not record Tensor.to\\('meta'\\)"):
        R.ones(2, requires_grad=True).to("meta")
    with R.no_grad():
        assert R.ones(2, requires_grad=True).to("meta").is_meta
