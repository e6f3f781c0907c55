"""Small primitives every package of xleval shares, each written once: JSON conversion, the frozen
result base, seeds, and integer group codes. Nothing here imports another xleval package."""
