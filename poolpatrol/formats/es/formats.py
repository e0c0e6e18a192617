# Our Spanish is the Spanish of the US and Mexico, which write 88.9 miles
# (Django's "es" is Spain's 88,9).
DECIMAL_SEPARATOR = "."
THOUSAND_SEPARATOR = ","
