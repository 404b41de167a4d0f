"""The module layers of docs/develop.md hold: a module imports only from the layers before it.

Why: an import loop (config and variants used to import each other, inside functions to dodge
the cycle) makes every change to one of them a change to both; the facts layer importing torch
would make building the DAG slow. The check reads the import statements, so it also sees the
imports placed inside functions.
"""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "autonorm"


def imported_modules(path: Path) -> set[str]:
    """Every autonorm module a file imports (absolute names), wherever the import stands."""
    here = "autonorm." + ".".join(path.relative_to(PKG).with_suffix("").parts)
    package = here.rsplit(".", 1)[0] if path.name != "__init__.py" else here
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if mod.startswith("autonorm"):
                out.add(mod)
                out.update(f"{mod}.{a.name}" for a in node.names)  # "from . import kernels"
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("autonorm"))
    return out


# The folders of src/autonorm from the bottom up (docs/develop.md "The modules, by layer"): the
# facts and helpers at the top level, the data (its registry is a fact the config checks read),
# the config, the layers, the models, one run, the analysis of many runs, the report, and what
# only the Snakefile uses (its checks, its console, autonorm-install-profile).
LAYERS = ["base", "data", "config", "layers", "models", "run", "analysis", "report", "workflow_support"]
BASE = {"io_utils", "provenance", "metrics", "methods", "output_names", "fingerprint"}
# cli.guarded wraps every entry point's main (it names each layer's errors): it sits above every layer.
ENTRY_POINTS = {"cli", "__init__"}


def layer_of(module: str) -> str | None:
    first = module.split(".")[1] if "." in module else "__init__"
    if first in ENTRY_POINTS:
        return None
    return "base" if first in BASE else first


def test_every_module_sits_in_a_known_layer():
    for path in PKG.rglob("*.py"):
        module = "autonorm." + ".".join(path.relative_to(PKG).with_suffix("").parts)
        layer = layer_of(module)
        assert layer is None or layer in LAYERS, (module, layer)


def test_each_folder_imports_only_from_the_layers_below_it():
    upward = []
    for path in sorted(PKG.rglob("*.py")):
        module = "autonorm." + ".".join(path.relative_to(PKG).with_suffix("").parts)
        mine = layer_of(module)
        if mine is None:
            continue
        for target in imported_modules(path):
            theirs = layer_of(target)
            if target.startswith("autonorm.cli") or theirs is None:
                continue  # the entry-point wrapper (see ENTRY_POINTS)
            if LAYERS.index(theirs) > LAYERS.index(mine):
                upward.append(f"{module} ({mine}) imports {target} ({theirs})")
    assert not upward, "\n".join(upward)


def test_the_config_layer_has_no_import_loop():
    run_config = imported_modules(PKG / "config" / "run_config.py")
    variants = imported_modules(PKG / "config" / "variants.py")
    assert not {"autonorm.config.workflow", "autonorm.config.variants"} & run_config, run_config
    assert "autonorm.config.workflow" not in variants, variants


def test_the_facts_import_no_later_layer():
    facts = [PKG / "methods.py", PKG / "output_names.py", PKG / "data" / "registry.py", PKG / "data" / "source.py"]
    later = ("autonorm.config", "autonorm.layers", "autonorm.models", "autonorm.run", "autonorm.analysis",
             "autonorm.report")
    for f in facts:
        bad = {m for m in imported_modules(f) if m.startswith(later)}
        assert not bad, (f.name, bad)


def test_a_layer_violation_is_seen(tmp_path, monkeypatch):
    """The check itself: a model importing the training code is reported."""
    pkg = tmp_path / "autonorm"
    (pkg / "models").mkdir(parents=True)
    (pkg / "models" / "vit.py").write_text("def f():\n    from ..run.train import main\n")
    monkeypatch.setattr(__import__(__name__), "PKG", pkg)
    try:
        test_each_folder_imports_only_from_the_layers_below_it()
    except AssertionError as e:
        assert "autonorm.models.vit (models) imports autonorm.run.train (run)" in str(e)
    else:
        raise AssertionError("an upward import went unseen")


def test_the_import_reader_sees_imports_inside_functions(tmp_path, monkeypatch):
    """The reader itself: a lazy import inside a function counts (it would hide a loop)."""
    pkg = tmp_path / "autonorm"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f():\n    from .config.workflow import x\n    from .layers import kernels\n")
    monkeypatch.setattr(__import__(__name__), "PKG", pkg)
    found = imported_modules(pkg / "a.py")
    assert {"autonorm.config.workflow", "autonorm.layers.kernels"} <= found


def test_cli_wrapper_imports_nothing_from_the_run_layer_or_above():
    """cli.guarded names every layer's errors; they live in the layers below one run (io_utils,
    data.errors, config.run_config), so the wrapper every entry point calls imports no stage."""
    above = [m for m in imported_modules(PKG / "cli.py")
             if layer_of(m) in ("run", "analysis", "report")]
    assert not above, above
