// report.js -- draws luaload's HTML report from the data embedded in the
// page (gzip, base64: {run, summary, series, slots, spectrum, live}); uPlot
// (inlined beside it) draws the charts, which zoom with a drag and reset on
// a double-click. Served live by the web dashboard (data.live), it redraws
// on each "snapshot" server-sent event from /events. Each drawing sets
// <body data-rendered="1"> and counts data-updates (for tests).
"use strict";

const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : String(k));
  return e;
};

const ms = (v) => {
  if (v === undefined || v === null || Number.isNaN(v)) return "-";
  if (v >= 1000) return (v / 1000).toFixed(2) + "s";
  if (v >= 1) return v.toFixed(2) + "ms";
  return (v * 1000).toFixed(2) + "µs";
};
const num = (v) => {
  if (Number.isInteger(v) || Math.abs(v) >= 1000) return Math.round(v).toLocaleString("en-US");
  return Number(v).toPrecision(6).replace(/\.?0+$/, "");
};
const bytes = (v) => {
  const u = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (v >= 1000 && i < u.length - 1) { v /= 1000; i++; }
  return (i ? v.toFixed(1) : String(Math.round(v))) + " " + u[i];
};

function table(head, rows, id) {
  const t = el("table", id ? { id } : {});
  t.append(el("tr", {}, ...head.map((h) => el("th", {}, h))));
  for (const r of rows) t.append(el("tr", {}, ...r.map((c) => (c instanceof Node ? el("td", {}, c) : el("td", {}, c)))));
  return t;
}

async function decode() {
  const b64 = document.getElementById("data").textContent.trim();
  const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function header(d) {
  const r = d.run || {};
  const rows = [
    ["script", r.script || "-"],
    ["started", r.started || "-"],
    ["ended", r.ended || "-"],
    ["duration", ms((d.summary.state || {}).testRunDurationMs)],
    ["scenarios", (r.scenarios || []).join(", ") || "-"],
    ["segment", r.segment || "0:1"],
    ["seed", r.seed === undefined ? "-" : String(r.seed)],
    ["luaload", r.version || "-"],
  ];
  const t = el("table", { id: "run-table" });
  for (const [k, v] of rows) t.append(el("tr", {}, el("th", {}, k), el("td", {}, v)));
  document.getElementById("run").append(t);
  if (r.options) {
    const pre = el("details", {}, el("summary", {}, "options"), el("pre", {}, JSON.stringify(r.options, null, 2)));
    document.getElementById("run").append(pre);
  }
}

function thresholds(d) {
  const rows = [];
  for (const [name, m] of Object.entries(d.summary.metrics || {})) {
    for (const [src, t] of Object.entries(m.thresholds || {})) {
      const ok = t.ok !== undefined ? t.ok : !t;
      rows.push([name, src, el("span", { class: ok ? "ok" : "fail" }, ok ? "✓ pass" : "✗ fail")]);
    }
  }
  const box = document.getElementById("thresholds");
  box.append(rows.length ? table(["metric", "threshold", "result"], rows, "thresholds-table") : el("p", {}, "none"));
}

function metricRow(name, m) {
  const v = m.values || {};
  switch (m.type) {
    case "counter":
      return [name, m.type, m.contains === "data" ? bytes(v.count) : num(v.count), num(v.rate) + "/s"];
    case "rate":
      return [name, m.type, (100 * v.rate).toFixed(2) + "%", `✓ ${v.passes} ✗ ${v.fails}`];
    case "gauge":
      return [name, m.type, num(v.value), `min=${num(v.min)} max=${num(v.max)}`];
    default: {
      const f = m.contains === "time" ? ms : num;
      const stats = Object.entries(v).map(([k, x]) => `${k}=${k === "count" ? x : f(x)}`).join(" ");
      return [name, m.type, f(v.avg), stats];
    }
  }
}

function metrics(d) {
  d.summary.metrics = d.summary.metrics || {};
  const names = Object.keys(d.summary.metrics).sort();
  const rows = names.map((n) => metricRow(n, d.summary.metrics[n]));
  document.getElementById("metrics").append(table(["metric", "type", "value", "details"], rows, "metrics-table"));
  const dur = d.summary.metrics.http_req_duration;
  if (dur && dur.values) {
    for (const [k, v] of Object.entries(dur.values)) {
      const id = "duration-" + k.replace(/[()]/g, "");
      document.getElementById("metrics").append(el("span", { id, hidden: "" }, ms(v)));
    }
  }
  const parts = ["blocked", "connecting", "tls_handshaking", "sending", "waiting", "receiving"];
  const brow = parts.filter((p) => d.summary.metrics["http_req_" + p]).map((p) => {
    const v = d.summary.metrics["http_req_" + p].values;
    return [p, ms(v.avg), ms(v.med), ms(v["p(90)"]), ms(v["p(95)"]), ms(v.max)];
  });
  document.getElementById("breakdown").append(table(["phase", "avg", "med", "p(90)", "p(95)", "max"], brow));
}

function scenarios(d) {
  const rows = (d.scenarios || []).map((x) => [x.name, num(x.reqs), num(x.rps) + "/s", (100 * x.failed).toFixed(2) + "%",
    ms(x.p50), ms(x.p95), ms(x.p99), num(x.iterations)]);
  const box = document.getElementById("scenarios");
  if (!box) return;
  box.append(rows.length ? table(["scenario", "requests", "rate", "failed", "p50", "p95", "p99", "iterations"], rows, "scenarios-table")
    : el("p", {}, "no per-scenario figures"));
}

function names(d) {
  const rows = (d.names || []).map((x) => [x.name, num(x.reqs), num(x.rps) + "/s", (100 * x.failed).toFixed(2) + "%",
    ms(x.p50), ms(x.p95), ms(x.p99)]);
  document.getElementById("names").append(rows.length ? table(["name", "requests", "rate", "failed", "p50", "p95", "p99"], rows, "names-table")
    : el("p", {}, "no requests by name"));
}

function checks(d) {
  const rows = [];
  const walk = (g, path) => {
    for (const c of g.checks || []) rows.push([path || "(root)", c.name, String(c.passes), String(c.fails)]);
    for (const sub of g.groups || []) walk(sub, (path ? path + " › " : "") + sub.name);
  };
  walk(d.summary.root_group || {}, "");
  document.getElementById("checks").append(rows.length ? table(["group", "check", "passes", "fails"], rows) : el("p", {}, "none"));
}

function chart(id, title, series, data, opts = {}) {
  const box = document.getElementById(id);
  const width = Math.max(480, Math.min(900, box.clientWidth || 560));
  const o = {
    title, width, height: 260,
    scales: opts.scales || { x: { time: false } },
    axes: opts.axes || [{ label: opts.xlabel || "s" }, { label: opts.ylabel || "" }],
    series: [{ label: opts.xlabel || "s" }, ...series],
    cursor: { drag: { x: true, y: false } },
  };
  return new uPlot(o, data, box);
}

function charts(d) {
  const s = d.series;
  if (!s || !s.t) return;
  const colors = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700"];
  const line = (label, i, extra = {}) => ({ label, stroke: colors[i % colors.length], width: 1.5, ...extra });
  chart("c-load", "requests/s, iterations/s and VUs", [line("req/s", 0), line("iterations/s", 2), line("VUs", 3, { scale: "vus" })],
    [s.t, s.reqs, s.iters, s.vus],
    { scales: { x: { time: false }, vus: {} }, axes: [{ label: "s" }, { label: "/s" }, { scale: "vus", side: 1, label: "VUs" }] });
  chart("c-latency", "http_req_duration in each second (ms)", [line("p50", 0), line("p90", 1), line("p95", 2), line("p99", 3)],
    [s.t, s.p50, s.p90, s.p95, s.p99], { ylabel: "ms" });
  chart("c-failed", "http_req_failed in each second (%)", [line("failed", 1, { value: (u, v) => (v == null ? "-" : v.toFixed(2) + "%") })],
    [s.t, s.failed.map((v) => (v == null ? null : 100 * v))], { ylabel: "%", scales: { x: { time: false }, y: { range: (u, lo, hi) => [0, Math.max(1, hi)] } } });
  /* the values in kB/MB/GB (raw byte counts were wider than the axis, their left digits cut) */
  chart("c-bytes", "bytes per second", [line("sent", 0, { value: (u, v) => (v == null ? "-" : bytes(v) + "/s") }),
    line("received", 2, { value: (u, v) => (v == null ? "-" : bytes(v) + "/s") })], [s.t, s.sent, s.recv],
    { axes: [{ label: "s" }, { label: "/s", size: 72, values: (u, vals) => vals.map((v) => bytes(v)) }] });
  const codes = Object.keys(s.status || {});
  if (codes.length) {
    chart("c-status", "responses by status (/s)", codes.map((c, i) => line(c === "0" ? "no response" : c, i)),
      [s.t, ...codes.map((c) => s.status[c])], { ylabel: "/s" });
  }
  const errs = Object.keys(s.errors || {});
  if (errs.length) {
    chart("c-errors", "requests by error_code (/s)", errs.map((c, i) => line(c, i)),
      [s.t, ...errs.map((c) => s.errors[c])], { ylabel: "/s" });
  } else {
    document.getElementById("c-errors").append(el("p", { class: "none" }, "no request had an error_code"));
  }

  const slots = d.slots || [];
  if (slots.length) {
    // the full histogram, in 60 bins spaced by powers of ten
    const lo = Math.log10(Math.max(slots[0][0], 0.001)), hi = Math.log10(Math.max(slots[slots.length - 1][0], 0.001)) + 1e-9;
    const n = 60, step = (hi - lo) / n || 1, xs = [], ys = new Array(n).fill(0);
    for (let i = 0; i < n; i++) xs.push(Math.pow(10, lo + (i + 0.5) * step));
    for (const [v, c] of slots) ys[Math.min(n - 1, Math.max(0, Math.floor((Math.log10(Math.max(v, 0.001)) - lo) / step)))] += c;
    chart("c-dist", "distribution (all requests)", [{ label: "requests", stroke: colors[0], fill: "rgba(9,105,218,0.25)", paths: uPlot.paths.bars({ size: [0.9] }) }],
      [xs, ys], { scales: { x: { time: false, distr: 3 } }, xlabel: "ms", axes: [{ label: "ms" }, { label: "requests" }] });
  }
  const sp = d.spectrum || [];
  if (sp.length) {
    // x = the number of nines: 0 -> 0 %, 1 -> 90 %, 2 -> 99 %, 3 -> 99.9 %
    const nines = (p) => -Math.log10(1 - Math.min(p, 99.9999) / 100);
    const pct = (x) => (100 * (1 - Math.pow(10, -x))).toPrecision(6).replace(/\.?0+$/, "") + "%";
    const xs = sp.map(([p]) => nines(p)), ys = sp.map(([, v]) => v);
    chart("c-spectrum", "percentile spectrum", [{ label: "ms", stroke: colors[1], width: 1.5 }], [xs, ys], {
      xlabel: "percentile",
      axes: [{ label: "percentile", incrs: [1], values: (u, vals) => vals.map(pct) }, { label: "ms" }],
    });
  }
}

const BOXES = ["run", "thresholds", "metrics", "breakdown", "scenarios", "names", "checks", "footer",
  "c-load", "c-latency", "c-failed", "c-bytes", "c-status", "c-errors", "c-dist", "c-spectrum"];

function render(d) {
  for (const id of BOXES) document.getElementById(id).replaceChildren();
  header(d);
  thresholds(d);
  metrics(d);
  scenarios(d);
  names(d);
  checks(d);
  charts(d);
  const live = d.live ? " — live, updated every " + d.live.period + "s" : "";
  document.getElementById("footer").append(`made by luaload ${(d.run || {}).version || ""}${live}: the charts come from the run's full histograms, not from samples`);
  document.body.dataset.rendered = "1";
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}

(async () => {
  const d = await decode();
  render(d);
  if (d.live) { // the web dashboard: the same page, new data from /events
    const es = new EventSource("events");
    es.addEventListener("snapshot", (e) => render(JSON.parse(e.data)));
    es.addEventListener("stop", () => es.close());
  }
})().catch((e) => {
  document.body.dataset.rendered = "error";
  document.body.prepend(el("pre", { class: "fail" }, "report error: " + e));
});
