#!/usr/bin/python3
"""The render check of bosch_selection_write_svg (docs/result-format.md).

Runs GEN_SVG OUTDIR (test/svg/gen_svg.c: NAME.svg and NAME.json for many
shapes, with and without the optional fields), then for every NAME.svg:

1. parses it with xml.etree (well-formed XML, an <svg> root with integer
   width and height and viewBox "0 0 W H");
2. renders it with rsvg-convert -b white and checks the PNG is W x H;
3. checks nothing is clipped: the outermost EDGE pixel rows and columns are
   pure background, and a second rendering on a canvas grown by PAD on
   every side (same drawing, moved by PAD) has no ink outside the original
   W x H rectangle shrunk by EDGE, so a title, legend or label running past
   the canvas fails;
4. checks the text against NAME.json: the title (method, SWA ratio,
   target), the info block (model basename, full path in a tooltip, window,
   sink, KV saving, metric, scores, evaluations; absent when not
   recorded), the layer and KV-group numbers (every one, or every k-th
   with labels that do not overlap), the axis titles, the per-layer SWA
   ratio numbers, the legend, one tooltip per cell;
5. samples the pixel at the centre of cells (all of them on small models)
   and checks it is green (#1b9e77) for full and orange (#d95f02) for SWA,
   at the place of a regular grid.

Exit 77 (skipped) when rsvg-convert is missing. Standard library only; the
PNG is decoded here (zlib, 8-bit grey/RGB/RGBA, filter types 0-4).

Usage: check_svg.py GEN_SVG OUTDIR
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

SVG_NS = "{http://www.w3.org/2000/svg}"
EDGE = 3  # pixel rows/columns at the border that must be background
PAD = 120  # growth of the canvas for the second rendering
GREEN = (0x1B, 0x9E, 0x77)
ORANGE = (0xD9, 0x5F, 0x02)


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


# ---------------------------------------------------------------------------
# PNG
# ---------------------------------------------------------------------------
def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    """(width, height, rows): rows[y] is a bytes of width RGB triples."""
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    check(ihdr is not None, f"{path}: no IHDR")
    width, height, depth, ctype, _comp, _filt, interlace = ihdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    check(depth == 8 and channels and interlace == 0,
          f"{path}: unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    raw = zlib.decompress(b"".join(idat))
    bpp, stride = channels, width * channels
    check(len(raw) == height * (stride + 1), f"{path}: bad image data length")
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ftype == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                if i >= bpp:
                    line[i] = (line[i] + paeth(line[i - bpp], prev[i], prev[i - bpp])) & 255
                else:
                    line[i] = (line[i] + prev[i]) & 255
        else:
            check(ftype == 0, f"{path}: bad filter type {ftype} in row {y}")
        prev = line
        if channels == 3:
            rows.append(bytes(line))
        else:
            rgb = bytearray(width * 3)
            for x in range(width):
                px = line[x * channels:(x + 1) * channels]
                if channels <= 2:
                    rgb[3 * x:3 * x + 3] = bytes((px[0],) * 3)
                else:
                    rgb[3 * x:3 * x + 3] = px[:3]
            rows.append(bytes(rgb))
    return width, height, rows


def pixel(rows, x, y):
    return tuple(rows[y][3 * x:3 * x + 3])


def render(svg, png):
    r = subprocess.run(["rsvg-convert", "-b", "white", "-o", png, svg],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"rsvg-convert {svg} failed: {r.stderr.strip()}")
    return read_png(png)


WHITE_ROW = {}


def ink_columns(row, width):
    """x of every non-white pixel of a row."""
    white = WHITE_ROW.setdefault(width, b"\xff" * (3 * width))
    if row == white:
        return []
    return [x for x in range(width) if row[3 * x:3 * x + 3] != b"\xff\xff\xff"]


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------
def check_edges(name, w, h, rows):
    for y in list(range(EDGE)) + list(range(h - EDGE, h)):
        xs = ink_columns(rows[y], w)
        check(not xs, f"{name}: ink in border row {y} at x={xs[:5]}")
    for y in range(h):
        xs = [x for x in ink_columns(rows[y], w) if x < EDGE or x >= w - EDGE]
        check(not xs, f"{name}: ink in border column {xs[:5]} at y={y}")


def padded_svg(text, w, h):
    """The same drawing on a canvas PAD larger on every side."""
    m = re.search(r"<svg\b[^>]*>", text)
    check(m, "no <svg> tag")
    tag = m.group(0)
    tag = re.sub(r'\s(width|height|viewBox)="[^"]*"', "", tag)
    tag = tag[:-1] + (f' width="{w + 2 * PAD}" height="{h + 2 * PAD}" '
                      f'viewBox="{-PAD} {-PAD} {w + 2 * PAD} {h + 2 * PAD}">')
    return text[:m.start()] + tag + text[m.end():]


def check_padded(name, path, text, w, h, outdir):
    pad_path = os.path.join(outdir, name + ".pad.svg")
    with open(pad_path, "w", encoding="utf-8") as f:
        f.write(padded_svg(text, w, h))
    pw, ph, rows = render(pad_path, os.path.join(outdir, name + ".pad.png"))
    check((pw, ph) == (w + 2 * PAD, h + 2 * PAD), f"{name}: padded PNG is {pw}x{ph}")
    x0, x1, y0, y1 = PAD + EDGE, PAD + w - EDGE, PAD + EDGE, PAD + h - EDGE
    for y in range(ph):
        xs = ink_columns(rows[y], pw)
        if not xs:
            continue
        check(y0 <= y < y1, f"{name}: drawing runs past the canvas: ink at y={y - PAD} "
                            f"(canvas height {h}), x={[x - PAD for x in xs[:5]]}")
        check(x0 <= xs[0] and xs[-1] < x1,
              f"{name}: drawing runs past the canvas: ink at x={xs[0] - PAD}..{xs[-1] - PAD} "
              f"(canvas width {w}), y={y - PAD}")


def text_of(el):
    """Text of an element without its <title> tooltips."""
    parts = [el.text or ""]
    for child in el:
        if child.tag != SVG_NS + "title":
            parts.append(text_of(child))
        parts.append(child.tail or "")
    return "".join(parts)


def labels(root, cls):
    return [el for el in root.iter(SVG_NS + "text") if cls in el.get("class", "").split()]


def check_axis(name, els, n, coord, min_gap, what):
    """Labels 0, k, 2k, ... (every k-th of n), at increasing coordinates at
    least min_gap(label) apart."""
    check(els, f"{name}: no {what} labels")
    values = [int(text_of(e)) for e in els]
    k = values[1] - values[0] if len(values) > 1 else max(n, 1)
    check(values[0] == 0 and k >= 1, f"{name}: {what} labels start {values[:3]}")
    check(values == list(range(0, n, k)), f"{name}: {what} labels {values[:8]}... "
                                          f"are not every {k}-th of 0..{n - 1}")
    pos = [float(e.get(coord)) for e in els]
    for i in range(1, len(pos)):
        gap = pos[i] - pos[i - 1]
        check(gap >= min_gap(text_of(els[i - 1]), text_of(els[i])),
              f"{name}: {what} labels {values[i - 1]} and {values[i]} overlap ({gap} apart)")
    return k, pos


def fmt_g(v, digits):
    return "%.*g" % (digits, v)


def expected_info(doc):
    """(strings that must appear, words that must not) from the JSON."""
    want, absent = [], []
    method = doc.get("method") or "mask"
    want.append(f"{method}: SWA ratio {doc['ratio']:.3f}")
    if "target_ratio" in doc:
        want.append(f"target {doc['target_ratio']:.3f}")
    else:
        absent.append("target")
    path = doc["model"].get("path")
    if path:
        base = os.path.basename(path.rstrip("/")) or path
        want.append(base)
    else:
        absent.append("model")
    kv = doc.get("kv_saving")
    if kv:
        want += [f"window {kv['window']}", f"sink {kv['sink']}",
                 f"context {kv['context']}", f"KV saving {100 * kv['fraction']:.1f}%"]
    else:
        absent += ["window", "sink", "KV saving"]
    sc = doc.get("score")
    if sc and sc.get("metric"):
        want.append(f"metric {sc['metric']}")
    else:
        absent.append("metric")
    if sc and sc.get("raw") is not None:
        want.append(f"score {fmt_g(sc['raw'], 6)}")
    else:
        absent.append("score")
    if sc and sc.get("normalized") is not None:
        want.append(f"normalized {sc['normalized']:.4f}")
    else:
        absent.append("normalized")
    ev = doc.get("evaluations")
    if ev:
        want.append(f"evaluations {ev['total']}")
    else:
        absent.append("evaluations")
    m = doc["model"]
    plural = lambda n, word: f"{n} {word}" + ("" if n == 1 else "s")
    want.append(f"{plural(m['layers'], 'layer')} x {plural(m['kv_groups'], 'KV group')} x "
                f"{plural(m['heads_per_group'], 'query head')} per group")
    return want, absent


def digit_width(s, size):
    return len(s) * 0.62 * size


def check_text(name, root, doc):
    texts = [text_of(e) for e in root.iter(SVG_NS + "text")]
    alltext = "\n".join(texts)
    want, absent = expected_info(doc)
    for s in want:
        check(s in alltext, f"{name}: text {s!r} missing (texts: {texts[:12]})")
    method = doc.get("method") or "mask"
    info = [text_of(e) for e in labels(root, "info")]
    info += [text_of(e)[len(method):] for e in labels(root, "title")]
    for word in absent:
        hits = [t for t in info if word in t]
        check(not hits, f"{name}: {word!r} shown but not recorded: {hits}")
    path = doc["model"].get("path")
    if path:
        tips = [t.text or "" for t in root.iter(SVG_NS + "title")]
        check(path in tips, f"{name}: no tooltip with the model path {path!r}")
    titles = [text_of(e) for e in labels(root, "axis-title")]
    for s in ("layer", "KV group", "SWA ratio"):
        check(any(t.startswith(s) for t in titles), f"{name}: no axis title {s!r} in {titles}")
    for s in ("full", "SWA"):
        check(s in [text_of(e) for e in labels(root, "legend")], f"{name}: no legend {s!r}")


def check_cells(name, root, doc, w, h, rows):
    layers, groups = doc["model"]["layers"], doc["model"]["kv_groups"]
    mask = doc["unit_mask"]
    cells = {}
    tip = re.compile(r"^layer (\d+) group (\d+): (SWA|full)\b")
    for r in root.iter(SVG_NS + "rect"):
        t = r.find(SVG_NS + "title")
        m = tip.match(t.text or "") if t is not None else None
        if m:
            cells[(int(m.group(1)), int(m.group(2)))] = (r, m.group(3))
    check(len(cells) == layers * groups,
          f"{name}: {len(cells)} cells with a tooltip, want {layers * groups}")
    r00 = cells[(0, 0)][0]
    x0, y0 = float(r00.get("x")), float(r00.get("y"))
    cw, ch = float(r00.get("width")), float(r00.get("height"))
    check(cw >= 2 and ch >= 2, f"{name}: cells of {cw}x{ch}")
    for (l, g), (r, kind) in cells.items():
        check(kind == ("SWA" if mask[l * groups + g] == "1" else "full"),
              f"{name}: tooltip of cell ({l}, {g}) says {kind}")
        check(abs(float(r.get("x")) - (x0 + g * cw)) < 0.01
              and abs(float(r.get("y")) - (y0 + l * ch)) < 0.01,
              f"{name}: cell ({l}, {g}) off the grid")
    if layers * groups <= 64:
        sample = list(cells)
    else:
        sample = [(0, 0), (0, groups - 1), (layers - 1, 0), (layers - 1, groups - 1)]
        sample += [((7 * i) % layers, (13 * i + 3) % groups) for i in range(60)]
    for l, g in sample:
        cx, cy = int(x0 + (g + 0.5) * cw), int(y0 + (l + 0.5) * ch)
        check(0 <= cx < w and 0 <= cy < h, f"{name}: cell ({l}, {g}) outside the canvas")
        want = ORANGE if mask[l * groups + g] == "1" else GREEN
        got = pixel(rows, cx, cy)
        check(all(abs(a - b) <= 6 for a, b in zip(got, want)),
              f"{name}: cell ({l}, {g}) at ({cx}, {cy}) is #{bytes(got).hex()}, "
              f"want #{bytes(want).hex()}")

    # layer numbers down the left, KV-group numbers along the top
    k_l, ys = check_axis(name, labels(root, "layer-label"), layers, "y",
                         lambda a, b: 10, "layer")
    check(ch * k_l <= 60, f"{name}: every {k_l}-th layer labelled with {ch}-pixel rows")
    for e in labels(root, "layer-label"):
        check(float(e.get("x")) <= x0, f"{name}: layer label right of the grid")
    k_g, _ = check_axis(name, labels(root, "group-label"), groups, "x",
                        lambda a, b: (digit_width(a, 10) + digit_width(b, 10)) / 2 + 2,
                        "KV group")
    check(cw * k_g <= 100, f"{name}: every {k_g}-th KV group labelled, {cw}-pixel columns")
    for e in labels(root, "group-label"):
        check(float(e.get("y")) <= y0, f"{name}: KV-group label below the grid top")
    if layers <= 8:
        check(k_l == 1, f"{name}: {layers} layers but every {k_l}-th labelled")
    if groups <= 8:
        check(k_g == 1, f"{name}: {groups} KV groups but every {k_g}-th labelled")

    # the per-layer SWA ratio next to the labelled rows
    ratio_els = labels(root, "ratio-label")
    by_y = {float(e.get("y")): int(text_of(e)) for e in labels(root, "layer-label")}
    check(len(ratio_els) == len(by_y), f"{name}: {len(ratio_els)} ratio numbers for "
                                       f"{len(by_y)} labelled layers")
    for e in ratio_els:
        l = by_y.get(float(e.get("y")))
        check(l is not None, f"{name}: ratio number at y={e.get('y')} not on a labelled row")
        check(float(e.get("x")) >= x0 + groups * cw, f"{name}: ratio number inside the grid")
        want = f"{doc['layer_ratios'][l]:.2f}"
        check(text_of(e) == want, f"{name}: layer {l} ratio {text_of(e)!r}, want {want!r}")


def check_one(name, outdir):
    svg_path = os.path.join(outdir, name + ".svg")
    with open(os.path.join(outdir, name + ".json"), encoding="utf-8") as f:
        doc = json.load(f)
    with open(svg_path, encoding="utf-8") as f:
        text = f.read()
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise Failure(f"{name}: not well-formed XML: {e}")
    check(root.tag == SVG_NS + "svg", f"{name}: root is {root.tag}")
    w, h = int(root.get("width")), int(root.get("height"))
    check(root.get("viewBox") == f"0 0 {w} {h}", f"{name}: viewBox {root.get('viewBox')!r}")
    pw, ph, rows = render(svg_path, os.path.join(outdir, name + ".png"))
    check((pw, ph) == (w, h), f"{name}: PNG is {pw}x{ph}, SVG says {w}x{h}")
    check_edges(name, w, h, rows)
    check_padded(name, svg_path, text, w, h, outdir)
    check_text(name, root, doc)
    check_cells(name, root, doc, w, h, rows)
    return w, h


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    if not shutil.which("rsvg-convert"):
        print("SKIP: rsvg-convert not found (Debian: apt-get install librsvg2-bin)")
        return 77
    gen, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([gen, outdir], capture_output=True, text=True)
    if r.returncode:
        print(f"FAIL: {gen} {outdir}: exit {r.returncode}: {r.stderr.strip()}")
        return 1
    failed = 0
    for name in r.stdout.split():
        try:
            w, h = check_one(name, outdir)
            print(f"ok   {name} ({w}x{h})")
        except Failure as e:
            print(f"FAIL {e}")
            failed += 1
    print(f"{failed} of {len(r.stdout.split())} SVGs failed" if failed else "all SVGs pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
