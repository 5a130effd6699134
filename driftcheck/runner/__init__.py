"""The smoke runner: a real hidden-state extraction on a tiny local model, on the installed vLLM.

Entry point: `driftcheck.runner.cli.main(argv)` (`driftcheck smoke`). This package's import imports
nothing heavy; vLLM, torch and transformers are imported only by the child processes
(`driftcheck.runner.child`) that run inside the vLLM environment under test.
"""
