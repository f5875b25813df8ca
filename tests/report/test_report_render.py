"""Render every chart family to PNG (vl-convert) and check it is a real, non-blank image of the
expected size: decoded with the standard library only (zlib + struct, PNG filters undone)."""

from __future__ import annotations

import re
import struct
import zlib

import pytest
from report_samples import all_charts

from logparse.report import render

SCALE = 1.0


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGBA bytes) of an 8-bit RGB/RGBA non-interlaced PNG."""
    chunks = render.png_chunks(data)
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert depth == 8 and colour in (2, 6) and interlace == 0
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(p for k, p in chunks if k == b"IDAT"))
    stride = width * bpp
    assert len(raw) == height * (stride + 1)
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            upleft = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upleft
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else upleft)
                line[i] = (line[i] + pred) & 0xFF
            else:
                assert kind == 0, f"unknown PNG filter {kind}"
        rows.append(bytes(line))
        prev = line
    if bpp == 3:
        rows = [b"".join(r[i : i + 3] + b"\xff" for i in range(0, len(r), 3)) for r in rows]
    return width, height, rows


def svg_size(svg: str) -> tuple[float, float]:
    width = re.search(r'<svg[^>]*\swidth="([\d.]+)', svg)
    height = re.search(r'<svg[^>]*\sheight="([\d.]+)', svg)
    assert width and height
    return float(width.group(1)), float(height.group(1))


CHARTS = all_charts()


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_chart_renders_to_a_non_blank_png_of_the_expected_size(name: str) -> None:
    spec = render.spec(CHARTS[name])
    png = render.to_png(spec, scale=SCALE)
    width, height, rows = decode_png(png)
    # The PNG has the size of the SVG drawing (same layout engine), at least the chart's plot area.
    svg_w, svg_h = svg_size(render.to_svg(spec))
    assert abs(width - svg_w * SCALE) <= 1 and abs(height - svg_h * SCALE) <= 1
    assert width >= 250 and height >= 120
    pixels = [row[i : i + 4] for row in rows[::3] for i in range(0, len(row), 12)]
    colours = set(pixels)
    inked = sum(1 for p in pixels if p[3] > 0 and p[:3] != b"\xff\xff\xff")
    assert len(colours) >= 8, f"{name}: only {len(colours)} colours"
    assert inked / len(pixels) > 0.01, f"{name}: blank image"


def test_recompression_is_lossless() -> None:
    import vl_convert as vlc

    spec = render.spec(CHARTS["memory"])
    original = vlc.vegalite_to_png(spec, scale=1.0)
    packed = render.recompress_png(original)
    assert len(packed) < len(original)
    assert decode_png(packed)[2] == decode_png(original)[2]
