"""Type stub of the optional compiled search (shared/solver/_native.c)."""

def search(
    root: bytes,
    pool: bytes,
    builds: bool,
    foundation_moves: bool,
    anonymous: bool,
    shuffles: bool,
    goal: int,
    weight: tuple[int, int],
    seconds: float,
    max_nodes: int,
    max_stored: int,
    weights: tuple[int, int, int, int, int],
    switch_seconds: float,
    switch_nodes: int,
    switch_weight: tuple[int, int],
    /,
) -> tuple[int, list[bytes], int, list[bytes]]: ...
