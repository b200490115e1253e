"""The mailbox's slots and operations (mailbox.py's protocol), apart from its Numba code: the
GPU tier's rank kernels (targets/cuda/ranks.py) #define the same numbers, and importing them
loads neither Numba nor MPI."""

# int64 slots: the request number the kernel posts, the one the host answered, the operation,
# the value and the Ctrl-C flags sent and answered, a broadcast's root, the payload's words,
# the host's stop word, the requests served, the server's 'serving' word; the payload's words
# from M_PAYLOAD on
M_REQ, M_DONE, M_OP, M_VALUE, M_FLAGS, M_ROOT, M_COUNT, M_STOP, M_SERVED, M_READY = range(10)
M_PAYLOAD = 16
# operations: reductions of M_VALUE over the ranks (OP_OR: bitwise), a broadcast, an all-gather
OP_SUM, OP_MIN, OP_MAX, OP_BCAST, OP_GATHER, OP_OR = 1, 2, 3, 4, 5, 6
