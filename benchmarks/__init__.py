"""The project's benchmarks: scripts that print figures, and the load benchmark behind ``flowergarden bench load``.

They belong to the source checkout, not to the installed package (pyproject.toml installs shared, server, client
and cli only): a deployment carries no load generator.
"""
