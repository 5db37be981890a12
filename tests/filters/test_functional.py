"""projection_filter (the scipy.signal-style function): hostile input (issue 11)."""

import numpy as np
import pytest

from tssdpa.filters import projection_filter


def test_inf_is_refused_like_every_estimator_and_channel_axis_must_be_in_range():
    x = np.random.default_rng(0).normal(size=(100, 2))
    bad = x.copy()
    bad[50, 1] = np.inf
    with pytest.raises(ValueError, match="x contains inf; use NaN"):
        projection_filter(bad, window=8, sigma=1.0, axis=0)
    with pytest.raises(ValueError, match="channel_axis 5 is out of range"):
        projection_filter(x, window=8, sigma=1.0, axis=0, channel_axis=5)


@pytest.mark.parametrize("window", [8, None])
@pytest.mark.parametrize("bad", ["0.005", [0.005], -1.0, 0.0, float("nan"), float("inf")])
def test_min_step_is_checked_by_name_as_the_class_checks_it(window, bad):
    """projection_filter took min_step unchecked: text or a list failed in Python's own
    comparison ("'>' not supported between instances of 'str' and 'int'"), inf was blamed
    on decay, and with a window -1, 0 or NaN passed silently (ProjectionFilter refuses them
    all: 'min_step must be a finite number > 0')."""
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.008, 0.012, 50))
    with pytest.raises((TypeError, ValueError), match="min_step must be a"):
        projection_filter(np.sin(t), window=window, tau=0.05, min_step=bad, sigma=0.5,
                          timestamps=t)  # fmt: skip


def test_a_state_of_the_wrong_kind_is_refused_naming_zi():
    """projection_filter's zi went straight into numpy and Python: a tau call's (samples,
    times) pair given to a call without timestamps failed with numpy's 'inhomogeneous shape',
    a tuple of three with 'too many values to unpack', and text with 'could not convert
    string to float' -- none naming zi (ProjectionFilter.filter names it)."""
    x = np.random.default_rng(0).normal(size=50)
    t = np.arange(50) * 0.01
    _, pair = projection_filter(x[:20], window=8, sigma=1.0, tau=0.1, timestamps=t[:20],
                                zi=(np.full(8, np.nan), np.full(7, np.nan)))  # fmt: skip
    with pytest.raises(ValueError, match=r"zi is a tuple of 2 arrays.*\(samples, times\)"):
        projection_filter(x[20:], window=8, sigma=1.0, zi=pair)
    with pytest.raises(ValueError, match=r"with timestamps, zi must be a pair"):
        projection_filter(x[20:], window=8, sigma=1.0, tau=0.1, timestamps=t[20:],
                          zi=(*pair, None))  # fmt: skip
    with pytest.raises(TypeError, match=r"zi must be a real numeric array.*got text"):
        projection_filter(x, window=8, sigma=1.0, zi="abc")
    with pytest.raises(ValueError, match=r"zi times must be numbers"):
        projection_filter(x[20:], window=8, sigma=1.0, tau=0.1, timestamps=t[20:],
                          zi=(pair[0], "abc"))  # fmt: skip


@pytest.mark.parametrize("times", [False, True])
def test_an_empty_chunk_with_a_state_gives_an_empty_output_and_the_state_back(times):
    """With ``zi`` any split of a series gives the one-shot result, so a chunk of no sample
    (``np.array_split`` of a short block, a tick without new samples) returns an empty
    output and ``zf = zi``, as ``ProjectionFilter.filter`` and the ONNX model do:
    projection_filter refused it ('x is empty along the time axis') and broke the loop.
    Offline (no ``zi``) an empty x is still refused."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 40))
    kw = dict(window=5, sigma=0.5, embedding=2, axis=-1)
    zi = np.full((2, 6), np.nan)
    if times:
        t = np.cumsum(rng.uniform(0.5, 1.5, 40))
        kw.update(tau=3.0, min_step=0.5)
        zi = (zi, np.full(5, np.nan))
    chunks = np.array_split(np.arange(40), 5)
    chunks.insert(2, np.arange(0))  # an empty one between two others
    state, parts = zi, []
    for idx in chunks:
        extra = {"timestamps": t[idx]} if times else {}
        before = state
        y, state = projection_filter(x[:, idx], zi=state, **kw, **extra)
        assert y.shape == (2, len(idx))
        if not len(idx):
            got, want = (state, before) if not times else (state[0], before[0])
            np.testing.assert_array_equal(got, want)
        parts.append(y)
    extra = {"timestamps": t} if times else {}
    whole, _ = projection_filter(x, zi=zi, **kw, **extra)
    # (with times, the decay of a chunk's first keys is taken from the state's times: to 1e-12)
    np.testing.assert_allclose(np.concatenate(parts, axis=-1), whole, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="x is empty along the time axis"):
        projection_filter(x[:, :0], **kw, **({"timestamps": t[:0]} if times else {}))


def test_a_state_is_read_as_projection_filter_the_class_reads_it():
    # the functional form kept a complex zi's real part (a ComplexWarning the only word),
    # raised torch's RuntimeError for a tensor that requires grad, and refused pd.NA in a
    # list, where ProjectionFilter.filter refuses, reads and reads them
    import pandas as pd
    import torch

    x = np.random.default_rng(1).normal(size=40)
    _, zf = projection_filter(x[:20], window=8, sigma=0.5, zi=np.full(8, np.nan))
    want = projection_filter(x[20:], window=8, sigma=0.5, zi=zf)[0]
    with pytest.raises(TypeError, match=r"^zi must be real"):
        projection_filter(x[20:], window=8, sigma=0.5, zi=zf + 1j)
    tensor = torch.tensor(zf, requires_grad=True)
    assert np.array_equal(projection_filter(x[20:], window=8, sigma=0.5, zi=tensor)[0], want)
    empty = projection_filter(x, window=8, sigma=0.5, zi=np.full(8, np.nan))[0]
    assert np.array_equal(projection_filter(x, window=8, sigma=0.5, zi=[pd.NA] * 8)[0], empty)
