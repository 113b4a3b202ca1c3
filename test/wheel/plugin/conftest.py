"""The pytest plugin's own tests (test_pytest_plugin.py) run pytest sessions
in child processes through pytester. They run against an installed wheel
(test/wheel/test-wheel.sh), where the plugin loads from its pytest11 entry
point, or against a build tree (test/wheel/pytest-plugin.test), with python/
on PYTHONPATH and XSC_RUNTIME_LIBRARY and XSC_PROGRAM naming the build's
runtime and command."""
pytest_plugins = ["pytester"]
