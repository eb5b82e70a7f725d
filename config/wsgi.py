import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

if os.environ.get("WSGI_WARM_UP", "1") != "0":
    from config.warm_up import warm_up

    warm_up()
