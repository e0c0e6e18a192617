# Django has no Haitian Creole locale; Haiti writes numbers as French does: 88,9.
DECIMAL_SEPARATOR = ","
THOUSAND_SEPARATOR = "\xa0"
NUMBER_GROUPING = 3
