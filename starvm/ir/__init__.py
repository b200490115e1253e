"""The IR: the checked AST lowered to a tree of ``Node``s, which every target renders.

``ops.py`` owns the vocabulary: the opcode enum ``Op`` (the base operations ``BASE_OPS`` are
the machine's counted steps), ``GroupOp`` (the named op sets every consumer imports),
``STEP_INDEX`` (a step kind's place in every counter array), ``OP_TITLES`` and the ``Node``
type; ``lower.py`` builds the tree from the checked AST; ``walk.py`` walks it (the nodes
under a node, a body's callees and globals, what a call may write) for every renderer and tier;
``main_parts.py`` cuts a main block into the runs of statements between graph input, which
the GPU tier runs as kernels.
"""
from .ops import BASE_OPS, Node, Op

__all__ = ["BASE_OPS", "Node", "Op"]
