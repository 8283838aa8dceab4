"""Task instructions as safe HTML.

Instructions come from task directories anyone can submit, so the Markdown
is rendered with python-markdown and then sanitised with nh3: no scripts, no
event handlers, no javascript: links, and no images (they would load from
the network when a page is viewed).
"""
from __future__ import annotations

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

ALLOWED_TAGS = (nh3.ALLOWED_TAGS - {"img", "map", "area"}) | {"tfoot"}
ALLOWED_ATTRIBUTES = {
    **{tag: set(attributes) for tag, attributes in nh3.ALLOWED_ATTRIBUTES.items() if tag in ALLOWED_TAGS},
    "code": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}


def render_markdown(text: str) -> SafeString:
    """Markdown to sanitised HTML, safe to put in a template unescaped."""
    html = markdown.markdown(text or "", extensions=["fenced_code", "tables", "sane_lists"], output_format="html")
    cleaned = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        clean_content_tags={"script", "style"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(cleaned)
