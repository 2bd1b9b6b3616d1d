"""Hosted model access (Anthropic), shared by the entailment judge, extraction, review and rewrite."""
