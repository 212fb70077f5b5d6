"""Rendering a rule's documentation for ``jaxmigrate explain``."""

from __future__ import annotations

import textwrap

from migrator.rule import Rule


def render(rule: Rule) -> str:
    lines = [f"{rule.code} {rule.name}: {rule.summary}", ""]
    facts = [f"safety: {rule.safety.value}"]
    if rule.needs_jax:
        facts.append(f"replacement needs JAX >= {rule.needs_jax}")
    if rule.deprecated_in:
        facts.append(f"deprecated in {rule.deprecated_in}")
    if rule.removed_in:
        facts.append(f"removed in {rule.removed_in}")
    if rule.catalog:
        facts.append("catalog: " + ", ".join(rule.catalog))
    lines += ["; ".join(facts), "", textwrap.dedent(rule.doc).strip(), ""]
    for number, example in enumerate(rule.examples, start=1):
        title = f"Example {number}" + (f": {example.title}" if example.title else "")
        options = []
        if example.target_version:
            options.append(f"--target-version {example.target_version}")
        if example.unsafe_fixes:
            options.append("--unsafe-fixes")
        if options:
            title += f" ({' '.join(options)})"
        lines += [title, "", "Before:", "", textwrap.indent(example.before.rstrip(), "    "), ""]
        if example.after == example.before:
            lines += ["Reported, not rewritten.", ""]
        else:
            lines += ["After:", "", textwrap.indent(example.after.rstrip(), "    "), ""]
    return "\n".join(lines).rstrip() + "\n"
