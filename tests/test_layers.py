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


def test_the_config_layer_has_no_import_loop():
    run_config = imported_modules(PKG / "run_config.py")
    variants = imported_modules(PKG / "variants.py")
    assert not {"autonorm.config", "autonorm.variants"} & run_config, run_config
    assert "autonorm.config" not in variants, variants


def test_the_facts_layer_imports_no_later_layer():
    facts = [PKG / "methods.py", PKG / "output_names.py", PKG / "data" / "registry.py", PKG / "data" / "source.py"]
    later = ("autonorm.config", "autonorm.run_config", "autonorm.variants", "autonorm.norms", "autonorm.models",
             "autonorm.train", "autonorm.analysis", "autonorm.report", "autonorm.figures")
    for f in facts:
        bad = {m for m in imported_modules(f) if m.startswith(later)}
        assert not bad, (f.name, bad)


def test_the_import_reader_sees_imports_inside_functions(tmp_path, monkeypatch):
    """The reader itself: a lazy import inside a function counts (it would hide a loop)."""
    pkg = tmp_path / "autonorm"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f():\n    from .config import x\n    from . import kernels\n")
    monkeypatch.setattr(__import__(__name__), "PKG", pkg)
    found = imported_modules(pkg / "a.py")
    assert {"autonorm.config", "autonorm.kernels"} <= found
