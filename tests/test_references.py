"""The repository stands alone: no file points outside it or at a document it does not contain.

Every file git tracks, outside tests/ and .ci/, is scanned for
  - absolute paths of a machine (``/work/...``, ``/home/...``, ``~/project``, ``C:\\...``,
    ``file:///...``); well-known system locations (``/usr/``, ``/etc/``, ``/tmp``, ``/dev/``,
    ``~/.config/`` ...) are allowed: a Debian install path or Snakemake's profile folder is
    something a user has too;
  - relative paths that climb out of the repository (``../shared/...``) or to nothing;
  - ``*.md`` documents and Markdown link targets that do not exist (``contracts.md``,
    ``docs/x.md``); ``report.md`` is the pipeline's output, not a document of the repository;
  - the word SPEC: the specification this project was built from is not part of it; the
    method is described in docs/method.md.
tests/ and .ci/ may name such paths (they probe development data through env vars).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXCLUDED_DIRS = ("tests/", ".ci/")

# System locations every user has; naming them is not naming the developer's machine.
ALLOWED_ABSOLUTE = ("/usr/", "/etc/", "/tmp", "/var/tmp", "/dev/", "/proc/", "/sys/", "/bin/",
                    "/sbin/", "/lib/", "/lib64/",
                    "/path/to/")  # the usual placeholder in a usage line
ALLOWED_HOME = ("~/.config/", "~/.cache/", "~/.local/")
# Documents the pipeline writes (results_dir/report.md), not documents of the repository.
GENERATED_DOCUMENTS = {"report.md"}

# An absolute path: starts at a boundary (not inside a word, URL, template or HTML tag) and has at
# least two components, e.g. /work/contracts.md; JSON pointers (#/properties/x) are left alone.
ABSOLUTE = re.compile(r"(?<![\w.:/~$\-\]\)}>#<*\\@])((?:/[\w.+-]+){2,}/?)")
HOME = re.compile(r"(?<![\w.:/$\-])(~/[\w.+-]+(?:/[\w.+-]*)*)")
WINDOWS = re.compile(r"(?<![\w\\])([A-Z]:\\(?:[\w .-]+\\)+[\w .-]*)")
FILE_URL = re.compile(r"(file://\S*)")
PARENT = re.compile(r"(?<![\w.])((?:\.\./)+[\w.+\-/]*)")
MARKDOWN_DOC = re.compile(r"(?<![\w/.:\-{<*])((?:\.{1,2}/)*[\w.\-/]*[\w\-]\.md)\b(?![\w/])")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
SPEC = re.compile(r"\bSPEC\b")


def repository_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return sorted(f for f in set(out) if f and not f.startswith(EXCLUDED_DIRS) and (ROOT / f).is_file())


def _exists_in_repo(target: str, base: Path) -> bool:
    """``target`` names an existing path inside the repository, read from ``base`` or the root."""
    for start in (base, ROOT):
        p = (start / target).resolve()
        if (p == ROOT or ROOT in p.parents) and p.exists():
            return True
    return False


def _templated(s: str) -> bool:
    return any(c in s for c in "{}<>*$%")


def find_problems(rel: str, text: str) -> list[str]:
    """'line: what' for every outside reference in ``text`` (the file ``rel`` of the repository)."""
    base = (ROOT / rel).parent
    gitignore = Path(rel).name == ".gitignore"
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        found = []
        if not gitignore:  # a leading / in .gitignore anchors a pattern at the repository root
            found += [f"absolute path {m}" for m in ABSOLUTE.findall(line)
                      if not m.startswith(ALLOWED_ABSOLUTE)]
        found += [f"path in a home folder {m}" for m in HOME.findall(line)
                  if not (m + "/").startswith(ALLOWED_HOME)]
        found += [f"Windows path {m}" for m in WINDOWS.findall(line)]
        found += [f"file URL {m}" for m in FILE_URL.findall(line)]
        found += [f"path outside the repository or to nothing {m}" for m in PARENT.findall(line)
                  if not _templated(m) and not _exists_in_repo(m.rstrip("/.") or ".", base)]
        for m in MARKDOWN_DOC.findall(line):
            target = m.lstrip("/") if gitignore else m
            if Path(m).name in GENERATED_DOCUMENTS or _templated(m) or _exists_in_repo(target, base):
                continue
            found.append(f"document not in the repository {m}")
        for m in MARKDOWN_LINK.findall(line):
            target = m.split("#", 1)[0]
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target) or _templated(target):
                continue  # anchors, URLs (https:, mailto:) and templates
            if not _exists_in_repo(target, base):
                found.append(f"link target not in the repository {m}")
        found += ["names SPEC (this project's method document is docs/method.md)"
                  for _ in SPEC.findall(line)]
        problems += [f"{n}: {what}: {line.strip()[:160]}" for what in dict.fromkeys(found)]
    return problems


def test_no_reference_outside_the_repository():
    offending = []
    for rel in repository_files():
        try:
            text = (ROOT / rel).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
        offending += [f"{rel}:{p}" for p in find_problems(rel, text)]
    for line in offending:
        print(line)
    assert not offending, f"{len(offending)} reference(s) outside the repository:\n" + "\n".join(offending)


# ---- citations of sections: "docs/method.md section 7", README "Partial reruns" ----------------

METHOD_CITATION = re.compile(r"method\.md,?\s+sections?\s+(\d+(?:\.\d+)?)(?:\s*(?:-|and|,)\s*(\d+(?:\.\d+)?))?")
README_CITATION = re.compile(r"\bREADME(?:\.md)?,?\s*\(?\"([^\"]+)\"")


def _headings(path: Path, level: str) -> list[str]:
    return [line[len(level) + 1:].strip() for line in path.read_text().splitlines()
            if line.startswith(level + " ")]


def find_bad_citations(text: str) -> list[str]:
    """Section numbers of docs/method.md and README section titles that do not exist."""
    method = ROOT / "docs" / "method.md"
    numbers = {h.split()[0] for lvl in ("##", "###") for h in _headings(method, lvl)} if method.exists() else set()
    readme_titles = _headings(ROOT / "README.md", "##")
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in METHOD_CITATION.finditer(line):
            bad += [f"{n}: docs/method.md has no section {s}" for s in m.groups() if s and s not in numbers]
        for title in README_CITATION.findall(line):
            if not any(h.startswith(title) for h in readme_titles):
                bad.append(f'{n}: README has no section "{title}"')
    return bad


def test_cited_sections_exist():
    offending = []
    for rel in repository_files():
        try:
            text = (ROOT / rel).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offending += [f"{rel}:{p}" for p in find_bad_citations(text)]
    for line in offending:
        print(line)
    assert not offending, "\n".join(offending)


def test_citation_checker_fires():
    assert find_bad_citations('see docs/method.md section 42 and README "No such section"') == [
        "1: docs/method.md has no section 42", '1: README has no section "No such section"']
    assert not find_bad_citations('docs/method.md sections 6-8, section 1.2; README.md ("Config reference")')


# ---- the scanner itself: each rule fires, and the allowed forms pass -----------------------------

@pytest.mark.parametrize("line", [
    "Inputs follow /work/contracts.md:",
    "data under /home/alice/autonorm/data",
    'RAW = "/scratch/u/raw"',
    "see ~/autonorm/notes",
    r"C:\Users\alice\data",
    "index file:///opt/pypi/simple",
    "# Keys marked (ours) ... (see ../shared/SPEC.md).",
    "Subcommands (see contracts.md):",
    "the layout is in docs/nosuch.md",
    "read [the format](docs/missing.md#runs)",
    "mechanism checks of SPEC section 6",
])
def test_scanner_flags(line):
    assert find_problems("config.yaml", line), line


@pytest.mark.parametrize("line", [
    "apt installs it under /usr/share/datasets/fashion-mnist",
    "Snakemake looks in ~/.config/snakemake/slurm or /etc/xdg/snakemake/slurm",
    "scratch space in /tmp/autonorm and $TMPDIR/x and /dev/null",
    "https://download.pytorch.org/whl/cpu and https://github.com/x/y/blob/main/README.md",
    "cite docs/method.md section 7; see README.md and benchmarks/README.md",
    "[benchmarks](benchmarks/README.md) and [the top](#quick-start)",
    "ends in results/smoke/report.md and {REPORT_DIR}/report.md",
    '"$ref": "#/properties/autonorm"',
    "return f\"{R}/eval/{d}/seed{s}.json\" and </td></tr> and and/or, w/o, 1/2",
    "a DatasetSpec; find_spec(name)",
    "autonorm-data download --from /path/to/mirror",
    r'TS = re.compile(r"^\[(\w{3} \d\d:\d\d:\d\d \d{4})\]$")',
])
def test_scanner_allows(line):
    assert not find_problems("config.yaml", line), find_problems("config.yaml", line)


def test_scanner_resolves_relative_paths_from_the_file():
    # conda env paths in rule files are relative to the rule file
    assert not find_problems("workflow/rules/train.smk", 'conda: "../../envs/train.yaml"')
    assert find_problems("workflow/rules/train.smk", 'conda: "../../envs/nosuch.yaml"')
    assert find_problems("README.md", "see ../shared/data")
    # .gitignore: a leading / anchors at the repository root
    assert not find_problems(".gitignore", "!/results/README.md")


# ---- docs/method.md: the sections others cite, and the numbers it states ------------------------

METHOD_SECTIONS = ["1 Method", "2 Baselines", "3 Backbones", "4 Datasets", "5 Metrics and statistics",
                   "6 The paper's numbers", "7 Ablations", "8 Numbers not to take at face value",
                   "9 Our choices", "10 The paper-depth study (`workflow/presets/depth.yaml`)",
                   "11 How a claim is judged", "12 A run's identity"]


def test_method_document_sections_are_stable():
    """Code, config and report cite these numbers: renumbering must be a deliberate change."""
    assert _headings(ROOT / "docs" / "method.md", "##") == METHOD_SECTIONS


def _stated(number: str) -> int:
    return int(number.replace(",", ""))


def test_method_document_overhead_numbers_are_the_codes():
    """Section 8.1 states parameter counts of ViT-Lite 8x128 on MNIST (patch 7) under both selector
    placements and the paper's FLOPs columns: they must be what the code builds and what
    report/paper.py holds, so the doc cannot drift from the model."""
    torch = pytest.importorskip("torch")
    from autonorm.layers.norms import NormSelector
    from autonorm.models import build_model
    from autonorm.report.paper import PAPER_FLOPS
    from autonorm.run.cost import count_params

    text = (ROOT / "docs" / "method.md").read_text()
    sec = text[text.index("### 8.1"):text.index("### 8.2")]
    stated = {_stated(m) for m in re.findall(r"\b\d{1,3}(?:,\d{3})+\b", sec)}
    selector = sum(p.numel() for p in NormSelector(128).parameters())
    meta = {"name": "m", "task": "image_classification", "num_classes": 10,
            "image": {"channels": 1, "height": 28, "width": 28, "mean": [0.1], "std": [0.3]}}
    model = {"dim": 128, "depth": 8, "heads": 4, "mlp_ratio": 2.0, "patch_size": 7}
    torch.manual_seed(0)
    p_ln = count_params(build_model(meta, "frozen_ln", model, {}))
    counts = {pl: count_params(build_model(meta, "autonorm_s", model, {"placement": pl}))
              for pl in ("per_sublayer", "per_block")}
    assert selector == 8386 and {8386, 16 * selector, 8 * selector, p_ln} <= stated
    for pl, p in counts.items():
        assert f"+{100 * (p - p_ln) / p_ln:.1f}%" in sec, pl
    assert {n for pair in PAPER_FLOPS.values() for n in pair} <= stated


def test_config_reference_names_every_config_key():
    """README's "Config reference" names every key the schema accepts (top level, autonorm,
    runtime, evaluation, norm options, and the model / train / data blocks), so a new option
    cannot land undocumented."""
    yaml = pytest.importorskip("yaml")
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    props, defs = schema["properties"], schema.get("$defs", {})
    keys = set(props)
    for block in ("autonorm", "runtime", "evaluation", "norm_options", "ablations"):
        keys |= set(props.get(block, {}).get("properties", {}))
    for block in ("model", "train", "data"):
        keys |= set(defs.get(block, {}).get("properties", {}))
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Config reference"):]
    section = section[:section.index("\n## ", 1)]
    quoted = " ".join(re.findall(r"`([^`]+)`", section))
    missing = sorted(k for k in keys if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", quoted))
    assert not missing, f'README "Config reference" does not name: {missing}'
