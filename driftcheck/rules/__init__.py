"""Rules: the registry of rule ids, the finding contract, what a rule receives, and what rules share."""
