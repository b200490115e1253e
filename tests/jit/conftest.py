"""The compiled tier's tests keep compiled code in one temporary cache per test session."""
import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def jit_cache(tmp_path_factory):
    old = os.environ.get("STARVM_JIT_CACHE")
    path = tmp_path_factory.mktemp("jit-cache")
    os.environ["STARVM_JIT_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("STARVM_JIT_CACHE", None)
    else:
        os.environ["STARVM_JIT_CACHE"] = old
