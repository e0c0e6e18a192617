import os

from django.core.asgi import get_asgi_application

from poolpatrol.startup import refuse_serious_check_messages

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poolpatrol.settings")
application = get_asgi_application()
refuse_serious_check_messages()
