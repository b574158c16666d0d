import numpy as np
import pytest
from hypothesis import given, strategies as st

from commcomp.bits import Bits, BitRows, bit_array_to_uints, uints_to_bit_array
from commcomp.errors import BitsError


@given(st.lists(st.booleans(), max_size=200))
def test_hex_round_trip(bools):
    b = Bits.from_bools(np.array(bools, dtype=bool))
    assert len(b) == len(bools)
    assert Bits.from_hex(b.hex(), len(b)) == b
    assert [bool(v) for v in b] == bools
    assert str(b) == "".join("1" if v else "0" for v in bools)


@given(st.lists(st.integers(0, 2**13 - 1), max_size=50))
def test_uints_match_python_format(values):
    b = Bits.from_uints(values, 13)
    # independent: Python's own binary formatting
    assert str(b) == "".join(format(v, "013b") for v in values)
    assert b.to_uints(13).tolist() == values


def test_uint64_extremes():
    vals = np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)
    arr = uints_to_bit_array(vals, 64)
    assert arr.shape == (4, 64)
    assert bit_array_to_uints(arr.reshape(-1), 64).tolist() == [int(v) for v in vals]


def test_concat_slice_compare_hash():
    a, b = Bits.from_uints([3], 2), Bits.from_uints([0], 3)
    c = a + b
    assert str(c) == "11000" and len(c) == 5
    assert c[:2] == a and c[2:] == b and c[0] is True and c[4] is False
    assert Bits.concat([a, b]) == c
    assert hash(Bits.from_hex("c0", 5)) == hash(c)
    assert c != a and len({c, Bits.from_hex("c0", 5)}) == 1
    assert len(Bits.zeros(7)) == 7 and not any(Bits.zeros(7))


def test_immutable():
    b = Bits.from_bools([1, 0])
    with pytest.raises(ValueError):
        b.array[0] = 0


@pytest.mark.parametrize("bad", [lambda: Bits.from_hex("xz"), lambda: Bits.from_hex("f", 2),
                                 lambda: Bits.from_uints([4], 2), lambda: Bits([0, 2]),
                                 lambda: Bits.from_hex("ff", 3), lambda: Bits.from_uints([-1], 3)])
def test_bad_input_raises(bad):
    with pytest.raises(BitsError):
        bad()


def test_bitrows():
    rows = BitRows.from_uints(np.array([[1, 2], [1, 2], [3, 0]]), 2)
    assert len(rows) == 4 and rows.batch == 3
    assert str(rows[2]) == "1100"
    assert rows.distinct() == 2
    assert rows.to_uints(2).tolist() == [[1, 2], [1, 2], [3, 0]]
    assert BitRows.stack([rows[0], rows[2]]) == BitRows(rows.array[[0, 2]])
    with pytest.raises(BitsError):
        BitRows(np.zeros(3))


@pytest.mark.parametrize("width", [1, 5, 8, 13, 16, 32, 63, 64])
def test_bit_array_to_uints_against_a_plain_loop(width):
    """Whole-word widths take a packbits + big-endian view path; every width equals the loop."""
    rng = np.random.default_rng(width)
    bits = rng.integers(0, 2, size=(3, 4, 5 * width), dtype=np.uint8)
    got = bit_array_to_uints(bits, width)
    want = np.zeros((3, 4, 5), dtype=object)
    for idx in np.ndindex(3, 4, 5):
        value = 0
        for b in bits[idx[0], idx[1], idx[2] * width:(idx[2] + 1) * width]:
            value = 2 * value + int(b)
        want[idx] = value
    assert got.dtype == np.uint64 and got.shape == (3, 4, 5)
    assert [int(v) for v in got.ravel()] == list(want.ravel())
