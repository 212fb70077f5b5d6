"""Lines that stop a legacy module at import: each is migrated, or its finding says exactly
what to write (the test of "done" in bench/import_smoke.py)."""

from __future__ import annotations

import textwrap

import pytest

from jaxmigrate import Settings, migrate_source


def _run(text: str, **settings: object):
    return migrate_source(textwrap.dedent(text), Settings(**settings))  # type: ignore[arg-type]


def test_a_removed_config_definer_names_what_to_write():
    result = _run(
        """
        from jax import config as jax_config
        flag = jax_config.define_bool_state("flax_x", False, "help")
        """,
        target_version="0.4.30",
    )
    (finding,) = result.findings
    assert finding.code == "JAX901"
    assert "no public successor" in finding.message
    assert "environment variable or an absl flag" in finding.message
    assert "jax._src.config.bool_state(...) takes the same arguments" in finding.detail


_DEFINER = """
from jax import config as jax_config
flag = jax_config.define_bool_state("flax_x", False, "help")
"""


def test_jax_test_case_names_what_replaces_it():
    """jax.test_util.JaxTestCase (JAX's own test base, removed with no successor): the finding
    names what a project's tests move to, not only the changelog."""
    result = _run(
        """
        from jax import test_util as jtu

        class Test(jtu.JaxTestCase):
            pass
        """,
        target_version="0.4.30",
    )
    (finding,) = result.findings
    assert (finding.code, finding.line) == ("JAX901", 4)
    assert finding.message.endswith("has no public successor; use absltest with np.testing")
    assert "parameterized.TestCase" in finding.detail


def test_a_removed_config_definer_becomes_the_private_state_function_from_0_4_31():
    result = _run(_DEFINER, target_version="0.4.31", unsafe_fixes=True)
    assert result.output == (
        '\nimport jax\nflag = jax._src.config.bool_state("flax_x", False, "help")\n'
    )
    (fix,) = [fix for fix in result.fixes if fix.code == "JAX901"]
    assert fix.message.endswith("(private JAX API)") and "jax._src is private" in fix.detail
    (finding,) = result.findings
    assert finding.code == "JAX902"  # the private module the fix writes stays reported


def test_a_removed_config_definer_is_an_unsafe_finding_without_unsafe_fixes():
    result = _run(_DEFINER, target_version="0.4.31")
    assert result.output == result.source
    (finding,) = result.findings
    assert finding.code == "JAX901" and "[unsafe fix" in finding.message
    assert "environment variable or an absl flag" in finding.detail


def test_a_dead_shim_says_which_name_is_gone_and_which_branch_stays():
    result = _run(
        """
        import jax
        if hasattr(jax.interpreters.xla, "_DeviceArray"):
            A = jax.interpreters.xla._DeviceArray
        else:
            A = jax.interpreters.xla.DeviceArray
        """,
        target_version="0.4.13",
        select=("JAX907",),
    )
    (finding,) = result.findings
    assert finding.code == "JAX907"
    assert "no branch of this hasattr test works on JAX" in finding.message
    assert "names jax.interpreters.xla.DeviceArray" in finding.detail
    assert "its else" in finding.detail
    assert result.output == result.source  # unsafe: reported without --unsafe-fixes


def test_a_dead_version_test_is_called_a_version_test():
    result = _run(
        """
        import jax
        if jax.__version_info__ > (0, 3, 4):
            info = jax.core.source_info_util.new_source_info()
        else:
            info = None
        """,
        select=("JAX907",),
    )
    (finding,) = result.findings
    assert "no branch of this version test works on JAX" in finding.message
    assert "names jax.core.source_info_util" in finding.detail


def test_a_dead_shim_keeps_the_branch_the_newest_jax_runs():
    result = _run(
        """
        import jax
        if not hasattr(jax.interpreters.pxla, "_ShardedDeviceArray"):
            A = jax.interpreters.pxla.ShardedDeviceArray
        else:
            A = jax.interpreters.pxla._ShardedDeviceArray
        """,
        target_version="0.4.13",
        select=("JAX907",),
        unsafe_fixes=True,
    )
    assert result.output == "\nimport jax\nA = jax.interpreters.pxla.ShardedDeviceArray\n"


def test_a_capped_target_answers_for_its_own_newest_release():
    # On 0.4.13..0.4.13 the else branch's ShardedDeviceArray still exists: the shim is live.
    result = _run(
        """
        import jax
        if hasattr(jax.interpreters.pxla, "_ShardedDeviceArray"):
            A = jax.interpreters.pxla._ShardedDeviceArray
        else:
            A = jax.interpreters.pxla.ShardedDeviceArray
        """,
        target_version="0.4.13",
        target_upper="0.4.13",
        select=("JAX907",),
        unsafe_fixes=True,
    )
    assert result.output == result.source and not result.findings


_COLLECTIVES = """
import jax
jax.interpreters.pxla.multi_host_supported_collectives.add(jax.lax.pmax_p)
x = jax.numpy.ones(2)
"""


def test_an_update_of_the_gone_collective_set_is_guarded_where_older_releases_remain():
    # rlax 0.1.5: the set and the check that read it are gone from 0.4.16 on; 0.4.1..0.4.15
    # still read it.  A safe fix: no --unsafe-fixes needed.
    result = _run(_COLLECTIVES, source_version="0.3.25", target_version="0.4.1")
    assert result.output == (
        "\nimport jax\n"
        'if hasattr(jax.interpreters.pxla, "multi_host_supported_collectives"):\n'
        "    jax.interpreters.pxla.multi_host_supported_collectives.add(jax.lax.pmax_p)\n"
        "x = jax.numpy.ones(2)\n"
    )
    (fix,) = [fix for fix in result.fixes if fix.code == "JAX805"]
    assert fix.safety == "safe" and fix.message.startswith("guarded an update")
    assert "every collective is allowed on multiple hosts" in fix.detail
    assert result.findings == []  # the guarded statement needs nothing more


def test_an_update_of_the_gone_collective_set_is_deleted_where_no_release_has_it():
    result = _run(_COLLECTIVES, source_version="0.3.25", target_version="0.4.30")
    assert result.output == "\nimport jax\nx = jax.numpy.ones(2)\n"
    (fix,) = [fix for fix in result.fixes if fix.code == "JAX805"]
    assert fix.safety == "safe" and "ran on none of them" in fix.detail


def test_an_update_sharing_its_line_is_deleted_only_with_unsafe_fixes():
    shared = _COLLECTIVES.replace("jax.interpreters", "y = 1; jax.interpreters")
    result = _run(shared, source_version="0.3.25", target_version="0.4.1")
    assert result.output == result.source
    (finding,) = result.findings
    assert finding.code == "JAX805" and "[unsafe fix" in finding.message
    fixed = _run(shared, source_version="0.3.25", target_version="0.4.1", unsafe_fixes=True)
    assert fixed.output == "\nimport jax\ny = 1\nx = jax.numpy.ones(2)\n"


def test_an_update_of_the_collective_set_in_newer_code_says_to_delete_it():
    # A source stated at 0.4.16 or later: nothing says the statement was ever needed.
    result = _run(
        _COLLECTIVES,
        source_version="0.4.20",
        source_explicit=True,
        target_version="0.4.20",
        unsafe_fixes=True,
    )
    assert result.output == result.source
    (finding,) = result.findings
    assert "multi_host_supported_collectives is gone from JAX 0.4.16" in finding.message
    assert finding.message.endswith("delete this")


def test_an_update_of_the_collective_set_stays_on_a_range_that_still_has_it():
    # 0.4.13..0.4.14: the set is there, the statement works; only pxla's own finding is left.
    result = _run(
        _COLLECTIVES,
        source_version="0.3.25",
        target_version="0.4.13",
        target_upper="0.4.14",
        unsafe_fixes=True,
    )
    assert result.output == result.source
    assert [
        f.message.startswith("jax.interpreters.pxla is JAX-internal") for f in result.findings
    ] == [True]


_SEMANTICS = """
import contextlib
from jax.experimental import maps

@contextlib.contextmanager
def global_semantics():
    prev = maps._positional_semantics.val
    try:
        maps._positional_semantics.val = maps._PositionalSemantics.GLOBAL
        yield
    finally:
        maps._positional_semantics.val = prev
"""


def test_code_that_saves_sets_and_restores_positional_semantics_is_deleted():
    # dm-haiku 0.0.9's jaxpr_info.py: the try/finally gives way to its body.
    result = _run(_SEMANTICS, target_version="0.4.13", unsafe_fixes=True)
    assert result.output == (
        "\nimport contextlib\n\n@contextlib.contextmanager\ndef global_semantics():\n    yield\n"
    )
    assert not result.findings


def test_positional_semantics_code_is_an_unsafe_finding_without_unsafe_fixes():
    result = _run(_SEMANTICS, target_version="0.4.13")
    assert result.output == result.source
    unsafe = [f for f in result.findings if "[unsafe fix" in f.message]
    assert [f.line for f in unsafe] == [7, 8]  # the save, and the try it collapses
    assert all(f.code == "JAX806" and "went with GlobalDeviceArray" in f.detail for f in unsafe)


def test_positional_semantics_code_stays_where_the_stated_source_is_newer():
    result = _run(
        _SEMANTICS,
        source_version="0.4.7",
        source_explicit=True,
        target_version="0.4.13",
        unsafe_fixes=True,
    )
    assert result.output == result.source


@pytest.mark.parametrize(
    "test, kept",
    [
        ('version.parse(jax.__version__) >= version.parse("0.3.1")', "register"),
        ('packaging.version.Version(jax.__version__) < packaging.version.parse("0.3.1")', "None"),
        ("tuple(map(int, jax.version.__version__.split('.'))) >= (0, 3, 1)", "register"),
        ("not jax.__version_info__ >= (0, 3, 1)", "None"),
        ("tuple(map(int, jaxlib.__version__.split('.'))) > (0, 1, 60)", "register"),
    ],
)
def test_a_dead_version_shim_keeps_the_branch_the_newest_jax_runs(test, kept):
    """flax 0.6.4's struct.py registered keypaths under a version test whose answer is the
    same on every release of today's target: when its branch runs there and names what JAX
    removed, the shim is replaced by it, and the name is reported; a shim whose branch today
    works (``f = None``) stays."""
    result = _run(
        f"""
        import jax
        import jaxlib
        import packaging.version
        from packaging import version

        if {test}:
            f = jax.tree_util.register_keypaths
        else:
            f = None
        """,
        target_version="0.4.30",
        unsafe_fixes=True,
    )
    if kept == "None":
        assert result.output == result.source and not result.fixes
        return
    assert "if " not in result.output and "f = jax.tree_util.register_keypaths\n" in result.output
    assert "JAX907" in [d.code for d in result.fixes]
    assert any("register_keypaths" in d.message for d in result.findings)


FLAX_META = """
    from jax.experimental import maps

    def global_mesh_defined():
        return maps.thread_resources.env.physical_mesh.devices.shape != ()
    """


def test_the_thread_resources_redirect_is_one_unsafe_finding_without_unsafe_fixes():
    result = _run(FLAX_META, target_version="0.4.13")
    assert result.output == textwrap.dedent(FLAX_META)
    at_use = [d for d in result.findings if d.line == 5]
    assert [(d.code, d.safety) for d in at_use] == [("JAX806", "unsafe")], result.findings
    assert "jax._src.mesh.thread_resources" in at_use[0].message


def test_thread_resources_below_its_private_home_is_reported_with_what_to_write():
    result = _run(FLAX_META, target_version="0.4.1", unsafe_fixes=True)
    assert result.output == textwrap.dedent(FLAX_META)  # jax._src.mesh came in 0.4.7
    (at_use,) = [d for d in result.findings if d.line == 5]
    assert "use NamedShardings or jax.set_mesh" in at_use.message


def test_a_gone_xla_member_cites_what_jax_said_and_where_that_led():
    # distrax 0.1.3's utils/jittable.py: JAX's message points at jax.core.get_aval, itself
    # removed since; the finding carries both messages, so the advice ends at a live name.
    result = _run("import jax\n\nx = jax.xla.abstractify(y)\n", target_version="0.4.30")
    (finding,) = result.findings
    assert finding.code == "JAX104"
    assert "jax.core.get_aval can be used as a replacement" in finding.detail
    assert 'And of jax.core.get_aval: "' in finding.detail
    assert "use jax.typeof instead" in finding.detail


def test_a_gone_xla_translation_api_names_the_mlir_lowering_to_write():
    """kfac-jax 0.0.3 registers XLA translation rules and names ``jax.xla.XlaOp`` in a type:
    each finding said "find a public replacement"; the replacement is one public API."""
    result = _run(
        """
        import jax

        Op = jax.xla.XlaOp
        jax.xla.register_translation(tag_p, lambda ctx, *args: args)
        """,
        target_version="0.4.30",
    )
    said = {f.message.split(" is gone")[0]: f for f in result.findings if f.code == "JAX104"}
    assert "use mlir.register_lowering" in said["jax.interpreters.xla.register_translation"].message
    assert "mlir.lower_fun(impl" in said["jax.interpreters.xla.register_translation"].detail
    assert "mlir.ir.Value" in said["jax.interpreters.xla.XlaOp"].message
