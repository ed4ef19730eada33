"""ARCHITECTURE.md's list of import contracts and pyproject.toml's ``[tool.importlinter]`` say the same thing.

`dev.py test` runs ``lint-imports`` over the contracts; this test keeps the document that explains them honest: a
contract added, renamed or dropped without the list in ARCHITECTURE.md (or the other way round) fails here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


def contract_names() -> list[str]:
    """The names of the import contracts in pyproject.toml, in their order."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [contract["name"] for contract in config["tool"]["importlinter"]["contracts"]]


def documented_contracts() -> list[str]:
    """The bullet list that follows "The build checks the table" in ARCHITECTURE.md."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.index("The build checks the table")
    block = re.search(r"\n\n((?:- .*\n)+)", text[start:])
    assert block is not None, "ARCHITECTURE.md lists no contracts after 'The build checks the table'"
    return [line[2:].strip() for line in block.group(1).splitlines()]


def layer_rows() -> set[str]:
    """The first column of the layer table."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text[text.index("## Layers") : text.index("The build checks the table")]
    return {cells[1].strip() for line in table.splitlines() if (cells := line.split("|")) and len(cells) > 2}


def test_every_import_contract_is_listed_in_architecture_md_and_nothing_else() -> None:
    assert documented_contracts() == contract_names()


def test_every_import_contract_is_named_after_a_row_of_the_layer_table() -> None:
    rows = layer_rows() | {"Layers"}  # the contract of the whole table's order
    for name in contract_names():
        assert name.split(":")[0] in rows, f"contract {name!r} names no row of ARCHITECTURE.md's layer table"
