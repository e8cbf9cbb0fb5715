"""Render the pages' mathematics as MathML when the docs are built.

Browsers display MathML themselves (MathML Core), so the pages need no
script and no network: MathJax from a CDN leaves raw LaTeX on a page read
offline.  The conversion is done by ``latex2mathml``; a formula it cannot
convert fails the build with a message naming the formula.
"""
from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.util.math import get_node_equation_number

try:
    from latex2mathml.converter import convert
except ImportError as exc:      # pragma: no cover - a docs dependency
    raise ImportError("the docs need latex2mathml: pip install '.[docs]'") from exc


def _mathml(latex, display, where):
    try:
        return convert(latex.strip(), display=display)
    except Exception as exc:
        raise ExtensionError(f"cannot render the formula {latex!r} ({where}) as MathML: "
                             f"{exc}") from exc


def visit_math(self, node):
    self.body.append(f'<span class="math notranslate">'
                     f'{_mathml(node.astext(), "inline", node.source or "")}</span>')
    raise nodes.SkipNode


def visit_math_block(self, node):
    latex = node.astext()
    if node.get("nowrap"):
        # an environment (amsmath): align and friends become aligned rows
        latex = latex.replace("\\begin{align*}", "\\begin{aligned}") \
            .replace("\\end{align*}", "\\end{aligned}") \
            .replace("\\begin{align}", "\\begin{aligned}").replace("\\end{align}", "\\end{aligned}")
    number = ""
    if node.get("number"):
        number = f'<span class="eqno">({get_node_equation_number(self, node)})</span>'
    self.body.append(f'<div class="math notranslate">{number}'
                     f'{_mathml(latex, "block", node.source or "")}</div>\n')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
