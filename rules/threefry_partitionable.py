"""JAX503 threefry-partitionable: report where code written for a JAX before 0.5.0 makes
``jax.random`` keys, and the target reaches 0.5.0, whose random values differ for a key.

Manual.  From jax 0.5.0 the flag ``jax_threefry_partitionable`` defaults to True
(``jax/_src/config.py``: False in 0.4.38, True in 0.5.0), which changes the values every
``jax.random`` sampler draws from a given key (JAX's announcement, discussion #18480).  The
flag exists from 0.3.24 to the newest release.  Checked here: ``uniform(PRNGKey(0), (3,))``
gives the same values on jax 0.4.13 and 0.4.30 and others on 0.6.2 and 0.10.2, and the old
ones again on 0.10.2 with the flag False.  Whether the old values matter (a test's expected
numbers, a saved sample, a seed a paper reports) is for a person: no rewrite.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING, List, Optional, Tuple, Union

from jaxmigrate.migrator import lazycst as cst, references as refs
from jaxmigrate.migrator.astview import AstView
from jaxmigrate.migrator.context import Context, NameSite
from jaxmigrate.migrator.diagnostics import Diagnostic
from jaxmigrate.migrator.references import Reference
from jaxmigrate.migrator.rule import Example, Rule, Safety
from jaxmigrate.migrator.version import Version, parse_version
from jaxmigrate.rules._ast_sites import Resolver, called_at, legacy_imports_stay, name_sites
from jaxmigrate.rules._evidence_gate import EvidenceGate, names_gone
from jaxmigrate.rules._helpers import called, report_once

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.migrator.astfacts import Facts
    from jaxmigrate.migrator.source import SourceRange

CHANGED_IN = parse_version("0.5.0")
FLAG = "jax_threefry_partitionable"
# A module that spells either has chosen its random bits already: left alone.
CHOSEN = ("threefry_partitionable", "default_prng_impl")
MESSAGE = f"jax.random draws change in JAX 0.5.0; {FLAG}=False keeps them"


def _detail(why: str) -> str:
    return (
        f"From JAX 0.5.0 {FLAG} defaults to True, so every jax.random draw from a given key "
        f"differs from what older JAX gave ({why}).  Where the old values matter (expected "
        f'numbers in tests, saved samples), call jax.config.update("{FLAG}", False) once '
        "at program start; otherwise update the expected values."
    )


class ThreefryPartitionable(EvidenceGate, Rule, code="JAX503", safety=Safety.MANUAL):
    """report jax.random keys in code written before 0.5.0: its draws change there

    **What it does.** Reports, once per project (at the first file, its modules and tests
    before its examples and docs, with how many others and, in the detail, which), the first
    call that makes a `jax.random` key (`jax.random.PRNGKey`, `jax.random.key`) where the
    code was written for a JAX before 0.5.0 and the target reaches 0.5.0 (the question:
    *written before the change, and will it run after it?*).  What the code was written for
    comes from `--source-version`, the file's own JAX names (one JAX removed by 0.5.0, such
    as `jax.tree_multimap` or `jax.random.KeyArray`, says it was written before; one added
    from 0.5.0 on, after),
    then the project's `jax` requirement (`jax==0.3.16`, `jax<0.5`, or a lower bound from
    before jax.Array: `jax>=0.3.13` still admits code written for 0.3.13).  A newer lower
    bound (`jax>=0.4.13`) does not say it, nor does no requirement at all: then only a
    file's own names do.  A module that already sets `jax_threefry_partitionable` or
    `jax_default_prng_impl` is left alone.

    **Why.** From JAX 0.5.0 the flag `jax_threefry_partitionable` defaults to True: random
    numbers are generated so that they partition well across devices, and every sampler of
    `jax.random` draws different values from the same key than before.  Code runs as it
    did, but numbers fixed for an older JAX (a test's expected draws, a saved sample) no
    longer match.

    **Use instead.** Update the expected values to the new draws, or keep the old ones with
    `jax.config.update("jax_threefry_partitionable", False)` once at program start (the flag
    exists on every release from 0.3.24 to today's).
    """

    once_per_file = True  # the first site, with the count of the others
    once_per_project = True  # the whole program meets it: said at its first file

    whole_module = False  # hooks read their sites, and the module's text for the flag

    unsafe_fixes_only = True  # (reports only, even with --unsafe-fixes)

    references = (
        refs.source_at("0.5.0", "jax/_src/config.py", f"{FLAG} defaults to True"),
        Reference(
            "JAX discussion #18480: changes coming to JAX's RNG, auto-parallelizable by default",
            "https://github.com/jax-ml/jax/discussions/18480",
        ),
        refs.api("jax.random.key"),
    )
    names = frozenset({"jax.random.PRNGKey", "jax.random.key"})
    names_are_legacy = False  # both stay: never drop an import
    examples = (
        Example.reported(
            title="a test written for jax 0.4.13: the draws it expects change",
            code="""
            import jax
            import numpy as np

            def test_sample():
                key = jax.random.PRNGKey(0)
                np.testing.assert_allclose(jax.random.uniform(key, (3,)), [0.965, 0.315, 0.633])
            """,  # noqa: E501
            source_version="0.4.13",
        ),
    )

    def runs_for(self, source: "SourceRange") -> bool:
        return source.written_before(CHANGED_IN) is not False

    def for_source(self, source: "SourceRange") -> Rule:
        """Itself where the source says the code was written before 0.5.0; else the rule that
        acts only where a file's own names prove it (:class:`EvidenceGate`)."""
        return self if source.written_before(CHANGED_IN) is True else _proving()

    def _written(self, where: Union[AstView, Context]) -> Tuple[Optional[bool], str]:
        """Was the code written before 0.5.0, and why: as the source and the file's names say
        (:meth:`Context.written_before`), or as the names alone prove it."""
        if self.proven_by is not None:
            return where.proven_before(CHANGED_IN)
        if isinstance(where, Context):
            return where.written_before(CHANGED_IN)
        return where.written_before_why(CHANGED_IN)

    def ast_gate(self, facts: Facts) -> bool:
        # (where only a file's names can say when it was written: one gone by 0.5.0)
        return self.proven_by is None or names_gone(facts.names | facts.imports, self.proven_by)

    def ast_findings(self, view: AstView) -> Optional[List[Diagnostic]]:
        """:meth:`visit_name` and :meth:`visit_module` on ``ast``: one finding at the first
        call of a key maker; None (LibCST decides) where the sites could differ."""
        if not legacy_imports_stay(view, self.names, frozenset()):
            return None
        sites = name_sites(view, Resolver(view, self.names))
        if sites is None:
            return None
        calls: List[ast.AST] = list(called_at(view, sites).values())
        if not calls:
            return []
        written, why = self._written(view)
        if not _applies(view.as_read[0], view.upper, written):
            return []
        found = view.report_once(self.code, calls, MESSAGE, _detail(why), False)
        return [] if found is None else [found]

    def visit_name(self, site: NameSite, ctx: Context) -> None:
        call = None if site.is_import else called(site)
        if call is not None:
            ctx.memo((self.code, "calls"), list).append(call)

    def visit_module(self, ctx: Context) -> None:
        calls: List[cst.Call] = ctx.memo((self.code, "calls"), list)
        if not calls:
            return
        text = ctx.file_state.get("text")
        written, why = self._written(ctx)
        if _applies(text if isinstance(text, str) else ctx.module.code, ctx.upper, written):
            report_once(ctx, calls, MESSAGE, _detail(why), cover=False)


@functools.lru_cache(maxsize=1)
def _proving() -> ThreefryPartitionable:
    """The rule where the source leaves open what the code was written for."""
    rule = object.__new__(ThreefryPartitionable)
    rule.proven_by = ".".join(str(part) for part in CHANGED_IN)
    return rule


def _applies(text: str, upper: Optional[Version], written_before: Optional[bool]) -> bool:
    """The target reaches 0.5.0, the code was written before it, and the module has not
    chosen its random bits itself."""
    reaches = upper is None or upper >= CHANGED_IN
    return reaches and written_before is True and not any(word in text for word in CHOSEN)
