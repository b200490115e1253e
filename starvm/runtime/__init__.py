"""Runtime: values, the counted base operations, Python code generation and the Machine."""
