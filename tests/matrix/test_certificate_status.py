"""``ok`` in a certificate check means verified (issue 25).

A bound whose minimality rests on a solver without a proof, or on the search alone, is reported
with ``status == "unverified"`` and ``ok`` false, and ``certificates_checked`` is then false; a
tampered certificate is ``rejected``.
"""

import dataclasses

import numpy as np
import pytest

from commcomp.matrix import measure
from commcomp.matrix.certificates import CertificateCheck, check_certificate
from commcomp.matrix.generators import gap_matrix
from commcomp.matrix.protocol_tree import deterministic_cc
from commcomp.matrix.rectangles import rectangle_number


@pytest.fixture(scope="module")
def gap():
    m = gap_matrix(8, kind="xor", seed=2)  # C¹ above its largest fooling set (see test_matrix_rectangles)
    cover = rectangle_number(m, True, kind="cover", solver="search")
    assert cover.value > len(cover.fooling_set)
    return m, cover


@pytest.mark.parametrize("label", ["solver-proved", "search"])
def test_a_bound_resting_on_an_unchecked_side_is_not_ok(gap, label):
    m, cover = gap
    check = check_certificate(dataclasses.replace(cover, lower_bound_by=label, proof=()), m)
    assert check.status == "unverified" and check.ok is False and not check
    assert "not re-verified" in check.detail


def test_a_tampered_certificate_is_rejected(gap):
    m, cover = gap
    flipped = cover.rectangles[0]
    bad = dataclasses.replace(flipped, value=not flipped.value)
    check = check_certificate(dataclasses.replace(cover, rectangles=(bad,) + cover.rectangles[1:]), m)
    assert check.status == "rejected" and check.ok is False
    more = dataclasses.replace(cover, rectangles=cover.rectangles[:-1], value=cover.value - 1)
    assert check_certificate(more, m).status == "rejected"


def test_a_fully_checked_certificate_is_verified():
    m = np.eye(4, dtype=bool)  # χ₁ = 4 = rank: minimality re-computed by Bareiss
    check = check_certificate(rectangle_number(m, True, kind="partition", solver="search"), m)
    assert check.status == "verified" and check.ok is True


def test_search_minimality_of_a_protocol_tree_is_unverified():
    m = gap_matrix(8, kind="xor", seed=1)
    tree = deterministic_cc(m)
    check = check_certificate(tree, m)
    if tree.lower_bound_by == "search":
        assert check.status == "unverified" and not check.ok
    else:
        assert check.status == "verified"


def test_certificates_checked_is_false_when_one_is_unverified(gap):
    m, _ = gap
    rep = measure(m, ["cover"], solver="search")  # C¹'s minimality: the search's word alone
    assert [(c.measure, c.status) for c in rep.checks] == [("cover_number_1", "unverified"),
                                                          ("cover_number_0", "verified")]
    assert rep.certificates_checked is False


def test_status_and_ok_cannot_disagree():
    with pytest.raises(ValueError):
        CertificateCheck("x", True, "d", "unverified")
    assert CertificateCheck("x", False, "d").status == "rejected"
