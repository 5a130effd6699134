"""Fix: codemods planned one at a time with a rescan after each, and the editing helpers they share."""
