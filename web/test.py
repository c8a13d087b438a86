#!/usr/bin/env python3
"""The web explorer in headless Chromium: serves web/dist (built by web/build.sh), opens the page
through chromedriver (Chromium's flags from webdriver.json) and checks what the page publishes
on its canvas (`data-simtlab-state`, see src/ui/web.rs):

1. `?workload=micro-loop&scale=tiny&run`: the explorer starts on the browser's WebGPU adapter,
   runs the micro loop at the tiny scale, and every record's CPU check passed on all n elements,
   timed on that adapter; the point has its heat maps, counted by the GPU probe at the
   adapter's subgroup width, as laid out and with threads sorted by trip count;
2. Ctrl+S on the page saves the run: the browser downloads simtlab-run.json, which holds the
   records the page showed (CPU checks passed);
3. a fresh page opens that file through its file input (`#simtlab-open`, as the Open button
   does) and shows the same run; F5 and Ctrl+R then run it again, and the page cancels their
   reload (read off dispatched key events: headless Chromium never reloads on keys);
4. `?workload=pt-barrier&scale=tiny&run`: a workload that waits on the GPU between steps does not
   start, and the page says why (it never hangs the tab);
5. `?workload=nope&run`: an unknown workload is said in place, the page opens on the first
   workload without running, and still runs it on F5;
6. `?workload=matmul-tiled16&scale=tiny&run`: a matmul rung runs, and the occupancy panel names
   its own kernel (matmul/tiled.wgsl), not the previous workload's;
7. the "Your shader" tab takes a WGSL shader pasted into its editor (a clipboard paste event on
   the canvas) and finds its entry point and bindings.
8. `?remap=gpu`: the "Your shader" tab remaps the tolerance iteration of the remap tests in the
   page, its index built on the GPU: every writable binding identical, SIMT efficiency after at
   least 0.8 and above the one before, and the index a permutation that groups equal classes.

A browser without a WebGPU adapter fails the test. `--screenshot FILE` saves the page after the
first run (PNG, a page of 1400x900). Only the standard library: WebDriver is JSON over HTTP.
"""

import argparse
import base64
import functools
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None, timeout=120):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"null").get("value")
    except urllib.error.HTTPError as e:
        raise SystemExit(f"webdriver {method} {path}: {e.code} {e.read().decode(errors='replace')[:2000]}")


class Files(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm", ".js": "text/javascript"}

    def log_message(self, *args):
        pass


def serve(directory):
    handler = functools.partial(Files, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


READ_STATE = """
const c = document.getElementById('simtlab');
return [c.getAttribute('data-simtlab-state'), c.getAttribute('data-simtlab-error'),
        window.simtlabExplorer && window.simtlabExplorer.has_panicked() ? window.simtlabExplorer.panic_message() : null];
"""


def wait_for(base, session, done, what, timeout):
    """Polls the page's state until `done(state)`; fails on a page error, a panic or the timeout."""
    deadline = time.time() + timeout
    state = None
    while time.time() < deadline:
        raw, page_error, panic = call(base, "POST", f"/session/{session}/execute/sync", {"script": READ_STATE, "args": []})
        if page_error:
            raise SystemExit(f"{what}: the page says: {page_error}")
        if panic:
            raise SystemExit(f"{what}: the explorer panicked: {panic}")
        state = json.loads(raw) if raw else None
        if state is not None and done(state):
            return state
        time.sleep(0.5)
    raise SystemExit(f"{what}: not done after {timeout} s; last state: {json.dumps(state)[:2000]}")


def check_run(state):
    assert state["error"] is None, f"the run failed: {state['error']}"
    assert state["adapters"], "no adapter listed"
    records = state["records"]
    assert records, f"no records: {state['status']}"
    for r in records:
        env, check, stats = r["environment"], r["check"], r["stats"]
        assert env["backend"] == "BrowserWebGpu", f"ran on {env['backend']}, not the browser's WebGPU"
        width = env["subgroup_size"]
        assert width and width & (width - 1) == 0, f"measured subgroup width {width}"
        assert check["passed"] and check["mismatches"] == 0, f"CPU check failed: {check}"
        assert check["checked"] == r["params"]["n"], f"checked {check['checked']} of n = {r['params']['n']} elements"
        assert len(stats["samples"]) == 5 and all(s > 0 for s in stats["samples"]), f"samples {stats['samples']}"
        assert stats["source"] == "wall_clock", stats["source"]
    assert state["status"].startswith("done: 1 point(s)"), state["status"]
    return records


def check_heat_maps(state):
    """The run's one point has the desktop's two heat maps, from the GPU probe on the page's subgroups."""
    (maps,) = state["heat_maps"]
    r = state["records"][0]
    width, n = r["environment"]["subgroup_size"], r["params"]["n"]
    assert [m["layout"] for m in maps] == ["as laid out", "threads sorted by trip count"], maps
    for m in maps:
        assert m["source"] == f"GPU probe, subgroup width {width}", m
        assert m["width"] == width and m["warps"] == -(-n // width), m
    # one long lane per 32 threads: every warp holding one diverges until the threads are sorted
    assert maps[0]["divergent_warps"] == n // 32 and maps[1]["divergent_warps"] < maps[0]["divergent_warps"], maps
    return maps


def check_remap(state):
    """The page's remap (`?remap=gpu`): the figures and the index it published."""
    remap = state["remap"]
    assert remap["error"] is None, f"the remap failed: {remap['error']}"
    run, index, classes = remap["run"], remap["index"], remap["class_ids"]
    assert run["strategy"] == "gpu" and run["outputs_identical"], run
    before, after = run["before"]["simt_efficiency"], run["after"]["simt_efficiency"]
    assert after >= 0.8 and after > before, f"SIMT efficiency {before} -> {after}"
    assert run["index_seconds"] > 0 and run["classes"] == max(classes) + 1, run
    assert sorted(index) == list(range(len(classes))), "the GPU index is no permutation"
    along = [classes[e] for e in index]
    assert all(a <= b for a, b in zip(along, along[1:])), "the GPU index does not group equal classes"
    return run


def press(base, session, *keys):
    """Presses `keys` together on the explorer's canvas (focused first), as a user would."""
    focused = call(base, "POST", f"/session/{session}/execute/sync",
                   {"script": "const c = document.getElementById('simtlab'); c.focus(); return document.activeElement === c;", "args": []})
    assert focused, "the explorer's canvas did not take the focus"
    down = [{"type": "keyDown", "value": k} for k in keys]
    up = [{"type": "keyUp", "value": k} for k in reversed(keys)]
    call(base, "POST", f"/session/{session}/actions", {"actions": [{"type": "key", "id": "keys", "actions": down + up}]})
    call(base, "DELETE", f"/session/{session}/actions")


CONTROL, F5 = "\ue009", "\ue035"

CANCELLED_KEYS = """
const out = {};
for (const [name, init] of [["F5", {key: "F5"}], ["Ctrl+R", {key: "r", ctrlKey: true}],
                            ["Ctrl+Shift+R", {key: "R", ctrlKey: true, shiftKey: true}], ["x", {key: "x"}]]) {
  const event = new KeyboardEvent("keydown", {...init, bubbles: true, cancelable: true});
  document.body.dispatchEvent(event);
  out[name] = event.defaultPrevented;
}
return out;
"""


# a click into the shader tab's editor (its left column, below the controls), then a paste as
# the browser delivers Ctrl+V: a ClipboardEvent with the text on the document, where eframe's web
# runner listens for it while the page has the focus
CLICK_EDITOR = """
const c = document.getElementById('simtlab');
c.focus();
const r = c.getBoundingClientRect();
const at = {bubbles: true, clientX: r.left + 200, clientY: r.top + 420, pointerType: 'mouse', button: 0, buttons: 1};
c.dispatchEvent(new PointerEvent('pointermove', at));
c.dispatchEvent(new MouseEvent('mousemove', at));
c.dispatchEvent(new PointerEvent('pointerdown', at));
c.dispatchEvent(new PointerEvent('pointerup', {...at, buttons: 0}));
return document.hasFocus();
"""

PASTE = """
const data = new DataTransfer();
data.setData('text', arguments[0]);
document.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
return true;
"""


def downloaded(directory, name, timeout):
    """The bytes of `name` once the browser has finished downloading it into `directory`."""
    path, deadline = os.path.join(directory, name), time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path) and not os.path.exists(path + ".crdownload"):
            with open(path, "rb") as f:
                return path, f.read()
        time.sleep(0.2)
    raise SystemExit(f"no download {name} after {timeout} s; {directory} holds {os.listdir(directory)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", default=os.path.join(ROOT, "web", "dist"))
    parser.add_argument("--chromedriver", default=os.environ.get("CHROMEDRIVER", "chromedriver"))
    parser.add_argument("--screenshot", help="PNG of the page after the first run")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.dist, "simtlab_bg.wasm")):
        raise SystemExit(f"{args.dist} has no simtlab_bg.wasm: run web/build.sh first")

    with open(os.path.join(ROOT, "webdriver.json")) as f:
        capabilities = json.load(f)
    server = serve(args.dist)
    page = f"http://127.0.0.1:{server.server_address[1]}/"
    port = free_port()
    driver = subprocess.Popen([args.chromedriver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    session = None
    downloads = tempfile.mkdtemp(prefix="simtlab-downloads-")
    try:
        for _ in range(100):
            try:
                if call(base, "GET", "/status", timeout=2)["ready"]:
                    break
            except (OSError, SystemExit):
                pass
            time.sleep(0.1)
        session = call(base, "POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})["sessionId"]
        # a page of 1400x900 (the window's size counts the browser's own frame)
        inner = call(base, "POST", f"/session/{session}/execute/sync", {"script": "return [innerWidth, innerHeight];", "args": []})
        outer = call(base, "GET", f"/session/{session}/window/rect")
        call(base, "POST", f"/session/{session}/window/rect",
             {"width": outer["width"] + 1400 - inner[0], "height": outer["height"] + 900 - inner[1]})

        start = time.time()
        call(base, "POST", f"/session/{session}/url", {"url": page + "?workload=micro-loop&scale=tiny&run"})
        state = wait_for(base, session, lambda s: s["error"] is not None or (not s["running"] and s["status"].startswith("done")),
                         "micro-loop", args.timeout)
        records = check_run(state)
        r = records[0]
        print(f"micro-loop in the page: {len(records)} record(s), CPU check passed on {r['check']['checked']} elements, "
              f"median {r['stats']['median'] * 1e3:.2f} ms on {r['environment']['adapter'] or r['environment']['backend']} "
              f"(subgroups of {r['environment']['subgroup_size']}), {time.time() - start:.1f} s")
        maps = check_heat_maps(state)
        print(f"micro-loop heat maps in the page: {maps[0]['source']}, {maps[0]['warps']} warps, "
              f"{maps[0]['divergent_warps']} divergent as laid out, {maps[1]['divergent_warps']} sorted by trip count")
        if args.screenshot:
            time.sleep(1)
            png = base64.b64decode(call(base, "GET", f"/session/{session}/screenshot"))
            with open(args.screenshot, "wb") as f:
                f.write(png)
            print(f"screenshot: {args.screenshot}")

        # Ctrl+S: the run as a download
        call(base, "POST", f"/session/{session}/goog/cdp/execute",
             {"cmd": "Browser.setDownloadBehavior", "params": {"behavior": "allow", "downloadPath": downloads}})
        press(base, session, CONTROL, "s")
        saved_path, saved = downloaded(downloads, "simtlab-run.json", 60)
        saved = json.loads(saved)
        assert saved == records, "the saved file differs from the records the page shows"
        assert all(r["check"]["passed"] for r in saved) and all(r["kernel"] == "micro-loop" for r in saved), saved
        state = wait_for(base, session, lambda s: s["status"] == "saved simtlab-run.json (a download)", "saving", 10)
        print(f"saved in the page (Ctrl+S): {len(saved)} record(s) downloaded, equal to the page's")

        # a fresh page opens it through its file input, as the Open button does
        call(base, "POST", f"/session/{session}/url", {"url": page + "?workload=micro-loop&scale=tiny"})
        wait_for(base, session, lambda s: s["status"] == "ready", "a fresh page", 60)
        element = call(base, "POST", f"/session/{session}/element", {"using": "css selector", "value": "#simtlab-open"})
        element = next(iter(element.values()))
        call(base, "POST", f"/session/{session}/element/{element}/value", {"text": saved_path})
        state = wait_for(base, session, lambda s: s["status"] == "opened simtlab-run.json", "opening", 30)
        assert state["records"] == records and state["workload"] == "micro-loop", \
            f"the opened run differs from the saved one: {json.dumps(state['records'])[:1500]} vs {json.dumps(records)[:1500]}"
        assert state["heat_maps"] == [[]], "a file keeps no heat maps"
        print(f"opened in a fresh page: {len(state['records'])} record(s), the run as saved")

        # the run keys run: F5, then Ctrl+R
        for keys in [(F5,), (CONTROL, "r")]:
            before = state["records"]
            press(base, session, *keys)
            state = wait_for(base, session, lambda s: s["error"] is not None or
                             (not s["running"] and s["status"].startswith("done") and s["records"] != before),
                             f"a run from {keys}", args.timeout)
            check_run(state)
            check_heat_maps(state)
        print("F5 and Ctrl+R run in the page")

        call(base, "POST", f"/session/{session}/url", {"url": page + "?workload=pt-barrier&scale=tiny&run"})
        state = wait_for(base, session, lambda s: s["error"] is not None, "pt-barrier", 60)
        assert "not in the browser" in state["error"] and not state["running"] and not state["records"], state
        print(f"pt-barrier in the page: not started, says: {state['error']}")

        call(base, "POST", f"/session/{session}/url", {"url": page + "?remap=gpu"})
        state = wait_for(base, session, lambda s: s["remap"]["error"] is not None or s["remap"]["run"] is not None,
                         "remap", args.timeout)
        run = check_remap(state)
        print(f"remap in the page ({run['adapter']}): SIMT efficiency {run['before']['simt_efficiency']:.3f} -> "
              f"{run['after']['simt_efficiency']:.3f}, {run['classes']} classes, index on the GPU in "
              f"{run['index_seconds'] * 1e3:.3f} ms, outputs identical")

        # an unknown workload: said in place, the page opens on the first workload and runs nothing
        call(base, "POST", f"/session/{session}/url", {"url": page + "?workload=nope&scale=tiny&run"})
        state = wait_for(base, session, lambda s: s["error"] is not None, "?workload=nope", 60)
        assert "'nope'" in state["error"] and "no such workload" in state["error"], state["error"]
        assert state["selected"] == "micro-loop" and not state["running"] and not state["records"], state
        press(base, session, F5)
        state = wait_for(base, session, lambda s: not s["running"] and s["status"].startswith("done"), "a run after ?workload=nope",
                         args.timeout)
        check_run(state)
        print(f"?workload=nope in the page: says \"{state['error'] or 'no such workload'}\" in place; the page still runs")

        # a matmul rung: the occupancy panel names its own kernel
        call(base, "POST", f"/session/{session}/url", {"url": page + "?workload=matmul-tiled16&scale=tiny&run"})
        state = wait_for(base, session, lambda s: s["error"] is not None or (not s["running"] and s["status"].startswith("done")),
                         "matmul-tiled16", args.timeout)
        assert state["error"] is None, state["error"]
        assert all(r["check"]["passed"] for r in state["records"]), state["records"]
        assert state["occupancy_kernel"] == "matmul/tiled.wgsl:main", state["occupancy_kernel"]
        print(f"matmul-tiled16 in the page: CPU check passed, occupancy of {state['occupancy_kernel']}")

        # the shader tab: a paste into the editor (the browser's paste event, as Ctrl+V gives it)
        wgsl = open(os.path.join(ROOT, "tests", "fixtures", "profile", "collatz.wgsl")).read()
        call(base, "POST", f"/session/{session}/url", {"url": page + "?view=shader"})
        wait_for(base, session, lambda s: s.get("view") == "shader", "the shader tab", 60)
        call(base, "POST", f"/session/{session}/execute/sync", {"script": CLICK_EDITOR, "args": []})
        time.sleep(1)
        call(base, "POST", f"/session/{session}/execute/sync", {"script": PASTE, "args": [wgsl]})
        state = wait_for(base, session, lambda s: s["shader"]["entries"] == ["main"], "a pasted shader", 30)
        assert state["shader"]["bindings"] == ["values", "steps"] and state["shader"]["error"] is None, state["shader"]
        assert state["shader"]["source"] == wgsl, "the editor holds other text than was pasted"
        print(f"pasted into the shader tab: {len(wgsl)} characters, entry point main, bindings values and steps")

        # headless Chromium never reloads on keys, so the page's own cancelling of the reload is
        # read off key events dispatched to it (the canvas has no focus here: nothing runs)
        cancelled = call(base, "POST", f"/session/{session}/execute/sync", {"script": CANCELLED_KEYS, "args": []})
        assert cancelled == {"F5": True, "Ctrl+R": True, "Ctrl+Shift+R": False, "x": False}, cancelled
        print("the page cancels F5's and Ctrl+R's reload (Ctrl+Shift+R still reloads)")
    finally:
        if session:
            call(base, "DELETE", f"/session/{session}")
        driver.terminate()
        driver.wait(10)
        server.shutdown()
        shutil.rmtree(downloads, ignore_errors=True)
    print("web explorer: ok")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        sys.exit(f"web explorer test failed: {e}")
