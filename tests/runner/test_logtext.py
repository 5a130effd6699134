from driftcheck.runner.attempts import root_cause
from driftcheck.runner.logtext import frames, tracebacks

LOG = """\
(EngineCore pid=10) INFO 11-29 13:36:20 [core.py:402] init engine took 1.17 s
(Worker pid=11) ERROR 11-29 13:36:29 [multiproc_executor.py:1063] Traceback (most recent call last):
(Worker pid=11) ERROR 11-29 13:36:29 [multiproc_executor.py:1063]   File "/x/connector.py", line 402, in _submit_async_write
(Worker pid=11) ERROR 11-29 13:36:29 [multiproc_executor.py:1063]     pinned_hs = torch.empty_like(
(Worker pid=11) ERROR 11-29 13:36:29 [multiproc_executor.py:1063] RuntimeError: pin_memory=True requires a CUDA or other accelerator backend
(EngineCore pid=10) ERROR 11-29 13:36:29 [core.py:1512] Traceback (most recent call last):
(EngineCore pid=10) ERROR 11-29 13:36:29 [core.py:1512]   File "/x/multiproc_executor.py", line 444, in get_response
(EngineCore pid=10) ERROR 11-29 13:36:29 [core.py:1512]     raise RuntimeError(
(EngineCore pid=10) ERROR 11-29 13:36:29 [core.py:1512] RuntimeError: Worker failed with error 'pin_memory', please check the stack trace above for the root cause
"""


def test_tracebacks_are_unprefixed_and_attributed():
    blocks = tracebacks(LOG)
    assert len(blocks) == 2
    assert blocks[0].startswith("[Worker pid=11]\nTraceback (most recent call last):\n  File \"/x/connector.py\", line 402")
    assert blocks[0].endswith("RuntimeError: pin_memory=True requires a CUDA or other accelerator backend")
    assert root_cause(blocks) == "RuntimeError: pin_memory=True requires a CUDA or other accelerator backend"


def test_plain_python_traceback():
    text = "noise\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    f()\nKeyError: 'x'\nafter\n"
    assert tracebacks(text) == ["Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    f()\nKeyError: 'x'"]


def test_frames_of_a_logged_block():
    block = tracebacks(LOG)[0]
    assert frames(block) == [{"file": "/x/connector.py", "line": 402, "function": "_submit_async_write",
                              "code": "pinned_hs = torch.empty_like("}]
