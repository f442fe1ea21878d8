"""A row softmax written in Triton, for the `triton` tenant: work that reaches the GPU through
Triton's own launcher (its compiled cubin and launch path) rather than through torch's ATen
kernels. Import this only after TRITON_INTERPRET is settled: @triton.jit reads it when it
decorates.
"""
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    # Subtracting the row max keeps exp() finite whatever the input scale.
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax_rows(x, y):
    rows, cols = x.shape
    _softmax_rows[(rows,)](x, y, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
