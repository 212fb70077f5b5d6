"""Gates 1 and 1b for the programs :func:`migrator.docs.migrate_docstrings` builds from a
module's doctest examples and code blocks, read from the module's text before it is parsed
for them (:func:`may_change`): most modules with examples hold nothing a rule acts on.

The examples are found line by line as :mod:`migrator.docpieces` finds them, without the
docstrings' bounds, and a program is made that holds the sites of every program the migration
may build of them: the conventional imports (:data:`CONVENTIONAL`, which doctest set-ups
provide), each piece after a segment marker, and the module's imports a prelude may take.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence

from jaxmigrate.migrator.docpieces import (
    CONTINUATION_RE,
    DIRECTIVE_RE,
    FENCE_RE,
    PROMPT_RE,
    indent_width,
)
from jaxmigrate.migrator.plan import Plan, make_plan
from jaxmigrate.migrator.segments import MARKER
from jaxmigrate.migrator.settings import Settings

# Names a docstring example may use unbound, meaning JAX: doctest set-ups provide them.
CONVENTIONAL: Dict[str, str] = {"jax": "import jax", "jnp": "import jax.numpy as jnp"}
_ASCII_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JNP = re.compile(r"(?<![A-Za-z0-9_])jnp(?![A-Za-z0-9_])")
_IMPORT_KEYWORD = re.compile(r"(?<![A-Za-z0-9_])import(?![A-Za-z0-9_])")


def may_change(
    text: str,
    settings: Settings,
    imports: str = "",
    gates: Optional[Plan] = None,
    pieces: Optional[Sequence[str]] = None,
) -> bool:
    """Gates 1 and 1b for the programs :func:`migrator.docs.migrate_docstrings` builds from a
    module's examples and imports, before the module is parsed for them (most modules with
    examples hold nothing a rule acts on, and parsing them cost more than the rest of a
    ``--check``).  Gate 1 reads the words: the examples and the import lines are the module's
    own; a used ``jax``/``jnp`` adds :data:`CONVENTIONAL`'s imports; the segment markers name
    no rule's word.  Then gate 1b, on :func:`_program` of the examples and of the imports a
    prelude may take of them (:func:`_preludes`), and where rules pass it, whether each can
    act only in such a prelude (:func:`left_to_prelude`, read on all the examples and all
    those imports: it holds for a smaller program too).  ``imports``: the module's import
    statements, and ``pieces`` the code of the examples, when ``text`` is one docstring's
    examples."""
    if "DeviceArray" in text:  # an old repr in an example's output (docs.REPR_RULES)
        return True
    jax = "jax" in text or "jax" in imports or _JNP.search(text) is not None
    extra = {"import", "from", "as", MARKER, *_ASCII_WORD.findall(imports)}
    if jax:
        extra |= set(_ASCII_WORD.findall(" ".join(CONVENTIONAL.values())))
    plan = gates or make_plan(tuple(settings.active_rules()))
    if not plan.may_pass_parts(text, frozenset(extra), jax=jax):
        return False
    if pieces is None:
        pieces = _pieces_in(text)
        if pieces is None:
            return True  # (too many nested blocks to read cheaply: the parse decides)
    statements = imports.split("\n") if imports else _top_level_imports(text)
    prelude = _preludes(statements, pieces)
    program = _program(pieces, prelude)
    return bool(plan.candidates(program)) and not left_to_prelude(plan, program, pieces, prelude)


def left_to_prelude(plan: Plan, program: str, pieces: Sequence[str], prelude: str) -> bool:
    """Can every rule gate 1b passes on ``program`` act only in the prelude of the programs
    made of ``pieces`` and of some of the imports of ``prelude``, whose fixes and findings are
    dropped (:meth:`migrator.rulegate.RuleGate.prelude_only`)?  JAX's own modules import
    ``jax._src`` above examples that never name it."""
    examples = "".join(piece + "\n" for piece in pieces)
    return all(rule.prelude_only(examples, prelude) for rule in plan.every_candidate(program))


def _program(pieces: Sequence[str], imports: str) -> str:
    """A program that holds the sites of every program made of some of ``pieces`` after some
    of ``imports``: the conventional imports, each piece after a segment marker (as the
    programs hold them: a piece's lines stay together, apart from prose and quotes), then the
    imports.  Gate 1b reads sites: more pieces and lines only add some."""
    conventional = "\n".join(CONVENTIONAL.values())
    body = "".join(f"{MARKER}(0)\n{piece}\n" for piece in pieces)
    return f"{conventional}\n{body}{MARKER}(0)\n{imports}\n"


def _pieces_in(text: str) -> Optional[List[str]]:
    """What may be the code of the examples and code blocks of ``text``'s docstrings, read
    line by line as :mod:`migrator.docpieces` reads them (without the docstrings' bounds):
    each ``>>>`` example with its ``...`` lines, and the lines each ``::`` line, code directive
    or fence may open a block of, without their indentation (a program keeps less of it: its
    parts stand no farther apart).  None when blocks nest too deep to read cheaply."""
    lines = text.splitlines()
    pieces: List[str] = []
    # Only a line that spells ``>>>`` starts an example, and its ``...`` lines follow it.
    for index in [i for i, line in enumerate(lines) if ">>>" in line]:
        prompt = PROMPT_RE.match(lines[index])
        if prompt is None:
            continue
        indent = prompt.group("indent")
        piece = [lines[index][len(indent) + 4 :]]
        at = index + 1
        while at < len(lines):
            more = CONTINUATION_RE.match(lines[at])
            if more is None or more.group("indent") != indent:
                break
            piece.append(lines[at][len(indent) + 4 :])
            at += 1
        pieces.append("".join(body + "\n" for body in piece))
    budget = 20 * len(lines) + 1000  # lines read for blocks (a block inside a block is read again)
    # (a fence spells three backticks or tildes; a literal block's or directive's line "::")
    for index in [i for i, s in enumerate(lines) if "::" in s or "```" in s or "~~~" in s]:
        line = lines[index]
        fence = FENCE_RE.match(line)
        if fence is not None:
            mark = fence.group("fence")
            block = []
            for follow in lines[index + 1 :]:
                body = follow.strip()
                if body.startswith(mark) and not body.strip(mark[0]):
                    break
                block.append(follow.lstrip())
        elif line.rstrip().endswith("::") or DIRECTIVE_RE.match(line):
            base = indent_width(line)
            block = []
            for follow in lines[index + 1 :]:
                if follow.strip() and indent_width(follow) <= base:
                    break
                block.append(follow.lstrip())
        else:
            continue
        budget -= len(block)
        if budget < 0:
            return None
        pieces.append("\n".join(_unprompted(b) for b in block))
    return pieces


def _unprompted(line: str) -> str:
    return line[4:] if line.startswith((">>>", "...")) and line[3:4] in ("", " ") else line


def _preludes(statements: Sequence[str], pieces: Sequence[str]) -> str:
    """The import ``statements`` a prelude of examples made of some of ``pieces`` may hold
    (:func:`migrator.docs.module_prelude`): those that may bind ``jax`` or a name the pieces
    spell (a name is bound after the statement's ``import``, and a name an example reads is
    one of its words).  Text that is not all ASCII may spell a name another way (NFKC): all
    of them."""
    spelled = "".join(pieces)
    if not spelled.isascii():
        return "\n".join(statements)
    words = {"jax", *_ASCII_WORD.findall(spelled)}
    kept = []
    for statement in statements:
        bound = _IMPORT_KEYWORD.split(statement, 1)[-1]
        if not words.isdisjoint(_ASCII_WORD.findall(bound)) or not bound.isascii():
            kept.append(statement)
    return "\n".join(kept)


def _top_level_imports(text: str) -> List[str]:
    """The statements that may be module-level imports (the prelude's): every line that starts
    unindented and spells ``import``, with the lines its brackets or a trailing backslash
    continue it on."""
    statements: List[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if "import" not in line or line[:1].isspace():
            continue
        found = [line]
        depth = _depth(line)
        while (depth > 0 or line.rstrip().endswith("\\")) and index < len(lines):
            line = lines[index]
            index += 1
            found.append(line)
            depth += _depth(line)
        statements.append("\n".join(found))
    return statements


def _depth(line: str) -> int:
    code = line.split("#", 1)[0]
    return code.count("(") - code.count(")")
