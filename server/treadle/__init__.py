"""Treadle: an agent runtime served over gRPC."""
