"""What a browser asks of any site: /favicon.ico and the icon every page names."""

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

ICO_HEADER = b"\x00\x00\x01\x00"  # ICONDIR: reserved 0, type 1 (icon)


def served(client, url: str) -> tuple[int, str, bytes]:
    response = client.get(url)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, response["Content-Type"], body


def test_favicon_ico_leads_to_a_real_icon_for_anyone(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    status, content_type, body = served(client, response["Location"])
    assert status == 200
    assert content_type.startswith("image/")
    assert body.startswith(ICO_HEADER)


@pytest.mark.parametrize("page", ["login", "review-queue"])
def test_every_page_names_an_icon_that_is_served(client, coordinator, page):
    if page != "login":
        client.force_login(coordinator)
    html = client.get(reverse(page)).content.decode()
    icons = re.findall(r'<link rel="icon" href="([^"]+)" type="(image/[^"]+)"', html)
    assert len(icons) == 2
    for href, declared in icons:
        status, content_type, _ = served(client, href)
        assert (status, content_type) == (200, declared), href
