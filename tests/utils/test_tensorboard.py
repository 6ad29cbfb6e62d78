"""retrograd.utils.tensorboard: events read back with tensorboard's EventAccumulator,
and compared with what torch.utils.tensorboard writes for the same calls."""

import importlib
import io
import os
import socket
import sys

import numpy as np
import pytest

pytest.importorskip("tensorboard", reason="tensorboard is in the test extra: "
                    "pip install -e '.[test]'")
import torch
from tensorboard.backend.event_processing.event_accumulator import (
    EventAccumulator,
)
from torch.utils.tensorboard import SummaryWriter as TorchWriter

import retrograd as rg
from retrograd.utils.tensorboard import SummaryWriter
from retrograd.viz import GradFlowMonitor

ALL = {"scalars": 0, "histograms": 0, "images": 0, "tensors": 0, "compressedHistograms": 0}


def load(path) -> EventAccumulator:
    acc = EventAccumulator(str(path), size_guidance=ALL)
    acc.Reload()
    return acc


def scalars(path, tag):
    return [(e.step, e.value) for e in load(path).Scalars(tag)]


def histo_fields(h):
    return (h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit), list(h.bucket))


def both(tmp_path, calls):
    """Run ``calls(writer, lib)`` with retrograd's and torch's writers; their log dirs."""
    out = []
    for name, writer_cls, lib in (("rg", SummaryWriter, rg), ("torch", TorchWriter, torch)):
        d = tmp_path / name
        with writer_cls(str(d)) as w:
            calls(w, lib)
        out.append(d)
    return out


# ---- scalars ---------------------------------------------------------------------------

def test_scalars_values_steps_tags_match_torch(tmp_path):
    def calls(w, lib):
        p = lib.tensor([2.0], requires_grad=True)
        for step in range(4):
            loss = (p * (step + 1)).sum()
            w.add_scalar("train/loss", loss, step)  # a tensor that requires grad
            w.add_scalar("train/lr", 0.1 / (step + 1), global_step=np.int64(step))
        w.add_scalar("np", np.float32(1.5), 9)
        w.add_scalar("zero_d", np.array(2.5), 10)
    ours, theirs = both(tmp_path, calls)
    assert load(ours).Tags()["scalars"] == load(theirs).Tags()["scalars"]
    for tag in ("train/loss", "train/lr", "np", "zero_d"):
        assert scalars(ours, tag) == scalars(theirs, tag)
    assert scalars(ours, "train/loss") == [(0, 2.0), (1, 4.0), (2, 6.0), (3, 8.0)]


def test_logging_a_tensor_that_requires_grad_leaves_no_cut(tmp_path):
    from retrograd._graph.provenance import clear_cuts, recent_cuts

    y = rg.tensor([1.0, 3.0], requires_grad=True) * 2
    clear_cuts()
    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("y", y.sum(), 0)
        w.add_histogram("y", y, 0)
        w.add_image("y", y.reshape(1, 1, 2), 0)
    assert recent_cuts() == []  # explain_grad would otherwise report these reads


def test_scalar_new_style_is_a_tensor_event(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("a", 0.25, 3, new_style=True)
        w.add_scalar("b", 0.1, 3, new_style=True, double_precision=True)
    acc = load(tmp_path)
    (ev,) = acc.Tensors("a")
    assert ev.step == 3 and list(ev.tensor_proto.float_val) == [0.25]
    assert list(acc.Tensors("b")[0].tensor_proto.double_val) == [0.1]


def test_scalar_of_many_values_is_refused(tmp_path):
    with pytest.raises(AssertionError, match="one element"), SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("x", rg.ones(3), 0)


def test_scalars_write_one_run_per_key_like_torch(tmp_path):
    def calls(w, lib):
        for step in range(3):
            w.add_scalars("loss/all", {"train": 1.0 / (step + 1), "val": 2.0 + step}, step)
    ours, theirs = both(tmp_path, calls)
    def runs(d):
        return sorted(f for f in os.listdir(d) if os.path.isdir(d / f))
    assert runs(ours) == runs(theirs) == ["loss_all_train", "loss_all_val"]
    for run in ("loss_all_train", "loss_all_val"):
        assert load(ours / run).Tags()["scalars"] == ["loss/all"]
        assert scalars(ours / run, "loss/all") == scalars(theirs / run, "loss/all")


# ---- histograms ------------------------------------------------------------------------

def test_histogram_of_grads_matches_torch_bucket_for_bucket(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 5)).astype(np.float32)
    w0 = rng.standard_normal((3, 5)).astype(np.float32)

    def calls(w, lib):
        lin = lib.nn.Linear(5, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w0))
            lin.bias.zero_()
        lin(lib.tensor(x)).pow(2).mean().backward()
        w.add_histogram("grad/weight", lin.weight.grad, 1)
        w.add_histogram("weight", lin.weight, 1)  # a parameter (requires grad)
        w.add_histogram("np", rng_values, 2)
        w.add_histogram("auto", rng_values, 2, bins="auto")
        w.add_histogram("capped", rng_values, 2, max_bins=7)
        w.add_histogram("ints", np.arange(10), 3)
        w.add_histogram("const", np.full(4, -3.0), 3)

    rng_values = rng.standard_normal(1000) * 1e3
    ours, theirs = both(tmp_path, calls)
    a, b = load(ours), load(theirs)
    assert a.Tags()["histograms"] == b.Tags()["histograms"]
    for tag in a.Tags()["histograms"]:
        (ha,), (hb,) = a.Histograms(tag), b.Histograms(tag)
        assert ha.step == hb.step
        got, want = histo_fields(ha.histogram_value), histo_fields(hb.histogram_value)
        np.testing.assert_allclose(got[:5], want[:5], rtol=1e-6)
        assert got[5:] == want[5:], tag
    counts = a.Histograms("capped")[0].histogram_value.bucket
    assert len(counts) <= 8 and sum(counts) == 1000


def test_histogram_counts_and_empty_input(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("h", rg.tensor([1.0, 2.0, 2.0, 5.0]), 0, bins=[0, 1, 2, 3, 4, 5])
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("e", np.zeros(0), 0)
        with pytest.raises(ValueError, match="none of the values"):
            w.add_histogram("out", np.array([10.0]), 0, bins=[0, 1])
    h = load(tmp_path).Histograms("h")[0].histogram_value
    assert list(h.bucket_limit) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert list(h.bucket) == [0.0, 1.0, 2.0, 0.0, 1.0]
    assert (h.num, h.sum, h.sum_squares, h.min, h.max) == (4, 10.0, 34.0, 1.0, 5.0)


def test_histogram_raw(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_histogram_raw("r", 0, 2, 3, 3, 5, [0, 1, 2], [0, 2, 1], global_step=4)
        with pytest.raises(ValueError, match="bucket_limits"):
            w.add_histogram_raw("r", 0, 2, 3, 3, 5, [0, 1], [0, 2, 1])
    (ev,) = load(tmp_path).Histograms("r")
    assert ev.step == 4 and list(ev.histogram_value.bucket) == [0, 2, 1]


def test_bfloat16_histogram_keeps_large_values(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("bf", rg.tensor([1e5, -2.0]).to(rg.bfloat16), 0)
    h = load(tmp_path).Histograms("bf")[0].histogram_value
    assert h.max == pytest.approx(99840.0) and np.isfinite(h.sum)


def test_values_of_other_types_are_refused():
    from retrograd.utils.tensorboard.summary import make_np

    with pytest.raises(NotImplementedError, match="numpy array or torch tensor"):
        make_np([1.0, 2.0])


# ---- images and figures ----------------------------------------------------------------

def decode(img_event):
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(img_event.encoded_image_string)))


@pytest.mark.parametrize("shape, fmt, method", [
    ((3, 6, 5), "CHW", "add_image"), ((6, 5, 3), "HWC", "add_image"),
    ((1, 6, 5), "CHW", "add_image"), ((6, 5, 1), "HWC", "add_image"),
    ((6, 5), "HW", "add_image"), ((10, 1, 4, 3), "NCHW", "add_images"),
    ((3, 4, 3, 3), "NHWC", "add_images")])
def test_images_match_torch_pixels(tmp_path, shape, fmt, method):
    data = np.random.default_rng(1).random(shape).astype(np.float32)

    def calls(w, lib):
        getattr(w, method)("im", lib.tensor(data), 2, dataformats=fmt)
        getattr(w, method)("u8", (data * 255).astype(np.uint8), 2, dataformats=fmt)
    ours, theirs = both(tmp_path, calls)
    for tag in ("im", "u8"):
        (a,), (b,) = load(ours).Images(tag), load(theirs).Images(tag)
        assert (a.step, a.height, a.width) == (b.step, b.height, b.width)
        np.testing.assert_array_equal(decode(a), decode(b))


def test_image_with_wrong_format_says_which_format(tmp_path):
    with SummaryWriter(str(tmp_path)) as w, pytest.raises(ValueError, match="dataformats"):
        w.add_image("x", np.zeros((4, 5)), 0)  # default CHW wants 3 dims


def test_figure_and_list_of_figures(tmp_path):
    from matplotlib.figure import Figure

    figs = []
    for k in range(2):
        f = Figure(figsize=(2, 1.5), dpi=40)
        f.subplots().plot([0, k, 1])
        figs.append(f)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_figure("one", figs[0], 0, close=False)
        w.add_figure("two", figs, 1)
    acc = load(tmp_path)
    one, two = acc.Images("one")[0], acc.Images("two")[0]
    assert (one.height, one.width) == (60, 80)
    assert (two.height, two.width) == (60, 160)  # two figures side by side
    assert decode(one).std() > 0  # something was drawn


# ---- text, hparams ---------------------------------------------------------------------

def test_text_round_trip(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_text("notes", "lr **0.1**, ünïcode", 5)
    (ev,) = load(tmp_path).Tensors("notes/text_summary")
    assert ev.step == 5
    assert ev.tensor_proto.string_val[0].decode() == "lr **0.1**, ünïcode"
    meta = load(tmp_path).SummaryMetadata("notes/text_summary")
    assert meta.plugin_data.plugin_name == "text"


def test_hparams_round_trip(tmp_path):
    from tensorboard.plugins.hparams import metadata as hm

    with SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"lr": 0.1, "opt": "adam", "amp": True, "depth": rg.tensor(3.0),
                       "skip": None}, {"hparam/acc": 0.9}, {"opt": ["adam", "sgd"]},
                      run_name="run1", global_step=7)
        with pytest.raises(TypeError, match="dictionary"):
            w.add_hparams([("lr", 0.1)], {})
        with pytest.raises(ValueError, match="list"):
            w.add_hparams({"layers": [1, 2]}, {})
    run = load(tmp_path / "run1")
    assert scalars(tmp_path / "run1", "hparam/acc") == [(7, pytest.approx(0.9))]
    start = hm.parse_session_start_info_plugin_data(
        run.SummaryMetadata(hm.SESSION_START_INFO_TAG).plugin_data.content)
    assert start.hparams["lr"].number_value == pytest.approx(0.1)
    assert start.hparams["opt"].string_value == "adam"
    assert start.hparams["amp"].bool_value is True  # Note [Boolean hyperparameters]
    assert start.hparams["depth"].number_value == 3.0 and "skip" not in start.hparams
    exp = hm.parse_experiment_plugin_data(
        run.SummaryMetadata(hm.EXPERIMENT_TAG).plugin_data.content)
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/acc"]
    opt = next(h for h in exp.hparam_infos if h.name == "opt")
    assert [v.string_value for v in opt.domain_discrete.values] == ["adam", "sgd"]


# ---- writer life cycle -----------------------------------------------------------------

def test_default_log_dir_is_runs_date_host_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as w:
        w.add_scalar("x", 1.0, 0)
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_" + socket.gethostname() + "_lr0.1")
    assert w.get_logdir() == os.path.join("runs", run)
    assert scalars(tmp_path / "runs" / run, "x") == [(0, 1.0)]


def test_flush_close_reopen_and_suffix(tmp_path):
    w = SummaryWriter(str(tmp_path), filename_suffix=".rg", flush_secs=1000)
    w.add_scalar("x", 1.0, 0)
    w.flush()  # visible before close
    assert scalars(tmp_path, "x") == [(0, 1.0)]
    w.close()
    w.close()  # a second close is harmless
    assert "closed" in repr(w)
    w.add_scalar("x", 2.0, 1)  # reopens: a second event file
    w.close()
    files = os.listdir(tmp_path)
    assert len(files) == 2 and all(f.endswith(".rg") for f in files)
    assert scalars(tmp_path, "x") == [(0, 1.0), (1, 2.0)]


def test_purge_step_hides_the_crashed_runs_later_steps(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(10):
            w.add_scalar("loss", float(step), step)
    with SummaryWriter(str(tmp_path), purge_step=5) as w:
        for step in range(5, 8):
            w.add_scalar("loss", 100.0 + step, step)
    got = scalars(tmp_path, "loss")
    assert got == [(s, float(s)) for s in range(5)] + [(s, 100.0 + s) for s in range(5, 8)]


def test_unsupported_methods_name_the_alternative(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(NotImplementedError, match="draw_graph"):
            w.add_graph(None)
        with pytest.raises(AttributeError):
            w.no_such_method  # noqa: B018


def test_missing_tensorboard_names_the_extra(monkeypatch):
    for name in list(sys.modules):
        if name == "tensorboard" or name.startswith(("tensorboard.",
                                                     "retrograd.utils.tensorboard")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.delattr(rg.utils, "tensorboard", raising=False)
    with pytest.raises(ImportError, match=r'pip install "retrograd\[tensorboard\]"'):
        importlib.import_module("retrograd.utils.tensorboard")
    with pytest.raises(ImportError, match="tensorboard package"):
        rg.utils.tensorboard  # noqa: B018  (what torch.utils.tensorboard becomes)


def test_torch_style_import_path():
    import retrograd.utils.tensorboard as tb

    assert tb.SummaryWriter is SummaryWriter and rg.utils.tensorboard is tb


# ---- GradFlowMonitor -------------------------------------------------------------------

@pytest.mark.parametrize("with_optimizer", [True, False])
def test_grad_flow_monitor_logs_to_the_writer(tmp_path, with_optimizer):
    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(4, 3), rg.nn.Tanh(), rg.nn.Linear(3, 1))
    opt = rg.optim.SGD(net.parameters(), lr=0.1)
    with SummaryWriter(str(tmp_path)) as w:
        mon = GradFlowMonitor(net, optimizer=opt if with_optimizer else None, writer=w,
                              histograms=True)
        grads = []
        for _ in range(3):
            opt.zero_grad()
            net(rg.randn(5, 4)).pow(2).mean().backward()
            grads.append(net[0].weight.grad.numpy().copy())
            opt.step()
        mon.remove()
    acc = load(tmp_path)
    assert scalars(tmp_path, "grad_flow/mean_abs/0.weight") == [
        (k + 1, pytest.approx(float(np.abs(g).mean()))) for k, g in enumerate(grads)]
    assert [s for s, _ in scalars(tmp_path, "grad_flow/norm/2.bias")] == [1, 2, 3]
    assert mon.history["0.weight"]["max"] == pytest.approx(
        [v for _, v in scalars(tmp_path, "grad_flow/max_abs/0.weight")])
    hist = acc.Histograms("grad/0.weight")
    assert [h.step for h in hist] == [1, 2, 3]
    assert all(h.histogram_value.num == 12 for h in hist)
    assert hist[-1].histogram_value.max == pytest.approx(float(grads[-1].max()))
