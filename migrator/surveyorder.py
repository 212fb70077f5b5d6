"""The survey over many files in one process: which files it need not migrate.

The survey that picks the default target reads each file's floor (:mod:`migrator.target`);
only the newest floor matters, and the first file at it names it.  A file's floor is
bounded before it is migrated (:func:`migrator.target.survey_reach`), so the files are
surveyed newest bound first, and a file whose bound cannot pass the floor found so far is
passed over (design.md, step 5)."""

from __future__ import annotations

import heapq
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional, Sequence, Set, Tuple

from jaxmigrate.migrator import interrupt
from jaxmigrate.migrator.discovery import DOC_SUFFIXES, NOTEBOOK_SUFFIX
from jaxmigrate.migrator.docpieces import may_hold_code_block
from jaxmigrate.migrator.errors import PassedOver
from jaxmigrate.migrator.fileio import FileError, read_source
from jaxmigrate.migrator.quickgate import idle
from jaxmigrate.migrator.version import Version, parse_version

if TYPE_CHECKING:  # pragma: no cover
    import ast

    from jaxmigrate.migrator.rule import Rule
    from jaxmigrate.migrator.runner import FileResult, Options
    from jaxmigrate.migrator.settings import Settings


class Seen:
    """The newest floor of the files a survey in this process has given back so far
    (:func:`surveyed`): a file whose floor cannot pass it cannot set the target."""

    floor: Optional[Version] = None
    reach: Optional[Version] = None  # the reach the file migrated now took its turn at


def check_reach(
    text: str, tree: "ast.Module", rules: Sequence["Rule"], settings: "Settings"
) -> None:
    """Raises :class:`migrator.errors.PassedOver` where the reach of the module ``text`` the
    survey migrates now, from the rules gate 1 passed on it and the words of its code only
    (``tree``: :mod:`migrator.codewords`), cannot set the floor, or is older than the reach
    its turn was taken at (where its CPython facts are kept for its next turn).  The engine
    asks it where it would rewrite the module (a LibCST parse and the rounds), after its reach
    from the text's words and the gates could not pass it over at its turn
    (:meth:`Survey.passes_over`), but before most of what it costs; the runner hands it over
    for the module alone, not a program of its docstrings (:func:`migrator.handoff.checking`).
    """
    seen = Seen.floor
    if seen is None or not settings.survey:
        return
    from jaxmigrate.migrator import handoff
    from jaxmigrate.migrator.codewords import read_code
    from jaxmigrate.migrator.plan import identifier_tokens
    from jaxmigrate.migrator.rule import with_follow_ups
    from jaxmigrate.migrator.target import survey_reach

    rules = with_follow_ups(rules, settings.active_rules())
    code = read_code(tree)
    reach = survey_reach(text, identifier_tokens(text), rules, settings.target, code)
    if reach < seen:
        raise PassedOver
    if Seen.reach is not None and reach < Seen.reach and handoff.holds_facts(text):
        raise PassedOver(reach)  # (its turn comes again: its facts are kept for it)


def survey_reach_of(
    path: Path, settings: "Settings", options: Optional["Options"] = None
) -> Optional[Version]:
    """A release no older than the floor the survey (``settings``) can find in the Python file
    at ``path`` (:func:`migrator.target.survey_reach`); None when unbounded: a notebook, a
    page, or a file that does not read (the survey gives its error).  ``options``: the
    survey's; where they keep the run's gates (:mod:`migrator.gateplan`), a file the gates
    turn away, with no docstring program they pass, is bounded without importing the rules."""
    from jaxmigrate.migrator.plan import identifier_tokens, read_ahead
    from jaxmigrate.migrator.target import survey_reach

    if path.suffix.lower() in (NOTEBOOK_SUFFIX, *DOC_SUFFIXES):
        return None
    try:
        text = read_source(path).text
    except (FileError, MemoryError):
        return None
    if settings.gates and "jax" not in text and idle(text):
        return settings.target  # (gate 0: no fix, no JAX name, no floor; no rule loaded)
    distinct = set(identifier_tokens(text))
    read_ahead(text, distinct)  # for the survey's or the run's gate 1, which read it next
    rules = () if _fixes_nothing(text, settings, options) else settings.active_rules()
    return survey_reach(text, distinct, rules, settings.target)  # (used up)


def narrowed_reach_of(
    path: Path,
    settings: "Settings",
    options: Optional["Options"] = None,
    worth: Optional[Callable[[Version], bool]] = None,
) -> Optional[Version]:
    """:func:`survey_reach_of` from only the rules gate 1 passes on the file (a rule no gate
    passes fixes nothing there: what its fixes need cannot raise the file's floor); None
    where that cannot be read so (no gates, a page or notebook, a file that does not read,
    ``--docs`` literals, or docstring examples some rule may change).  ``worth``: would a
    reach pass the file over?  Where its words alone (no rule at all) would not, the rules'
    gates are not read (None: on JAX's own sources most files the survey reaches so name
    the newest JAX themselves)."""
    from jaxmigrate.migrator.plan import identifier_tokens, make_plan, read_ahead
    from jaxmigrate.migrator.target import survey_reach

    if not settings.gates or path.suffix.lower() in (NOTEBOOK_SUFFIX, *DOC_SUFFIXES):
        return None
    try:
        text = read_source(path).text
    except (FileError, MemoryError):
        return None
    if options is not None and options.docs and "`j" in text:
        return None  # (--docs: its literals of JAX names may be fixed)
    distinct = identifier_tokens(text)
    read_ahead(text, set(distinct))  # (the run's gate 1 reads them next, as the survey's did)
    words_only = survey_reach(text, distinct, (), settings.target)
    if worth is not None and not worth(words_only):
        return None  # (its words alone reach too far: no rule left out could pass it over)
    if _fixes_nothing(text, settings, options):
        return words_only  # (the kept gates pass no rule: answered without importing them)
    from jaxmigrate.migrator.rule import with_follow_ups

    plan = make_plan(tuple(settings.active_rules()))
    rules = with_follow_ups(plan.candidates(text), plan.rules)
    if (
        (options is None or options.doctests)
        and (">>>" in text or may_hold_code_block(text))
        and rules != plan.rules
    ):
        from jaxmigrate.migrator.docgate import may_change

        if may_change(text, settings, gates=plan):
            return None  # (its examples' programs may pass other rules)
    return survey_reach(text, distinct, rules, settings.target)


def _fixes_nothing(text: str, settings: "Settings", options: Optional["Options"]) -> bool:
    """Do the kept gates of ``settings`` (while the rules are not imported: they answer as
    fast) pass no rule on ``text``, nor on a program of its docstrings' examples?  The survey
    then fixes nothing in it (:func:`migrator.runner._migrate_python`), so what a fix may
    need cannot raise its floor: the words alone bound it
    (:func:`migrator.target.survey_reach` without rules)."""
    from jaxmigrate.migrator import gateplan

    if options is None or options.gates_dir is None or (options.docs and "`j" in text):
        return False  # (no gates kept; or --docs, whose literals of JAX names may be fixed)
    plan = gateplan.kept(settings, Path(options.gates_dir))
    if plan is None or plan.candidates(text):
        return False
    if not options.doctests or (">>>" not in text and not may_hold_code_block(text)):
        return True
    from jaxmigrate.migrator.docgate import may_change

    return not may_change(text, settings, gates=plan)


class Survey:
    """Which files a survey over ``tasks`` migrates: newest reach first
    (:func:`survey_reach_of`), passing over a file whose floor cannot set the target nor name
    what sets it: its reach is older than the newest floor found so far (at first the
    survey's lower bound, which only a newer floor moves), or equal to it and the file comes
    after the first file found at that floor (the first file at the newest floor names it).
    :meth:`passes_over` is asked as a file's turn comes, and :meth:`record` told each result
    as it arrives, in any order: the floor and the file that names it come out the same
    whatever was migrated before a file's turn."""

    def __init__(self, tasks: List[tuple]) -> None:
        from jaxmigrate.migrator.plan import forget_ahead

        forget_ahead()
        self.tasks = tasks
        self.reaches = [survey_reach_of(task[0], task[1], task[4]) for task in tasks]
        if tasks and tasks[0][4] is not None and tasks[0][4].gates_dir is not None:
            from jaxmigrate.migrator import gateplan

            # the bounds loaded the rules (if they did) even where no file is migrated next:
            # a later run reads the survey's gates without them
            gateplan.save(tasks[0][1], Path(tasks[0][4].gates_dir))
        self.order = sorted(
            range(len(tasks)), key=lambda i: self.reaches[i] or _UNBOUNDED, reverse=True
        )
        # The survey's lower bound stands for a floor found before any file: a floor no newer
        # than it cannot set the target (migrator.target.default_target), so a file whose
        # reach only ties it is passed over too (no file names it).
        self.holder = -1  # the first file at the newest floor found so far
        self.narrowed: Set[int] = set()  # the files whose reach was narrowed at their turn
        Seen.floor = tasks[0][1].target if tasks else None

    def passes_over(self, index: int) -> bool:
        """Is the file at ``index`` passed over, its turn come?  Its reach first; where that
        cannot pass it over once a floor is found, the reach of only the rules its gates pass
        (:func:`narrowed_reach_of`), read now: a floor found below what some rule's fixes
        need in general leaves most files' first reach above it."""
        if Seen.floor is None or self.reaches[index] is None or self._passes(index):
            return self._passes(index)
        if index not in self.narrowed:
            self.narrowed.add(index)
            task = self.tasks[index]
            narrower = narrowed_reach_of(
                task[0], task[1], task[4], lambda reach: self._passes(index, reach)
            )
            if narrower is not None and narrower < self.reaches[index]:  # type: ignore[operator]
                self.reaches[index] = narrower
        return self._passes(index)

    def key(self, index: int) -> Tuple[Tuple[int, ...], int]:
        """When the file at ``index`` takes its turn: newest reach first, then in order."""
        return tuple(-part for part in self.reaches[index] or _UNBOUNDED), index

    def _passes(self, index: int, reach: Optional[Version] = None) -> bool:
        """Would ``reach`` (the file's, by default) pass the file at ``index`` over?"""
        reach, seen = reach or self.reaches[index], Seen.floor
        return (
            seen is not None
            and reach is not None
            and (reach < seen or (reach == seen and index > self.holder))
        )

    def record(self, index: int, result: "FileResult") -> None:
        found = None if result.floor is None else parse_version(result.floor[0])
        seen = Seen.floor
        if found is not None and (seen is None or found > seen):
            Seen.floor, self.holder = found, index
        elif found is not None and found == seen:
            self.holder = min(self.holder, index)


def surveyed(
    tasks: List[tuple],
    process: Callable[[tuple], "FileResult"],
    passed: Callable[[tuple], "FileResult"],
    progress: Optional[Callable[[int], None]],
) -> Iterator["FileResult"]:
    """The survey's results in one process (``process`` migrates a task, ``passed`` stands for
    a task passed over: see :class:`Survey`), in the order of ``tasks``."""
    survey = Survey(tasks)
    results: List[Optional["FileResult"]] = [None] * len(tasks)
    turns = [survey.key(index) for index in survey.order]  # (in order: a heap already)
    try:
        while turns:
            index = heapq.heappop(turns)[1]
            if survey.passes_over(index):
                results[index] = passed(tasks[index])
            else:
                Seen.reach = survey.reaches[index]
                result = process(tasks[index])
                Seen.reach = None
                if result.later is not None:  # (a reach read from its tree: a later turn)
                    survey.reaches[index] = result.later
                    heapq.heappush(turns, survey.key(index))
                    continue
                results[index] = result
                survey.record(index, result)
            interrupt.release()  # (the survey's results are only read for the floor)
            interrupt.checkpoint()
            if progress:
                progress(1)
    finally:
        Seen.floor = Seen.reach = None
    for each in results:
        assert each is not None
        yield each


_UNBOUNDED: Version = (10**9, 0, 0)
