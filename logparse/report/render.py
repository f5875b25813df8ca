"""Chart specs to files: Vega-Lite JSON, PNG and SVG (vl-convert), and the inlined JavaScript."""

from __future__ import annotations

import functools
import json
import struct
import zlib
from pathlib import Path
from typing import Any

PNG_SCALE = 1.5
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def spec(chart: Any) -> dict[str, Any]:
    """The styled Vega-Lite spec of an Altair chart, data inlined."""
    from logparse.charts import style

    return style(chart).to_dict()


@functools.cache
def _vl_version() -> str | None:
    """The Vega-Lite version Altair writes, in vl-convert's spelling (None: its default)."""
    import altair as alt
    import vl_convert as vlc

    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return major_minor if major_minor in vlc.get_vegalite_versions() else None


def to_png(vl_spec: dict[str, Any], *, scale: float = PNG_SCALE) -> bytes:
    """Render a Vega-Lite spec to PNG bytes (image data recompressed, see `recompress_png`)."""
    import vl_convert as vlc

    return recompress_png(vlc.vegalite_to_png(vl_spec, scale=scale, vl_version=_vl_version()))


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """The (type, payload) chunks of a PNG file; `ValueError` if it is not one."""
    if data[:8] != PNG_SIGNATURE:
        msg = "not a PNG file (bad signature)"
        raise ValueError(msg)
    out, i = [], 8
    while i + 8 <= len(data):
        (length,) = struct.unpack(">I", data[i : i + 4])
        out.append((data[i + 4 : i + 8], data[i + 8 : i + 8 + length]))
        i += 12 + length
    return out


def recompress_png(data: bytes) -> bytes:
    """The same image with its IDAT stream deflated at level 9 (lossless).

    vl-convert writes PNGs with fast, light compression; recompressing the pixel stream makes
    chart PNGs about four times smaller, which keeps a committed report small.
    """
    chunks = png_chunks(data)
    idat = b"".join(payload for kind, payload in chunks if kind == b"IDAT")
    packed = zlib.compress(zlib.decompress(idat), 9)
    if len(packed) >= len(idat):
        return data
    out = [PNG_SIGNATURE]
    wrote = False
    for kind, payload in chunks:
        if kind == b"IDAT":
            if wrote:
                continue
            kind, payload, wrote = b"IDAT", packed, True
        out.append(
            struct.pack(">I", len(payload))
            + kind
            + payload
            + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)
        )
    return b"".join(out)


def to_svg(vl_spec: dict[str, Any]) -> str:
    """Render a Vega-Lite spec to an SVG document."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(vl_spec, vl_version=_vl_version())


def write_chart_files(
    vl_spec: dict[str, Any], directory: Path, name: str, *, scale: float = PNG_SCALE
) -> tuple[Path, Path]:
    """Write `name`.png and `name`.svg under `directory`; return both paths."""
    directory.mkdir(parents=True, exist_ok=True)
    png, svg = directory / f"{name}.png", directory / f"{name}.svg"
    png.write_bytes(to_png(vl_spec, scale=scale))
    svg.write_text(to_svg(vl_spec), encoding="utf-8")
    return png, svg


@functools.cache
def javascript_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (from vl-convert; no network needed).

    The bundle assigns `vegaEmbed`, `vegaLite` and `vega` to `window`.
    """
    import vl_convert as vlc

    # the stub makes `snippet` required; the function's signature is (snippet=None, vl_version=None)
    js: str = vlc.javascript_bundle(vl_version=_vl_version())  # type: ignore[call-arg]
    return js.replace("</script", "<\\/script")


def script_json(value: Any) -> str:
    """JSON safe to place inside a `<script>` element: `<`, `>`, `&` and line separators escaped,
    so a `</script>` in a model name or file name cannot end the element."""
    text = json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, default=str)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
