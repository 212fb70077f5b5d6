"""JAX902 private-api: imports from, and references into, JAX's private ``jax._src`` package.

``jax._src`` carries no compatibility promise: JAX moves and deletes its contents in any
release, so code that reaches into it is the code most likely to break on the next upgrade.
Reported once per file and private module, at the first place that names it.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astfacts import Facts
from jaxmigrate.migrator.astview import AstView, Chain
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.rule import Example, Rule, Safety
from jaxmigrate.migrator.scope import dotted_name
from jaxmigrate.rules._helpers import in_compatibility_code, report_once
from jaxmigrate.rules._private_gate import PrivateApiGate

PRIVATE = "jax._src"


class PrivateApi(PrivateApiGate, Rule, code="JAX902", safety=Safety.MANUAL):
    """report uses of JAX's private jax._src modules (no compatibility promise)

    **What it does.** Reports each private JAX module (``jax._src.core``,
    ``jax._src.lib.xla_client``, ...) a file imports or reaches through an attribute chain,
    once per file and module, at the first place that names it, with the count of the places
    (``(3 uses)``).  A private name (one with a
    leading underscore) of a public module, such as ``jax.lax._foo`` or
    ``from jax.interpreters.xla import _device_put``, is reported the same way.

    **Why.** JAX documents ``jax._src`` as private: it changes without deprecation, so code
    that uses it may fail at import on the next release even where every public name was
    migrated.  Look for the public equivalent (``jax.extend``, ``jax.core``,
    ``jax.tree_util``, ``jax.sharding``, ...), or pin the JAX version this code was tested
    with.

    **Unused private imports.** With `--unsafe-fixes`, a `from jax._src... import name` at
    module level whose names this module never uses (nor exports in `__all__`, nor as
    `import name as name`, the spelling of an explicit re-export) is deleted when
    the code was written for a JAX older than the target (its requirement, or the legacy names
    it uses, say so).  Such a line does nothing but can stop the whole module at import, as
    `from jax._src.numpy.lax_numpy import isin` does on today's JAX.  Unsafe because another
    module may import the name from this one.

    **Left alone.** Code under ``try: ... except ImportError/AttributeError`` and under a
    feature or version check.
    """

    # Its module-wide reads (private attributes, names and strings that use an import) all go
    # through a name an import binds: the piecewise path keeps every statement that spells one.
    whole_module = False

    unsafe_fixes_only = True  # (the survey skips it without --unsafe-fixes)

    references = (refs.api_compatibility("What is not covered?"),)
    names = frozenset({PRIVATE})
    legacy_modules = frozenset({PRIVATE})
    names_are_legacy = False
    text_gated = True  # ``jax.lax._foo``: no list of words names every private name
    examples = (
        Example.reported(
            title="reported, not rewritten",
            code="""
            from jax._src import core

            def is_tracer(x):
                return isinstance(x, core.Tracer)
            """,
        ),
    )

    def ast_gate(self, facts: Facts) -> bool:
        return any(_private_part(name) is not None for name in facts.names)

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        if site.is_import:
            return
        node = site.node
        parent = ctx.parent(node)
        while isinstance(parent, cst.Attribute) and parent.value is node:
            node, parent = parent, ctx.parent(parent)
        qualname = ctx.qualname(node, site.scope) or site.qualname
        self._uses(ctx).append((site.node, _private_module(qualname)))

    def visit_module(self, ctx: Context) -> None:
        """Runs after the name sites: adds the imports, then reports each module once, at the
        first place (in the file's order) that names it."""
        uses = self._uses(ctx)
        underscored: List[Tuple[cst.CSTNode, str]] = []  # ``jax.lax._foo``: private by its name
        for binding in ctx.analysis.imports:
            qualname = binding.imported_name
            if binding.guarded or binding.node is None:
                continue
            if (qualname + ".").startswith(PRIVATE + "."):
                uses.append((binding.node, _private_module(qualname)))
            elif _private_part(qualname) is not None:
                underscored.append((binding.node, _private_part(qualname)))  # type: ignore[arg-type]
        for attribute in ctx.analysis.nodes(cst.Attribute):
            attr = attribute.attr.value
            if not attr.startswith("_") or attr.startswith("__"):
                continue
            private = _private_part(ctx.qualname(attribute, ctx.scope_of(attribute)) or "")
            if (
                private is None
                or private.startswith(PRIVATE + ".")
                or private == PRIVATE
                or in_compatibility_code(ctx, attribute)
            ):
                continue
            underscored.append((attribute, private))
        if underscored:
            # ``xla._DeviceArray(...)``: a line where a rule that knows the legacy name speaks
            spoken = {
                ctx.position(found[0]).start.line for found in ctx.findings if found[1] != self.code
            } | ctx.covered_lines
            uses.extend(use for use in underscored if ctx.position(use[0]).start.line not in spoken)
        unused = _unused_private_imports(ctx)
        if unused:
            uses = [use for use in uses if not _inside(use[0], unused, ctx)]
        by_module: Dict[str, List[cst.CSTNode]] = {}
        for node, module in uses:
            by_module.setdefault(module, []).append(node)
        for module, nodes in by_module.items():
            report_once(ctx, nodes, *_texts(module))

    def view_words(self, facts: Facts) -> Optional[FrozenSet[str]]:
        """The statements :meth:`ast_findings` reads: imports, and those that spell a name an
        import binds to ``jax._src`` itself or that heads a chain with a private part (its
        chains; where such a name is bound otherwise decides whether the view is sure of
        them, and binding a name spells it)."""
        words = {name for name, found in facts.aliases.items() if PRIVATE in found}
        bound = facts.import_bound
        for attribute, nodes in facts.attribute_nodes.items():
            if attribute.startswith("_") and attribute[1:2] != "_":
                for node in nodes:
                    head = node.value
                    while type(head) is ast.Attribute:
                        head = head.value
                    if type(head) is ast.Name and head.id in bound:
                        words.add(head.id)
        return frozenset(words)

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name` and :meth:`visit_module` on ``ast`` (see ``AstView``); None where
        they could differ: a private chain whose head the module binds in more than one way or
        reads inside an f-string, a private name beside another rule's findings (which
        :meth:`visit_module` leaves to them), or an unused private import it may delete."""
        if _may_delete(view) and view.written_before(view.target):
            return None  # _unused_private_imports may have a fix to make
        aliases = {i.bound for i in view.imports if i.qualname == PRIVATE and i.bound != "_src"}
        uses: List[Tuple[ast.AST, str]] = []  # name sites first, as visit_name records them
        underscored: List[Tuple[ast.AST, str]] = []
        for item in view.imports:
            if item.guarded:
                continue
            if (item.imported + ".").startswith(PRIVATE + "."):
                uses.append((item.node, _private_module(item.imported)))
            elif _private_part(item.imported) is not None:
                underscored.append((item.node, _private_part(item.imported)))  # type: ignore[arg-type]
            if item.bound in aliases and not item.top:
                return None  # an alias LibCST's analysis learns only when it gets there
        sites: List[Tuple[ast.AST, str]] = []
        for chain in view.chains:
            parts = chain.parts
            private = [i for i, p in enumerate(parts) if p.startswith("_") and p[1:2] != "_"]
            if not private and parts[0] not in aliases:
                continue
            sure, head = view.resolve(parts[0])
            if not sure:
                heads = {i.qualname for i in view.imports if i.bound == parts[0]}
                if all(use is None for h in heads for use in _named(chain, h, private, aliases)):
                    continue  # whichever scope decides, the chain names nothing
                return None
            if head is None:  # not bound by an import: no JAX name (the f-string's too)
                continue
            if chain.in_fstring:
                return None  # (positions inside an f-string: LibCST's may differ)
            site, private_name = _named(chain, head, private, aliases)
            if site is not None:
                sites.append(site)
            if private_name is not None:
                underscored.append(private_name)
        if underscored and len(view.codes) > 1:  # visit_module leaves a line where another
            view.unless_spoken.setdefault(self.code, set()).update(  # rule spoke first to it
                view.start(node)[0] for node, _module in underscored
            )
        by_module: Dict[str, List[ast.AST]] = {}
        for node, module in sites + uses + underscored:
            by_module.setdefault(module, []).append(node)
        found = []
        for module, nodes in by_module.items():
            finding = view.report_once(self.code, nodes, *_texts(module))
            if finding is not None:
                found.append(finding)
        return sorted(found, key=lambda d: (d.line, d.column))

    def _uses(self, ctx: Context) -> List[Tuple[cst.CSTNode, str]]:
        return ctx.memo((self.code, "uses"), list)


def _texts(module: str) -> Tuple[str, str]:
    """The finding for ``module``, message and detail (both paths report it with these)."""
    what = "private JAX API" if module.startswith(PRIVATE) else "private (a leading _)"
    where = "private JAX API" if module.startswith(PRIVATE) else "private"
    return (
        f"{module} is {where}; use a public API or pin the JAX version",
        f"{module} is {what}, with no compatibility promise: it can change or disappear "
        "in any release.  Use a public equivalent (jax.extend, jax.core, jax.tree_util, "
        "jax.sharding, ...) or pin the JAX version this code was tested with.",
    )


Use = Tuple[ast.AST, str]


def _named(
    chain: Chain, head: str, private: List[int], aliases: Set[str]
) -> Tuple[Optional[Use], Optional[Use]]:
    """What :meth:`PrivateApi.visit_name` and :meth:`PrivateApi.visit_module` read in
    ``chain`` when its first part refers to ``head``: the private module it reaches (with the
    node that names it), and the private name of a public module it spells (with its outermost
    private part); each None when there is none.  A chain whose first part the view cannot
    resolve names nothing if it names nothing for each import of that part (otherwise bound,
    it names no JAX name at all)."""
    if chain.guarded:
        return None, None
    parts = chain.parts
    full = ".".join((head, *parts[1:]))
    site: Optional[Use] = None
    if head == PRIVATE and (parts[0] == "_src" or parts[0] in aliases):
        site = (chain.nodes[0], _private_module(full))
    elif head == "jax" and parts[1:2] == ("_src",):
        site = (chain.nodes[1], _private_module(full))
    attributes = [i for i in private if i > 0]
    module = _private_part(full) if attributes else None
    if module is None or (module + ".").startswith(PRIVATE + "."):
        return site, None
    return site, (chain.nodes[attributes[-1]], module)  # the outermost private part


def _may_delete(view: AstView) -> bool:
    """Is there a module-level ``from jax._src... import`` that :func:`_unused_private_imports`
    could find unused?  Not where each binds a name the module spells elsewhere (an
    ``ast.Name``, which LibCST's analysis counts as a use: the facts' ``heads``, read whether
    or not the view walked that statement), which spares reading the file's JAX history
    (:meth:`AstView.written_before`)."""
    spelled = view.facts.heads
    quoted: Optional[Set[str]] = None
    for statement in view.tree.body:
        if not isinstance(statement, ast.ImportFrom) or statement.level:
            continue
        if not (statement.module or "").startswith(PRIVATE):
            continue
        bound = [alias.asname or alias.name for alias in statement.names]
        if "*" in bound or any(alias.asname == alias.name for alias in statement.names):
            continue  # (``import name as name``: an explicit re-export, never unused)
        lines = range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)
        if any(_NOQA_F401.search(view.line(number)) for number in lines):
            continue
        if spelled.isdisjoint(bound):
            if view.facts.strings.isdisjoint(bound):
                return True
            if quoted is None:
                quoted = _quoted_names(view)
            if quoted.isdisjoint(bound):
                return True
    return False


# A flake8/ruff noqa comment for F401 (unused import), bare or listing it: the author keeps
# the import on purpose (a side effect, a re-export), so no fix deletes it.
_NOQA_F401 = re.compile(r"#\s*noqa(?!\s*:)|#\s*noqa\s*:[\s\w,]*\bF401\b", re.IGNORECASE)
_PLAIN_LITERAL = re.compile(r"""[rRuU]?(?:'([A-Za-z_]\w*)'|"([A-Za-z_]\w*)")\Z""")


def _quoted_names(view: AstView) -> Set[str]:
    """The identifiers the module writes as a plain one-line string literal of their own
    (``__all__ = ["isin"]``): LibCST's ``SimpleString`` nodes :func:`_loaded_names` counts.  A
    constant that an f-string, an implicit concatenation or an escape makes is left out (the
    check is then LibCST's)."""
    found: Set[str] = set()
    strings = view.facts.strings
    stack: List[ast.AST] = [view.tree]
    while stack:
        node = stack.pop()
        if type(node) is ast.JoinedStr:
            continue  # (an f-string's text is no SimpleString)
        stack.extend(ast.iter_child_nodes(node))
        if type(node) is ast.Constant and node.value in strings and type(node.value) is str:
            line, start = view.start(node)
            end_line, end = view.end(node)
            if line == end_line:
                match = _PLAIN_LITERAL.match(view.line(line)[start:end])
                if match and (match.group(1) or match.group(2)) == node.value:
                    found.add(node.value)
    return found


def _unused_private_imports(ctx: Context) -> List[cst.SimpleStatementLine]:
    """Delete (an unsafe fix) each module-level ``from jax._src... import a, b`` whose names the
    module never uses (and that no noqa comment for F401 keeps), in code written for a JAX
    older than the target; the deleted lines (and without ``--unsafe-fixes`` those the
    held-back fix names)."""
    written_before, why = ctx.written_before(ctx.target)
    if not written_before:
        return []
    loaded: Optional[Set[str]] = None
    deleted: List[cst.SimpleStatementLine] = []
    for line in ctx.module.body:
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            continue
        statement = line.body[0]
        if not isinstance(statement, cst.ImportFrom) or statement.relative:
            continue
        module = dotted_name(statement.module) if statement.module else None
        if not module or not (module + ".").startswith(PRIVATE + "."):
            continue
        if isinstance(statement.names, cst.ImportStar) or ctx.is_suppressed(line):
            continue
        if any(_re_exported(alias) for alias in statement.names):
            continue  # ``from jax._src.basearray import Array as Array``: an explicit re-export
        comment = line.trailing_whitespace.comment
        if _NOQA_F401.search(ctx.code(statement) + (comment.value if comment else "")):
            continue  # (kept unused on purpose, the comment says)
        if loaded is None:
            loaded = _loaded_names(ctx)
        bound = [(alias.asname.name if alias.asname else alias.name) for alias in statement.names]
        if not all(isinstance(name, cst.Name) and name.value not in loaded for name in bound):
            continue
        names = ", ".join(ctx.code(alias) for alias in statement.names)
        if (
            ctx.replace(
                line,
                cst.RemovalSentinel.REMOVE,
                f"deleted unused private import `from {module} import ...`",
                safety=Safety.UNSAFE,
                detail=f"`from {module} import {names}`: private, unused here, and {why}.",
            )
            or not ctx.unsafe_fixes
        ):  # (held back, the fix is the line's finding: its detail says the module is private)
            deleted.append(line)
    return deleted


def _re_exported(alias: cst.ImportAlias) -> bool:
    """``name as name``: the spelling PEP 484 gives an explicit re-export."""
    asname = alias.asname.name if alias.asname is not None else None
    return (
        isinstance(asname, cst.Name)
        and isinstance(alias.name, cst.Name)
        and asname.value == alias.name.value
    )


def _loaded_names(ctx: Context) -> Set[str]:
    """Every name the module spells outside its imports, and the strings it holds (``__all__``,
    string annotations): a bound name in neither is unused."""
    found: Set[str] = set()
    for node in ctx.all_nodes(cst.Name):
        parent = ctx.parent(node)
        if isinstance(parent, (cst.ImportAlias, cst.AsName)):
            continue
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            continue  # ``jnp.ndarray`` reads no name ``ndarray`` (treex 0.6.10's losses.py)
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            continue  # nor does a keyword argument ``f(ndarray=x)``
        found.add(node.value)
    for string in ctx.all_nodes(cst.SimpleString):
        value = string.evaluated_value
        if isinstance(value, str) and value.isidentifier():  # ``__all__ = ["isin"]``
            found.add(value)
    for annotation in ctx.analysis.annotation_strings:
        found.update(re.findall(r"\w+", annotation.value))
    return found


def _inside(node: cst.CSTNode, lines: List[cst.SimpleStatementLine], ctx: Context) -> bool:
    ids = {id(line) for line in lines}
    return id(node) in ids or any(id(ancestor) in ids for ancestor in ctx.ancestors(node))


def _private_module(qualname: str) -> str:
    """``jax._src.lib.xla_client.Device`` -> ``jax._src.lib``: the package and its first part."""
    parts = qualname.split(".")
    return ".".join(parts[:3]) if len(parts) >= 3 else qualname


def _private_part(qualname: str) -> Optional[str]:
    """``jax.lax._foo.bar`` -> ``jax.lax._foo``: a JAX name up to its first private part
    (``jax._src`` for JAX's private package); None when every part is public.  Dunder names
    (``jax.__version__``) are public."""
    parts = qualname.split(".")
    if parts[0] not in ("jax", "jaxlib"):
        return None
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[: index + 1])
    return None
