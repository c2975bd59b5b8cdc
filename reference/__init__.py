"""Reference implementation: computes optima and schedules (never imported by certify)."""
