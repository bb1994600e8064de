#!/usr/bin/env python3
"""Loads an attention explorer page in headless Chromium and checks it the way a reader uses it.

  check_explorer_page.py PAGE.html --expect '.map-panel=30' [--hover-token FAMILY]
                         [--hover-patch] [--screenshot OUT.png [--clip SELECTOR] [--point SELECTOR]]

Fails (status 1, a line per problem) when the page logs a console error or throws, asks for
anything from the network, lacks the expected number of elements, does not change the weights it
shows when the pointer moves to another token, patch or cell, or its screenshot is blank. Exits
77 (CTest's skip) when no Chromium is installed. Chromium is driven through its DevTools protocol
over a pipe (--remote-debugging-pipe), so nothing beyond Python and Chromium is needed.
"""
import argparse
import base64
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


class Browser:
    """One headless Chromium, spoken to with DevTools messages over fds 3 (in) and 4 (out)."""

    def __init__(self, binary, profile, log):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()

        def as_fds_3_and_4():  # in the child, before exec
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update",
             "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"],
            pass_fds=(3, 4), preexec_fn=as_fds_3_and_4, stdin=subprocess.DEVNULL,
            stdout=log, stderr=log)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.out = to_browser_w
        self.inp = from_browser_r
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.inp, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe (crashed?)")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, page=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if page and self.session:
            message["sessionId"] = self.session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            self.events.append(m)

    def wait_for(self, method):
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read())

    def open(self, url, width, height):
        target = self.call("Target.createTarget", {"url": "about:blank"}, page=False)
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 page=False)["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.events.clear()
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluating %s: %s" % (expression, r["exceptionDetails"]))
        return r["result"].get("value")

    def hover(self, selector, fx=0.5, fy=0.5, dx=0, dy=0):
        """Moves the pointer to the point (fx, fy) of the element's box, moved by (dx, dy)
        pixels, the element scrolled into view."""
        box = self.evaluate(
            "(() => { const e = document.querySelector(%s); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left, r.top, r.width, r.height]; })()" % json.dumps(selector))
        if box is None:
            raise RuntimeError("no element matches " + selector)
        x, y = box[0] + fx * box[2] + dx, box[1] + fy * box[3] + dy
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def screenshot(self, clip_selector=None):
        params = {"format": "png"}
        if clip_selector:
            box = self.evaluate(
                "(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()"
                % json.dumps(clip_selector))
            params.update(captureBeyondViewport=True,
                          clip={"x": box[0], "y": box[1], "width": box[2], "height": box[3],
                                "scale": 1})
        else:
            self.evaluate("window.scrollTo(0, 0)")
        return base64.b64decode(self.call("Page.captureScreenshot", params)["data"])

    def close(self):
        try:
            self.call("Browser.close", page=False)
        except (RuntimeError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def png_pixels(png):
    """The pixels of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes), as bytes
    tuples, with the width and height."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("PNG of depth %d, colour type %d, interlace %d" % (depth, colour, interlace))
    n = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * n
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - n] if i >= n else 0
            up, up_left = previous[i], previous[i - n] if i >= n else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
        rows.append(bytes(line))
        previous = line
    pixels = [row[i:i + 3] for row in rows for i in range(0, stride, n)]
    return pixels, width, height


def find_chromium():
    for name in (os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def problems_on_page(browser):
    """Console errors, uncaught exceptions and requests that left the file."""
    found = []
    for e in browser.events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            found.append("console %s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description"))) for a in p.get("args", []))))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            found.append("uncaught exception: %s" % d.get("exception", {}).get("description", d.get("text")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            found.append("log error: %s" % p["entry"].get("text"))
        elif method == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if not url.startswith(("file:", "data:", "about:", "blob:")):
                found.append("the page asked the network for %s" % url)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("page", nargs="?")
    parser.add_argument("--expect", action="append", default=[],
                        help="SELECTOR=N: the page has exactly N elements matching SELECTOR")
    parser.add_argument("--hover-token", action="append", default=[], metavar="FAMILY",
                        help="hover two query tokens of this family's token view")
    parser.add_argument("--hover-patch", action="store_true",
                        help="hover two patches of the first image panel")
    parser.add_argument("--image-colours", choices=("gray", "colour"),
                        help="the image drawn in the input panel is gray, or in colour")
    parser.add_argument("--probe", action="store_true",
                        help="only say which Chromium would be used (status 77: none)")
    parser.add_argument("--screenshot", help="also write the screenshot here")
    parser.add_argument("--clip", help="the screenshot shows only this element")
    parser.add_argument("--point", help="the pointer rests on this element for the screenshot")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()

    binary = find_chromium()
    if not binary:
        print("SKIP: no Chromium found (chromium, chromium-browser or google-chrome on PATH, or "
              "CHROMIUM=...); bash apps/setup.sh installs Debian's chromium as root")
        return SKIP
    if args.probe:
        print(binary)
        return 0
    if not args.page or not os.path.isfile(args.page):
        print("FAIL: %s does not exist" % args.page)
        return 1
    def out_of_time(signum, frame):
        raise RuntimeError("no answer from Chromium within 180 s")

    signal.signal(signal.SIGALRM, out_of_time)  # a hung browser must not hang the test run
    signal.alarm(180)
    failures = []

    def check(ok, message):
        print(("ok: " if ok else "FAIL: ") + message)
        if not ok:
            failures.append(message)

    profile = tempfile.mkdtemp(prefix="uwaga-chromium-")
    log = tempfile.TemporaryFile()
    browser = Browser(binary, profile, log)
    name = os.path.basename(args.page)
    try:
        browser.open("file://" + os.path.abspath(args.page), args.width, args.height)
        check(browser.evaluate("document.body.getAttribute('data-ready')") == "yes",
              "%s: the script ran to its end" % name)
        for expectation in args.expect:
            selector, count = expectation.rsplit("=", 1)
            found = browser.evaluate("document.querySelectorAll(%s).length" % json.dumps(selector))
            check(found == int(count), "%s: %s elements match %s (expected %s)" % (name, found, selector, count))

        readout = "document.getElementById('readout').textContent"
        for family in args.hover_token:
            view = ".token-view[data-family=%s]" % json.dumps(family)
            weights = "Array.from(document.querySelectorAll(%s)).map((e) => e.textContent)" % json.dumps(
                view + " .token.key .w")
            seen = []
            for query in (0, 1):
                browser.hover(view + " .token.query[data-index='%d']" % query)
                shown = browser.evaluate(weights)
                said = browser.evaluate(readout)
                seen.append((shown, said))
                numbers = [float(w) for w in shown if w]
                check(len(numbers) == len(shown) and abs(sum(numbers) - 1) < 2e-3,
                      "%s: hovering query %d of %s shows its row of weights, summing to %.4f: %s"
                      % (name, query, family, sum(numbers), " ".join(shown)))
                check("attends most to" in said, "%s: the readout names what it attends to: %s" % (name, said))
            check(seen[0] != seen[1], "%s: hovering another token of %s changes the weights shown" % (name, family))
            browser.hover("h1")
            check(all(w == "" for w in browser.evaluate(weights)),
                  "%s: leaving the tokens of %s clears the weights" % (name, family))

        if args.hover_patch:
            values = "Array.from(document.querySelectorAll('.image-panel .value')).map((e) => e.textContent)"
            before = browser.evaluate(values)
            browser.hover(".image-panel[data-layer='0'][data-head='0'] canvas", 0.1, 0.1)
            first, said_first = browser.evaluate(values), browser.evaluate(readout)
            browser.hover(".image-panel[data-layer='0'][data-head='0'] canvas", 0.6, 0.6)
            second, said_second = browser.evaluate(values), browser.evaluate(readout)
            check(all(v.startswith("patch (1, 1): ") for v in first) and first != before,
                  "%s: hovering patch (1, 1) states every panel's weight on it: %s" % (name, first[:3]))
            check(second != first and said_second != said_first and "-> patch" in said_second,
                  "%s: hovering another patch changes them: %s" % (name, said_second))

        if browser.evaluate("document.querySelectorAll('.map-panel').length"):
            family = browser.evaluate("document.querySelector('.map-panel').dataset.family")
            cells = "Array.from(document.querySelectorAll(%s)).map((e) => e.textContent)" % json.dumps(
                ".map-panel[data-family=%s] .value" % json.dumps(family))
            browser.hover(".map-panel canvas", 0, 0, 4, 4)  # the first cell, inside the border
            first, said_first = browser.evaluate(cells), browser.evaluate(readout)
            browser.hover(".map-panel canvas", 0, 0.9, 4, 0)
            second, said_second = browser.evaluate(cells), browser.evaluate(readout)
            numbers = all(re.fullmatch(r"[01]\.\d{4}", v) for v in first + second)
            check(numbers and said_first != said_second and "query 1 " in said_first and "key 1 " in said_first and
                  second[0] in said_second,
                  "%s: hovering a heatmap cell states each %s panel's weight there: %s; %s"
                  % (name, family, second[:3], said_first + " / " + said_second))

        legend = "document.querySelector('.legend-caption').textContent"
        shared = browser.evaluate(legend)
        browser.evaluate("document.querySelector('input[value=panel]').click()")
        check(browser.evaluate(legend) != shared and "its own" in browser.evaluate(legend),
              "%s: the scale switch redraws with one scale per panel" % name)
        browser.evaluate("document.querySelector('input[value=shared]').click()")
        browser.hover(args.point or "h1")

        png = browser.screenshot(args.clip)
        if args.screenshot:
            with open(args.screenshot, "wb") as f:
                f.write(png)
        pixels, width, height = png_pixels(png)
        colours = len(set(pixels))
        drawn = sum(1 for p in pixels if p != b"\xff\xff\xff") / len(pixels)
        check(colours >= 64 and drawn >= 0.05,
              "%s: the %dx%d screenshot is not blank (%d colours, %.0f %% not white)"
              % (name, width, height, colours, 100 * drawn))

        for problem in problems_on_page(browser):
            check(False, "%s: %s" % (name, problem))
        if not problems_on_page(browser):
            check(True, "%s: no console errors, exceptions or network requests" % name)
    except RuntimeError as e:
        check(False, "%s: %s" % (name, e))
    finally:
        signal.alarm(15)  # closing, too, must end
        browser.close()
        signal.alarm(0)
        shutil.rmtree(profile, ignore_errors=True)
        if failures:
            log.seek(0)
            lines = log.read().decode(errors="replace").strip().splitlines()
            tail = [line for line in lines if "dbus" not in line][-10:]  # no D-Bus in a container
            if tail:
                print("Chromium's last lines:\n  " + "\n  ".join(tail))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
