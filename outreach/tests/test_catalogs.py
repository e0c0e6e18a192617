"""The shipped catalogs: complete, not fuzzy, compiled, and up to date with the templates.

``make messages`` (makemessages, then compilemessages) is what makes them
pass again after a change to the rider copy; the translations it leaves
empty must then be written (docs/outreach.md#languages).
"""

import re
import shutil
from pathlib import Path

import polib
import pytest
from django.core.management import call_command
from django.test import override_settings

from outreach.management.commands.makemessages import CATALOG_LOCALES, RIDER_COPY

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
# A placeholder, or a piece of markup a sentence carries (a link's end, bold).
_KEPT = re.compile(r"%\([a-z_]+\)s|%%|</?[a-z]+>")


def catalog(locale: str) -> polib.POFile:
    return polib.pofile(str(LOCALE / locale / "LC_MESSAGES" / "django.po"))


def nplurals(po: polib.POFile) -> int:
    match = re.search(r"nplurals=(\d+)", po.metadata["Plural-Forms"])
    assert match, po.metadata["Plural-Forms"]
    return int(match.group(1))


def test_every_shipped_language_but_english_has_a_catalog_and_no_other_does():
    on_disk = {path.name for path in LOCALE.iterdir() if path.is_dir()}
    assert on_disk == set(CATALOG_LOCALES)


@pytest.mark.parametrize("locale", CATALOG_LOCALES)
def test_a_shipped_catalog_has_no_untranslated_or_fuzzy_entry(locale):
    po = catalog(locale)
    assert not po.metadata_is_fuzzy
    assert [entry.msgid for entry in po.untranslated_entries()] == []
    assert [entry.msgid for entry in po.fuzzy_entries()] == []
    assert [entry.msgid for entry in po.obsolete_entries()] == []
    for entry in po:
        if entry.msgid_plural:
            assert len(entry.msgstr_plural) == nplurals(po), entry.msgid
            assert all(form.strip() for form in entry.msgstr_plural.values()), entry.msgid


@pytest.mark.parametrize("locale", CATALOG_LOCALES)
def test_a_translation_keeps_every_placeholder_and_tag_of_its_sentence(locale):
    for entry in catalog(locale):
        wanted = sorted(_KEPT.findall(entry.msgid))
        if not entry.msgid_plural:
            assert sorted(_KEPT.findall(entry.msgstr)) == wanted, (entry.msgid, entry.msgstr)
            continue
        for form in entry.msgstr_plural.values():
            # A form used for one number only ("يومين", two days) may leave out the count.
            kept = set(_KEPT.findall(form))
            assert kept <= set(wanted) and len(set(wanted) - kept) <= 1, (entry.msgid, form)


@pytest.mark.parametrize("locale", CATALOG_LOCALES)
def test_the_committed_compiled_catalog_says_what_its_source_says(locale):
    po = catalog(locale)
    mo = polib.mofile(str(LOCALE / locale / "LC_MESSAGES" / "django.mo"))
    compiled = {(entry.msgctxt, entry.msgid): entry for entry in mo}
    for entry in po:
        built = compiled.get((entry.msgctxt, entry.msgid))
        assert built is not None, f"{entry.msgid!r} is not compiled: run make messages"
        if entry.msgid_plural:
            assert built.msgstr_plural == entry.msgstr_plural, entry.msgid
        else:
            assert built.msgstr == entry.msgstr, entry.msgid
    assert len(compiled) == len(po)  # polib keeps the header as metadata


@pytest.mark.slow_process  # makemessages runs xgettext and msgmerge
def test_the_catalogs_hold_exactly_the_sentences_of_the_rider_copy(tmp_path, monkeypatch):
    """makemessages on a copy of the rider copy and the catalogs changes no entry."""
    for path in RIDER_COPY:
        source = ROOT / path
        if source.is_dir():
            shutil.copytree(source, tmp_path / path)
        elif source.exists():
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, tmp_path / path)
    shutil.copytree(LOCALE, tmp_path / "locale")
    monkeypatch.chdir(tmp_path)
    with override_settings(LOCALE_PATHS=[tmp_path / "locale"]):
        call_command("makemessages", verbosity=0)
    for locale in CATALOG_LOCALES:
        fresh = polib.pofile(str(tmp_path / "locale" / locale / "LC_MESSAGES" / "django.po"))
        ours = catalog(locale)
        assert {(e.msgctxt, e.msgid, e.msgid_plural) for e in fresh} == {
            (e.msgctxt, e.msgid, e.msgid_plural) for e in ours
        }, f"locale/{locale} is out of date with the templates: run make messages"
        assert not fresh.untranslated_entries() and not fresh.fuzzy_entries()


@pytest.mark.slow_process  # compilemessages runs msgfmt
def test_every_catalog_compiles_with_gettext_and_says_what_the_committed_one_says(
    tmp_path, monkeypatch
):
    """compilemessages (msgfmt --check-format) on a fresh copy succeeds and matches the .mo."""
    shutil.copytree(LOCALE, tmp_path / "locale")
    for mo in (tmp_path / "locale").rglob("*.mo"):
        mo.unlink()
    monkeypatch.chdir(tmp_path)  # compilemessages walks the folder it runs in
    with override_settings(LOCALE_PATHS=[tmp_path / "locale"]):
        call_command("compilemessages", locale=list(CATALOG_LOCALES), verbosity=0)
    for locale in CATALOG_LOCALES:
        built = polib.mofile(str(tmp_path / "locale" / locale / "LC_MESSAGES" / "django.mo"))
        committed = polib.mofile(str(LOCALE / locale / "LC_MESSAGES" / "django.mo"))
        assert {(e.msgctxt, e.msgid, e.msgstr) for e in built} == {
            (e.msgctxt, e.msgid, e.msgstr) for e in committed
        }, f"locale/{locale}: the committed django.mo is stale: run make messages"


def test_no_rider_template_says_a_word_outside_a_translation_tag():
    """Outside {% blocktranslate %} a rider template holds markup, values and punctuation."""
    folders = [ROOT / path for path in RIDER_COPY if (ROOT / path).is_dir()]
    assert ROOT / "templates" / "emails" in folders
    for template in (path for folder in folders for path in folder.rglob("*.*")):
        text = template.read_text(encoding="utf-8")
        outside = re.sub(r"\{% blocktranslate.*?\{% endblocktranslate %\}", " ", text, flags=re.S)
        loose = re.sub(r"\{%.*?%\}|\{\{.*?\}\}|<[^>]+>", " ", outside, flags=re.S)
        assert not re.search(r"[^\W\d_]{2,}", loose), (str(template), loose.split())
