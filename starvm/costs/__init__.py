"""Estimated time and energy of a Star run on published models of associative and
processing-in-memory hardware (docs/costs.md).

    from starvm.costs import model_names, load_model
    report = machine.cost("pimeval-bitsimd-v,gsi-gemini")   # after machine.run(...)
    report["gsi-gemini"].seconds

The models are data (starvm/costs/models/*.toml), each number with its source; the
estimate reads only the step counters, so it is the same on every backend and tier.
``model.py`` reads and checks a model, ``operands.py`` tells from the IR which operations act
on slices and which on words, ``evaluate.py`` prices a run's steps on a model, ``run.py``
does it for a machine's run (whole and per routine), ``report.py`` writes the text.
``validation/`` holds the Star programs that set each model beside a published figure. What
runs machines or draws lives above the machine, in ui/: ``cost_cli.py`` (`star run --cost`,
`star cost`), ``cost_plot.py`` (the pictures), ``cost_validation.py`` (`star cost --validate`);
so costs/ imports neither the machine nor ui/ (the machine imports it for ``Machine.cost``).
"""
from .evaluate import Estimate, Geometry, estimate
from .model import Model, ModelError, load_file, load_model, model_names
from .run import CostReport, as_models, geometry_of, machine_cost

__all__ = ["CostReport", "Estimate", "Geometry", "Model", "ModelError", "as_models", "estimate",
           "geometry_of", "load_file", "load_model", "machine_cost", "model_names"]
