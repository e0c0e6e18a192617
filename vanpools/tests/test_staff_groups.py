import pytest

pytestmark = pytest.mark.django_db

AUDIT_TRAIL = ["case", "caseevent", "agentrun", "rider", "verification", "message"]


@pytest.mark.parametrize("model", AUDIT_TRAIL)
def test_it_never_lets_an_auditor_delete_the_audit_trail(auditor, model):
    app = {
        "case": "cases",
        "caseevent": "cases",
        "verification": "cases",
        "rider": "vanpools",
        "agentrun": "agents",
        "message": "outreach",
    }[model]
    assert auditor.has_perm(f"{app}.view_{model}")
    assert not auditor.has_perm(f"{app}.delete_{model}")


def test_it_lets_an_auditor_correct_the_roster(auditor):
    for perm in [
        "vanpools.change_vanpool",
        "vanpools.add_employee",
        "vanpools.delete_leave",
        "cases.change_pendingaction",
    ]:
        assert auditor.has_perm(perm), perm


def test_it_gives_coordinators_read_only_admin(coordinator):
    # Deciding pending actions is their work (the dashboard), not an admin edit.
    perms = coordinator.get_all_permissions() - {"cases.decide_pendingaction"}
    assert "cases.view_case" in perms
    assert "vanpools.view_employee" in perms
    assert all(perm.split(".")[1].startswith("view_") for perm in perms)


def test_it_lets_coordinators_and_auditors_decide_pending_actions(coordinator, auditor, outsider):
    assert coordinator.has_perm("cases.decide_pendingaction")
    assert auditor.has_perm("cases.decide_pendingaction")
    assert not outsider.has_perm("cases.decide_pendingaction")


def test_it_gives_outsiders_nothing(outsider):
    assert outsider.get_all_permissions() == set()


def test_only_auditors_see_home_street_addresses(coordinator, auditor, outsider):
    assert auditor.has_perm("vanpools.view_home_address")
    assert not coordinator.has_perm("vanpools.view_home_address")
    assert not outsider.has_perm("vanpools.view_home_address")
