"""`retrograd demo`, `retrograd tour` and `retrograd check`: the files exist and are valid,
runs are deterministic, and the demo works without its optional extras."""

import json
import os
import subprocess
import sys

import pytest

from retrograd._cli.check import run_check, torch_alias
from retrograd._cli.main import build_parser, demo, main
from retrograd.viz import graphviz_available

PNG = b"\x89PNG\r\n\x1a\n"


def _history(res):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in res.metrics["history"]]


def _check_outputs(out: str, res) -> None:
    files = res.files
    assert open(files["graph_dot"]).read().startswith("digraph backward {")
    if graphviz_available()[0]:
        assert "<svg" in open(files["graph_svg"]).read()
    else:
        assert "graph picture" in res.skipped
    report = open(files["memory_report"]).read()
    assert report.startswith("graph of ") and "by op" in report and "by line" in report
    rep = json.load(open(files["memory_json"]))
    assert rep["total_bytes"] > 0 and rep["warnings"] == []
    metrics = json.load(open(files["metrics"]))
    assert metrics["gradcheck"]["passed"] is True
    assert 0.0 <= metrics["final_test_acc"] <= 1.0
    head = open(files["grad_flow_csv"]).readline().strip()
    assert head == "step,parameter,mean_abs,max_abs,norm"
    if "grad_flow_png" in files:
        assert open(files["grad_flow_png"], "rb").read(8) == PNG
    for path in files.values():
        assert os.path.dirname(os.path.abspath(path)) == os.path.abspath(out)


def test_demo_cnn_writes_valid_files_and_is_deterministic(tmp_path, capsys):
    out = str(tmp_path / "d1")
    res = demo(epochs=1, out=out, limit=192, progress=False, seed=3)
    _check_outputs(out, res)
    text = capsys.readouterr().out
    assert "gradcheck conv1 (conv2d): analytic gradients match" in text
    assert "epoch 1/1" in text and "wrote to" in text
    res2 = demo(epochs=1, out=str(tmp_path / "d2"), limit=192, progress=False, seed=3)
    assert _history(res) == _history(res2)
    res3 = demo(epochs=1, out=str(tmp_path / "d3"), limit=192, progress=False, seed=4)
    assert _history(res) != _history(res3)
    # the graph picture names the model's own source lines and modules
    dot = open(res.files["graph_dot"]).read()
    assert "conv1 (Conv2d)" in dot and "demo_models.py:" in dot
    assert "x = self.pool(torch.relu(self.conv1" in dot
    assert "loss (CrossEntropyLoss)" in dot


def test_demo_learns(tmp_path):
    res = demo(epochs=2, out=str(tmp_path), progress=False)
    assert res.metrics["final_test_acc"] > 0.8


@pytest.mark.parametrize("model", ["cnn", "mlp"])
def test_demo_bf16_and_checkpoint(tmp_path, model):
    plain = demo(epochs=1, model=model, out=str(tmp_path / "plain"), limit=128,
                 progress=False)
    res = demo(epochs=1, model=model, amp="bf16", checkpoint=True, out=str(tmp_path / "ck"),
               limit=128, progress=False)
    _check_outputs(str(tmp_path / "ck"), res)
    assert res.metrics["amp"] == "bf16" and res.metrics["checkpoint"] is True
    # checkpointing the feature layers shrinks the graph of a step
    assert res.metrics["graph"]["saved_bytes"] < plain.metrics["graph"]["saved_bytes"] * 0.7


def test_demo_without_matplotlib_tqdm_and_graphviz(tmp_path, monkeypatch, capsys):
    import shutil

    for mod in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg", "tqdm",
                "tqdm.auto", "tqdm.notebook"):  # (a submodule imported earlier is found first)
        monkeypatch.setitem(sys.modules, mod, None)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    res = demo(epochs=1, out=str(tmp_path), limit=128, progress=True)
    assert "grad_flow_png" not in res.files and "graph_svg" not in res.files
    assert set(res.skipped) == {"progress bar", "gradient-flow plot", "graph picture"}
    _check_outputs(str(tmp_path), res)
    text = capsys.readouterr().out
    assert "skipped gradient-flow plot: matplotlib is not installed" in text


def test_demo_progress_bar(tmp_path, capsys):
    pytest.importorskip("tqdm")
    demo(epochs=1, out=str(tmp_path), limit=128, progress=True)
    assert "batch" in capsys.readouterr().out


def test_command_line(tmp_path):
    out = str(tmp_path / "cli")
    r = subprocess.run([sys.executable, "-m", "retrograd", "demo", "--epochs", "1", "--limit",
                        "128", "--out", out, "--no-progress", "--model", "mlp"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "test accuracy" in r.stdout
    assert {"graph.dot", "memory_report.txt", "metrics.json"} <= set(os.listdir(out))
    args = build_parser().parse_args(["demo"])
    assert (args.epochs, args.model, args.amp, args.checkpoint, args.seed) == (5, "cnn", None,
                                                                               False, 0)
    with pytest.raises(SystemExit):
        main(["demo", "--epochs", "0"])


def test_tour(capsys):
    assert main(["tour"]) == 0
    text = capsys.readouterr().out
    assert "f' = 23, f'' = 18, f''' = 6" in text and "no_grad" in text
    # the vector-Jacobian step shows every value it talks about
    for line in ("x        = [[1.0, 2.0], [3.0, 4.0]]", "v        = [[1.0, 0.5], [0.1, 0.0]]",
                 "v * 2x   = [[2.0, 2.0], [0.6, 0.0]]", "x.grad   = [[2.0, 2.0], [0.6, 0.0]]"):
        assert line in text
    # explain_grad names the tour's own line, in words (no internal node names)
    assert "it was made by mul at tour.py:" in text and "`w = x * 2`" in text
    assert "torch::autograd" not in text and "AccumulateGrad" not in text


def test_tour_sites_from_the_command_line():
    r = subprocess.run([sys.executable, "-m", "retrograd", "tour"], capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert "at tour.py:" in r.stdout and "runpy" not in r.stdout
    assert "sys.exit" not in r.stdout and "[Enter" not in r.stdout  # not a terminal


def test_tour_waits_for_enter_on_a_terminal(monkeypatch, capsys):
    from retrograd._cli.tour import STEPS, tour

    prompts = []
    monkeypatch.setattr("builtins.input", lambda prompt="": prompts.append(prompt) or "")
    assert tour(interactive=True) == 0
    assert len(prompts) == len(STEPS) - 1 and "Enter" in prompts[0]


def test_check_runs_a_pytorch_script(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\n"
        "import torch\n"
        "import torch.nn as nn\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "from torch.optim import SGD\n"
        "torch.manual_seed(0)\n"
        "x = torch.randn(32, 2); y = x.sum(1, keepdim=True)\n"
        "m = nn.Linear(2, 1); opt = SGD(m.parameters(), lr=0.1)\n"
        "for xb, yb in DataLoader(TensorDataset(x, y), batch_size=8):\n"
        "    loss = nn.functional.mse_loss(m(xb), yb)\n"
        "    opt.zero_grad(); loss.backward(); opt.step()\n"
        "print('module', torch.__name__, nn.__name__, sys.argv[1:])\n")
    assert run_check(str(script), ["--flag"]) == 0
    out = capsys.readouterr()
    assert "module retrograd retrograd.nn ['--flag']" in out.out
    assert "ran to the end with torch = retrograd" in out.err
    assert main(["check", str(script)]) == 0


def test_check_reports_missing_parts_and_restores_torch(tmp_path, capsys):
    import torch

    bad = tmp_path / "bad.py"
    bad.write_text("import torch.onnx\n")
    assert run_check(str(bad)) == 1
    err = capsys.readouterr().err
    assert "No module named 'torch.onnx'" in err and "retrograd has no" in err
    assert sys.modules["torch"] is torch  # the real PyTorch is back
    exits = tmp_path / "exits.py"
    exits.write_text("raise SystemExit(3)\n")
    assert run_check(str(exits)) == 3
    assert run_check(str(tmp_path / "missing.py")) == 2


def test_torch_alias_submodules():
    with torch_alias():
        import torch.nn.functional as F
        import torch.optim
        import torch.utils.data as data

        assert F.__name__ == "retrograd.nn.functional"
        assert torch.optim.__name__ == "retrograd.optim"
        assert data.__name__ == "retrograd.utils.data"
