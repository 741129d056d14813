"""`extensions = ["agentskit_web.sphinx"]`: the Sphinx extension's public name.

The code lives in `integrations/sphinx_ext.py` beside the MkDocs plugin; this
module only gives Sphinx the short, documented name.
"""

from .integrations.sphinx_ext import setup

__all__ = ["setup"]
