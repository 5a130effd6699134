"""client_model/script_paths: the client folders a file puts on sys.path when it runs (DC007 reads a worker
extension module there, 12b)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from driftcheck.client_model.script_paths import script_folders


def _folders(code: str, rel: str = "tools/dft/run.py") -> list[str]:
    return script_folders(ast.parse(textwrap.dedent(code)), rel)


@pytest.mark.parametrize("code, want", [
    ('if __name__ == "__main__":\n    main()\n', ["tools/dft"]),
    ("import os, sys\nHERE = os.path.dirname(os.path.abspath(__file__)); sys.path.insert(0, HERE)\n", ["tools/dft"]),
    ("import os, sys\nsys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))\n", ["tools"]),
    ("import sys\nfrom pathlib import Path\nsys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))\n",
     [""]),
    ("import sys\nfrom pathlib import Path\nROOT = Path(__file__).parent\nsys.path.append(str(ROOT))\n", ["tools/dft"]),
    # inserted before the script's own folder, appended after it
    ('import os, sys\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n'
     'if __name__ == "__main__":\n    pass\n', ["tools", "tools/dft"]),
    ('import os, sys\nsys.path.append(os.path.dirname(os.path.dirname(__file__)))\n'
     'if __name__ == "__main__":\n    pass\n', ["tools/dft", "tools"]),
])
def test_the_forms_read(code, want):
    assert _folders(code) == want


@pytest.mark.parametrize("code", [
    "import sys\nsys.path.insert(0, '/opt/vllm')\n",  # not built from __file__: path_inserts.py's business
    "import os, sys\nsys.path.insert(0, os.getcwd())\n",
    "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))\n",  # a join: not read
    "import sys\nfrom pathlib import Path\nsys.path.insert(0, str(Path(__file__).parents[5]))\n",
    "import os, sys\nsys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))\n",
    "def f():\n    if __name__ == '__main__':\n        pass\n",  # not at top level
    "x = 1\n",
])
def test_nothing_else(code):
    assert _folders(code) == []


def test_a_root_script():
    assert script_folders(ast.parse('if __name__ == "__main__":\n    pass\n'), "run.py") == [""]
