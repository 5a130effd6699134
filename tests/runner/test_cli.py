import subprocess
import sys
import textwrap

import pytest

from driftcheck.runner.cli import UsageError, choose_drivers, main, parse_layers

from .helpers import REPO


@pytest.mark.parametrize("argv, words", [
    (["--layers", "1,x"], "comma-separated integers"),
    (["--layers", "1,1"], "repeats"),
    (["--layers", "9"], "out of range"),
    (["--timeout", "0"], "--timeout must be positive"),
    (["--passes", "0"], "--passes must be at least 1"),
    (["--python", "/nonexistent/python"], "not an executable file"),
])
def test_bad_input_is_one_line_and_exit_2(argv, words, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_unknown_option_and_driver_exit_2(tmp_path, capsys):
    assert main(["--driver", "magic", "--out", str(tmp_path)]) == 2
    assert main(["--frobnicate"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_python_without_vllm_is_a_tool_error(tmp_path):
    # the test interpreter has no vLLM: a real probe child runs and finds none
    proc = subprocess.run([sys.executable, "-m", "driftcheck.runner", "--python", sys.executable,
                           "--out", str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=120)
    if "no vLLM installed" not in proc.stderr:
        pytest.skip("the test interpreter has vLLM installed")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_parse_layers():
    assert parse_layers("1, 2,3", 4) == [1, 2, 3]
    with pytest.raises(UsageError):
        parse_layers("", 4)


def test_choose_drivers():
    new = {"vllm": "0.32.0", "has_extract_hidden_states": True}
    old = {"vllm": "0.16.0", "has_extract_hidden_states": False}
    assert choose_drivers("auto", new, None) == ["native"]
    assert choose_drivers("auto", old, "/c") == ["generator"]
    assert choose_drivers("auto", new, "/c") == ["generator", "native"]
    with pytest.raises(UsageError, match="no extract_hidden_states"):
        choose_drivers("native", old, "/c")
    with pytest.raises(UsageError, match="--client"):
        choose_drivers("generator", new, None)
    with pytest.raises(UsageError, match="nothing to drive"):
        choose_drivers("auto", old, None)


def test_runner_package_imports_nothing_heavy():
    code = textwrap.dedent("""
        import sys
        import driftcheck.runner, driftcheck.runner.cli
        heavy = [m for m in ("vllm", "torch", "transformers", "tokenizers", "numpy") if m in sys.modules]
        print(",".join(heavy))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == ""
