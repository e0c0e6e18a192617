"""Every rider email in every shipped language: translated throughout, laid out for its script.

Each template is rendered for riders that reach its branches, in each
language; a sentence of the English copy found in another language's email is
English left where a translation should be.
"""

import dataclasses
import re

import polib
import pytest
from django.utils import translation

from outreach.compose import TEMPLATES, render_email
from outreach.management.commands.makemessages import CATALOG_LOCALES
from outreach.management.commands.render_emails import QUESTION, SAMPLE, sample_for
from outreach.replies.answers import answer_question
from outreach.tests.test_catalogs import catalog
from poolpatrol.languages import BY_CODE, CODES, SHIPPED

OTHER = [code for code in CODES if code != "en"]
RIDERS = {
    "both": SAMPLE,
    "shift_no_deadline": dataclasses.replace(
        SAMPLE,
        failed_checks=("shift",),
        van_hours_from_riders=True,
        days_mismatched=2,
        deadline=None,
        vanpool_name="",
    ),
    "location_unmeasured": dataclasses.replace(
        SAMPLE, failed_checks=("location",), miles=None, measured_to="work_site", shift_name=""
    ),
    # Riding and parking: badge swipes and a permit with an end; the trip log, a share of
    # workdays and a permit with no end beside a shift finding.
    "ridership_parking": dataclasses.replace(SAMPLE, failed_checks=("parking", "ridership")),
    "trips_share_shift_parking": dataclasses.replace(
        SAMPLE,
        failed_checks=("parking", "ridership", "shift"),
        rides_by_badge=False,
        rides_min_share=0.8,
        rides_min_days_per_week=None,
        permits=(dataclasses.replace(SAMPLE.permits[0], valid_to=None),),
        deadline=None,
    ),
}
# The sentence every email in another language also says in English, on purpose.
IN_ENGLISH_TOO = "To get this email in English, reply"


def render(template, facts, lang):
    extra: dict[str, object] = {}
    if template == "answer":
        extra = {
            "answer_paragraphs": answer_question(QUESTION, facts, lang),
            "question_excerpt": "Where is the pickup?",
        }
    elif template == "holding_reply":
        extra = {"coordinator_name": "Kim Lee"}
    return render_email(template, facts, lang=lang, **extra)


def _english_sentences() -> list[re.Pattern[str]]:
    """Each English sentence of the copy with at least three words of its own, as a pattern."""
    patterns = []
    for entry in catalog(CATALOG_LOCALES[0]):
        for english in filter(None, (entry.msgid, entry.msgid_plural)):
            if (
                IN_ENGLISH_TOO in english
                or len(re.findall(r"[A-Za-z]{2,}", re.sub(r"%\(\w+\)s", "", english))) < 3
            ):
                continue
            parts = [re.escape(part) for part in re.split(r"%\(\w+\)s", english)]
            patterns.append(re.compile(r"\s*".join(".+?".join(parts).split(r"\ "))))
    return patterns


ENGLISH = _english_sentences()


@pytest.mark.parametrize("lang", OTHER)
@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_email_in_every_language_has_no_english_left(template, lang):
    for rider, facts in RIDERS.items():
        email = render(template, facts, lang)
        said = " ".join(" ".join([email.subject, email.text]).split())
        left = [pattern.pattern[:60] for pattern in ENGLISH if pattern.search(said)]
        assert not left, (rider, left)


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_email_names_its_language_and_direction(template, lang):
    email = render(template, sample_for(template), lang)
    assert f'<html lang="{lang}"' in email.html
    if BY_CODE[lang].bidi:
        assert f'<html lang="{lang}" dir="rtl">' in email.html
        assert f'lang="{lang}" dir="rtl"' in email.html.split("<body", 1)[1]  # the message itself
        assert "text-align:left" not in email.html.replace(
            'dir="ltr" style="margin:0;text-align:left;"', ""
        )
    else:
        assert 'dir="rtl"' not in email.html.split("<body", 1)[1].split("font-size:13px")[0]


@pytest.mark.parametrize("lang", OTHER)
def test_an_email_in_another_language_says_in_it_and_in_english_how_to_get_english(lang):
    email = render("reminder", SAMPLE, lang)
    assert email.text.rstrip().endswith("To get this email in English, reply ENGLISH.")
    with translation.override(lang):
        own = translation.gettext("To get this email in English, reply %(keyword)s.")
    assert own != "To get this email in English, reply %(keyword)s."
    assert own % {"keyword": "ENGLISH"} in email.text


def test_an_english_email_offers_every_other_language_in_its_own_words():
    email = render("shift_mismatch", SAMPLE, "en")
    for language in SHIPPED:
        if language.code == "en":
            continue
        with translation.override(language.code):
            line = translation.pgettext(
                "a line written in the language it offers",
                "To get this email in this language, reply %(keyword)s.",
            ) % {"keyword": language.reply_word}
        assert line in email.text
        direction = "rtl" if language.bidi else "ltr"
        assert f'<p lang="{language.code}" dir="{direction}"' in email.html


@pytest.mark.parametrize(
    ("lang", "deadline", "miles"),
    [
        ("en", "Sunday, November 29", "88.9 miles"),
        ("es", "domingo 29 de noviembre", "88.9 millas"),
        ("vi", "Chủ Nhật, ngày 29 tháng 11", "88,9 dặm"),
        ("tl", "Linggo, Nobyembre 29", "88.9 milya"),
        ("zh-hans", "11月29日（星期日）", "88.9英里"),
        ("ko", "11월 29일 일요일", "88.9마일"),
        ("pt-br", "domingo, 29 de novembro", "88,9 milhas"),
        ("ht", "dimanch 29 novanm", "88,9 mil"),
        ("ar", "الأحد 29 نوفمبر", "88.9 ميل"),
    ],
)
def test_dates_and_miles_are_written_as_the_language_writes_them(lang, deadline, miles):
    email = render("both_mismatch", SAMPLE, lang)
    text = " ".join(email.text.split())
    assert deadline in text and miles in text
    # ZIPs, IDs and times of day stay as the records hold them.
    for fact in ("01103", "VP-110", "CASE-0A1B2C3D", "15:00–23:30"):
        assert fact in text


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_chinese_runs_its_sentences_and_brackets_together_without_spaces(template):
    email = render(template, SAMPLE, "zh-hans")
    for body in (email.text, email.html):
        assert not re.search(r"[。！？）][ ]+[\u4e00-\u9fff]", body), body
        assert not re.search(r"[\u4e00-\u9fff][ ]+（", body), body


def test_the_catalogs_ship_every_language_the_settings_offer(settings):
    assert [code for code, _ in settings.LANGUAGES] == list(CODES)
    assert settings.LANGUAGES_BIDI == ["ar"]
    for locale in CATALOG_LOCALES:
        assert polib.pofile(str(catalog(locale).fpath)).percent_translated() == 100


def test_the_english_finder_finds_the_english_copy_in_an_english_email():
    email = render("both_mismatch", SAMPLE, "en")
    said = " ".join(" ".join([email.subject, email.text]).split())
    assert sum(1 for pattern in ENGLISH if pattern.search(said)) >= 20
