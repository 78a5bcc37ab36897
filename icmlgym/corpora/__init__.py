"""Corpora that need no download, each with a loader, a fixed split and a card.

- :mod:`icmlgym.corpora.reasoning`: generated step-by-step reasoning (levels, domains) and its tokenizer.
- :mod:`icmlgym.corpora.text`: real English already on the machine (docstrings of installed packages).
- :mod:`icmlgym.corpora.vision`: scikit-learn's bundled digits, generated 1-D signals,
  product images with a spurious background (Waterbirds-like groups).
- :mod:`icmlgym.corpora.product_images`: generated fine-grained product classes (object x colour x
  material), small seeded numpy images, optionally on a group-correlated background (Waterbirds-like).
- :mod:`icmlgym.corpora.embeddings`: the sentence encoder shipped in a wheel (extra ``[text]``)
  with an on-disk embedding cache.
"""
