import os

from django.core.wsgi import get_wsgi_application

from poolpatrol.startup import refuse_serious_check_messages

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poolpatrol.settings")
application = get_wsgi_application()
refuse_serious_check_messages()
