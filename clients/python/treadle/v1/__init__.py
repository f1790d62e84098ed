"""Generated from proto/treadle/v1; do not edit."""
