from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """mapping[key], or None: a dict of a submission's JSON read in a template."""
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def check_label(name):
    """A check's name as words ("timeouts_and_resources" as "timeouts and resources"), which wrap on a phone."""
    return str(name).replace("_", " ")
