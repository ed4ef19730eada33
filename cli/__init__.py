"""The ``flowergarden`` command line: engine, solver, server and terminal race commands."""
