#!/usr/bin/python3
"""record_har.py -- a real browser session against `luaload serve`, saved as
a HAR 1.2 file (for test_convert_har.sh): headless chromium driven over its
DevTools protocol (python3-websockets) loads /login, fills in and submits
the form (the POST, its 303, /welcome), then makes XHRs from the page as an
app would: POST /api/login (JSON), POST /api/items with the token it got,
GET /api/items/ID of the item made. The network events chromium reports
become the HAR's entries, each navigation a page, as DevTools' own "Save all
as HAR" builds them.

usage: record_har.py CHROMIUM BASE_URL OUT.har   (exits non-zero on failure)
"""
import asyncio
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import websockets

chromium, base, out = sys.argv[1:4]


def iso(wall):
    return datetime.datetime.fromtimestamp(wall, datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def hlist(h):
    return [{"name": k, "value": v} for k, vs in h.items() for v in str(vs).split("\n")]


class Session:
    def __init__(self, ws):
        self.ws, self.n, self.waiting, self.events = ws, 0, {}, asyncio.Queue()

    async def reader(self):
        async for raw in self.ws:
            m = json.loads(raw)
            if "id" in m and m["id"] in self.waiting:
                self.waiting.pop(m["id"]).set_result(m)
            elif "method" in m:
                await self.events.put(m)

    async def call(self, method, **params):
        self.n += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting[self.n] = fut
        await self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        m = await asyncio.wait_for(fut, 20)
        if "error" in m:
            raise RuntimeError(f"{method}: {m['error']}")
        return m["result"]


async def record(ws_url):
    async with websockets.connect(ws_url, max_size=None) as ws:
        s = Session(ws)
        reader = asyncio.ensure_future(s.reader())
        await s.call("Network.enable")
        await s.call("Page.enable")
        reqs, order, pages = {}, [], []
        loads = asyncio.Queue()

        async def pump():
            while True:
                m = await s.events.get()
                p = m["params"]
                if m["method"] == "Page.loadEventFired":
                    await loads.put(1)
                elif m["method"] == "Network.requestWillBeSent":
                    rid = p["requestId"]
                    if "redirectResponse" in p and rid in reqs:
                        # the hop before: its response is the redirect
                        prev = reqs.pop(rid)
                        prev["response"] = p["redirectResponse"]
                        prev["done"] = p["timestamp"]
                        prev["key"] = f"{rid}/{len(order)}"
                        reqs[prev["key"]] = prev
                    if p.get("type") == "Document" and "redirectResponse" not in p:
                        pages.append({"id": f"page_{len(pages) + 1}", "started": p["wallTime"], "title": p["request"]["url"]})
                    reqs[rid] = {"key": rid, "p": p, "page": pages[-1]["id"] if pages else None}
                    order.append(reqs[rid])
                elif m["method"] == "Network.responseReceived" and p["requestId"] in reqs:
                    reqs[p["requestId"]]["response"] = p["response"]
                elif m["method"] == "Network.loadingFinished" and p["requestId"] in reqs:
                    r = reqs[p["requestId"]]
                    r["done"] = p["timestamp"]
                    try:
                        b = await s.call("Network.getResponseBody", requestId=p["requestId"])
                        r["body"] = b
                    except RuntimeError:
                        pass

        pumper = asyncio.ensure_future(pump())

        async def title():
            t = await s.call("Runtime.evaluate", expression="document.title")
            pages[-1]["title"] = t["result"]["value"] or pages[-1]["title"]

        await s.call("Page.navigate", url=base + "/login")
        await asyncio.wait_for(loads.get(), 20)
        await title()
        await asyncio.sleep(0.4)  # the user reads the form
        await s.call("Runtime.evaluate", expression=(
            "document.querySelector('input[name=username]').value = 'alice';"
            "document.querySelector('input[name=password]').value = 'secret';"
            "document.querySelector('form#login').submit()"))
        await asyncio.wait_for(loads.get(), 20)
        await title()
        await asyncio.sleep(0.3)
        js = """(async () => {
          const h = { 'Content-Type': 'application/json' };
          let r = await fetch('/api/login', { method: 'POST', headers: h,
                                              body: JSON.stringify({ username: 'alice', password: 'secret' }) });
          const token = (await r.json()).token;
          h.Authorization = 'Bearer ' + token;
          r = await fetch('/api/items', { method: 'POST', headers: h, body: JSON.stringify({ name: 'recorded item' }) });
          const item = await r.json();
          r = await fetch('/api/items/' + item.id, { headers: { Authorization: 'Bearer ' + token } });
          return r.status + ' ' + token;
        })()"""
        res = await s.call("Runtime.evaluate", expression=js, awaitPromise=True)
        status = res["result"].get("value", "")
        if not status.startswith("200 "):
            raise RuntimeError(f"the XHRs ended with {res['result']}")
        await asyncio.sleep(0.5)  # the last loadingFinished and its body
        pumper.cancel()
        reader.cancel()
        return order, pages, status.split(" ", 1)[1]


def har_entry(r, wall0, ts0):
    p, resp = r["p"], r.get("response", {})
    req = p["request"]
    started = p["wallTime"]
    took = max(0.0, (r.get("done", p["timestamp"]) - p["timestamp"]) * 1000)
    body = r.get("body")
    content = {"size": len(body["body"]) if body else 0, "mimeType": resp.get("mimeType", "")}
    if body:
        content["text"] = body["body"]
        if body.get("base64Encoded"):
            content["encoding"] = "base64"
    e = {
        "pageref": r["page"],
        "startedDateTime": iso(started),
        "time": took,
        "_resourceType": p.get("type", "").lower(),
        "request": {
            "method": req["method"], "url": req["url"] + req.get("urlFragment", ""),
            "httpVersion": resp.get("protocol", "http/1.1").upper(),
            "headers": hlist(req.get("headers", {})), "queryString": [], "cookies": [],
            "headersSize": -1, "bodySize": len(req.get("postData", "")),
        },
        "response": {
            "status": resp.get("status", 0), "statusText": resp.get("statusText", ""),
            "httpVersion": resp.get("protocol", "http/1.1").upper(),
            "headers": hlist(resp.get("headers", {})), "cookies": [], "content": content,
            "redirectURL": resp.get("headers", {}).get("Location", resp.get("headers", {}).get("location", "")),
            "headersSize": -1, "bodySize": content["size"],
        },
        "cache": {}, "timings": {"send": 0, "wait": took, "receive": 0},
    }
    if "postData" in req:
        ct = next((v for k, v in req["headers"].items() if k.lower() == "content-type"), "")
        e["request"]["postData"] = {"mimeType": ct, "text": req["postData"]}
    return e


def main():
    prof = tempfile.mkdtemp(prefix="record-har.")
    proc = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--disable-extensions", "--disable-background-networking", "--disable-sync",
                             "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
                             f"--user-data-dir={prof}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ws_url = None
        for line in proc.stderr:
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                ws_url = m.group(1)
                break
        if not ws_url:
            raise RuntimeError("chromium printed no DevTools address")
        port = re.search(r":(\d+)/", ws_url).group(1)
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(p for p in pages if p["type"] == "page")
        version = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=10))
        order, hpages, token = asyncio.run(record(page["webSocketDebuggerUrl"]))
        entries = [har_entry(r, 0, 0) for r in order if r["p"]["request"]["url"].startswith("http")]
        har = {"log": {
            "version": "1.2",
            "creator": {"name": "record_har.py (Chromium DevTools protocol)", "version": "1"},
            "browser": {"name": "Chromium", "version": version.get("Browser", "")},
            "pages": [{"id": p["id"], "title": p["title"], "startedDateTime": iso(p["started"]), "pageTimings": {}}
                      for p in hpages],
            "entries": entries,
        }}
        with open(out, "w") as f:
            json.dump(har, f, indent=2)
        with open(out + ".token", "w") as f:
            f.write(token)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(prof, ignore_errors=True)


if __name__ == "__main__":
    main()
