"""The project's import graph: every top-level module imports in a fresh interpreter, the graph has
no circles, dependencies point down (the engine imports no cube module, no script and not ``Cli``),
and ``Cli`` loads no model (nor torch).

The graph is read from the source: every import statement of a top-level ``.py`` file, those inside
functions too, so that a circle hidden by an import inside a function still shows."""

import ast
import subprocess
import sys

import pytest

from conftest import REPO as ROOT

#: The layers' packages (engine, the games, the runs, the GUI); the scripts and the design card's files are
#: the root's modules.
PACKAGES = ("engine", "cube", "go", "run", "gui")
MODULES = sorted(
    [p.stem for p in ROOT.glob("*.py")]
    + [f"{pkg}.{p.stem}" for pkg in PACKAGES for p in (ROOT / pkg).glob("*.py") if p.stem != "__init__"]
)
ENGINE = (
    "MCTS_Core", "engine.Gumbel_MCTS", "engine.Gumbel_Self_Play", "engine.Search_Tree", "Self_Play", "engine.Games",
    "Train_Network",
)  # fmt: skip
CUBE = ("Rubik2x2Env", "cube.Rubik3x3Env", "cube.Cube_Model")
CLI = "run.Cli"


def _tree(module: str) -> ast.Module:
    return ast.parse((ROOT / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8"))


def _imported(node: ast.AST) -> set[str]:
    """The modules an import statement may load, dotted (``from cube import Puzzles``: ``cube`` and
    ``cube.Puzzles``); empty for any other node or a relative import."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return set()


def import_graph() -> dict[str, set[str]]:
    """``{module: the project modules it imports anywhere in its file}``."""
    graph = {}
    for module in MODULES:
        names = set().union(*map(_imported, ast.walk(_tree(module))))
        graph[module] = (names & set(MODULES)) - {module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module: each one a circle of imports."""
    reach = {m: set() for m in graph}
    for start in graph:  # depth-first from every module: ~30 modules, no need for Tarjan
        todo = list(graph[start])
        while todo:
            m = todo.pop()
            if m not in reach[start]:
                reach[start].add(m)
                todo.extend(graph[m])
    comps = {frozenset(m for m in graph if m == start or (m in reach[start] and start in reach[m])) for start in graph}
    return sorted(sorted(c) for c in comps if len(c) > 1)


def scripts() -> set[str]:
    """Modules run as programs (an ``if __name__ == "__main__"`` block)."""
    return {m for m in MODULES if '__name__ == "__main__"' in (ROOT / f"{m.replace('.', '/')}.py").read_text("utf-8")}


def test_circles_finds_a_circle_and_only_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.slow
def test_the_import_graph_has_no_circles():
    assert circles(import_graph()) == []


@pytest.mark.slow
@pytest.mark.parametrize("module", ENGINE)
def test_the_engine_imports_no_cube_module_no_script_and_not_cli(module):
    """The search modules are held to more (no ``Puzzles`` either) in test_game_engine; the registry
    ``Games`` and ``Train_Network`` read the puzzles through ``Puzzles``."""
    assert module in MODULES
    assert not import_graph()[module] & (set(CUBE) | scripts() | {CLI})


#: What each package may import besides itself (the design card's files at the root are open to all).
LAYERS_BELOW = {
    "engine": set(),
    "run": {"engine"},  # the run loop and its files, the command line, the recipes
    "cube": {"engine", "run"},
    "go": {"engine", "run"},
    "gui": {"engine", "run", "cube", "go"},
}
#: The exceptions, each with its reason: Workers runs both games' self-play in other processes, so it sits
#: above them although it lives with the runs; Optimal_Solver is a script and the 2x2's exact distance
#: table that the cube's modules read.
ABOVE_ITS_PACKAGE = {"run.Workers": {"cube", "go"}}
LIBRARY_SCRIPTS = {"Optimal_Solver"}


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_only_its_layer_and_those_below(package):
    """The layers from the bottom: the engine (with the design card's engine files at the root), the runs'
    machinery, the games (cube, go), the GUI; no package imports a script (but the exceptions above)."""
    graph = import_graph()
    for module in (m for m in MODULES if m.startswith(package + ".")):
        allowed = LAYERS_BELOW[package] | {package} | ABOVE_ITS_PACKAGE.get(module, set())
        up = {m for m in graph[module] if "." in m and m.split(".")[0] not in allowed}
        assert not up, f"{module} imports {sorted(up)}"
        assert not graph[module] & (scripts() - LIBRARY_SCRIPTS), module


#: The design card's files at the root, each in its layer (README, "Layout"): the search, self-play, action and
#: loss files are the engine's; the metrics and charts write through the runs' safe writes; the card's
#: network (with its cubie-pair input) and the 2x2 env are the cube's.
ROOT_LAYERS = {
    "MCTS_Core": "engine", "Self_Play": "engine", "Action_MCTS": "engine", "Train_Network": "engine",
    "Plot_Scatter": "run", "Policy_Value_Net": "cube", "Rubik2x2Env": "cube",
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(ROOT_LAYERS))
def test_the_design_cards_files_import_only_their_layer_and_those_below(module):
    layer = ROOT_LAYERS[module]
    allowed = LAYERS_BELOW[layer] | {layer}
    imported = import_graph()[module]
    assert not {m for m in imported if m.split(".")[0] in PACKAGES and m.split(".")[0] not in allowed}, module
    assert not imported & scripts(), module


@pytest.mark.parametrize("module", ENGINE)
def test_the_engine_imports_at_the_top_of_its_files(module):
    tree = _tree(module)
    inner = [n.lineno for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f) if _imported(n)]
    assert inner == []


def _fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_every_module_imports_in_a_fresh_interpreter():
    code = f"import importlib\nfor m in {MODULES!r}:\n    importlib.import_module(m)\n"
    out = _fresh(code)
    assert out.returncode == 0, out.stderr


@pytest.mark.slow
def test_cli_loads_no_model_and_no_torch():
    assert not import_graph()[CLI] & {"Policy_Value_Net", "cube.Puzzles"}
    loaded = "sorted({'torch', 'Policy_Value_Net', 'cube.Puzzles'} & set(sys.modules))"
    out = _fresh(f"import sys; from run import Cli; print({loaded})")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
