"""Settings for the test suite (pytest-django's DJANGO_SETTINGS_MODULE, inherited by the servers and
workers the tests start): production settings with a fast password hash first, as Django's testing
documentation advises. PBKDF2 costs about 0.4 s per hash here and the suite creates and logs in
researchers hundreds of times; the production hashers stay listed, so their hashes still verify."""

from django.conf import global_settings

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *global_settings.PASSWORD_HASHERS]
