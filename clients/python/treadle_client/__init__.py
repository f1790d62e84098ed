"""Python client SDK for Treadle."""
