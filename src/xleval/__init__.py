"""xleval: make evaluation scores comparable across languages."""
__version__ = "0.1.0"
