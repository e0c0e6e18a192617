"""insert_returning writes exactly the rows bulk_create writes, and gives back their keys."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import Model

from agents.models import AgentRun
from cases.models import Verification
from poolpatrol.bulk_insert import insert_returning, saved_key
from tests.factories import CaseFactory

pytestmark = pytest.mark.django_db


def stored(model: type[Model], pks: list[int]) -> list[tuple]:
    """The rows as the database holds them, the key and creation time left out."""
    fields = [
        f for f in model._meta.concrete_fields if not f.primary_key and f.name != "created_at"
    ]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        marks = ", ".join(["%s"] * len(pks))
        cursor.execute(f"SELECT {columns} FROM {table} WHERE id IN ({marks}) ORDER BY id", pks)
        rows = cursor.fetchall()
    # PostgreSQL hands JSON back decoded; SQLite as text: compare what the ORM reads.
    return [
        tuple(f.from_db_value(v, None, connection) if hasattr(f, "from_db_value") else v
              for f, v in zip(fields, row, strict=True))
        for row in rows
    ]  # fmt: skip


def verifications(case) -> list[Verification]:
    return [
        Verification(
            case=case,
            vanpool=case.vanpool,
            check_type=Verification.CheckType.RIDERSHIP,
            verdict=Verification.Verdict.FAIL,
            confidence=4,
            reasoning="3 of 20 workdays aboard; ünïcode — 中文",
            evidence=[{"source": "trip", "ref": "T-1", "date": "2026-10-26", "n": 1.5}],
            rider_flags={"EMP-1": "fail"},
            audit_date=dt.date(2026, 10, 30),
            input_hash="ab" * 32,
        ),
        Verification(
            case=None,
            vanpool=case.vanpool,
            check_type=Verification.CheckType.PARKING,
            verdict=Verification.Verdict.PASS,
            confidence=5,
            reasoning="no permit",
            evidence=[],
        ),
    ]


def test_verifications_are_stored_as_bulk_create_stores_them_and_get_their_keys():
    case = CaseFactory()
    by_orm = Verification.objects.bulk_create(verifications(case))
    ours = verifications(case)
    insert_returning(ours)
    assert all(v.pk and not v._state.adding for v in ours)
    assert len({v.pk for v in by_orm + ours}) == 4
    assert stored(Verification, [v.pk for v in ours]) == stored(
        Verification, [v.pk for v in by_orm]
    )
    assert Verification.objects.get(pk=ours[0].pk).created_at is not None


def runs(case, parent: AgentRun | None, verification: Verification | None) -> list[AgentRun]:
    return [
        AgentRun(
            agent="ridership",
            backend="rules",
            input={"vanpool": "VP-1", "days": [1, 2]},
            output=None,
            cost_usd=Decimal("0.000125"),
            latency_ms=3,
            parent=parent,
            case=case,
            vanpool=case.vanpool,
            verification=verification,
        ),
        AgentRun(agent="supervisor", backend="rules", output={"verdict": "pass"}),
    ]


def test_agent_runs_keep_their_parent_and_verification_keys_null_output_and_cost():
    case = CaseFactory()
    parent = AgentRun.objects.create(agent="audit", backend="rules")
    verification = Verification.objects.bulk_create(verifications(case)[:1])[0]
    by_orm = AgentRun.objects.bulk_create(runs(case, parent, verification))
    ours = runs(case, parent, verification)
    insert_returning(ours)
    assert stored(AgentRun, [r.pk for r in ours]) == stored(AgentRun, [r.pk for r in by_orm])
    assert AgentRun.objects.get(pk=ours[0].pk).output is None
    assert list(parent.children.order_by("pk")) == [by_orm[0], ours[0]]


def test_a_related_row_saved_after_it_was_assigned_gives_its_key():
    case = CaseFactory()
    verification = verifications(case)[0]
    run = AgentRun(agent="ridership", backend="rules", verification=verification)
    insert_returning([verification])
    insert_returning([run])
    assert AgentRun.objects.get(pk=run.pk).verification_id == verification.pk


def test_many_rows_go_in_several_statements_in_order():
    case = CaseFactory()
    many = [AgentRun(agent=f"a{n}", backend="rules", case=case) for n in range(2500)]
    insert_returning(many)
    assert [run.agent for run in AgentRun.objects.filter(case=case).order_by("pk")] == [
        f"a{n}" for n in range(2500)
    ]
    assert [run.pk for run in many] == sorted(run.pk for run in many)


@pytest.mark.parametrize(
    "value", [dt.date(2026, 10, 26), dt.datetime(2026, 10, 26, 7, 0), CaseFactory.build]
)
def test_a_value_json_dumps_refuses_is_refused_and_nothing_is_written(value):
    # json.dumps (the ORM's way) refuses dates, datetimes and objects; so does this.
    case = CaseFactory()
    bad = verifications(case)
    bad[1].evidence = [{"when": value}]
    with pytest.raises(TypeError):
        insert_returning(bad)
    assert not Verification.objects.exists()


def test_a_saved_row_is_referred_to_by_its_key_and_an_unsaved_one_is_refused():
    case = CaseFactory()
    assert saved_key(case) == case.pk
    assert saved_key(None) is None
    unsaved = verifications(case)[0]
    with pytest.raises(ValueError, match="unsaved Verification"):
        saved_key(unsaved)


def test_a_row_holding_an_unsaved_related_object_is_refused_and_nothing_is_written():
    # As bulk_create refuses it: the key would be written as null and the link lost.
    case = CaseFactory()
    run = AgentRun(agent="ridership", backend="rules", verification=verifications(case)[0])
    with pytest.raises(ValueError, match="unsaved related object 'verification'"):
        insert_returning([run])
    assert not AgentRun.objects.exists()
