"""The ``retrograd`` command: --version, help for every option, one-line errors (no
traceback) for mistakes in the command line, progress output fit for logs."""

import argparse
import os
import subprocess
import sys

import pytest

import retrograd
from retrograd.__main__ import build_parser, main


def run_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(retrograd.__file__)))
    return subprocess.run([sys.executable, "-m", "retrograd", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=env)


def test_version():
    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout.startswith(f"retrograd {retrograd.__version__} (NumPy ")


def test_every_option_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parsers = {"retrograd": parser, **sub.choices}
    for name, p in parsers.items():
        for action in p._actions:
            assert action.help, f"{name}: {action.option_strings or action.dest} has no help"
    assert {c.dest for c in sub._choices_actions} == {"demo", "tour", "check"}
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
    from retrograd import __main__ as cli

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
