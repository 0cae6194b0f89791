"""Shared fixtures: small random categorical frames with fixed seeds."""

import numpy as np
import pandas as pd
import pytest


def random_frame(n_rows, n_cols, seed, max_card=6, unique=True):
    """A frame of small-cardinality integer columns; unique rows if asked."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        data = {
            f"c{j}": rng.integers(0, rng.integers(2, max_card + 1), n_rows) for j in range(n_cols)
        }
        df = pd.DataFrame(data)
        if not unique or not df.duplicated().any():
            return df
    raise RuntimeError("could not draw a frame without duplicate rows")


@pytest.fixture
def frame_factory():
    return random_frame
