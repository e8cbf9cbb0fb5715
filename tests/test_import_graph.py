"""The package's import graph has no circle and no upward edge.

The graph is read from the source with ``ast`` (nothing is imported): one
node per module of ``src/bcd`` (``.py`` files, and compiled ``.pyx``
modules as leaves), one edge per intra-package import, wherever it is
written (an import inside a function is still a dependency; deferring it
only hides a circle), and edges to the packages such an import runs first
(``from .core import _forest`` runs ``bcd/core/__init__.py``).  Two graphs must be acyclic:

* the modules themselves;
* their layers: each module collapsed to its top-level subpackage or module
  (``bcd.core``, ``bcd.problems``, ``bcd._solve``, ...), so that a circle
  through several files of two subpackages, which the first graph may not
  see, is an upward edge here.

The test names no module: a subpackage added, split or moved is checked
the same way.
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "bcd"


def _module_name(path, package=PACKAGE):
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(node, module, is_package):
    """The dotted names an import statement may load (before resolution)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    # ``from package import name``: the submodule ``name`` where there is one,
    # and the package itself for the names that are not modules
    return [target] + [f"{target}.{alias.name}" for alias in node.names]


def import_graph(package=PACKAGE):
    """``{module: set of modules it imports}`` within the package."""
    sources = {_module_name(p, package): p for p in package.rglob("*.py")}
    modules = set(sources) | {_module_name(p, package) for p in package.rglob("*.pyx")}
    graph = {m: set() for m in modules}
    for module, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = _imported(node, module, path.name == "__init__.py")
            if isinstance(node, ast.ImportFrom) and all(n in modules for n in names[1:]):
                names = names[1:]       # only submodules: the package's own code is not run
            for name in names:
                while name and name not in modules:
                    name = name.rpartition(".")[0]      # a class or function: its module
                if name and name != module:
                    graph[module].add(name)
                    # importing a.b.c runs the packages a and a.b first: those
                    # that do not contain the importing module are edges too
                    parent = name.rpartition(".")[0]
                    while parent and not (module + ".").startswith(parent + "."):
                        graph[module].add(parent)
                        parent = parent.rpartition(".")[0]
    return graph


def layers(graph):
    """The graph of top-level subpackages and modules (``bcd.X``)."""
    def layer(module):
        return ".".join(module.split(".")[:2])
    out = {}
    for module, targets in graph.items():
        out.setdefault(layer(module), set())
        for target in targets:
            if layer(target) != layer(module):
                out[layer(module)].add(layer(target))
    return out


def find_cycle(graph):
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_is_read():
    graph = import_graph()
    # a sanity check of the reader, not of the package's shape: the entry
    # point imports the core, and the compiled modules are nodes
    assert "bcd.core" in graph["bcd._solve"] or any(
        t.startswith("bcd.core.") for t in graph["bcd._solve"])
    assert "bcd.core._engine" in graph


def test_modules_import_no_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_layers_import_no_circle():
    cycle = find_cycle(layers(import_graph()))
    assert cycle is None, "import circle between layers: " + " -> ".join(cycle)


def test_a_circle_is_found():
    # the checker itself can fail: a circle through a deferred import
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert layers({"bcd.x.y": {"bcd.z"}, "bcd.z": {"bcd.x"}, "bcd.x": set()}) == \
        {"bcd.x": {"bcd.z"}, "bcd.z": {"bcd.x"}}
