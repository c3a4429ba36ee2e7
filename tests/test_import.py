"""``import inferqa_utils`` is fast and imports no heavy library."""

import json
import subprocess
import sys

HEAVY = ["torch", "pyserini", "llama_cpp", "papermill", "sentence_transformers", "transformers", "faiss",
         "pandas", "matplotlib"]


def test_import_is_fast_and_lazy():
    code = (
        "import time, sys, json; t=time.perf_counter(); import inferqa_utils; "
        "from inferqa_utils import PATHS, load_source, Dataset; "
        "print(json.dumps({'t': time.perf_counter()-t, 'mods': sorted(sys.modules)}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    info = json.loads(out.stdout)
    assert info["t"] < 1.0, f"import took {info['t']:.2f} s"
    loaded = [m for m in HEAVY if m in info["mods"]]
    assert not loaded, f"heavy modules imported eagerly: {loaded}"
