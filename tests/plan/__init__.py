"""Scanning strategies the plan chooses (rtcompile/plan.py) as compiled modules run them, against the reference."""
