"""Storage: on-disk caches as data-only JSON, and how every file is written, locked and interrupted."""
