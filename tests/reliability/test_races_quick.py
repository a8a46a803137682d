"""The race experiments of issue 19 (reliability/races.py) at their quick counts: many trials each."""

import pytest

from reliability import races

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_22_an_approval_expiry_racing_decisions_leaves_one_outcome_and_tells_the_losers_why() -> None:
    result = races.approval_expiry_race(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert sum(figures["outcomes"].values()) == figures["trials"]
    assert set(figures["loser_replies"]) <= {"409 already_decided", "409 approval_expired"}


def test_23_a_result_hash_conflict_delivered_concurrently_consumes_one_result_and_answers_409() -> None:
    result = races.result_conflict_race(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["replies"]["200 consumed"] == figures["trials"]
    assert set(figures["replies"]) <= {"200 consumed", "200 already_consumed", "409 effect_conflict"}


def test_24_supersedes_racing_on_one_record_leave_one_new_version_and_refuse_the_rest() -> None:
    result = races.supersede_race(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["replies"] == {"201 ": figures["trials"],
                                  "409 already_superseded": figures["trials"] * (figures["supersedes_per_trial"] - 1)}
