"""The worked example of the cases spec (§2.7): six cases as (expected, outputs), ``None``
outputs meaning the pipeline raises; shared by the runner and CLI tests."""

WORKED = {
    "c1_ok": ({"extract": {"t": "T"}, "classify": "bio"}, {"extract": {"t": "T"}, "classify": "bio"}),
    "c2_err": ({"extract": {"t": "T"}, "classify": "bio"}, None),
    "c3_missing": ({"extract": {"t": "T"}, "nosuchstep": {"x": 1}}, {"extract": {"t": "T"}}),
    "c4_allign": ({"extract": "$ignore", "classify": {"a": "$ignore"}}, {"extract": {"t": "x"}, "classify": {"a": 1}}),
    "c5_ignmissing": ({"extract": {"t": "T"}, "ghost": "$ignore"}, {"extract": {"t": "T"}}),
    "c6_partial": ({"extract": {"t": "T", "u": "U"}, "classify": "bio"},
                   {"extract": {"t": "T", "u": "wrong"}, "classify": "bio"}),
}
