"""The package as pip builds it (the in-tree backend, _build/backend.py)
and the benchmark script, run once on the fixture tree."""

import os
import re
import subprocess
import sys
import tempfile
import unittest
import zipfile

import indexd

from . import support

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def setUpModule():
    support.setup()


def tearDownModule():
    support.finish()


def backend():
    sys.path.insert(0, os.path.join(TOP, "_build"))
    try:
        import backend as b
    finally:
        sys.path.pop(0)
    return b


class TestPackage(unittest.TestCase):
    def test_version(self):
        with open(os.path.join(TOP, "pyproject.toml")) as f:
            m = re.search(r'^version = "(.*)"$', f.read(), re.M)
        self.assertEqual(indexd.__version__, m.group(1))

    def test_wheel(self):
        with tempfile.TemporaryDirectory() as d:
            name = backend().build_wheel(d)
            self.assertEqual(name, "indexd-%s-py3-none-any.whl" % indexd.__version__)
            with zipfile.ZipFile(os.path.join(d, name)) as z:
                names = set(z.namelist())
                record = z.read("indexd-%s.dist-info/RECORD" % indexd.__version__).decode()
                meta = z.read("indexd-%s.dist-info/METADATA" % indexd.__version__).decode()
        for f in ("indexd/__init__.py", "indexd/client.py", "indexd/tools.py", "indexd/tools.json", "indexd/py.typed"):
            self.assertIn(f, names)
        self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
        self.assertEqual(len(record.strip().split("\n")), len(names))
        self.assertIn("Name: indexd\n", meta)
        self.assertIn("Requires-Python: >=3.9\n", meta)


class TestBench(support.DaemonTestCase):
    def test_bench_runs(self):
        p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "grep_roundtrip.py"), "--root", self.root, "--pattern", "alpha", "--rounds", "1",
                            "--socket", support.socket_path()], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("matches: client 2, indexctl 2, rg 2\n", p.stdout)
        self.assertNotIn("differ", p.stdout)


if __name__ == "__main__":
    unittest.main()
