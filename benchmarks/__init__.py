"""Scripts that print figures; run them directly (`python benchmarks/NAME.py`), never in tests."""
