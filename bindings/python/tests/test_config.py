# braid.core.config: mlx.core.config's lookup order (the thread's scoped_update, then update(),
# then the environment, then the default), scopes per thread, and nesting.
import os
import subprocess
import sys
import threading

import pytest

import braid.core as mx


def test_default_when_nothing_is_set():
    assert mx.config.get("BRAID_TEST_UNSET_SETTING", 7) == 7
    assert mx.config.get(name="BRAID_TEST_UNSET_SETTING", default_value=-3) == -3


def test_environment_then_update_then_scope():
    code = (
        "import braid.core as mx\n"
        "print(mx.config.get('BRAID_TEST_SETTING', 0))\n"
        "mx.config.update('BRAID_TEST_SETTING', 5)\n"
        "print(mx.config.get('BRAID_TEST_SETTING', 0))\n"
        "with mx.config.scoped_update(BRAID_TEST_SETTING=9):\n"
        "    print(mx.config.get('BRAID_TEST_SETTING', 0))\n"
        "print(mx.config.get('BRAID_TEST_SETTING', 0))\n"
    )
    env = dict(os.environ, BRAID_TEST_SETTING="42")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["42", "5", "9", "5"]


def test_environment_value_must_be_an_integer():
    code = "import braid.core as mx\nmx.config.get('BRAID_TEST_SETTING', 0)\n"
    env = dict(os.environ, BRAID_TEST_SETTING="yes")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "ValueError" in out.stderr and "not an integer" in out.stderr


def test_scoped_updates_nest_and_restore():
    name = "BRAID_TEST_NESTED"
    with mx.config.scoped_update(**{name: 1}, BRAID_TEST_OTHER=2) as scope:
        assert isinstance(scope, mx.config.ScopedUpdate)
        assert mx.config.get(name, 0) == 1
        assert mx.config.get("BRAID_TEST_OTHER", 0) == 2
        with mx.config.scoped_update(**{name: 3}):
            assert mx.config.get(name, 0) == 3
            assert mx.config.get("BRAID_TEST_OTHER", 0) == 2
        assert mx.config.get(name, 0) == 1
    assert mx.config.get(name, 0) == 0


def test_scope_restores_after_an_exception():
    with pytest.raises(KeyError):
        with mx.config.scoped_update(BRAID_TEST_RAISED=1):
            raise KeyError("x")
    assert mx.config.get("BRAID_TEST_RAISED", 0) == 0


def test_scoped_update_is_per_thread_and_update_is_process_wide():
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def worker():
        with mx.config.scoped_update(BRAID_TEST_THREAD=11):
            seen["inside"] = mx.config.get("BRAID_TEST_THREAD", 0)
            entered.set()
            release.wait(10)
        seen["after"] = mx.config.get("BRAID_TEST_PROCESS", 0)

    t = threading.Thread(target=worker)
    t.start()
    assert entered.wait(10)
    # The worker's scope is not visible here; a process-wide update is visible there.
    assert mx.config.get("BRAID_TEST_THREAD", 0) == 0
    mx.config.update("BRAID_TEST_PROCESS", 8)
    release.set()
    t.join()
    assert seen == {"inside": 11, "after": 8}


def test_scoped_update_takes_integers():
    with pytest.raises(TypeError):
        mx.config.scoped_update(BRAID_TEST_BAD="1")
    with pytest.raises(TypeError):
        mx.config.update("BRAID_TEST_BAD", 1.5)


def test_scoped_updates_may_exit_out_of_order():
    first = mx.config.scoped_update(BRAID_TEST_ORDER=1)
    second = mx.config.scoped_update(BRAID_TEST_ORDER=2)
    first.__enter__()
    second.__enter__()
    assert mx.config.get("BRAID_TEST_ORDER", 0) == 2
    first.__exit__(None, None, None)  # the outer one first, as overlapping asyncio tasks may
    assert mx.config.get("BRAID_TEST_ORDER", 0) == 2
    second.__exit__(None, None, None)
    assert mx.config.get("BRAID_TEST_ORDER", 0) == 0


def test_exit_on_another_thread_raises_and_changes_nothing():
    scope = mx.config.scoped_update(BRAID_TEST_CROSS=5)
    scope.__enter__()
    errors = []

    def worker():
        with mx.config.scoped_update(BRAID_TEST_CROSS=6):
            try:
                scope.__exit__(None, None, None)
            except RuntimeError as e:
                errors.append(str(e))
            errors.append(mx.config.get("BRAID_TEST_CROSS", 0))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert "did not enter it" in errors[0] and errors[1] == 6
    assert mx.config.get("BRAID_TEST_CROSS", 0) == 5
    scope.__exit__(None, None, None)
    assert mx.config.get("BRAID_TEST_CROSS", 0) == 0


def test_exit_after_the_entering_thread_ended_raises():
    scope = mx.config.scoped_update(BRAID_TEST_ENDED_THREAD=1)
    t = threading.Thread(target=scope.__enter__)
    t.start()
    t.join()
    for _ in range(3):  # threads that may reuse the ended thread's id
        errors = []

        def exit_here():
            try:
                scope.__exit__(None, None, None)
            except RuntimeError as e:
                errors.append(e)

        u = threading.Thread(target=exit_here)
        u.start()
        u.join()
        assert errors
    with pytest.raises(RuntimeError):
        scope.__exit__(None, None, None)
    assert mx.config.get("BRAID_TEST_ENDED_THREAD", 0) == 0
