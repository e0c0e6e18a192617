# Miles and ZIPs are written in Western digits in the copy, and with them
# Arabic writers in the US, Egypt and the Levant use a decimal point: 88.9.
DECIMAL_SEPARATOR = "."
THOUSAND_SEPARATOR = ","
