"""asv suites of scorekit (see asv.conf.json)."""
