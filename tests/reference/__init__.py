"""Reference model and random-program generator for differential testing (tests only)."""
