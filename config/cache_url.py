"""``CACHE_URL`` -> a Django ``CACHES`` entry (the cache holds the participant arrival limits).

* ``locmem://`` (default): memory of each process. Cheap, but every gunicorn worker (and every
  server) counts on its own, so a limit of N is in effect up to N x workers.
* ``file:///var/tmp/fairness-cache``: files shared by the workers of one server; no extra package.
* ``db://fairness_cache``: a table in the database (``manage.py createcachetable``, which
  ``make serve`` runs); shared by every server, one or two queries per counted request.
* ``redis://host:6379/0`` (needs the ``redis`` package), ``memcached://host:11211`` (needs
  ``pymemcache``): shared by every server.
* ``dummy://``: no cache; the limits then never trigger.
"""

from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_BACKENDS = {
    "locmem": "django.core.cache.backends.locmem.LocMemCache",
    "file": "django.core.cache.backends.filebased.FileBasedCache",
    "db": "django.core.cache.backends.db.DatabaseCache",
    "redis": "django.core.cache.backends.redis.RedisCache",
    "rediss": "django.core.cache.backends.redis.RedisCache",
    "memcached": "django.core.cache.backends.memcached.PyMemcacheCache",
    "dummy": "django.core.cache.backends.dummy.DummyCache",
}


def cache_from_url(url: str) -> dict:
    parts = urlsplit(url)
    if parts.scheme not in _BACKENDS:
        raise ImproperlyConfigured(f"CACHE_URL={url!r}: the scheme must be one of {', '.join(sorted(_BACKENDS))}.")
    config = {"BACKEND": _BACKENDS[parts.scheme]}
    if parts.scheme == "file":
        if not parts.path:
            raise ImproperlyConfigured(f"CACHE_URL={url!r}: give a directory, e.g. file:///var/tmp/fairness-cache")
        config["LOCATION"] = parts.path
    elif parts.scheme == "db":
        config["LOCATION"] = parts.netloc or parts.path.lstrip("/") or "fairness_cache"
    elif parts.scheme in ("redis", "rediss"):
        config["LOCATION"] = url
    elif parts.scheme == "memcached":
        config["LOCATION"] = parts.netloc
    elif parts.scheme == "locmem":
        config["LOCATION"] = parts.netloc or "fairness"
    return config
