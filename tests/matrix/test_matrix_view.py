"""commcomp.matrix.view and the report's own table rows and JSON (MatrixReport.table_rows, to_json)."""

import numpy as np

from commcomp.matrix import JSON_FIELDS, TABLE_FIELDS, measure, measure_problem
from commcomp.matrix.view import matrix_view
from commcomp.tables import render_rich

_NOT_MEASURES = {"problem", "n", "rows", "cols", "fooling_set", "certificates_checked"}
#: shown by their own rows (commcomp.matrix.discrepancy.discrepancy_rows: a value, a fraction, a rectangle)
_OWN_ROWS = {"discrepancy", "spectral_discrepancy_bound"}


def test_the_table_shows_every_measure_of_the_json_once():
    assert sorted(TABLE_FIELDS) == sorted(set(JSON_FIELDS) - _NOT_MEASURES - _OWN_ROWS)
    assert len(set(TABLE_FIELDS)) == len(TABLE_FIELDS)
    text = render_rich(matrix_view(measure_problem("inner-product", 2, ["discrepancy"])))
    assert "discrepancy" in text and "spectral_discrepancy_bound" in text and "5/16" in text  # IP on 2 bits


def test_rows_are_the_measured_values_with_their_labels():
    report = measure_problem("equality", 2)
    rows = report.table_rows()
    payload = report.to_json(details=True)
    assert [r[0] for r in rows] == [f for f in TABLE_FIELDS if payload[f] is not None]
    assert all(value == payload[name] and label == payload["labels"].get(name, "") for name, value, label in rows)
    # EQ on 2 bits: the 4 x 4 identity, so 4 distinct rows and rank 4 (by hand)
    assert dict((r[0], r[1]) for r in rows)["distinct_rows"] == 4
    assert dict((r[0], r[1]) for r in rows)["rank_rational"] == 4


def test_details_carry_checks_and_skipped_and_plain_json_does_not():
    report = measure(np.eye(3, dtype=np.uint8), ["rows"])
    assert not {"labels", "checks", "skipped"} & set(report.to_json())
    details = report.to_json(details=True)
    assert [c["measure"] for c in details["checks"]] == [c.measure for c in report.checks]
    assert details["skipped"] == dict(report.skipped)


def test_a_matrix_file_is_titled_by_its_path_and_has_no_catalogue_table():
    report = measure(np.eye(3, dtype=np.uint8), ["rows"])
    text = render_rich(matrix_view(report, source="my.csv"))
    assert "my.csv: 3 x 3 matrix" in text and "known complexity" not in text
    text = render_rich(matrix_view(measure_problem("equality", 2, ["rows"])))
    assert "equality, n = 2: 4 x 4 matrix" in text and "known complexity" in text
