"""Draw the web app's install icons (server/web/static/icons/icon-192.png, icon-512.png) from the favicon's shapes.

    python3 tools/make_icons.py

The favicon (server/web/static/favicon.svg) is a flower on green felt: a rounded square, five yellow petals, a red
heart. Browsers want PNG icons for an installed app; this draws the same shapes pixel by pixel (4×4 samples a pixel
for smooth edges) with the standard library only, so the icons can be made again without an image tool.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "server" / "web" / "static" / "icons"
FELT = (0x1F, 0x6B, 0x3A)
PETAL = (0xF7, 0xD0, 0x46)
HEART = (0xC0, 0x39, 0x2B)
PETALS = [(32, 18), (46, 30), (40, 46), (24, 46), (18, 30)]
SAMPLES = 4


def colour_at(x: float, y: float) -> tuple[int, int, int, int]:
    """The favicon's colour (RGBA) at ``x, y`` of its 64×64 view box."""
    corner_x = min(max(x, 12), 52)
    corner_y = min(max(y, 12), 52)
    if (x - corner_x) ** 2 + (y - corner_y) ** 2 > 12**2:
        return (0, 0, 0, 0)
    if (x - 32) ** 2 + (y - 33) ** 2 <= 7**2:
        return (*HEART, 255)
    if any((x - px) ** 2 + (y - py) ** 2 <= 9**2 for px, py in PETALS):
        return (*PETAL, 255)
    return (*FELT, 255)


def pixels(size: int) -> bytes:
    """The icon's rows as PNG scanlines (filter byte 0, then RGBA), averaged over SAMPLES² points a pixel."""
    rows = bytearray()
    scale = 64 / size
    for row in range(size):
        rows.append(0)
        for column in range(size):
            total = [0, 0, 0, 0]
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    colour = colour_at((column + (sx + 0.5) / SAMPLES) * scale, (row + (sy + 0.5) / SAMPLES) * scale)
                    for index in range(4):
                        total[index] += colour[index]
            rows.extend(value // (SAMPLES * SAMPLES) for value in total)
    return bytes(rows)


def png(size: int) -> bytes:
    """A ``size``×``size`` RGBA PNG of the icon."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixels(size), 9)) + chunk(b"IEND", b"")


def main() -> None:
    """Write both icons."""
    ICONS.mkdir(parents=True, exist_ok=True)
    for size in (192, 512):
        (ICONS / f"icon-{size}.png").write_bytes(png(size))
        print(f"wrote {ICONS / f'icon-{size}.png'}")


if __name__ == "__main__":
    main()
