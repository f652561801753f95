"""One-off measurements kept for their figures; `make bench` runs none of them (README.md)."""
