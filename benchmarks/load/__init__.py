"""``flowergarden bench load``: the race server and the floor server of its stack under the same load.

``command`` parses the options, starts Redis and the servers and reports; ``workers`` are the load generator
processes; ``floor`` is the floor server; ``cpu_budget`` caps server processes at a fraction of a core.
``cli/solver_bench.py`` adds the command to ``flowergarden bench`` when this package can be imported (a checkout).
"""
