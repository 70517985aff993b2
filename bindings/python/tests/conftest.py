# The suite imports the module as the users of MLX do: `import braid.core as mx`.
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_build = os.environ.get("BRAID_PYTHON_DIR")
if _build and _build not in sys.path:
    sys.path.insert(0, _build)

import pytest  # noqa: E402


@pytest.fixture
def on_cpu():
    """The CPU as default device for one test, also where the suite runs with the GPU as default
    (BRAID_DEVICE=gpu): for tests of host memory (views sharing it, DLPack in place) and of the
    CPU's compile fusion."""
    import braid.core as mx

    saved = mx.default_device()
    mx.set_default_device(mx.cpu)
    try:
        yield
    finally:
        mx.set_default_device(saved)
