"""The ``retrograd`` command: --version, help for every option, one-line errors (no
traceback) for mistakes in the command line, progress output fit for logs."""

import argparse
import os
import subprocess
import sys

import pytest

import retrograd
from retrograd._cli.main import build_parser, main


def run_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(retrograd.__file__)))
    return subprocess.run([sys.executable, "-m", "retrograd", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=env)


def test_version():
    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout.startswith(f"retrograd {retrograd.version.retrograd_version} (NumPy ")


def test_every_option_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parsers = {"retrograd": parser, **sub.choices}
    for name, p in parsers.items():
        for action in p._actions:
            assert action.help, f"{name}: {action.option_strings or action.dest} has no help"
    assert {c.dest for c in sub._choices_actions} == {"demo", "tour", "check", "run"}
    assert all(c.help for c in sub._choices_actions)


@pytest.mark.parametrize("argv, message", [
    (["check"], "retrograd check: error: no script given: retrograd check FILE.py"),
    (["demo", "--epochs", "0"], "argument --epochs: must be at least 1, got 0"),
    (["demo", "--epochs", "two"], "argument --epochs: expected a whole number, got 'two'"),
    (["demo", "--batch-size", "-3"], "argument --batch-size: must be at least 1, got -3"),
    (["demo", "--lr", "0"], "argument --lr: must be above 0, got 0"),
    (["demo", "--limit", "0"], "argument --limit: must be at least 1"),
    (["demo", "--model", "rnn"], "argument --model: invalid choice: 'rnn'"),
])
def test_command_line_mistakes_are_one_line_errors(argv, message, capsys):
    try:
        status = main(argv)
    except SystemExit as e:  # argparse's own errors
        status = e.code
    err = capsys.readouterr().err
    assert status == 2
    assert message in err
    assert "Traceback" not in err
    if argv[0] == "demo" and "check" not in message:
        assert "usage: retrograd demo" in err  # the sub-command's usage, not the top level


@pytest.mark.parametrize("make_bad", ["file", "missing_parent", "read_only"])
def test_bad_out_folder(tmp_path, make_bad, capsys):
    if make_bad == "file":
        out = tmp_path / "taken"
        out.write_text("x")
        want = "is a file, not a folder"
    elif make_bad == "missing_parent":
        blocker = tmp_path / "blocker"
        blocker.write_text("x")
        out = blocker / "sub"
        want = "cannot make the folder"
    else:
        if os.geteuid() == 0:
            pytest.skip("root can write to a read-only folder")
        out = tmp_path / "ro"
        out.mkdir()
        out.chmod(0o500)
        want = "cannot write to the folder"
    assert main(["demo", "--epochs", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("retrograd demo: error: argument --out: ") and want in err


def test_bad_out_folder_in_a_subprocess_has_no_traceback(tmp_path):
    (tmp_path / "taken").write_text("x")
    r = run_cli("demo", "--out", str(tmp_path / "taken" / "x"))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "argument --out" in r.stderr


def test_check_without_a_script_in_a_subprocess():
    r = run_cli("check")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "required: file, args" not in r.stderr and "no script given" in r.stderr


def test_piped_demo_output_has_no_carriage_returns(tmp_path):
    pytest.importorskip("tqdm")
    r = run_cli("demo", "--epochs", "2", "--limit", "64", "--model", "mlp", "--out",
                str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stdout + r.stderr
    assert "epoch 1/2: loss" in r.stdout and "epoch 2/2: loss" in r.stdout
    assert "an MLP (" in r.stdout


def test_demo_progress_bar_follows_the_terminal(tmp_path, monkeypatch, capsys):
    pytest.importorskip("tqdm")
    from retrograd._cli import demo as cli

    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    cli.demo(epochs=1, out=str(tmp_path), limit=64, model="mlp")
    out = capsys.readouterr().out
    assert "batch" in out and "\r" in out  # the bar redraws itself in place
    monkeypatch.setattr(cli, "_is_terminal", lambda stream: False)
    cli.demo(epochs=1, out=str(tmp_path), limit=64, model="mlp")
    assert "\r" not in capsys.readouterr().out


def test_graphviz_hint_asks_for_the_dot_program(monkeypatch):
    import shutil

    from retrograd.viz import graphviz_available

    monkeypatch.setattr(shutil, "which", lambda name: None)
    ok, why = graphviz_available()
    assert not ok
    assert "`dot` program" in why and "apt-get install graphviz" in why
    assert "pip install" not in why


def test_check_traceback_starts_in_the_script_without_wrapper_frames(tmp_path, capsys):
    from retrograd._cli.check import run_check

    script = tmp_path / "bad_linear.py"
    script.write_text("import torch\nimport torch.nn.functional as F\n"
                      "def step(x, w):\n    return F.linear(x, w)\n"
                      "step(torch.ones(2, 3), torch.ones(4, 5))\n")
    assert run_check(str(script)) == 1
    err = capsys.readouterr().err
    frames = [line.strip() for line in err.splitlines() if line.strip().startswith("File ")]
    assert frames[0].startswith(f'File "{script}", line 5, in <module>')
    assert frames[1].startswith(f'File "{script}", line 4, in step')
    assert "functional/__init__.py" in frames[2] and "in linear" in frames[2]
    assert len(frames) == 3  # no run_check, runpy or autocast_entry frames
    assert "mat1 and mat2 shapes cannot be multiplied" in err


def test_check_traceback_keeps_a_wrapper_frame_that_raised(monkeypatch):
    from retrograd._cli.check import format_user_traceback

    def autocast_entry():  # a wrapper that fails itself, not in what it wraps
        raise ValueError("in the wrapper")

    try:
        autocast_entry()
    except ValueError as e:
        text = format_user_traceback(e, __file__)
    assert "in autocast_entry" in text and "in the wrapper" in text


def test_check_syntax_error_shows_the_line_only(tmp_path, capsys):
    from retrograd._cli.check import run_check

    script = tmp_path / "syn.py"
    script.write_text("x = (\n")
    assert run_check(str(script)) == 1
    err = capsys.readouterr().err
    assert "runpy" not in err and "_cli/check.py" not in err
    assert f'File "{script}", line 1' in err and "SyntaxError" in err


def test_run_without_a_script_is_a_usage_error(capsys):
    assert main(["run", "--nproc", "2"]) == 2
    err = capsys.readouterr().err
    assert "no script given" in err and "Traceback" not in err
