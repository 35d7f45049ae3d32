"""Orders the rollout tests: the ones marked run_last (booted containers, minutes) after
every other integration test, so a quick failure elsewhere shows first."""

from __future__ import annotations


def pytest_configure(config):
    config.addinivalue_line("markers", "run_last: run after every other collected test")


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.get_closest_marker("run_last") is not None)
