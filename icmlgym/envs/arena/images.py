"""Product images for the choice arenas: the generated catalogue now lives in
:mod:`icmlgym.corpora.products` (shared with the neural families' image corpora);
this module re-exports it under its historical name."""

from icmlgym.corpora.products import (  # noqa: F401
    CATEGORIES,
    IMAGE_SUFFIXES,
    Product,
    ProductCatalog,
    ProductImage,
    image_id,
    layers_from_rgb,
    load_image_folder,
)

__all__ = ["CATEGORIES", "IMAGE_SUFFIXES", "Product", "ProductCatalog", "ProductImage", "image_id", "layers_from_rgb", "load_image_folder"]
