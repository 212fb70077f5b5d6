"""The API history's class members and configuration flags: the generator on sources made
here, and the facts the shipped file states about well-known ones."""

from __future__ import annotations

from jaxmigrate.rules._api_history import ApiHistory, history
from tests.test_api_history import _generator, _sdist

_CONFIG_1 = """
    class Config:
        def __init__(self):
            self.values = {}
            self._private = 1
        def update(self, name, val): ...
        def read(self, name): ...
    def bool_state(name, default):
        setattr(Config, name, property(lambda _: default))
    def define_bool_state(name, default):
        return bool_state(name, default)
    def string_flag(name, default):
        config.add_option(name, default)
    config = Config()
    bool_state("jax_enable_x64", False)
    define_bool_state(name="jax_debug_nans", default=False)
    bool_state("jax_platform_name", "")
    string_flag("jax_backend_target", "")
"""
RELEASE_1 = {
    "jax/__init__.py": """
        from jax._src.core import Primitive, Opaque, Closed, Swapped
        from jax._src.config import config as config
    """,
    "jax/_src/__init__.py": "",
    "jax/_src/core.py": """
        import numpy as np
        from jax._src import util

        class Base:
            shared = 1
            def inherited(self): ...

        class Primitive(Base):
            multiple_results = False
            __slots__ = ("slot_a",)
            annotated_only: int
            def bind(self): ...
            @property
            def prop(self): ...
            class Nested: ...
            def _private(self): ...

        class Opaque(np.ndarray):  # a base from outside JAX: open
            def gone(self): ...

        class Closed:
            def later_open(self): ...

        @util.use_cpp_class(object)  # may swap the class: open
        class Swapped:
            def method(self): ...

        _methods = {"sum": 1, "mean": 2}

        def _attach(cls):
            for name in _methods:
                setattr(cls, name, 1)
            for name in _methods:
                setattr(cls, f"_{name}", 2)  # private: no member, and no reason to open it

        _attach(Primitive)
        Primitive.attached = 3
    """,
    "jax/_src/config.py": _CONFIG_1,
}
RELEASE_2 = {
    "jax/__init__.py": RELEASE_1["jax/__init__.py"],
    "jax/_src/__init__.py": "",
    "jax/_src/core.py": """
        class Primitive:
            __slots__ = ("slot_a",)
            def bind_with_trace(self): ...

        class Opaque:
            pass

        class Closed:
            def __getattr__(self, name): ...  # open from here on

        class Swapped:
            pass

        _methods = {"sum": 1}

        def _attach(cls):
            for name in _methods:
                setattr(cls, name, 1)

        _attach(Primitive)
    """,
    "jax/_src/config.py": _CONFIG_1.replace(
        'bool_state("jax_platform_name", "")', 'string_flag("jax_platform_name", "")'
    ),
}


def _built(tmp_path) -> ApiHistory:
    generator = _generator()
    sdists = {
        "0.2.0": _sdist(tmp_path, "0.2.0", RELEASE_1),
        "0.2.1": _sdist(tmp_path, "0.2.1", RELEASE_2),
    }
    return ApiHistory(generator.build(sdists, jobs=1))


def test_generator_reads_class_members_inherited_attached_and_open(tmp_path):
    h = _built(tmp_path)
    removed = [
        "bind", "prop", "Nested", "multiple_results", "shared", "inherited", "mean", "attached",
    ]  # fmt: skip
    for member in removed:  # own, inherited (Base), attached by _attach and by assignment
        absence = h.absence(f"jax.Primitive.{member}", (0, 2, 0))
        assert absence is not None and absence.removed_in == "0.2.1", member
    assert h.absence("jax.Primitive.bind_with_trace", (0, 2, 0)).added_in == "0.2.1"
    for kept in ("slot_a", "sum"):  # __slots__, and a name _attach sets in both releases
        assert (
            h.lookup(f"jax.Primitive.{kept}")
            and h.absence(f"jax.Primitive.{kept}", (0, 2, 0)) is None
        )
    # no class attribute: an annotation alone, private names
    for absent in ("annotated_only", "_private", "_sum"):
        assert h.lookup(f"jax.Primitive.{absent}") is None
    # open where members cannot all be seen: a base from outside JAX, a swapping decorator
    assert h.lookup("jax.Opaque.gone") is None and h.lookup("jax.Swapped.method") is None
    # a class open in one release keeps there every member it had elsewhere
    assert h.absence("jax.Closed.later_open", (0, 2, 0)) is None


def test_generator_separates_attribute_flags_from_flags_by_name(tmp_path):
    h = _built(tmp_path)
    # an attribute in 0.2.0 (bool_state sets a property), by name only in 0.2.1 (string_flag)
    attribute = h.attribute_flag_absence("jax_platform_name", (0, 2, 0))
    assert attribute is not None and attribute.by_name_only == "0.2.1"
    assert "by name only" in attribute.describe("0.2.0")
    assert h.flag_absence("jax_platform_name", (0, 2, 0)) is None  # update("...") works
    # by name only throughout: never an attribute, always settable
    assert h.attribute_flag_absence("jax_backend_target", (0, 2, 0)).by_name_only == "0.2.0..0.2.1"
    assert h.flag_absence("jax_backend_target", (0, 2, 0)) is None
    # attributes throughout, directly or through a definer that calls one
    for flag in ("jax_enable_x64", "jax_debug_nans"):
        assert h.attribute_flag_absence(flag, (0, 2, 0)) is None
    # Config's members, the attributes its __init__ sets included
    for member in ("values", "update", "read"):
        assert h.absence(f"jax.config.{member}", (0, 2, 0)) is None
    assert h.lookup("jax.config._private") is None


# -- the shipped history ------------------------------------------------------------------
def test_shipped_history_knows_class_members_and_flags_by_name():
    h = history()
    # members of classes JAX still has, on every release that has the class
    assert h.absence("jax.core.Primitive.bind", (0, 4, 13), (0, 4, 30)) is None
    assert h.absence("jax.sharding.Mesh.shape", (0, 4, 13)) is None
    # a flag JAX defines by name only for a while (string_flag/DEFINE_string)
    platform = h.attribute_flag_absence("jax_platform_name", (0, 4, 13), (0, 4, 30))
    assert platform is not None and platform.by_name_only
    assert h.flag_absence("jax_platform_name", (0, 4, 13), (0, 4, 30)) is None
    # flags made by bool_state are attributes
    assert h.attribute_flag_absence("jax_enable_x64", (0, 4, 13)) is None
    assert h.absence("jax.config.values", (0, 2, 0)) is None
