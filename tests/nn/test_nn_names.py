"""The remaining names of torch.nn, nn.functional, nn.init, autograd and testing (issue 16),
against PyTorch 2.13: values, warnings and errors."""

import warnings

import numpy as np
import pytest
import torch

import retrograd as R


def _caught(fn):
    """(result or exception text, [(category, message)]) of ``fn()``."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as e:
            out = f"{type(e).__name__}: {e}"
    return out, [(w.category, str(w.message)) for w in rec]


# ---- nn.functional helper names -------------------------------------------------------

@pytest.mark.parametrize("name", ["GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES",
                                  "reproducibility_notes", "sparse_support_notes", "tf32_notes",
                                  "TYPE_CHECKING", "DType", "Callable", "Optional"])
def test_functional_constants_equal_torch(name):
    assert getattr(R.nn.functional, name) == getattr(torch.nn.functional, name)


def test_scaling_and_swizzle_types_have_torch_members():
    for ours, theirs in ((R.nn.functional.ScalingType, torch.nn.functional.ScalingType),
                         (R.nn.functional.SwizzleType, torch.nn.functional.SwizzleType)):
        assert {k: int(v.value) for k, v in ours.__members__.items()} == \
               {k: int(v.value) for k, v in theirs.__members__.items()}


def test_broadcasting_lists_subscript_like_torch():
    for n in (1, 2, 3):
        ours = getattr(R.nn.functional, f"BroadcastingList{n}")
        assert ours[int] is getattr(torch.nn.functional, f"BroadcastingList{n}")[int] is None


def test_boolean_dispatch_and_assert_int_or_pair_match_torch():
    def run(F):
        def yes(x, flag=False):
            """Doc."""
            return ("yes", x)

        def no(x, flag=False):
            return ("no", x)
        fn = F.boolean_dispatch("flag", 1, False, yes, no, "mymod", "pick")
        outs = [fn(1), fn(1, True), fn(1, flag=True), fn(1, flag=0), fn.__doc__, fn.__name__,
                fn.__module__]
        outs.append(_caught(lambda: F.boolean_dispatch("f", 0, False, yes, yes, None, None))[0])
        outs += [_caught(lambda a=a: F.assert_int_or_pair(a, "kernel", "{} must be a pair"))[0]
                 for a in (3, (1, 2), [1, 2, 3])]
        return outs
    assert run(R.nn.functional) == run(torch.nn.functional)


def test_torch_function_guards_dispatch_like_torch():
    def run(m):
        F = m.nn.functional
        calls = []

        class Base:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append((cls.__name__, [t.__name__ for t in types], len(args),
                              sorted(kwargs or {})))
                return NotImplemented if cls.__name__ == "Sub" else f"{cls.__name__} handled"

        class Sub(Base):
            pass

        class Other(Base):
            pass

        def f(a, b, *, k=1):
            if F.has_torch_function_variadic(a, b):
                return F.handle_torch_function(f, (a, b), a, b, k=k)
            return "plain"
        t = m.ones(1)
        return [F.has_torch_function((t, 1.0, None)), F.has_torch_function_unary(t),
                F.has_torch_function_unary(Base()), F.has_torch_function([t, Sub()]),
                f(t, t), f(Base(), Sub()), f(Other(), t), calls,
                _caught(lambda: F.handle_torch_function(f, (Sub(),), Sub()))[0]
                .replace("retrograd", "torch").split(": [")[0]]
    assert run(R) == run(torch)


# ---- nn --------------------------------------------------------------------------------

def test_deprecated_modules_warn_and_work_like_torch():
    def run(m):
        loss, w1 = _caught(lambda: m.nn.NLLLoss2d(ignore_index=1, reduction="sum"))
        x = m.tensor(np.linspace(-1, 1, 2 * 3 * 2 * 2, dtype=np.float32).reshape(2, 3, 2, 2))
        y = m.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
        c, w2 = _caught(lambda: m.nn.Container(fc=m.nn.Linear(2, 1), act=m.nn.ReLU()))

        def subclass():
            class Mine(m.nn.Container):
                pass
            return Mine
        _, w3 = _caught(subclass)
        return (float(loss(x, y)), isinstance(loss, m.nn.NLLLoss), loss.ignore_index, w1,
                [n for n, _ in c.named_children()], isinstance(c, m.nn.Module), w2, w3)
    assert run(R) == run(torch)


def test_rnn_cell_base_and_factory_kwargs_match_torch():
    def run(m):
        m.manual_seed(3)
        cell = m.nn.RNNCellBase(3, 2, bias=False, num_chunks=4, dtype=m.float64)
        fk = m.nn.factory_kwargs
        return ([(n, tuple(p.shape), str(p.dtype)) for n, p in cell.named_parameters()],
                cell.bias_ih, repr(cell), cell.weight_ih.detach().numpy().round(6).tolist(),
                isinstance(m.nn.GRUCell(2, 2), m.nn.RNNCellBase),
                fk(None), fk({"dtype": m.float16}), fk({"factory_kwargs": {"device": "cpu"}}),
                _caught(lambda: fk({"bias": True}))[0],
                _caught(lambda: fk({"dtype": m.float16, "factory_kwargs": {"dtype": 1}}))[0])
    ours, theirs = run(R), run(torch)
    assert str(ours) == str(theirs).replace("torch.float16", "torch.float16")


@pytest.mark.parametrize("name,args,shape", [
    ("eye", (), (3, 5)), ("dirac", (), (4, 2, 3, 3)), ("dirac", (2,), (6, 3, 3)),
    ("sparse", (0.5,), (6, 4)), ("sparse", (0.3, 0.1), (5, 3)),
])
def test_deprecated_init_forms_warn_and_fill_like_torch(name, args, shape):
    def run(m):
        m.manual_seed(7)
        w = m.empty(shape)
        out, caught = _caught(lambda: getattr(m.nn.init, name)(w, *args))
        return out is w, w.numpy(), caught, getattr(m.nn.init, name).__name__
    (a_is, a, a_w, a_n), (b_is, b, b_w, b_n) = run(R), run(torch)
    assert (a_is, a_w, a_n) == (b_is, b_w, b_n)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_old_init_aliases_use_torch_message():
    for m in (R, torch):
        with pytest.warns(FutureWarning, match=r"^`nn.init.normal` is now deprecated in favor "
                                               r"of `nn.init.normal_`.$"):
            m.nn.init.normal(m.empty(2))


# ---- autograd --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["set_multithreading_enabled", "enforce_grad_layout_policy"])
def test_engine_flags_behave_as_context_managers_and_decorators(name):
    from retrograd.autograd import legacy_modes
    query = {"set_multithreading_enabled": legacy_modes._is_multithreading_enabled,
             "enforce_grad_layout_policy": legacy_modes._is_grad_layout_enforcement_enabled}[name]
    tquery = {"set_multithreading_enabled": torch._C._is_multithreading_enabled,
              "enforce_grad_layout_policy": torch._C._is_grad_layout_enforcement_enabled}[name]

    def run(m, q):
        cm = getattr(m.autograd, name)
        seen = []
        with cm(False):
            seen.append(q())
            x = m.ones(2, requires_grad=True)
            (x * 3).sum().backward()
            seen.append(x.grad.tolist())
        seen.append(q())
        obj = cm(False)  # takes effect at construction, as PyTorch's
        seen.append(q())
        obj.__exit__(None, None, None)

        @cm(False)
        def inner():
            return q()
        seen += [q(), inner(), q()]
        return seen
    try:
        assert run(R, query) == run(torch, tquery)
    finally:  # decorating sets the flag at construction and keeps it (as PyTorch's): reset
        legacy_modes._FLAGS.multithreading = legacy_modes._FLAGS.grad_layout = True
        torch._C._set_multithreading_enabled(True)
        torch._C._set_grad_layout_enforcement_enabled(True)


def test_nested_io_function_fails_as_in_torch():
    def run(m):
        class Legacy(m.autograd.NestedIOFunction):
            def forward_extended(self, a):
                return a * 2

            def backward_extended(self, g):
                return g * 2
        x = m.ones(2, requires_grad=True)
        inst, caught = _caught(Legacy)
        return ([c for c, _ in caught], _caught(lambda: inst(x))[0].split(" (")[0],
                _caught(lambda: Legacy.apply(x))[0].split(" (")[0],
                issubclass(Legacy, m.autograd.Function))
    assert run(R) == run(torch)


# ---- testing ---------------------------------------------------------------------------

@pytest.mark.parametrize("actual,expected,kw", [
    ([1.0, 2.0], [1.0, 2.00001], {}), ([1.0, 2.0], [1.0, 2.01], {}),
    ([1.0, float("nan")], [1.0, float("nan")], {}), ([1, 2], [1, 3], {}),
    ([1.0, 2.0], [1.0, 2.01], {"rtol": 0.1, "atol": 0.0}),
])
def test_assert_allclose_matches_torch(actual, expected, kw):
    def run(m):
        a = m.tensor(actual)
        out, caught = _caught(lambda: m.testing.assert_allclose(a, expected, **kw))
        return (out.split("\n")[0] if out else out), caught
    assert run(R) == run(torch)


def test_filecheck_raises_a_clear_error():
    assert torch.testing.FileCheck is not None
    with pytest.raises(RuntimeError, match="retrograd has no TorchScript"):
        R.testing.FileCheck()


# ---- prelu -----------------------------------------------------------------------------

def test_prelu_graph_module_and_errors_match_torch():
    def run(m):
        x = m.tensor(np.linspace(-1, 1, 24).reshape(2, 3, 4), requires_grad=True)
        mod = m.nn.PReLU(3).double()
        y = mod(x)
        graph = [f.name() for f in (y.grad_fn, *[e[0] for e in y.grad_fn.next_functions])]
        y.sum().backward()
        errs = [_caught(lambda a=a, b=b: m.prelu(a, b))[0] for a, b in (
            (m.ones(2, 3), m.ones(2)), (m.ones(2, 3), m.ones(1, 3)),
            (m.ones(2, 3, dtype=m.float64), m.ones(3)), (m.ones(2, 3, dtype=m.long),
                                                        m.ones(3, dtype=m.long)))]
        return (graph, y.detach().numpy().round(12).tolist(), mod.weight.grad.numpy().tolist(),
                [e.split(" (")[0] for e in errs])
    ours, theirs = run(R), run(torch)
    assert ours == theirs


# ---- conv_tbc --------------------------------------------------------------------------

@pytest.mark.parametrize("t,k,pad", [(5, 3, 0), (5, 3, 2), (4, 2, -1), (2, 5, 1), (3, 1, 0)])
def test_conv_tbc_matches_torch(t, k, pad):
    rng = np.random.default_rng(t * 10 + k)
    xs, ws, bs = (rng.standard_normal(s) for s in ((t, 2, 3), (k, 3, 4), (4,)))

    def run(m):
        x, w, b = (m.tensor(a, requires_grad=True) for a in (xs, ws, bs))
        y = m.nn.functional.conv_tbc(x, w, b, pad)
        y.pow(2).sum().backward()
        return [a.detach().numpy() for a in (y, x.grad, w.grad, b.grad)]
    for a, b in zip(run(R), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_conv_tbc_gradcheck_and_errors_match_torch():
    rng = np.random.default_rng(0)
    x, w, b = (R.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((4, 2, 3), (2, 3, 2), (2,)))
    assert R.autograd.gradcheck(lambda *a: R.conv_tbc(*a, 1), (x, w, b))

    def errs(m):
        cases = [(m.ones(2, 3), m.ones(1, 3, 4), m.ones(4)), (m.ones(2, 1, 3), m.ones(3, 4),
                                                             m.ones(4)),
                 (m.ones(2, 1, 3), m.ones(1, 3, 4), m.ones(3)),
                 (m.ones(2, 1, 2), m.ones(1, 3, 4), m.ones(4)),
                 (m.ones(2, 1, 3), m.ones(5, 3, 4), m.ones(4)),
                 (m.ones(2, 1, 3), m.ones(1, 3, 4, dtype=m.float64), m.ones(4))]
        return [_caught(lambda c=c: m.conv_tbc(*c))[0].split(" (")[0] for c in cases]
    assert errs(R) == errs(torch)


# ---- linear_cross_entropy --------------------------------------------------------------

def _lce(m, xs, ws, bs, ts, cw=None, opts=None, **kw):
    x, w = m.tensor(xs, requires_grad=True), m.tensor(ws, requires_grad=True)
    b = None if bs is None else m.tensor(bs, requires_grad=True)
    if opts is not None:
        kw["options"] = m.nn.LinearCrossEntropyOptions(**opts)
    if cw is not None:
        kw["weight"] = m.tensor(cw)
    out, caught = _caught(lambda: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor(ts), linear_bias=b, **kw))
    if isinstance(out, str):
        return out, caught
    out.sum().backward()
    return [out.detach().numpy()] + [t.grad.numpy() for t in (x, w, b) if t is not None], \
        [(c, msg.replace("torch.", "")) for c, msg in caught]


_RNG = np.random.default_rng(5)
_X, _W, _B = _RNG.standard_normal((6, 5)), _RNG.standard_normal((7, 5)), _RNG.standard_normal(7)
_T = np.array([0, 3, 6, 5, 2, 1])
_CW = _RNG.uniform(0.5, 2.0, 7)


@pytest.mark.parametrize("kw", [
    {}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 3},
    {"label_smoothing": 0.2}, {"cw": _CW, "ignore_index": 6},
    {"opts": {"batch_chunk_size": 4}}, {"opts": {}, "reduction": "none"},
    {"opts": {"chunking_method": "aspect_ratio:2"}, "cw": _CW, "ignore_index": 0},
    {"opts": {"batch_chunk_size": 2}, "reduction": "sum"},
    {"opts": {}, "label_smoothing": 0.1},  # falls back to the reference path, warning
    {"opts": {"batch_chunk_size": 3, "chunking_method": "aspect_ratio"}},  # conflicting
])
def test_linear_cross_entropy_matches_torch(kw):
    kw = dict(kw)
    args = (_X, _W, _B, _T, kw.pop("cw", None), kw.pop("opts", None))
    ours, theirs = _lce(R, *args, **kw), _lce(torch, *args, **kw)
    assert ours[1] == theirs[1]
    if isinstance(theirs[0], str):
        assert ours[0] == theirs[0]
        return
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_linear_cross_entropy_k_dim_unbatched_and_errors_match_torch():
    rng = np.random.default_rng(1)
    w3, b3 = rng.standard_normal((4, 2, 5)), rng.standard_normal((4, 2))
    cases = [((rng.standard_normal((3, 5)), w3, b3, rng.integers(0, 4, (3, 2))), {}),
             ((rng.standard_normal(5), _W, _B, np.array(2)), {}),
             ((rng.standard_normal(5), _W, None, np.array(2)), {"opts": {}}),
             ((rng.standard_normal(5), w3, b3, np.array([1, 2])), {}),
             ((rng.standard_normal((3, 4)), _W, _B, _T[:3]), {}),
             ((rng.standard_normal((3, 5)), _W, _B[:3], _T[:3]), {}),
             ((rng.standard_normal((2, 2, 5)), _W, _B, _T[:2]), {}),
             ((rng.standard_normal((2, 5)), _W, _B, rng.uniform(size=(2, 7))),
              {"ignore_index": 1}),
             ((rng.standard_normal((2, 5)), _W, _B, rng.uniform(size=(2, 7))), {})]
    for args, kw in cases:
        kw = dict(kw)
        opts = kw.pop("opts", None)
        ours, theirs = _lce(R, *args, None, opts, **kw), _lce(torch, *args, None, opts, **kw)
        if isinstance(theirs[0], str):
            assert ours[0] == theirs[0]
            continue
        for a, b in zip(ours[0], theirs[0]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [{"acc_policy": "fast"}, {"chunking_method": "ratio"},
                                {"chunking_method": "aspect_ratio:0"}, {"batch_chunk_size": 0},
                                {"acc_dtype": "int64"}])
def test_linear_cross_entropy_options_validation_matches_torch(kw):
    def run(m):
        k = {a: (getattr(m, v) if a == "acc_dtype" else v) for a, v in kw.items()}
        return _caught(lambda: m.nn.LinearCrossEntropyOptions(**k))[0]
    assert run(R) == run(torch)


def test_linear_cross_entropy_loss_module_matches_torch():
    def run(m):
        m.manual_seed(0)
        mod = m.nn.LinearCrossEntropyLoss(5, 4, out_features=(2,), bias=True,
                                          dtype=m.float64, ignore_index=1)
        x = m.tensor(_X[:3])
        t = m.tensor([[0, 1], [3, 2], [1, 1]])
        loss = mod(x, t)
        loss.backward()
        return (loss.item(), mod.linear.weight.grad.numpy(), mod.linear.bias.grad.numpy(),
                repr(mod), _caught(lambda: m.nn.LinearCrossEntropyLoss(5, 4,
                                                                      weight=m.ones(3)))[0])
    ours, theirs = run(R), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-10, atol=1e-12)
    assert ours[3:] == theirs[3:]


# ---- grouped_mm / scaled_mm ------------------------------------------------------------

_GMM_RNG = np.random.default_rng(11)


def _gmm_cases():
    r = _GMM_RNG
    return [
        ("3d3d", r.standard_normal((3, 4, 8)), r.standard_normal((3, 8, 16)), None),
        ("2d3d", r.standard_normal((16, 8)), r.standard_normal((3, 8, 16)), [4, 8, 16]),
        ("2d3d-empty", r.standard_normal((16, 8)), r.standard_normal((3, 8, 16)), [0, 8, 16]),
        ("3d2d", r.standard_normal((3, 16, 8)), r.standard_normal((8, 48)), [16, 32, 48]),
        ("2d2d", r.standard_normal((16, 32)), r.standard_normal((32, 8)), [8, 32]),
    ]


@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", _gmm_cases(), ids=lambda c: c[0])
def test_grouped_mm_matches_torch(case, dt):
    _, a, b, offs = case

    def run(m):
        x = m.tensor(a, dtype=getattr(m, dt), requires_grad=True)
        y = m.tensor(b, dtype=getattr(m, dt), requires_grad=True)
        o = None if offs is None else m.tensor(offs, dtype=m.int32)
        out = m.nn.functional.grouped_mm(x, y, offs=o)
        out.float().pow(2).sum().backward()
        return [t.float().detach().numpy() for t in (out, x.grad, y.grad)], str(out.dtype)
    (ours, odt), (theirs, tdt) = run(R), run(torch)
    assert odt == tdt
    tol = 1e-5 if dt == "float32" else 2e-2
    for a_, b_ in zip(ours, theirs):
        np.testing.assert_allclose(a_, b_, rtol=tol, atol=tol * np.abs(b_).max())


def test_grouped_mm_and_scaled_errors_match_torch():
    def run(m):
        bf, i32 = m.bfloat16, m.int32
        F = m.nn.functional
        offs = m.tensor([4, 8, 16], dtype=i32)
        cases = [
            lambda: F.grouped_mm(m.ones(16, 8, dtype=bf), m.ones(3, 8, 16, dtype=bf)),
            lambda: F.grouped_mm(m.ones(3, 16, 8, dtype=bf), m.ones(3, 8, 16, dtype=bf),
                                 offs=offs),
            lambda: F.grouped_mm(m.ones(16, 8, dtype=bf), m.ones(3, 8, 16, dtype=bf),
                                 offs=m.tensor([4, 8, 16])),
            lambda: F.grouped_mm(m.ones(16, 8, dtype=bf), m.ones(3, 8, 16), offs=offs),
            lambda: F.grouped_mm(m.ones(16, 8, dtype=m.float64), m.ones(3, 8, 16,
                                                                       dtype=m.float64),
                                 offs=offs),
            lambda: F.grouped_mm(m.ones(16, 8, dtype=bf), m.ones(3, 16, 16, dtype=bf),
                                 offs=offs),
            lambda: F.grouped_mm(m.ones(3, 16, 8, dtype=bf), m.ones(2, 8, 16, dtype=bf)),
            lambda: F.grouped_mm(m.ones(16, 8, dtype=bf), m.ones(3, 8, 16, dtype=bf),
                                 offs=m.tensor([4, 8], dtype=i32)),
            lambda: F.grouped_mm(m.ones(16, 6, dtype=bf), m.ones(3, 6, 16, dtype=bf),
                                 offs=offs),
            lambda: F.grouped_mm(m.ones(3, 16, 8, dtype=bf), m.ones(3, 8, 16, dtype=bf),
                                 out_dtype=m.float32),
            lambda: F.grouped_mm(m.ones(3, 16, 8, dtype=bf), m.ones(3, 8, 16, dtype=bf),
                                 bias=m.ones(3, 16, dtype=bf)),
            lambda: F.grouped_mm(m.ones(8), m.ones(3, 8, 16)),
            lambda: F.scaled_mm(m.ones(16, 32), m.ones(16, 32).t(), m.tensor(1.0),
                                F.ScalingType.TensorWise, m.tensor(1.0),
                                F.ScalingType.TensorWise),
            lambda: F.scaled_mm(m.ones(16, 32), m.ones(16, 32).t(), m.ones(16, 1),
                                F.ScalingType.RowWise, m.ones(1, 16), F.ScalingType.RowWise),
            lambda: F.scaled_grouped_mm(m.ones(16, 32), m.ones(16, 32).t(), m.tensor(1.0),
                                        F.ScalingType.TensorWise, m.tensor(1.0),
                                        F.ScalingType.TensorWise),
        ]
        out = []
        for c in cases:
            msg = _caught(c)[0]
            out.append(msg.split(" (")[0].split("\n(")[0].split(" This could")[0])
        return out
    assert run(R) == run(torch)
