"""commcomp: communication complexity of sequence models, executable and exact.

Subpackages: :mod:`commcomp.bits`, :mod:`commcomp.precision`, :mod:`commcomp.problems`,
:mod:`commcomp.protocol`, :mod:`commcomp.matrix`, :mod:`commcomp.bounds`, :mod:`commcomp.backend`.
"""

__version__ = "0.1.0"
