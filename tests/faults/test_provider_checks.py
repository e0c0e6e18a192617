"""Issue 34 point 16: a configured provider without its key or its extra refuses to start.

Amazon SES and Postal answered 500 on every delivery (boto3 and cryptography
were not installed), and Resend once its signing secret was set (svix). The
extras are locked now, and the system check names what is missing before a
single delivery is lost: ``manage.py`` commands and the workers run it, and so
does ``poolpatrol.wsgi`` when gunicorn imports it.
"""

import subprocess
import sys

import pytest

from outreach.providers import check_email_providers
from tests.provider_support import COMPLETE_SETTINGS, complete_settings
from tests.qcluster_support import ROOT, process_env

MISSING_KEYS = [
    ("brevo", "BREVO_API_KEY"),
    ("mailersend", "MAILERSEND_INBOUND_SECRET"),
    ("mailersend", "MAILERSEND_SIGNING_SECRET"),
    ("mailgun", "MAILGUN_WEBHOOK_SIGNING_KEY"),
    ("mailtrap", "MAILTRAP_API_TOKEN"),
    ("mandrill", "MANDRILL_WEBHOOK_KEY"),
    ("postal", "POSTAL_WEBHOOK_KEY"),
    ("resend", "RESEND_API_KEY"),
    ("sendinblue", "SENDINBLUE_API_KEY"),
    ("unisender_go", "UNISENDER_GO_API_KEY"),
]


def errors_for(settings, provider: str, anymail: dict[str, object]) -> list:
    settings.EMAIL_PROVIDER = [provider]
    settings.ANYMAIL = anymail
    return check_email_providers()


def test_with_no_provider_configured_the_check_is_silent():
    assert check_email_providers() == []  # the test suite's and the embedded default


@pytest.mark.parametrize("provider", sorted(COMPLETE_SETTINGS))
def test_a_provider_with_all_it_needs_passes_the_check(settings, provider):
    assert errors_for(settings, provider, complete_settings(provider)) == []


@pytest.mark.parametrize(("provider", "key"), MISSING_KEYS)
def test_fault_86_a_configured_provider_missing_its_key_is_an_error_naming_it(
    settings, provider, key
):
    anymail = {name: value for name, value in complete_settings(provider).items() if name != key}

    errors = errors_for(settings, provider, anymail)

    assert [error.id for error in errors] == ["outreach.E102"]
    assert errors[0].is_serious()
    assert f"ANYMAIL_{key}" in errors[0].msg
    assert f"/anymail/{provider}/" in errors[0].msg


def test_a_name_anymail_cannot_receive_from_is_an_error(settings):
    errors = errors_for(settings, "postmarc", {})

    assert [error.id for error in errors] == ["outreach.E101"]
    assert "postmark" in errors[0].hint


def test_the_provider_email_backend_sends_through_is_checked_without_email_provider(settings):
    settings.EMAIL_BACKEND = "anymail.backends.postal.EmailBackend"
    settings.ANYMAIL = {"POSTAL_API_KEY": "sending-key"}

    errors = check_email_providers()

    assert "ANYMAIL_POSTAL_WEBHOOK_KEY" in errors[0].msg


def test_fault_86_postal_without_cryptography_is_an_error_naming_the_extra(settings, monkeypatch):
    # As if cryptography were not installed (None in sys.modules fails the import).
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.serialization", None)

    errors = errors_for(settings, "postal", complete_settings("postal"))

    assert [error.id for error in errors] == ["outreach.E102"]
    assert errors[0].is_serious()
    assert "cryptography" in errors[0].msg and "django-anymail[postal]" in errors[0].msg


def test_anymail_s_test_backend_is_no_provider(settings):
    settings.EMAIL_BACKEND = "anymail.backends.test.EmailBackend"

    assert check_email_providers() == []


# --- In a process of its own, as a deployment starts -------------------------------------


def run_python(code: str, tmp_path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=process_env(tmp_path, DJANGO_SETTINGS_MODULE="poolpatrol.settings", **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def manage_check_without(module: str) -> str:
    """``manage.py check`` in an interpreter where ``module`` cannot be imported."""
    return (
        "import runpy, sys\n"
        f"sys.modules[{module!r}] = None  # as if the extra were not installed\n"
        "sys.argv = ['manage.py', 'check']\n"
        "runpy.run_path('manage.py', run_name='__main__')\n"
    )


@pytest.mark.parametrize(
    ("provider", "module", "extra", "env"),
    [
        # Postal's extra, cryptography, is the product's own since sign-in (pyjwt checks
        # the identity provider's signatures; allauth's MFA loads fido2): a process
        # without it cannot load the URLs, so Postal's case is checked in-process below.
        ("amazon_ses", "boto3", "amazon-ses", {}),
        (
            "resend",
            "svix",
            "resend",
            {"ANYMAIL_RESEND_API_KEY": "re_key", "ANYMAIL_RESEND_INBOUND_SECRET": "whsec_c2VjcmV0"},
        ),
    ],
)
@pytest.mark.slow_process
def test_fault_86_a_configured_provider_missing_its_extra_refuses_to_start(
    tmp_path, provider, module, extra, env
):
    result = run_python(manage_check_without(module), tmp_path, EMAIL_PROVIDER=provider, **env)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "outreach.E102" in result.stderr
    assert module in result.stderr
    assert extra in result.stderr


@pytest.mark.slow_process
def test_fault_86_the_wsgi_application_refuses_to_load_without_the_provider_s_key(tmp_path):
    refused = run_python("import poolpatrol.wsgi", tmp_path, EMAIL_PROVIDER="mailgun")
    loaded = run_python(
        "import poolpatrol.wsgi",
        tmp_path,
        EMAIL_PROVIDER="mailgun",
        ANYMAIL_MAILGUN_WEBHOOK_SIGNING_KEY="key",
    )

    assert refused.returncode == 1
    assert "SystemCheckError" in refused.stderr
    assert "ANYMAIL_MAILGUN_WEBHOOK_SIGNING_KEY" in refused.stderr
    assert loaded.returncode == 0, loaded.stderr
