"""The IR: one opcode enum and one node type (``ops.py``), built from the checked AST (``lower.py``)."""
from .ops import BASE_OPS, Node, Op

__all__ = ["BASE_OPS", "Node", "Op"]
