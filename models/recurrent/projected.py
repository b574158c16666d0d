"""Layers whose step is a cell on gate pre-activations ``g = x_t W_x + h W_h + b``: Elman, LSTM, GRU.

:class:`ProjectedLayer` runs every step in one of two ways, with the same numbers:

* the Array API path (any namespace: array-api-strict, CuPy): fresh arrays every step;
* the NumPy path: the same calls in the same order, written with ``out=`` into buffers allocated
  once per run, so a step at small ``B * m`` costs the calls themselves and nothing else.

A batched step is a matmul and a handful of element-wise calls on ``(B, m)`` arrays; at small
``B * m`` (``B = 1``, or ``B = 64`` with ``m = 16``) NumPy's per-call overhead (~0.5 us) rather
than the arithmetic sets the time, so the NumPy path keeps the calls few (LSTM: 1 matmul and
7 element-wise calls per step, no copy), allocates nothing inside the loop and passes constants as
0-d arrays of the compute dtype (a Python float operand costs ~1 us more per call).

Float inputs ``(B, T, d_in)``: one fused matmul per step, ``[x_t, h, 1] @ W_fused`` with ``W_fused``
gate-major ``(G, d_in + m + 1, m)`` (the bias rides on the constant column), so no separate input
projection and no bias pass.  The NumPy path lays the rows ``[x_t, h_{t-1}, 1]`` of a chunk of
steps out in one buffer ``(T_chunk + 1, B, d_in + m + 1)``: the inputs are copied in once per
chunk and each step writes its new ``h`` straight into the next step's row.  The shapes are the
same at every step, so a run split anywhere is bit-identical to the unsplit run.

Token inputs take the other path: ``g = h @ W_h + table[token]`` with ``table = E @ W_x + b``
computed once (:meth:`ProjectedLayer.run_projected`).

Float inputs at ``B = 1`` take that path too (:meth:`ProjectedLayer.project_steps`): at one
instance every matmul is a matrix-vector product that streams its whole weight matrix, and the
fused ``W_fused`` (``d_in + m + 1`` rows) stops fitting in the core's cache at ``m = 256`` while
``W_x`` and ``W_h`` each do.  So the inputs of the whole sequence are projected up front, ``u_t =
x_t @ W_x + b``, by one batched matmul ``(T, 1, d_in) @ (d_in, G*m)``, then the steps read
``h @ W_h + u_t``.  The projection of step t is a product of its own with the same shape at every
step (NumPy runs a batched matmul slice by slice), so a run split anywhere is still bit-identical
to the unsplit run; a flat ``(T, d_in) @ (d_in, G*m)`` product would be faster but its rows may
depend on T (another BLAS kernel), which a protocol that splits the sequence cannot afford.
The rule depends on B alone, the same on both paths, so they still agree bit for bit.

Examples
--------
>>> import numpy as np
>>> from models.recurrent.lstm import LSTMLayer
>>> layer = LSTMLayer.init(d_in=3, width=4, seed=0)
>>> x = np.random.default_rng(0).normal(size=(2, 5, 3))           # (B, T, d_in)
>>> state, y = layer.run_sequence(layer.init_state(2), x)           # the NumPy path
>>> generic = layer.to_namespace(layer.xp)
>>> generic.numpy_path = False                                      # force the Array API path
>>> state2, y2 = generic.run_sequence(generic.init_state(2), x)
>>> bool(np.array_equal(y, y2)) and all(np.array_equal(state[k], state2[k]) for k in state)
True
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from models.common import raw_matmul

from .base import RecurrentLayer, StateDict, _identity_state

__all__ = ["ProjectedLayer", "WORKSPACE_ELEMENTS"]

# Elements of the NumPy path's per-chunk buffer (T_chunk + 1, B, d_in + m + 1), at least one step:
# 16 MiB in float64, so it never grows with T, and T_chunk >= 256 steps up to B * (2m + 1) = 8192.
WORKSPACE_ELEMENTS = 2 ** 21


class ProjectedLayer(RecurrentLayer):
    """A layer whose step is ``cell(state, g)`` on pre-activations ``g = x_t W_x + h W_h + b``.

    Elman (G = 1 block), LSTM (4), GRU (3, plus its own ``h W_hn``).  Subclasses call
    :meth:`set_weights` in :meth:`prepare` and implement two forms of one step:

    * :meth:`cell` (Array API): takes ``g`` gate-major ``(G, B, m)`` and must round its new state
      with ``self.round_state`` (``rounds_own_state = True``) before deriving the output from it;
    * :meth:`numpy_cell` (NumPy): buffers and an in-place step doing the same calls in the same
      order (so both give the same bits; the tests compare them).

    ``numpy_path`` is True when the namespace is NumPy's and the subclass has a :meth:`numpy_cell`;
    set it to False on a copy to run the Array API path on NumPy (the tests do).
    """

    projects_inputs = True
    rounds_own_state = True
    gates: int = 1

    def set_weights(self, w_x: np.ndarray, w_h: np.ndarray, b: np.ndarray) -> None:
        """Install ``w_x`` ``(d_in, G*m)``, ``w_h`` ``(m, G*m)``, ``b`` ``(G*m,)`` (host, kernel order)."""
        import array_api_compat

        xp, dt, g, m = self.xp, self.dtype, self.gates, self.d_out

        def blocks(w):
            return w.reshape(-1, g, m).transpose(1, 0, 2)  # (G, rows, m)

        self.w["Wx"] = xp.asarray(w_x, dtype=dt)  # (d_in, G*m): the embedding table's projection
        self.w["bx"] = xp.asarray(b, dtype=dt)
        self.w["Wh3"] = xp.asarray(blocks(w_h).copy(), dtype=dt)  # (G, m, m)
        fused = np.concatenate([blocks(w_x), blocks(w_h), b.reshape(g, 1, m)], axis=1)
        self.w["W_fused"] = xp.asarray(fused, dtype=dt)  # (G, d_in + m + 1, m)
        self._matmul = raw_matmul(xp)
        # the NumPy path needs the subclass's numpy_cell; without one, the Array API path runs
        self.numpy_path = bool(array_api_compat.is_numpy_namespace(xp)) and \
            type(self).numpy_cell is not ProjectedLayer.numpy_cell

    # -- the step, twice ---------------------------------------------------------------------
    def cell(self, state: StateDict, g) -> tuple[StateDict, object]:  # pragma: no cover
        """One step from the pre-activations ``g`` ``(G, B, m)`` (Array API)."""
        raise NotImplementedError

    def numpy_cell(self, state: StateDict, batch: int) -> tuple[dict, np.ndarray, Callable]:
        """``(carry, g, step)`` for the NumPy path.

        ``g`` is the ``(G, B, m)`` buffer the loop writes each step's pre-activations into;
        ``step(h, h_out)`` reads them and the previous ``h`` ``(B, m)``, writes the new ``h`` into
        ``h_out`` and updates ``carry`` in place: the carried arrays other than ``h`` (``{"c": (B, m)}``
        for the LSTM, initialised from ``state``).  Same calls, same order as :meth:`cell`.
        """
        raise NotImplementedError  # pragma: no cover

    # -- the Array API path ------------------------------------------------------------------
    def project_inputs(self, x):
        u = self.xp.matmul(x, self.w["Wx"])  # (..., G*m)
        u += self.w["bx"]
        return u

    def _buffer(self, batch: int):
        xp, dt = self.xp, self.dtype
        return xp.concat([xp.zeros((batch, self.d_in + self.d_out), dtype=dt),
                          xp.ones((batch, 1), dtype=dt)], axis=1)  # (B, d_in + m + 1)

    def fused_pre_activations(self, z, state, x_t):
        """``[x_t, h, 1] @ W_fused`` ``(G, B, m)``, writing ``x_t`` and ``h`` into the buffer ``z``."""
        d = self.d_in
        z[:, :d] = x_t
        z[:, d:d + self.d_out] = state["h"]
        return self._matmul(z, self.w["W_fused"])  # (G, B, m)

    def table_pre_activations(self, state, u_t):
        """``h @ W_h + u_t`` for table rows ``u_t`` ``(G, B, m)``."""
        g = self._matmul(state["h"], self.w["Wh3"])  # (G, B, m)
        g += u_t
        return g

    def project_steps(self, x):
        """``x_t @ W_x + b`` for every step of ``x`` ``(B, T, d_in)``: ``(B, T, G*m)``, one
        ``(B, d_in) @ (d_in, G*m)`` product per step (the same bits for any split of the sequence)."""
        xp = self.xp
        u = xp.matmul(xp.permute_dims(x, (1, 0, 2)), self.w["Wx"])  # (T, B, G*m)
        u += self.w["bx"]
        return xp.permute_dims(u, (1, 0, 2))  # (B, T, G*m)

    @staticmethod
    def projects_float_inputs(batch: int) -> bool:
        """Whether float inputs of ``batch`` instances are projected up front (B = 1; module doc)."""
        return int(batch) == 1

    def step(self, state, x_t):
        if self.numpy_path:  # the run's own code: bit-identical to run_sequence
            state, y = self._numpy_run(state, x_t[:, None, :], fused=True)
            return state, y[:, 0, :]
        if self.projects_float_inputs(x_t.shape[0]):
            state, y = self.run_projected(state, self.project_steps(x_t[:, None, :]))
            return state, y[:, 0, :]
        return self.cell(state, self.fused_pre_activations(self._buffer(x_t.shape[0]), state, x_t))

    def _loop(self, state, T, batch, pre_activations):
        ys = []
        for t in range(T):
            state, y = self.cell(state, pre_activations(state, t))  # (B, d_out)
            ys.append(y)
        if not ys:
            return state, self.xp.zeros((batch, 0, self.d_out), dtype=self.dtype)
        return state, self.xp.stack(ys, axis=1)  # (B, T, d_out)

    def run_projected(self, state, u):
        if self.numpy_path:
            return self._numpy_run(state, u, fused=False)
        xp = self.xp
        B, T = u.shape[0], u.shape[1]
        u = xp.permute_dims(xp.reshape(u, (B, T, self.gates, self.d_out)), (1, 2, 0, 3))  # (T, G, B, m)
        return self._loop(state, T, B, lambda s, t: self.table_pre_activations(s, u[t, ...]))

    def run_sequence(self, state, x):
        if self.numpy_path:
            return self._numpy_run(state, x, fused=True)
        if self.projects_float_inputs(x.shape[0]):
            return self.run_projected(state, self.project_steps(x))
        z = self._buffer(x.shape[0])
        return self._loop(state, x.shape[1], x.shape[0],
                          lambda s, t: self.fused_pre_activations(z, s, x[:, t, :]))

    def output_from_state(self, state):
        return state["h"]

    # -- the NumPy path ----------------------------------------------------------------------
    def _numpy_run(self, state, x, fused: bool):
        """Run over ``x`` ``(B, T, d_in)`` (``fused``) or table rows ``(B, T, G*m)``, in place.

        Returns the state (fresh arrays) and the outputs ``(B, T, m)``: a view of a time-major
        array (so the next layer reads each step's inputs contiguously).
        """
        B, T = int(x.shape[0]), int(x.shape[1])
        if T == 0:
            return state, np.zeros((B, 0, self.d_out), dtype=self.dtype)
        carry, g, cell = self.numpy_cell(state, B)
        finish = self._rounding(carry)
        if fused and self.projects_float_inputs(B):
            run = self._numpy_projecting
        else:
            run = self._numpy_fused if fused else self._numpy_table
        ys = run(state["h"], x, g, cell, finish)  # (T, B, m)
        new = {"h": ys[-1].copy(), **{k: v.copy() for k, v in carry.items()}}
        return {k: new[k] for k in self.state_shapes()}, np.swapaxes(ys, 0, 1)  # (B, T, m)

    def _numpy_fused(self, h0, x, g, cell, finish):
        """``[x_t, h, 1] @ W_fused`` then ``cell``, over chunks of steps; returns ``(T, B, m)``."""
        B, T = int(x.shape[0]), int(x.shape[1])
        d, m, dt = self.d_in, self.d_out, self.dtype
        w, k, mm = self.w["W_fused"], d + m + 1, np.matmul
        chunk = max(1, min(T, WORKSPACE_ELEMENTS // (B * k)))
        z = np.empty((chunk + 1, B, k), dtype=dt)  # row t: [x_t, h_{t-1}, 1]
        z[:, :, d + m] = 1.0
        hz = z[:, :, d:d + m]  # (chunk + 1, B, m): h_{t-1} in row t, so h_t in row t + 1
        hz[0] = h0
        rows, hs = list(z), list(hz)  # the views of every step, made once
        # one chunk: the outputs stay where the steps wrote them (z is small by construction)
        ys = hz[1:] if chunk == T else np.empty((T, B, m), dtype=dt)  # (T, B, m)
        for t0 in range(0, T, chunk):
            n = min(chunk, T - t0)
            z[:n, :, :d] = np.swapaxes(x[:, t0:t0 + n, :], 0, 1)  # (n, B, d_in)
            steps = zip(rows[:n], hs[:n], hs[1:n + 1])  # z_t, h_{t-1}, h_t
            if finish is None:
                for z_t, h, h_out in steps:
                    mm(z_t, w, g)  # (G, B, m)
                    cell(h, h_out)
            else:
                for z_t, h, h_out in steps:
                    mm(z_t, w, g)
                    cell(h, h_out)
                    finish(h_out)
            if chunk < T:
                ys[t0:t0 + n] = hz[1:n + 1]
                hz[0] = hz[n]
        return ys

    def _numpy_projecting(self, h0, x, g, cell, finish):
        """:meth:`project_steps` then :meth:`_numpy_table`, over chunks of steps; returns ``(T, B, m)``."""
        B, T, m = int(x.shape[0]), int(x.shape[1]), self.d_out
        width = self.gates * m
        chunk = max(1, min(T, WORKSPACE_ELEMENTS // (B * width)))
        u = np.empty((chunk, B, width), dtype=self.dtype)  # (T_chunk, B, G*m), time-major
        ys = np.empty((T, B, m), dtype=self.dtype)
        h = h0
        for t0 in range(0, T, chunk):
            n = min(chunk, T - t0)
            u_n = u[:n]
            np.matmul(np.swapaxes(x[:, t0:t0 + n, :], 0, 1), self.w["Wx"], out=u_n)  # project_steps
            np.add(u_n, self.w["bx"], out=u_n)
            ys[t0:t0 + n] = self._numpy_table(h, np.swapaxes(u_n, 0, 1), g, cell, finish)
            h = ys[t0 + n - 1]
        return ys

    def numpy_table_step(self, g, cell) -> Callable:
        """``step(h, u_t, h_out)`` of the table path: ``h @ W_h + u_t`` into ``g``, then ``cell``
        (the calls of :meth:`table_pre_activations` and :meth:`cell`; the GRU overrides it)."""
        w, mm, add = self.w["Wh3"], np.matmul, np.add

        def step(h, u_t, h_out):  # u_t (G, B, m)
            mm(h, w, g)  # (G, B, m)
            add(g, u_t, g)
            cell(h, h_out)

        return step

    def _numpy_table(self, h0, u, g, cell, finish):
        """:meth:`numpy_table_step` over the table rows ``u`` ``(B, T, G*m)``; returns ``(T, B, m)``."""
        B, T, m = int(u.shape[0]), int(u.shape[1]), self.d_out
        step = self.numpy_table_step(g, cell)
        ys = np.empty((T, B, m), dtype=self.dtype)  # (T, B, m)
        u = np.transpose(u.reshape(B, T, self.gates, m), (1, 2, 0, 3))  # (T, G, B, m) view
        h = h0
        for u_t, h_out in zip(u, ys):  # u_t (G, B, m), h_out (B, m)
            step(h, u_t, h_out)
            if finish is not None:
                finish(h_out)
            h = h_out
        return ys

    def _rounding(self, carry: dict):
        """``None`` in reference mode; else ``finish(h_out)``: round the new state and write it back."""
        round_state = self.round_state
        if round_state is _identity_state:
            return None
        order = list(self.state_shapes())

        def finish(h_out):
            new = round_state({k: h_out if k == "h" else carry[k] for k in order})
            h_out[...] = new["h"]
            for k, v in carry.items():
                v[...] = new[k]

        return finish
