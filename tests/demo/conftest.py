import pytest

from tests import factories


@pytest.fixture
def run(project):  # type: ignore[no-untyped-def]
    return factories.make_run(project, active_agent="writer")
