"""Package discovery (the metadata is in pyproject.toml).

Every package under driftcheck/ is found by setuptools; probes/ and fixes/ live at the top of the
repository (one rule = one module, easy to find) but are installed as driftcheck.probes and
driftcheck.fixes, with their subpackages, so that nothing named "probes" or "fixes" lands in the
top-level namespace of site-packages. tests/gate/test_wheel_contents.py checks the built wheel.
"""

from setuptools import find_packages, setup

MAPPED = {"driftcheck.probes": "probes", "driftcheck.fixes": "fixes"}

packages = find_packages(include=["driftcheck", "driftcheck.*"])
for name, folder in MAPPED.items():
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=dict(MAPPED))
