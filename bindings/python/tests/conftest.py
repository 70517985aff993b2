# The suite imports the module as the users of MLX do: `import braid.core as mx`.
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_build = os.environ.get("BRAID_PYTHON_DIR")
if _build and _build not in sys.path:
    sys.path.insert(0, _build)
