"""Rendering a rule's documentation for ``jaxmigrate explain``.

The documentation is Markdown (a rule's ``doc``).  :func:`render` gives it for a terminal:
plain text, code shown as it is, links as their addresses; ``render(rule, markdown=True)``
gives the Markdown itself (``jaxmigrate explain --markdown``), examples in ``python`` fences.
Both end with the rule's references (:mod:`migrator.references`).
"""

from __future__ import annotations

import re
import textwrap
from typing import List

from jaxmigrate.migrator.rule import Example, Rule

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_STRONG = re.compile(r"\*\*(.+?)\*\*", re.S)
_EMPHASIS = re.compile(r"(?<![\w*])\*(?!\s)([^*]+?)(?<!\s)\*(?![\w*])")


def plain(markdown: str) -> str:
    """Markdown prose as terminal text: no emphasis markers or backticks, links as
    ``text (address)``.  Code spans are kept verbatim (a ``*args`` in one stays)."""
    out: List[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(markdown):
        out.append(_plain_prose(markdown[position : match.start()]))
        out.append(match.group(2))
        position = match.end()
    out.append(_plain_prose(markdown[position:]))
    return "".join(out)


def _plain_prose(text: str) -> str:
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    text = _STRONG.sub(r"\1", text)
    return _EMPHASIS.sub(r"\1", text)


def _facts(rule: Rule) -> str:
    facts = [f"safety: {rule.safety.value}"]
    if rule.needs_jax:
        facts.append(f"replacement needs JAX >= {rule.needs_jax}")
    if rule.deprecated_in:
        facts.append(f"deprecated in {rule.deprecated_in}")
    if rule.removed_in:
        facts.append(f"removed in {rule.removed_in}")
    return "; ".join(facts)


# ``jaxmigrate explain versions``: the version model, in the words the README opens with.
VERSIONS = """\
Source and target

The source is the JAX your code was written for: --source-version, else what each file's own
JAX names prove (a name JAX removed in 0.4.14 dates the file before it; one added in 0.6.1
dates it at or after), else the project's jax requirement (jax==0.3.16, jax~=0.2.12 and
jax>=0.3.4 are statements about the past).  Files of several projects (a monorepo's
packages) are each migrated for their own project's requirement, as a run over it alone.

The target is the JAX the migrated code must run on: --target-version X (X to the newest JAX)
or X..Y.  By default jaxmigrate first surveys the files and finds the floor, the oldest JAX on
which every rewrite and every JAX name of the migrated code exists; a requirement whose lower
bound is at or above the floor is kept, a lower one is the code's past and the target becomes
floor..newest.  --update-requirements raises the requirement to admit the target.

A behaviour change at release C (process_allgather's default in 0.5.0, jax.make_mesh's axis
types in 0.9.0) is undone only where the code was written before C and will run after it;
where nothing says what the code was written for, the call is reported with both readings.

Examples:
  an application pinned to jax==0.3.16:
    requirements.txt has jax==0.3.16 (the JAX this code was written for); migrating to
    0.4.4..newest (the migrated code needs 0.4.4: JAX201 pjit-axis-resources's fix in train.py)
  a library on jax>=0.4.30 that keeps supporting 0.4.30:
    pyproject.toml has jax>=0.4.30: migrating to 0.4.30..newest (kept: nothing in the
    migrated code needs a newer JAX)
"""


def _example_title(number: int, example: Example) -> str:
    title = f"Example {number}" + (f": {example.title}" if example.title else "")
    options = []
    if example.source_version:
        options.append(f"--source-version {example.source_version}")
    if example.target_version:
        options.append(f"--target-version {example.target_version}")
    if example.unsafe_fixes:
        options.append("--unsafe-fixes")
    return title + (f" ({' '.join(options)})" if options else "")


def render(rule: Rule, markdown: bool = False) -> str:
    """``rule``'s documentation: plain text for a terminal, or its Markdown."""
    doc = textwrap.dedent(rule.doc).strip()
    if markdown:
        lines = [f"# {rule.code} {rule.name}", "", rule.summary, "", _facts(rule), "", doc, ""]
    else:
        lines = [f"{rule.code} {rule.name}: {rule.summary}", "", _facts(rule), "", plain(doc), ""]
    for number, example in enumerate(rule.examples, start=1):
        title = _example_title(number, example)
        if markdown:
            lines += [f"## {title}", ""]
            lines += ["Before:", "", "```python", example.before.rstrip(), "```", ""]
        else:
            before = textwrap.indent(example.before.rstrip(), "    ")
            lines += [title, "", "Before:", "", before, ""]
        if example.after == example.before:
            lines += ["Reported, not rewritten.", ""]
        elif markdown:
            lines += ["After:", "", "```python", example.after.rstrip(), "```", ""]
        else:
            lines += ["After:", "", textwrap.indent(example.after.rstrip(), "    "), ""]
    if rule.references:
        lines += ["## References" if markdown else "References:", ""]
        for reference in rule.references:
            if markdown:
                lines.append(f"- [{reference.title}]({reference.url})")
            else:
                lines += [f"- {reference.title}", f"  {reference.url}"]
    return "\n".join(lines).rstrip() + "\n"
