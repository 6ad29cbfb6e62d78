"""Every script in examples/ runs (small sizes), and where the result does not depend on
random numbers it matches the same script run with real PyTorch."""

import importlib.util
import os
import re
import types

import numpy as np
import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def load(name: str, backend: str = "retrograd") -> types.ModuleType:
    """Import examples/<name>.py; with backend='torch' its `import retrograd as torch`
    becomes `import torch` (the examples are PyTorch code)."""
    path = os.path.join(EXAMPLES, name + ".py")
    if backend == "retrograd":
        spec = importlib.util.spec_from_file_location(f"example_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    src = open(path).read()
    src = re.sub(r"^import retrograd as torch$", "import torch", src, flags=re.M)
    src = re.sub(r"^from retrograd import nn$", "from torch import nn", src, flags=re.M)
    src = re.sub(r"^from retrograd\.utils\.checkpoint import", "from torch.utils.checkpoint "
                 "import", src, flags=re.M)
    mod = types.ModuleType(f"example_{name}_torch")
    mod.__file__ = path
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


def test_every_example_is_tested():
    names = sorted(f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py"))
    assert names == ["01_cubic_gradient", "02_gradient_flow", "03_huber_function",
                     "04_wgan_gp", "05_checkpointing"]


def test_01_cubic_gradient(capsys):
    ours = load("01_cubic_gradient").main([])
    ref = load("01_cubic_gradient", "torch").main([])
    assert (ours["grad"], ours["second"], ours["third"]) == (23.0, 18.0, 6.0)
    assert ours["vector_grad"] == ref["vector_grad"] == [8.0, -4.0, -1.0, 23.0]
    assert ours["minimum"] == pytest.approx(2 / 3 ** 0.5, abs=1e-6)
    assert ours["minimum"] == pytest.approx(ref["minimum"], abs=1e-6)
    assert "f'(3) = 23" in capsys.readouterr().out


def test_02_gradient_flow(tmp_path):
    res = load("02_gradient_flow").main(["--steps", "30", "--depth", "5",
                                         "--out", str(tmp_path)])
    # the pattern the exercise asks about: sigmoid gradients vanish toward the input
    assert res["sigmoid"]["ratio"] < 0.01 < res["relu"]["ratio"]
    assert res["relu"]["flagged"] == {}
    if "plot" in res["relu"]:
        assert open(res["relu"]["plot"], "rb").read(4) == b"\x89PNG"


def test_03_huber_function():
    ex = load("03_huber_function")
    res = ex.main(["--n", "6"])
    assert res["gradcheck"] and res["gradgradcheck"]
    assert res["loss"] == pytest.approx(res["ref"], rel=1e-12)
    np.testing.assert_allclose(res["grad"], res["grad_ref"], rtol=1e-12)
    # the same Function class in PyTorch gives the same values and gradients
    tex = load("03_huber_function", "torch")
    data = [-2.5, -0.3, 0.2, 0.7, 1.6, 3.0]
    vals = []
    for lib, mod in ((ex.torch, ex), (torch, tex)):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        t = lib.tensor([0.1] * 6, dtype=lib.float64, requires_grad=True)
        loss = mod.huber(x, t, 1.0)
        gx, gt = lib.autograd.grad(loss, (x, t), create_graph=True)
        (hx,) = lib.autograd.grad(gx.sum(), x)
        vals.append([loss.item()] + gx.tolist() + gt.tolist() + hx.tolist())
    np.testing.assert_allclose(vals[0], vals[1], rtol=1e-12)


def test_04_gradient_penalty_matches_torch():
    ex, tex = load("04_wgan_gp"), load("04_wgan_gp", "torch")
    ex.torch.manual_seed(0)
    critic = ex.mlp(2, 1, width=16)
    tcritic = tex.mlp(2, 1, width=16)
    with torch.no_grad():
        for (_, p), (_, q) in zip(critic.named_parameters(), tcritic.named_parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    rng = np.random.default_rng(0)
    real, fake = rng.standard_normal((2, 8, 2)).astype(np.float32)
    eps = rng.random((8, 1)).astype(np.float32)
    gp = ex.gradient_penalty(critic, *(ex.torch.tensor(a) for a in (real, fake, eps)))
    tgp = tex.gradient_penalty(tcritic, *(torch.tensor(a) for a in (real, fake, eps)))
    assert gp.item() == pytest.approx(tgp.item(), rel=1e-5)
    # the penalty's gradient with respect to the critic's weights (double backward)
    gp.backward()
    tgp.backward()
    for (name, p), q in zip(critic.named_parameters(), tcritic.parameters()):
        # the penalty does not depend on the biases of the first and last layers: torch
        # gives the first zeros (its ReLU double-backward keeps an edge to the input)
        # and the last None; retrograd gives None for both (its ReLU rule's mask has no
        # edge), which is the same gradient
        if q.grad is None:
            assert p.grad is None, name
            continue
        ours = np.zeros(q.shape, np.float32) if p.grad is None else p.grad.numpy()
        np.testing.assert_allclose(ours, q.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_04_wgan_gp_runs(tmp_path):
    res = load("04_wgan_gp").main(["--steps", "3", "--critic-steps", "2", "--batch", "32",
                                   "--out", str(tmp_path)])
    assert len(res["history"]) == 3 and all(np.isfinite(h["gp"]) for h in res["history"])


def test_05_checkpointing(tmp_path):
    res = load("05_checkpointing").main(["--width", "32", "--depth", "9", "--batch", "8",
                                         "--out", str(tmp_path)])
    plain, every, sqrt = res["plans"]
    assert all(r["same_grads"] for r in res["plans"])
    assert sqrt["bytes"] < every["bytes"] < plain["bytes"]
    assert sqrt["bytes"] < plain["bytes"] / 3
    if "plot" in res:
        assert open(res["plot"], "rb").read(4) == b"\x89PNG"


def test_05_checkpointing_same_loss_as_torch():
    ex, tex = load("05_checkpointing"), load("05_checkpointing", "torch")
    ex.torch.manual_seed(0)
    net = ex.DeepNet(8, 4)
    tnet = tex.DeepNet(8, 4)
    with torch.no_grad():
        for p, q in zip(net.parameters(), tnet.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    for segments in (0, 2):
        loss = net(ex.torch.tensor(x), segments)
        tloss = tnet(torch.tensor(x), segments)
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5)


# -- the docs' code runs, and the guide prints what PyTorch prints ---------------------------

DOCS = os.path.join(ROOT, "docs")


def run_markdown_doctests(name: str, backend: str = "retrograd"):
    import doctest
    import warnings

    src = re.sub(r"^```.*$", "", open(os.path.join(DOCS, name)).read(), flags=re.M)
    if backend == "torch":
        src = src.replace(">>> import retrograd as torch", ">>> import torch")
    test = doctest.DocTestParser().get_doctest(src, {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("backend", ["retrograd", "torch"])
def test_guide_examples_print_the_same_in_both(backend):
    failed, attempted = run_markdown_doctests("guide.md", backend)
    assert attempted > 50 and failed == 0


def test_viz_page_examples():
    failed, attempted = run_markdown_doctests("viz.md")
    assert attempted > 20 and failed == 0


def test_compile_page_examples():
    failed, attempted = run_markdown_doctests("compile.md")
    assert attempted >= 4 and failed == 0


def test_mkdocs_nav_and_images_exist():
    text = open(os.path.join(ROOT, "mkdocs.yml")).read()
    pages = re.findall(r"(\S+\.md)", text)
    assert "guide.md" in pages and "api/viz.md" in pages
    for page in pages:
        assert os.path.exists(os.path.join(DOCS, page)), page
    for page in os.listdir(DOCS):
        if page.endswith(".md"):
            for img in re.findall(r"\]\((img/[^)]+)\)", open(os.path.join(DOCS, page)).read()):
                assert os.path.exists(os.path.join(DOCS, img)), img
